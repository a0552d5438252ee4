"""Events and messages as JSON: exactly the SPEC shapes, bytes as base64 (SPEC §2, §7)."""

from __future__ import annotations

import base64
from typing import Any

import orjson

from .errors import StreamError
from .types import Event

_BINARY_KINDS = ("inline_data.", "inline_thinking.")


def _default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"cannot serialize {type(value).__name__}")


def dumps(value: Any) -> bytes:
    """JSON bytes for an event, item or message; `bytes` become base64 strings."""
    return orjson.dumps(value, default=_default)


def _decode_binary(items: list[Any]) -> None:
    for item in items:
        if isinstance(item, dict) and str(item.get("type", "")).startswith(_BINARY_KINDS):
            data = item.get("data")
            if isinstance(data, str):
                item["data"] = base64.b64decode(data)


def loads_event(data: bytes | str) -> Event:
    """An event from its JSON form, with base64 `data` fields turned back into bytes."""
    event = orjson.loads(data)
    if isinstance(event, dict) and isinstance(event.get("content_items"), list):
        _decode_binary(event["content_items"])
    return event  # type: ignore[no-any-return]


def error_object(error: BaseException) -> dict[str, Any]:
    """`{"error": {"type", "message", ...fields}}` for a stream that ended in an error."""
    body: dict[str, Any] = {"type": type(error).__name__, "message": str(error)}
    fields = getattr(error, "fields", None)
    if callable(fields):
        body.update(fields())
    if isinstance(error, StreamError) and error.partial is not None:
        body["partial_status"] = error.partial.status
    return {"error": body}
