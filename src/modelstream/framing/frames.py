"""What every framer gives and offers, whatever its wire: plain `(event, data, id, retry)`
frames, fed bytes in any split, within a frame limit."""

from __future__ import annotations

from typing import Protocol

DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024

# (event, data, id, retry) of one frame; only SSE frames have an id (and retry)
RawFrame = tuple[str, str, str | None, int | None]


class Framer(Protocol):
    """Feed bytes in any split, get whole frames back; `end_fields` flushes at end of body."""

    comments: int  # keep-alive traffic seen and dropped (SSE comment lines)

    def feed_fields(self, chunk: bytes) -> list[RawFrame]: ...

    def end_fields(self) -> list[RawFrame]: ...

    def take_salvaged(self) -> list[RawFrame]:
        """After a `CorruptedMessageError`: the frames read before the damaged one, which come
        before its error. A framer whose damaged frames cannot be stepped over has none."""
        ...


__all__ = ["DEFAULT_MAX_FRAME_BYTES", "Framer", "RawFrame"]
