"""Whole-body framing: the body is one JSON document (embeddings answer so), given to the
adapter as one frame when the body ends. The body is held within the frame limit, so a runaway
response cannot grow without bound."""

from __future__ import annotations

from ..errors import FrameTooLargeError
from .frames import DEFAULT_MAX_FRAME_BYTES, RawFrame


class JSONBodyFramer:
    """Holds the body; `end_fields` gives it whole as one `("message", body)` frame."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.comments = 0
        self._pieces: list[bytes] = []
        self._size = 0

    def feed_fields(self, chunk: bytes) -> list[RawFrame]:
        self._pieces.append(chunk)
        self._size += len(chunk)
        if self._size > self.max_frame_bytes:
            raise FrameTooLargeError(self.max_frame_bytes, self._size)
        return []

    def end_fields(self) -> list[RawFrame]:
        return [("message", self.body().decode("utf-8", "replace"), None, None)]

    def take_salvaged(self) -> list[RawFrame]:
        """None: the one frame is whole or not there."""
        return []

    def body(self) -> bytes:
        """The bytes held so far."""
        return b"".join(self._pieces)


def split_document(body: bytes) -> list[bytes]:
    """A recorded body as its one frame (none when it is empty)."""
    return [body] if body else []
