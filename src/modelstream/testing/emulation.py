"""What every protocol's emulator module (`modelstream/protocols/<name>/emulator.py`) builds on.

An emulator module defines `EMULATOR`: a `StreamEmulator` (a writer that turns a `Turn` into the
protocol's response frames) or an `EmbeddingEmulator` (one JSON body of vectors), with the
protocol's error bodies and the readers that find what a request asks for. The helpers below
are the pieces the writers and readers share.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from ..types import Usage
from .turns import Embedding, Finish, ToolCall, Turn

SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8"


class ErrorBodyWriter(Protocol):
    def __call__(
        self, status: int, message: str, *, retry_after: float | None, endpoint: bool = True
    ) -> bytes:
        """An HTTP error body in the provider's shape; `endpoint=False`: the path is none."""
        ...


def always(_body: dict[str, Any]) -> bool:
    return True


@dataclass(frozen=True)
class StreamError:
    """An error the provider reports inside a `200` stream, after `after_frames` frames of the
    turn (0: before its first event); the stream ends with it.

    `kind` is the protocol's own word: Bedrock's exception type (`throttlingException`,
    `validationException`, `modelStreamErrorException`, ...); for Gemini Interactions `"error"`
    (an `error` event) or `"failed"` (the interaction ends with status `failed`). `status` is
    the HTTP-like code the error object carries, where the protocol sends one.
    """

    kind: str
    message: str = "emulated stream error"
    after_frames: int = 0
    status: int | None = None

    def __post_init__(self) -> None:
        if self.after_frames < 0:
            raise ValueError("after_frames must not be negative")


@dataclass(frozen=True)
class StreamEmulator:
    """How the emulator streams one protocol."""

    write: Callable[[EmulatedStream], Iterator[bytes]]  # the turn as the protocol's frames
    error_body: ErrorBodyWriter
    last_user_text: Callable[[dict[str, Any]], str]  # what the default echo answers
    response_id_prefix: str = "emu"
    wants_usage: Callable[[dict[str, Any]], bool] = always  # does the request ask for usage
    content_type: str = SSE_CONTENT_TYPE  # of a streamed answer
    # the headers an HTTP error carries besides its body (Bedrock: `x-amzn-ErrorType`)
    error_headers: Callable[[int], dict[str, str]] | None = None
    # the frame `malformed_frame_at` inserts (None: `data: {not json` with the body's line ends)
    malformed_frame: bytes | None = None
    # an in-stream error as the protocol's frame (None: the protocol has none emulated)
    stream_error: Callable[[StreamError, EmulatedStream], bytes] | None = None
    names_model: bool = True  # the stream names its model (Bedrock's never does)
    redacted_thinking: bool = False  # the writer can send `Thinking(redacted=...)`
    media: frozenset[str] = frozenset()  # the `Media` kinds the writer can send: image, audio


@dataclass(frozen=True)
class EmbeddingEmulator:
    """How the emulator answers one embedding protocol."""

    # (vectors, model, usage, batch) -> the body; `batch` is None when the request path says it
    write: Callable[[list[Embedding], str, Usage, bool | None], bytes]
    error_body: ErrorBodyWriter
    inputs: Callable[[str, dict[str, Any]], list[str]]  # (path, body) -> texts to embed
    dimensions: Callable[[str, dict[str, Any]], int | None]  # (path, body) -> the size asked


class EmulatedStream:
    """What every writer needs to know about the turn it writes."""

    def __init__(
        self,
        *,
        turn: Turn,
        model: str,
        size: int,
        include_usage: bool,
        response_id: str,
        created: int,
    ) -> None:
        self.turn = turn
        self.model = model
        self.size = size
        self.include_usage = include_usage
        self.id = response_id
        self.created = created
        self.usage = turn.usage_counts()
        self.finish: Finish = turn.finish_reason

    def pieces(self, text: str) -> list[str]:
        size = self.size
        return [text[i : i + size] for i in range(0, len(text), size)]

    def byte_pieces(self, data: bytes) -> list[bytes]:
        """An audio clip's chunks (a few hundred bytes each, as providers stream them)."""
        size = self.size * 64
        return [data[i : i + size] for i in range(0, len(data), size)] or [b""]

    def call_id(self, call: ToolCall, index: int, prefix: str) -> str:
        return call.id if call.id is not None else f"{prefix}{self.id[-12:]}{index}"


def count(usage: Usage, key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) else 0


def compact_json(value: Any) -> bytes:
    return orjson.dumps(value)


def arguments_json(call: ToolCall) -> str:
    return json.dumps(dict(call.arguments), ensure_ascii=False, separators=(",", ":"))


def seconds_text(seconds: float) -> str:
    """A number of seconds as a header writes it: `2`, `1.5` (never `1e+06`)."""
    value = float(seconds)
    return str(int(value)) if value.is_integer() else repr(value)


# --- reading requests --------------------------------------------------------------------------


def last_text(messages: Any, read: Callable[[dict[str, Any]], str | None]) -> str:
    """The text of the last message `read` finds one in, "" when none."""
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict):
            text = read(message)
            if text is not None:
                return str(text)
    return ""


def parts_text(content: Any) -> str:
    """The text of a Gemini-style content (`parts` with text or function responses)."""
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        return ""
    texts = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part.get("functionResponse"), dict):
            response = part["functionResponse"].get("response")
            texts.append(json.dumps(response, ensure_ascii=False))
    return " ".join(text for text in texts if text)


def joined_text(content: Any, text_type: str) -> str:
    """A content that is a string, or a list of typed parts whose text parts are joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        str(part.get("text", ""))
        for part in content
        if isinstance(part, dict) and part.get("type") in (text_type, "text")
    ]
    return " ".join(text for text in texts if text)


def dimensions_within(value: Any) -> int | None:
    """A vector size a request may ask for, or None."""
    return value if isinstance(value, int) and 0 < value <= 4096 else None
