"""Incremental Server-Sent Events decoder (bytes → frames), sans-IO.

Follows the WHATWG event-stream parsing rules: `\\n`, `\\r\\n` and `\\r` end lines (a `\\r\\n`
split across two feeds counts once), a leading UTF-8 BOM is dropped, `:` lines are comments,
`data` lines join with `\\n`, an event with no data is not dispatched, `id` persists across
frames. Unlike the browser algorithm, the final frame is also dispatched at end of input when
its blank line is missing: real captures end that way (corpus `anthropicsdk-tool-use`).

Written by hand because no maintained library is sans-IO, byte-incremental and bounded. It
works line by line with `bytes.splitlines`, never byte by byte, and keeps an unterminated line
as a list of pieces, so a long line arriving in small pieces costs linear time, not quadratic.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import FrameTooLargeError

_BOM = b"\xef\xbb\xbf"
DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024


@dataclass(slots=True)
class SSEFrame:
    event: str  # "message" when the frame named none
    data: str
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Feed bytes in any split; get complete frames back."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.comments = 0  # heartbeats such as ": OPENROUTER PROCESSING" or ": keep-alive"
        self.last_event_id: str | None = None
        self._start = b""  # the first bytes, held until we know whether they are a BOM
        self._started = False  # BOM check done
        self._tail: list[bytes] = []  # pieces of an unterminated line
        self._tail_size = 0
        self._skip_lf = False  # the previous feed ended in \r: a leading \n belongs to it
        self._event = ""
        self._data: list[bytes] = []
        self._size = 0  # bytes of data in the current frame
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEFrame]:
        if not self._started:
            chunk = self._start + chunk
            if len(chunk) < len(_BOM) and _BOM.startswith(chunk):
                self._start = chunk  # maybe a BOM split across feeds
                return []
            self._started, self._start = True, b""
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == 0x0A:
                chunk = chunk[1:]
        if not chunk:
            return []
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1
        if cut == 0:  # no line end: the line goes on
            self._hold(chunk)
            return []
        lines = chunk[:cut]
        if self._tail:
            self._tail.append(lines)
            lines = b"".join(self._tail)
            self._tail, self._tail_size = [], 0
        if cut < len(chunk):
            self._hold(chunk[cut:])
        # Only a \r that ends the feed may have its \n in the next one.
        self._skip_lf = cut == len(chunk) and lines[-1] == 0x0D
        frames: list[SSEFrame] = []
        for line in lines.splitlines():
            self._line(line, frames)
        return frames

    def end(self) -> list[SSEFrame]:
        """Flush at end of input: an unterminated last line and a frame missing its blank line."""
        frames: list[SSEFrame] = []
        self._start = b""  # a body that is only part of a BOM holds nothing
        if self._tail:
            tail = b"".join(self._tail)
            self._tail, self._tail_size = [], 0
            self._line(tail, frames)
        self._line(b"", frames)
        return frames

    def _hold(self, piece: bytes) -> None:
        self._tail.append(piece)
        self._tail_size += len(piece)
        if self._tail_size + self._size > self.max_frame_bytes:
            raise FrameTooLargeError(self.max_frame_bytes, self._tail_size + self._size)

    def _line(self, line: bytes, frames: list[SSEFrame]) -> None:
        if not line:
            if self._data:
                frames.append(
                    SSEFrame(
                        self._event or "message",
                        b"\n".join(self._data).decode("utf-8", "replace"),
                        self.last_event_id,
                        self._retry,
                    )
                )
                self._data = []
                self._size = 0
            self._event = ""
            self._retry = None
            return
        if line[0] == 0x3A:  # ":" comment
            self.comments += 1
            return
        name, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._size += len(value) + 1
            if self._size > self.max_frame_bytes:
                raise FrameTooLargeError(self.max_frame_bytes, self._size)
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id":
            if b"\x00" not in value:
                self.last_event_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self._retry = int(value)
        # any other field name is ignored, as the SSE standard says
