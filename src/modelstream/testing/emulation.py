"""What every protocol's emulator module (`modelstream/protocols/<name>/emulator.py`) builds on.

An emulator module defines `EMULATOR`: a `StreamEmulator` (a writer that turns a `Turn` into the
protocol's response frames) or an `EmbeddingEmulator` (one JSON body of vectors), with the
protocol's error bodies and the readers that find what a request asks for. The helpers below
are the pieces the writers and readers share.

One writer per wire: a protocol with a gateway writer (`protocols/<name>/writer.py`: events →
that wire's frames) streams the emulator's replies with that same writer (`GatewayWrite`).
`turn_events` turns the scripted `Turn` into the SPEC events a decoder of the protocol would
give for it (`EventStyle`: each protocol's fidelity keys, docs/providers.md), and the writer
writes them, as it writes an upstream's events for a gateway caller. The protocols without a
gateway writer (Bedrock, Gemini Interactions, the embeddings) keep writers of their own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from ..assembler import delta_event
from ..protocols.common.fidelity_seal import FidelitySeal
from ..protocols.common.gateway import InboundRequest, StreamWriter, WriteContext
from ..types import Event, Fidelity, Usage
from .turns import Embedding, Finish, Media, Text, Thinking, ToolCall, Turn

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

    # the turn as the protocol's frames (`GatewayWrite`: by the protocol's gateway writer)
    write: Callable[[EmulatedStream], Iterator[bytes]]
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


# --- one writer per wire: the turn as SPEC events, written by the wire's gateway writer --------

# Emulated replies are sealed with a key of their own, so that the same turn renders to the same
# bytes (a gateway's seal key is the server's secret; nothing here is one).
EMULATOR_SEAL = FidelitySeal(b"modelstream emulator: a fixed, public seal key")


@dataclass(frozen=True)
class EventStyle:
    """How a protocol's stream decoder reads a scripted turn back (docs/providers.md, "Fidelity
    keys"): the fidelity each kind of item carries, and the ids of tool calls without one."""

    # the fidelity key of a Thinking's signature, and of Thinking(redacted=...)'s data
    signature: str = "signature"
    redacted: str = "redacted_thinking"
    # what every thinking item with text carries besides (Chat's `reasoning_field`, Responses'
    # summary `part`)
    thinking: Mapping[str, Any] = field(default_factory=dict)
    # the fidelity key of a ToolCall's signature; None: the protocol's calls carry none
    call_signature: str | None = None
    call_id_prefix: str = "call_"  # a call without an id: `<prefix><response id tail><index>`
    # a call without an id gets the item assembler's `call_<n>` instead (Gemini sends no ids)
    synthesized_call_ids: bool = False
    # the fidelity of the `n`th Media item of the turn (Chat's audio clip id), None: none
    media: Callable[[EmulatedStream, Media, int], Fidelity | None] | None = None


def turn_events(stream: EmulatedStream, style: EventStyle | None = None) -> list[Event]:
    """The turn as the SPEC events a decoder of the protocol gives for it (SPEC §2).

    Per item: a `.delta` per fragment of `stream.size` characters (tool-call arguments as their
    JSON, an audio clip in `byte_pieces`, an image whole), the first of a tool call with its id
    and name; the item's fidelity on one empty fragment after them (the item assembler's rule C)
    and on the `.done`. An empty text or thinking without fidelity is no item (rule D). Then
    `stop` with the turn's usage and finish reason (`stop` with a tool call: `tool_call`)."""
    style = style or EventStyle()
    created = stream.created * 1000
    events: list[Event] = []

    def emit(item: dict[str, Any]) -> None:
        events.append(delta_event(item, created))

    calls = media = 0
    for index, item in enumerate(stream.turn.items):
        fidelity: Fidelity = {}
        if isinstance(item, Text):
            _group(emit, "text", {}, stream.pieces(item.text), fidelity)
        elif isinstance(item, Thinking) and item.redacted is not None:
            _group(emit, "thinking", {}, [], {style.redacted: item.redacted})
        elif isinstance(item, Thinking):
            if item.thinking:
                fidelity.update(style.thinking)
            if item.signature is not None:
                fidelity[style.signature] = item.signature
            _group(emit, "thinking", {}, stream.pieces(item.thinking), fidelity)
        elif isinstance(item, ToolCall):
            calls += 1
            call_id = item.id
            if call_id is None and style.synthesized_call_ids:
                call_id = f"call_{calls}"
            elif call_id is None:
                call_id = stream.call_id(item, index, style.call_id_prefix)
            if style.call_signature is not None and item.signature is not None:
                fidelity[style.call_signature] = item.signature
            fixed = {"tool_call_id": call_id, "name": item.name}
            _group(emit, "tool_call", fixed, stream.pieces(arguments_json(item)), fidelity)
        elif isinstance(item, Media):
            pieces = [item.data] if item.kind == "image" else stream.byte_pieces(item.data)
            if style.media is not None:
                fidelity.update(style.media(stream, item, media) or {})
            media += 1
            _group(emit, "inline_data", {"mime_type": item.mime_type}, pieces, fidelity)
    finish = stream.finish
    if finish == "stop" and calls:
        finish = "tool_call"
    events.append(
        {
            "role": "assistant",
            "event_type": "stop",
            "content_items": [],
            "usage_metadata": stream.usage,
            "finish_reason": finish,
            "created_at": created,
        }
    )
    return events


