"""What the emulator answers one request with: a body, and how (and how badly) to send it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..framing import SSE, Framing
from .emulation import StreamError
from .turns import Turn

MALFORMED_FRAME = b"data: {not json"
CrcPart = Literal["prelude", "message"]


@dataclass(frozen=True)
class Reply:
    """One queued answer. Build it with `Reply.turn`, `Reply.body`, `Reply.status`,
    `Reply.error_in_body` or `Reply.echo`; the pacing and fault options are the same on each
    and combine freely:

    - `chunk_size`: body bytes per HTTP chunk (default: one chunk per frame).
    - `delay`: seconds between chunks.
    - `delay_first_byte`: seconds before the status line.
    - `stall_after_bytes=(n, seconds)`: send n body bytes, then wait.
    - `disconnect_after_bytes=n`: send n body bytes, then close the connection without
      finishing the chunked body.
    - `malformed_frame_at=k`: insert a broken `data: {not json` frame before frame k (an
      event-stream message whose payload is `{not json` for Bedrock).
    - `stream_error=StreamError(kind, ...)`: the stream reports an error after
      `after_frames` frames and ends (Bedrock: an exception message; Interactions: an `error`
      event or a `failed` interaction).
    - `corrupt_crc_at=(k, "prelude" | "message")`: event-stream bodies only; message k goes
      out with a wrong prelude CRC or message CRC.
    """

    script: Turn | None = None  # a scripted turn, rendered in the route's protocol
    content: bytes | None = None  # or these exact bytes
    code: int = 200
    retry_after: float | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str | None = None
    model: str | None = None  # the model the rendered body names (default: the request's)
    fragment_size: int | None = None  # characters per text / arguments fragment
    chunk_size: int | None = None
    delay: float = 0.0
    delay_first_byte: float = 0.0
    stall_after_bytes: tuple[int, float] | None = None
    disconnect_after_bytes: int | None = None
    malformed_frame_at: int | None = None
    stream_error: StreamError | None = None
    corrupt_crc_at: tuple[int, CrcPart] | None = None
    # `Reply.error_in_body`: the protocol's error object for this status, sent as the body
    error_document: int | None = None
    error_message: str | None = None

    def __post_init__(self) -> None:
        if self.chunk_size is not None and self.chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {self.chunk_size}")
        if self.fragment_size is not None and self.fragment_size < 1:
            raise ValueError(f"fragment_size must be at least 1, got {self.fragment_size}")
        for name in ("delay", "delay_first_byte"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
        if self.stall_after_bytes is not None:
            count, seconds = self.stall_after_bytes
            if count < 0 or seconds < 0:
                raise ValueError("stall_after_bytes takes (bytes >= 0, seconds >= 0)")
        if self.disconnect_after_bytes is not None and self.disconnect_after_bytes < 0:
            raise ValueError("disconnect_after_bytes must not be negative")
        if self.malformed_frame_at is not None and self.malformed_frame_at < 0:
            raise ValueError("malformed_frame_at must not be negative")
        if self.corrupt_crc_at is not None:
            index, part = self.corrupt_crc_at
            if index < 0 or part not in ("prelude", "message"):
                raise ValueError('corrupt_crc_at takes (message >= 0, "prelude" | "message")')
        for code in (self.code, self.error_document):
            if code is not None and not 100 <= code <= 599:
                raise ValueError(f"{code} is not an HTTP status code")

    # --- constructors ---------------------------------------------------------------------

    @classmethod
    def turn(
        cls,
        turn: Turn,
        *,
        model: str | None = None,
        fragment_size: int | None = None,
        headers: Mapping[str, str] | None = None,
        chunk_size: int | None = None,
        delay: float = 0.0,
        delay_first_byte: float = 0.0,
        stall_after_bytes: tuple[int, float] | None = None,
        disconnect_after_bytes: int | None = None,
        malformed_frame_at: int | None = None,
        stream_error: StreamError | None = None,
        corrupt_crc_at: tuple[int, CrcPart] | None = None,
    ) -> Reply:
        """Stream `turn` in the wire format of the endpoint that is called."""
        return cls(
            script=turn,
            model=model,
            fragment_size=fragment_size,
            headers=dict(headers or {}),
            chunk_size=chunk_size,
            delay=delay,
            delay_first_byte=delay_first_byte,
            stall_after_bytes=stall_after_bytes,
            disconnect_after_bytes=disconnect_after_bytes,
            malformed_frame_at=malformed_frame_at,
            stream_error=stream_error,
            corrupt_crc_at=corrupt_crc_at,
        )

    @classmethod
    def echo(
        cls,
        *,
        fragment_size: int | None = None,
        headers: Mapping[str, str] | None = None,
        chunk_size: int | None = None,
        delay: float = 0.0,
        delay_first_byte: float = 0.0,
        stall_after_bytes: tuple[int, float] | None = None,
        disconnect_after_bytes: int | None = None,
        malformed_frame_at: int | None = None,
        stream_error: StreamError | None = None,
        corrupt_crc_at: tuple[int, CrcPart] | None = None,
    ) -> Reply:
        """The default answer ("echo: <last user text>", or vectors), with pacing or faults."""
        return cls(
            fragment_size=fragment_size,
            headers=dict(headers or {}),
            chunk_size=chunk_size,
            delay=delay,
            delay_first_byte=delay_first_byte,
            stall_after_bytes=stall_after_bytes,
            disconnect_after_bytes=disconnect_after_bytes,
            malformed_frame_at=malformed_frame_at,
            stream_error=stream_error,
            corrupt_crc_at=corrupt_crc_at,
        )

    @classmethod
    def body(
        cls,
        content: bytes | str,
        *,
        status: int = 200,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        chunk_size: int | None = None,
        delay: float = 0.0,
        delay_first_byte: float = 0.0,
        stall_after_bytes: tuple[int, float] | None = None,
        disconnect_after_bytes: int | None = None,
        malformed_frame_at: int | None = None,
        corrupt_crc_at: tuple[int, CrcPart] | None = None,
    ) -> Reply:
        """Send these exact bytes (e.g. a recorded body) as the response body."""
        return cls(
            content=content.encode() if isinstance(content, str) else bytes(content),
            code=status,
            content_type=content_type,
            headers=dict(headers or {}),
            chunk_size=chunk_size,
            delay=delay,
            delay_first_byte=delay_first_byte,
            stall_after_bytes=stall_after_bytes,
            disconnect_after_bytes=disconnect_after_bytes,
            malformed_frame_at=malformed_frame_at,
            corrupt_crc_at=corrupt_crc_at,
        )

    @classmethod
    def status(
        cls,
        code: int,
        *,
        retry_after: float | None = None,
        body: bytes | str | Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        delay_first_byte: float = 0.0,
    ) -> Reply:
        """An HTTP error (or any status) with a JSON body in the protocol's error shape.

        `retry_after` sets the `Retry-After` header (and Gemini's RetryInfo detail); `body`
        replaces the default body (a mapping is sent as JSON).
        """
        content: bytes | None
        if body is None:
            content = None
        elif isinstance(body, bytes):
            content = body
        elif isinstance(body, str):
            content = body.encode()
        else:
            content = json.dumps(dict(body)).encode()
        return cls(
            content=content,
            code=code,
            retry_after=retry_after,
            headers=dict(headers or {}),
            content_type="application/json",
            delay_first_byte=delay_first_byte,
        )

    @classmethod
    def error_in_body(
        cls,
        error_status: int,
        *,
        message: str | None = None,
        status: int = 200,
        retry_after: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """The protocol's JSON error object for `error_status` (what `Reply.status` would
        send) as the body of an HTTP `status` response: 200 by default, as some providers and
        gateways answer a stream request that failed before its first event."""
        return cls(
            code=status,
            error_document=error_status,
            error_message=message,
            retry_after=retry_after,
            headers=dict(headers or {}),
            content_type="application/json",
        )


def split_frames(body: bytes, framing: Framing = SSE) -> list[bytes]:
    """A body cut after each frame of its framing (an SSE blank line, each event-stream message
    by its length prefix); the pieces join back to `body`."""
    return framing.split(body)


def with_malformed_frame(
    frames: list[bytes], index: int, broken: bytes | None = None
) -> list[bytes]:
    """`frames` with a broken frame inserted before frame `index` (`broken`, or a broken SSE
    frame with the body's line endings)."""
    if broken is None:
        crlf = any(frame.endswith(b"\r\n\r\n") for frame in frames)
        broken = MALFORMED_FRAME + (b"\r\n\r\n" if crlf else b"\n\n")
    position = min(index, len(frames))
    return [*frames[:position], broken, *frames[position:]]


def with_corrupted_crc(frames: list[bytes], index: int, part: CrcPart) -> list[bytes]:
    """Event-stream `frames` (one message each) with message `index`'s prelude CRC (bytes
    8-11) or message CRC (its last 4 bytes) flipped, so the reader's check fails there."""
    if index >= len(frames):
        raise ValueError(f"corrupt_crc_at: the body has {len(frames)} messages, not {index + 1}")
    message = bytearray(frames[index])
    if len(message) < 16 or int.from_bytes(message[:4], "big") != len(message):
        raise ValueError("corrupt_crc_at needs an event-stream body (Bedrock)")
    position = 8 if part == "prelude" else len(message) - 1
    message[position] ^= 0xFF
    return [*frames[:index], bytes(message), *frames[index + 1 :]]
