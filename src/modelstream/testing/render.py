"""Write a `Turn` as a provider's response body, in that protocol's exact wire format.

The writers live with their protocols (`modelstream/protocols/<name>/emulator.py`), each modelled
on the real captures in the shared corpus: event names, JSON shapes, where usage goes,
`data: [DONE]`, Gemini's CRLF framing and `"key": value` spacing. A protocol the gateway answers
in is written by its gateway writer (`emulation.GatewayWrite`: one writer per wire). Text,
thinking and tool-call arguments are cut into fragments of `fragment_size` characters, so a turn
streams the way a model's does. Two adjacent texts join into one item in Chat Completions, whose
wire format has no block identity (Gemini's writer marks the second with a signature of its
own): script them as one item there.
"""

from __future__ import annotations

import hashlib
import time

from .emulation import EmbeddingEmulator, EmulatedStream, StreamError, seconds_text
from .routes import emulated_protocols, emulator_for
from .turns import Embedding, Media, Thinking, Turn

STREAM_PROTOCOLS = emulated_protocols(embedding=False)
EMBEDDING_PROTOCOLS = emulated_protocols(embedding=True)
ALL_PROTOCOLS = STREAM_PROTOCOLS + EMBEDDING_PROTOCOLS
# A path that is no endpoint is answered the way OpenAI answers one (and a turn queued for it
# streams as Chat Completions).
NO_ENDPOINT_PROTOCOL = "openai-chat"

DEFAULT_MODEL = "emulated-model"
DEFAULT_FRAGMENT_SIZE = 8


def render(
    protocol: str,
    turn: Turn,
    *,
    model: str = DEFAULT_MODEL,
    fragment_size: int = DEFAULT_FRAGMENT_SIZE,
    include_usage: bool = True,
    response_id: str | None = None,
    created: int | None = None,
    batch: bool | None = None,
    stream_error: StreamError | None = None,
) -> bytes:
    """The response body for `turn` in `protocol`'s wire format."""
    return b"".join(
        render_frames(
            protocol,
            turn,
            model=model,
            fragment_size=fragment_size,
            include_usage=include_usage,
            response_id=response_id,
            created=created,
            batch=batch,
            stream_error=stream_error,
        )
    )


def render_frames(
    protocol: str,
    turn: Turn,
    *,
    model: str = DEFAULT_MODEL,
    fragment_size: int = DEFAULT_FRAGMENT_SIZE,
    include_usage: bool = True,
    response_id: str | None = None,
    created: int | None = None,
    batch: bool | None = None,
    stream_error: StreamError | None = None,
) -> list[bytes]:
    """Like `render`, as the list of frames (SSE frames, event-stream messages, or one JSON
    document for embeddings).

    `batch` (gemini-embedding): answer `batchEmbedContents` rather than `embedContent`;
    None means batch unless the turn has exactly one vector. `stream_error`: the turn's first
    `after_frames` frames, then the protocol's in-stream error.
    """
    if fragment_size < 1:
        raise ValueError(f"fragment_size must be at least 1, got {fragment_size}")
    emulator = emulator_for(protocol)
    embeddings = [item for item in turn.items if isinstance(item, Embedding)]
    if isinstance(emulator, EmbeddingEmulator):
        if len(embeddings) != len(turn.items):
            raise ValueError(f"{protocol} answers with Embedding items only")
        return [emulator.write(embeddings, model, turn.usage_counts(), batch)]
    if embeddings:
        raise ValueError(f"{protocol} streams text, thinking and tool calls, not embeddings")
    redacted = any(isinstance(item, Thinking) and item.redacted is not None for item in turn.items)
    if redacted and not emulator.redacted_thinking:
        raise ValueError(f"{protocol} has no redacted thinking to send")
    for item in turn.items:
        if isinstance(item, Media) and item.kind not in emulator.media:
            can = ", ".join(sorted(emulator.media)) or "no media"
            raise ValueError(f"{protocol} cannot send {item.kind} (it sends {can})")
    stream = EmulatedStream(
        turn=turn,
        model=model,
        size=fragment_size,
        include_usage=include_usage,
        response_id=response_id or _response_id(emulator.response_id_prefix, protocol, turn, model),
        created=int(time.time()) if created is None else created,
    )
    frames = list(emulator.write(stream))
    if stream_error is None:
        return frames
    if emulator.stream_error is None:
        raise ValueError(f"the emulator has no in-stream error for {protocol}")
    return [*frames[: stream_error.after_frames], emulator.stream_error(stream_error, stream)]


def _response_id(prefix: str, protocol: str, turn: Turn, model: str) -> str:
    digest = hashlib.sha256(f"{protocol}|{model}|{turn!r}".encode()).hexdigest()[:24]
    return prefix + digest


def embedding_for(text: str, dimensions: int = 8) -> list[float]:
    """A deterministic vector for `text` (what the emulator answers when nothing is queued)."""
    values: list[float] = []
    seed = text.encode()
    while len(values) < dimensions:
        seed = hashlib.sha256(seed).digest()
        values.extend(round(byte / 127.5 - 1.0, 6) for byte in seed)
    return values[:dimensions]


def error_body(
    protocol: str | None,
    status: int,
    message: str | None = None,
    *,
    retry_after: float | None = None,
) -> bytes:
    """An HTTP error body in the shape `protocol`'s provider uses (OpenAI's when None)."""
    message = message or f"emulated error: HTTP {status}"
    writer = emulator_for(protocol or NO_ENDPOINT_PROTOCOL).error_body
    return writer(status, message, retry_after=retry_after, endpoint=protocol is not None)


__all__ = [
    "ALL_PROTOCOLS",
    "EMBEDDING_PROTOCOLS",
    "STREAM_PROTOCOLS",
    "embedding_for",
    "error_body",
    "render",
    "render_frames",
    "seconds_text",
]