_GROWING = {"text": "text", "thinking": "thinking", "tool_call": "arguments", "inline_data": "data"}


def _group(
    emit: Callable[[dict[str, Any]], None],
    kind: str,
    fixed: dict[str, Any],
    pieces: Sequence[str | bytes],
    fidelity: Fidelity,
) -> None:
    """One item's group: `K.delta+ K.done` (see `turn_events`)."""
    growing = _GROWING[kind]
    if kind in ("text", "thinking") and not pieces and not fidelity:
        return  # nothing a decoder would read
    joined: Any = b"".join(pieces) if kind == "inline_data" else "".join(pieces)  # type: ignore[arg-type]
    later = {**fixed, **{key: "" for key in fixed if key != "mime_type"}}  # id, name: first only
    for number, piece in enumerate(pieces):
        emit({"type": f"{kind}.delta", **(later if number else fixed), growing: piece})
    if fidelity or not pieces:  # rule C: the fidelity on an empty fragment of its own
        closing = {"type": f"{kind}.delta", **(later if pieces else fixed), growing: joined[:0]}
        emit({**closing, "fidelity": dict(fidelity)} if fidelity else closing)
    done: dict[str, Any] = {"type": f"{kind}.done", **fixed, growing: joined}
    if kind == "tool_call":
        done[growing] = json.loads(joined)
    if fidelity:
        done["fidelity"] = dict(fidelity)
    emit(done)


def _no_options(stream: EmulatedStream) -> Mapping[str, Any]:
    return {}


@dataclass(frozen=True)
class GatewayWrite:
    """A `StreamEmulator.write` that streams the turn through the protocol's gateway writer:
    `turn_events`, fed to `writer` (the one the gateway answers its callers with).

    The writer's context is the reply's: its response id, model and creation time; the upstream
    is the protocol itself (its fidelity is written natively, as its own provider sends it); the
    request holds the `options` the writer reads (`InboundRequest.options`: Chat's
    `include_usage`, each writer documents its own)."""

    protocol: str
    writer: Callable[[WriteContext], StreamWriter]
    style: EventStyle = field(default_factory=EventStyle)
    options: Callable[[EmulatedStream], Mapping[str, Any]] = _no_options

    def context(self, stream: EmulatedStream) -> WriteContext:
        request = InboundRequest(
            model=stream.model, messages=[], config={}, stream=True, options=self.options(stream)
        )
        return WriteContext(
            response_id=stream.id,
            model=stream.model,
            created=stream.created,
            upstream=self.protocol,
            seal=EMULATOR_SEAL,
            request=request,
        )

    def events(self, stream: EmulatedStream) -> list[Event]:
        return turn_events(stream, self.style)

    def __call__(self, stream: EmulatedStream) -> Iterator[bytes]:
        writer = self.writer(self.context(stream))
        for event in self.events(stream):
            yield from writer.feed(event)


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
