"""The request-side limits: a bounded body read, and the count of streams running at once."""

from __future__ import annotations

from starlette.requests import ClientDisconnect, Request

from .errors import Refusal, invalid_request


def too_large(limit: int) -> Refusal:
    return Refusal(
        413,
        "RequestTooLargeError",
        f"the request body is larger than the server's limit of {limit} bytes "
        "(limits.max_body_bytes); send fewer or smaller inline images",
        outcome="too_large",
        fields={"limit": limit},
    )


async def read_body(request: Request, limit: int) -> bytes:
    """The body, or a 413 `Refusal` as soon as it passes `limit` bytes: a declared
    Content-Length is checked first, and a chunked body is counted as it arrives."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_large(limit)
            parts.append(chunk)
    except ClientDisconnect:  # nobody will read the answer; it is counted all the same
        raise invalid_request("the client disconnected before sending the whole body") from None
    return b"".join(parts)


class StreamSlots:
    """At most `limit` streams run at once in this process; a request past it gets a 429."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_use = 0

    def acquire(self) -> None:
        """Take a slot or raise the 429 `Refusal` (no await: checking and taking is atomic)."""
        if self.in_use >= self.limit:
            raise Refusal(
                429,
                "TooManyStreamsError",
                f"the server is already running {self.limit} streams, its limit "
                "(limits.max_concurrent_streams); retry after a moment",
                outcome="too_many_streams",
                headers={"retry-after": "1"},
                fields={"limit": self.limit},
            )
        self.in_use += 1

    def release(self) -> None:
        self.in_use -= 1
