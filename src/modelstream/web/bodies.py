"""A request's body, read within the server's limits (docs/server.md#limits-and-exposure): at
most so many bytes, within so many seconds of its headers; and, for the routes that take JSON,
parsed as one JSON object nested no deeper than Python can walk."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request

from .. import bounded_json
from .refusals import Refusal, invalid_request


def too_large(limit: int) -> Refusal:
    return Refusal(
        413,
        "RequestTooLargeError",
        f"the request body is larger than the server's limit of {limit} bytes "
        "(limits.max_body_bytes); send fewer or smaller inline images",
        outcome="too_large",
        fields={"limit": limit},
    )


def body_too_slow(seconds: float) -> Refusal:
    """A 408 for a body that did not arrive in time; the connection is closed after it (the
    rest of the body would keep it busy)."""
    return Refusal(
        408,
        "RequestTimeoutError",
        f"the request body did not arrive within {seconds:g} s of its headers, the server's "
        "limit (limits.body_timeout_seconds); send the body at once, or a smaller one",
        outcome="request_timeout",
        headers={"connection": "close"},
        fields={"limit": seconds},
    )


async def read_body(request: Request, limit: int, timeout: float | None = None) -> bytes:
    """The body, or a 413 `Refusal` as soon as it passes `limit` bytes (a declared
    Content-Length is checked first, a chunked body is counted as it arrives), or a 408 when
    the whole of it has not arrived within `timeout` seconds."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    parts: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise too_large(limit)
                parts.append(chunk)
    except TimeoutError:
        assert timeout is not None
        raise body_too_slow(timeout) from None
    except ClientDisconnect:  # nobody will read the answer; it is counted all the same
        raise invalid_request("the client disconnected before sending the whole body") from None
    return b"".join(parts)


def json_object(body: bytes, shape: str = "") -> dict[str, Any]:
    """A request body that must be a JSON object (its `shape` named in the refusal), nested at
    most `bounded_json.MAX_DEPTH` deep; raises `Refusal` (400) for anything else. Every body the
    server parses goes through here: what reads it afterwards (a deep copy, an encoder, a schema
    walk) recurses in Python, so a deeper body would end in a `RecursionError`."""
    try:
        data = bounded_json.loads(body)
    except bounded_json.JSONTooDeepError as exc:
        raise invalid_request(
            f"the request body nests objects and arrays more than {exc.limit} levels deep, the "
            "server's limit; flatten what nests that deep (a tool's parameters schema, "
            "provider fields)",
            limit=exc.limit,
        ) from None
    except orjson.JSONDecodeError as exc:
        raise invalid_request(f"the request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise invalid_request(f"the request body must be a JSON object {shape}".rstrip())
    return data
