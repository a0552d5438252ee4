"""Events and messages as JSON: exactly the SPEC shapes, bytes as base64 (SPEC §2, §7)."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

import orjson

from .errors import InvalidMessageError, StreamError
from .items import decode_binary
from .types import Event, Message

# The SPEC §2 key order. Dicts keep insertion order, so an adapter that builds usage in another
# order would change the wire; `dumps` puts these keys back in order (MMSP clients compare text).
_EVENT_KEYS = (
    "role",
    "event_type",
    "content_items",
    "usage_metadata",
    "finish_reason",
    "created_at",
)
_USAGE_KEYS = ("cached_tokens", "prompt_tokens", "thoughts_tokens", "response_tokens")
_NEWLINE = orjson.OPT_APPEND_NEWLINE


def _default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"cannot serialize {type(value).__name__}")


def _ordered(value: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    out = {key: value[key] for key in keys if key in value}
    out.update((key, item) for key, item in value.items() if key not in out)
    return out


def _in_spec_order(value: Any) -> Any:
    """An event or message with its own and its usage's keys in SPEC order."""
    if not isinstance(value, dict) or "content_items" not in value:
        return value
    usage = value.get("usage_metadata")
    if isinstance(usage, dict) and tuple(usage) != _USAGE_KEYS:
        value = {**value, "usage_metadata": _ordered(usage, _USAGE_KEYS)}
    if tuple(value)[: len(_EVENT_KEYS)] != _EVENT_KEYS:
        value = _ordered(value, _EVENT_KEYS)
    return value


def dumps(value: Any) -> bytes:
    """JSON bytes for an event, item or message; `bytes` become base64 strings."""
    return orjson.dumps(_in_spec_order(value), default=_default)


def dumps_lines(values: Iterable[Any]) -> bytearray:
    """`dumps` of each value followed by a newline, in one buffer: a batch of JSON lines.

    The replay's per-event path: an event already in SPEC order with no usage (every delta, as
    the assembler builds them) is written as it is, and each line is copied into the buffer at
    once (`orjson.dumps` answers in a buffer of ~4 KiB, which a list of them would keep)."""
    lines = bytearray()
    for value in values:
        if (
            value.__class__ is not dict
            or tuple(value) != _EVENT_KEYS
            or value["usage_metadata"] is not None
        ):
            value = _in_spec_order(value)
        lines += orjson.dumps(value, default=_default, option=_NEWLINE)
    return lines


def _decode_binary(items: list[Any]) -> None:
    """The binary kinds' base64 growing fields back to bytes (which kinds: `items`)."""
    for item in items:
        decode_binary(item, base64.b64decode)


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


def loads_messages(data: bytes | str) -> list[Message]:
    """A message list from its JSON form, with base64 `data` fields turned back into bytes."""
    messages = orjson.loads(data)
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and isinstance(m.get("content_items"), list) for m in messages
    ):
        raise InvalidMessageError("expected a JSON list of messages with content_items")
    for message in messages:
        _decode_binary(message["content_items"])
    return messages
