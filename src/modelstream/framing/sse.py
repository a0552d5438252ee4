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

import re
from dataclasses import dataclass

from ..errors import FrameTooLargeError
from .frames import DEFAULT_MAX_FRAME_BYTES, RawFrame

_BOM = b"\xef\xbb\xbf"
_FRAME_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


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
        self._names: dict[bytes, str] = {}

    def feed(self, chunk: bytes) -> list[SSEFrame]:
        """Frames completed by `chunk`."""
        return [SSEFrame(*fields) for fields in self.feed_fields(chunk)]

    def end(self) -> list[SSEFrame]:
        """Flush at end of input: an unterminated last line and a frame missing its blank line."""
        return [SSEFrame(*fields) for fields in self.end_fields()]

    def feed_fields(self, chunk: bytes) -> list[RawFrame]:
        """Like `feed`, as plain `(event, data, id, retry)` tuples: the pipeline's hot path,
        which would otherwise allocate an object per frame."""
        if chunk[-1:] == b"\n" and self._started and not self._tail and not self._skip_lf:
            # the common case: whole lines, nothing held over, no \r\n split across feeds
            return self._lines(chunk.splitlines())
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
        return self._lines(lines.splitlines())

    def take_salvaged(self) -> list[RawFrame]:
        """None: an SSE stream has no damaged frame to step over (a broken line is data)."""
        return []

    def end_fields(self) -> list[RawFrame]:
        """Like `end`, as plain tuples."""
        self._start = b""  # a body that is only part of a BOM holds nothing
        tail = b"".join(self._tail)
        self._tail, self._tail_size = [], 0
        return self._lines([tail, b""] if tail else [b""])

    def _hold(self, piece: bytes) -> None:
        self._tail.append(piece)
        self._tail_size += len(piece)
        if self._tail_size + self._size > self.max_frame_bytes:
            raise FrameTooLargeError(self.max_frame_bytes, self._tail_size + self._size)

    def _lines(self, lines: list[bytes]) -> list[RawFrame]:
        """Interpret complete lines. This is the hot loop: blank, `data:` and known `event:`
        lines are handled inline with the frame state in locals, as they are nearly every line
        of a real stream; an event line is looked up whole in a small cache of names seen."""
        frames: list[RawFrame] = []
        data, event, size, limit = self._data, self._event, self._size, self.max_frame_bytes
        last_id, retry, names = self.last_event_id, self._retry, self._names
        for line in lines:
            if not line:  # a blank line dispatches the frame
                if data:
                    joined = data[0] if len(data) == 1 else b"\n".join(data)
                    frames.append(
                        (event or "message", joined.decode("utf-8", "replace"), last_id, retry)
                    )
                    data, size = [], 0
                event, retry = "", None
            elif line.startswith(b"data:"):
                value = line[6:] if line[5:6] == b" " else line[5:]
                size += len(value) + 1
                if size > limit:
                    raise FrameTooLargeError(limit, size)
                data.append(value)
            elif line in names:
                event = names[line]
            elif line[0] == 0x3A:  # ":" comment
                self.comments += 1
            else:
                name, sep, value = line.partition(b":")
                if sep and value[:1] == b" ":
                    value = value[1:]
                if name == b"event":
                    event = value.decode("utf-8", "replace")
                    if len(names) < 64:  # streams repeat a handful of event names
                        names[line] = event
                elif name == b"data":  # "data" alone: an empty data line
                    data.append(b"")
                    size += 1
                elif name == b"id":
                    if b"\x00" not in value:
                        last_id = value.decode("utf-8", "replace")
                elif name == b"retry" and value.isdigit():
                    retry = int(value)
                # any other field name is ignored, as the SSE standard says
        self._data, self._event, self._size = data, event, size
        self.last_event_id, self._retry = last_id, retry
        return frames


def split_frames(body: bytes) -> list[bytes]:
    """A recorded body cut after each frame's blank line (the last piece may be a frame without
    one); the pieces join back to `body`."""
    frames: list[bytes] = []
    start = 0
    for match in _FRAME_END.finditer(body):
        frames.append(body[start : match.end()])
        start = match.end()
    if start < len(body):
        frames.append(body[start:])
    return frames


__all__ = ["DEFAULT_MAX_FRAME_BYTES", "RawFrame", "SSEDecoder", "SSEFrame", "split_frames"]
