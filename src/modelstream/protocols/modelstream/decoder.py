"""modelstream server stream decoder (`POST /v1/stream`, SPEC §7, docs/server.md).

The server already speaks the event grammar: each `data:` frame is one event as JSON (bytes as
base64), `data: {"error": {...}}` ends a failed stream, `data: [DONE]` ends every stream. This
adapter turns each event back into the `ItemAssembler` calls that produce it, so the events that
come out equal the server's — `created_at` included, as the adapter stamps each event with the
server's clock — and the call gets a result, timings and diagnostics like any other protocol:

  a delta item          → the fragment, keyed per group (a counter that moves on at each `.done`)
  a `.done` item        → `end_item` (the assembler rebuilds the item from the fragments)
  `stop`                → `usage_update`, `finish(reason, reason)`, `terminal`
  `{"error": {...}}`    → the error named by `type`, with its fields (`error_from_wire`)
  `[DONE]`              → `terminal` (after `stop`: nothing; without it: the stream is incomplete)

A tool call's `.done` is rebuilt by the same strict parse the server applied to the same raw
arguments, so it is the server's `.done`; a server that failed to parse them sent the
`ToolCallArgumentParseError` line instead. Resuming a dropped connection (SSE ids, dedup by
sequence) is the transport's job: see `modelstream.client.resume`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import orjson

from ...error_bodies import ErrorWords, provider_error
from ...errors import (
    CorruptedMessageError,
    EmptyResponseError,
    FrameTooLargeError,
    IncompleteStreamError,
    InvalidMessageError,
    MalformedFrameError,
    ModelstreamError,
    PoolExhaustedError,
    ProviderConnectionError,
    ProviderError,
    SequenceGapError,
    StreamError,
    StreamProtocolError,
    StreamTimeoutError,
    ToolCallArgumentParseError,
    UnsupportedParameterError,
)
from ...items import BY_TYPE
from ...types import FINISH_REASONS, FinishReason
from ..common.decoding import load_json

# item type -> (kind, is the `.done`), for the kinds of the event grammar (items.py)
_ITEM_TYPES: dict[str, tuple[str, bool]] = {
    item_type: (kind.name, done) for item_type, (kind, done) in BY_TYPE.items() if kind.streams
}


class ModelstreamDecoder:
    protocol = "modelstream"
    default_provider = "modelstream"

    def __init__(self, sink: Any, error_words: ErrorWords) -> None:
        self.sink = sink
        self.error_words = error_words  # for an error type the client does not know
        self._key = 0  # the group being streamed
        self._kind: str | None = None  # its item kind, once its first fragment arrived

    def on_frame(self, name: str, data: str) -> None:
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            if data == "[DONE]":
                self.sink.terminal()
            else:
                load_json(self.sink, data)  # raises MalformedFrameError
            return
        if type(event) is not dict:
            self.sink.skip("unknown_frame")
            return
        created_at = event.get("created_at")
        if type(created_at) is int:
            self.sink.now_ms = created_at  # the server's clock, so the events equal its events
        kind = event.get("event_type")
        if kind == "delta":
            items = event.get("content_items")
            for item in items if type(items) is list else ():
                if (  # the hot path: the next fragment of the text being streamed
                    self._kind == "text"
                    and type(item) is dict
                    and item.get("type") == "text.delta"
                    and "fidelity" not in item
                ):
                    self.sink.text(self._key, item.get("text") or "")
                else:
                    self._item(item)
        elif kind == "stop":
            self._stop(event)
        elif kind is None and isinstance(event.get("error"), dict):
            error = error_from_wire(event["error"], words=self.error_words)
            if isinstance(error, ProviderError):
                self.sink.provider_error(error)  # raises (counted instead after `stop`)
            raise error
        else:
            self.sink.skip("unknown_event")

    def on_end(self) -> None:
        pass

    def _item(self, item: Any) -> None:
        item_type = item.get("type") if type(item) is dict else None
        known = _ITEM_TYPES.get(item_type) if isinstance(item_type, str) else None
        if known is None:
            self.sink.skip("unknown_item")
            return
        kind, done = known
        if self._kind is not None and kind != self._kind:
            raise StreamProtocolError(
                "2", f"the server sent {item_type} while a {self._kind} item was open"
            )
        if done:
            self.sink.end_item(self._key)
            self._key += 1
            self._kind = None
            return
        self._kind = kind
        key, sink, fidelity = self._key, self.sink, item.get("fidelity")
        if kind == "text":
            sink.text(key, item.get("text") or "", fidelity)
        elif kind == "tool_call":
            sink.tool_call(
                key,
                item.get("arguments") or "",
                name=item.get("name") or "",
                tool_call_id=item.get("tool_call_id") or "",
                fidelity=fidelity,
            )
        elif kind == "thinking":
            sink.thinking(key, item.get("thinking") or "", fidelity)
        elif kind == "embedding":
            sink.embedding(key, item.get("embedding") or [])  # a delta and its done at once
        else:
            data = _bytes(item.get("data"))
            if data is None:
                sink.skip("malformed_frame")
                sink.diagnostic({"type": "inline_data_undecodable", "item_type": item_type})
                return
            mime_type = item.get("mime_type") or ""
            if kind == "inline_data":
                sink.inline_data(key, data, mime_type, fidelity)
            else:
                sink.inline_thinking(key, data, mime_type, fidelity)

    def _stop(self, event: dict[str, Any]) -> None:
        usage = event.get("usage_metadata")
        if isinstance(usage, dict):
            self.sink.usage_update(usage)
        reason = event.get("finish_reason")
        finish: FinishReason = reason if reason in FINISH_REASONS else "unknown"
        self.sink.finish(finish, reason if isinstance(reason, str) else None)
        self.sink.terminal()


# --- errors ----------------------------------------------------------------------------------


def _family(cls: type[ProviderError]) -> tuple[type[ProviderError], ...]:
    """`cls` and every subclass errors.py defines, depth first."""
    children = [child for child in cls.__subclasses__() if child.__module__ == cls.__module__]
    return (cls, *(member for child in children for member in _family(child)))


# A provider's error, under each name the cause gives it (`error_bodies.provider_error`).
_PROVIDER_ERRORS = _family(ProviderError)
_PROVIDER_DEFAULTS: dict[str, Any] = {  # its fields(), each with its default
    "status": None,
    "error_type": None,
    "code": None,
    "provider_message": "",
    "retryable": False,
    "retry_after": None,
    "provider": None,
    "model": None,
}
_PROVIDER_FIELDS = tuple(_PROVIDER_DEFAULTS)

# The stream errors raised as themselves, with the fields their error object carries (their
# `fields()`) and defaults for the attributes it does not carry. Any other type the server sends
# (its StreamCancelledError, InternalServerError, ...) becomes a ProviderError.
_STREAM_ERRORS: dict[str, tuple[type[StreamError], tuple[str, ...], dict[str, Any]]] = {
    "ToolCallArgumentParseError": (
        ToolCallArgumentParseError,
        ("name", "tool_call_id", "raw_length", "preview", "cut_off"),
        {
            "name": "",
            "tool_call_id": "",
            "raw_length": 0,
            "preview": "",
            "reason": "",
            "cut_off": False,
        },
    ),
    "EmptyResponseError": (
        EmptyResponseError,
        ("finish_reason", "usage"),
        {"finish_reason": "unknown", "usage": None, "thinking_only": False},
    ),
    "IncompleteStreamError": (IncompleteStreamError, ("missing",), {"missing": "", "detail": ""}),
    "FrameTooLargeError": (
        FrameTooLargeError,
        ("missing", "limit", "size"),
        {"missing": "", "detail": "", "limit": None, "size": None},
    ),
    "StreamTimeoutError": (
        StreamTimeoutError,
        ("missing", "timeout", "seconds"),
        {"missing": "", "detail": "", "timeout": "", "seconds": None},
    ),
    "MalformedFrameError": (
        MalformedFrameError,
        ("missing", "frame", "preview"),
        {"missing": "", "detail": "", "lost": 1, "frame": None, "preview": ""},
    ),
    "CorruptedMessageError": (
        CorruptedMessageError,
        ("missing", "message_index", "crc", "expected", "actual"),
        {
            "missing": "",
            "detail": "",
            "lost": 1,
            "message_index": None,
            "crc": "",
            "expected": None,
            "actual": None,
            "resumable": False,
        },
    ),
    "SequenceGapError": (
        SequenceGapError,
        ("missing", "previous", "received"),
        {"missing": "", "detail": "", "lost": 1, "previous": None, "received": None},
    ),
    "PoolExhaustedError": (
        PoolExhaustedError,
        ("missing", "seconds"),
        {"missing": "", "detail": "", "timeout": "pool", "seconds": None},
    ),
    # the server that produced the stream died or lost its store before finishing it
    "ProducerLostError": (IncompleteStreamError, ("missing",), {"missing": "", "detail": ""}),
    **{cls.__name__: (cls, _PROVIDER_FIELDS, _PROVIDER_DEFAULTS) for cls in _PROVIDER_ERRORS},
    "ProviderConnectionError": (
        ProviderConnectionError,
        ("host", "reason", "attempts", "provider", "model"),
        {
            "host": "",
            "reason": "connect",
            "detail": "",
            "attempts": 1,
            "provider": None,
            "model": None,
        },
    ),
    "StreamProtocolError": (
        StreamProtocolError,
        ("rule", "detail"),
        {"rule": "", "detail": ""},
    ),
}


# The library's own errors of a request that cannot be made, which the server answers with a 400
# before any stream: raised as themselves, as they would be without the server in between.
_REQUEST_ERRORS: dict[str, type[ModelstreamError]] = {
    cls.__name__: cls for cls in (InvalidMessageError, UnsupportedParameterError)
}


def error_from_wire(
    error: Mapping[str, Any], *, refusal: bool = False, words: ErrorWords | None = None
) -> ModelstreamError:
    """The error a server's `{"error": {"type", "message", ...}}` stands for: the stream error
    its `type` names, with the server's message and fields, so `str(error)` and `fields()` are
    the server's. For a `refusal` (an HTTP error status) the request errors are raised as
    themselves too. Any other type is a `ProviderError` whose `error_type` is that type, its
    cause named by `words` (the decoder's: every provider's; none given, the status alone)."""
    type_name = str(error.get("type") or "")
    message = str(error.get("message") or type_name or "the server reported an error")
    known = _STREAM_ERRORS.get(type_name)
    if known is not None:
        cls, fields, defaults = known
        return _rebuilt(cls, message, {**defaults, **{f: error[f] for f in fields if f in error}})
    request_error = _REQUEST_ERRORS.get(type_name) if refusal else None
    if request_error is not None:
        restored: dict[str, Any] = {}
        if request_error is UnsupportedParameterError:
            restored = {"parameter": "", "protocol": "modelstream"}
            restored.update((k, str(error[k])) for k in restored if k in error)
        return _rebuilt(request_error, message, restored)
    return provider_error(
        message,
        status=_int(error.get("status")),
        error_type=type_name or None,
        code=_code(error.get("code")),
        retryable=error.get("retryable") is True,
        retry_after=_seconds(error.get("retry_after")),
        provider="modelstream",
        words=words or ErrorWords(),
    )


def _rebuilt(
    cls: type[ModelstreamError], message: str, attributes: dict[str, Any]
) -> ModelstreamError:
    """An instance of `cls` with the server's message, without running its `__init__` (which
    would write a message of its own from facts the error object does not all carry)."""
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    for name, value in attributes.items():
        setattr(error, name, value)
    if cls is EmptyResponseError:  # not a field: the message says it
        setattr(error, "thinking_only", "only thinking" in message)  # noqa: B010
    return error


def _bytes(value: Any) -> bytes | None:
    """The bytes of an inline item's `data` (base64 on the wire)."""
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:  # binascii.Error
            return None
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _code(value: Any) -> str | int | None:
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def _seconds(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None
