"""Resuming a modelstream server's stream after its connection dropped (SPEC §6, docs/server.md).

Every event of the server's stream has an SSE id `<response_id>:<seq>`, `seq` counting from 1;
the response id is also the `X-Response-Id` header. `StreamResume` sits between the body and the
decoder, sans-IO:

- it passes on whole frames only, holding the bytes of a frame still arriving, so a connection
  cut mid-frame leaves nothing half-fed in the decoder: the next connection starts clean;
- it keeps the `seq` of the last event passed on, the `Last-Event-ID` of the resume
  (`GET /v1/streams/{response_id}`);
- after a reconnect it drops every event whose `seq` it already passed on (a server or proxy
  that ignores `Last-Event-ID` replays from the start), so no event reaches the decoder twice.

What counts as a dropped connection, and how often to try again, is `StreamCall`'s decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import FrameTooLargeError
from ..protocols.modelstream.encoder import STREAM_PATH, resume_path
from ..sse import DEFAULT_MAX_FRAME_BYTES

_FRAME = re.compile(rb".*?(?:\r\n\r\n|\n\n)", re.S)  # one frame and the blank line ending it
_BLANK_LINE_ENDS = (b"\n\n", b"\r\n\r\n")


@dataclass(frozen=True)
class ResumeLimits:
    """How many times one call reconnects: `max_resumes` in all, and at most
    `max_without_progress` in a row that brought no new event (then the call fails)."""

    max_resumes: int = 32
    max_without_progress: int = 4


class StreamResume:
    """The resume point of one stream: response id, last `seq`, the frame still arriving."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.response_id: str | None = None
        self.last_seq = 0  # of the last event passed on to the decoder
        self.resumes = 0
        self.without_progress = 0  # resumes since an event last arrived
        self._held: list[bytes] = []  # the start of a frame whose blank line has not arrived
        self._held_size = 0
        self._skip_through: int | None = None  # after a reconnect: events up to here are known

    # --- the connection ---------------------------------------------------------------------

    def responded(self, response_id: str | None) -> None:
        """The response's `X-Response-Id` (a resume answers with the same one)."""
        if response_id and self.response_id is None:
            self.response_id = response_id

    def reconnecting(self) -> None:
        """The connection dropped: forget the partial frame, and skip what is known."""
        self.resumes += 1
        self.without_progress += 1
        self._held, self._held_size = [], 0
        self._skip_through = self.last_seq

    def resume_url(self, stream_url: str) -> str:
        """The resume URL, from the URL the stream was requested at."""
        assert self.response_id is not None
        base = stream_url.removesuffix(STREAM_PATH)
        return base + resume_path(self.response_id)

    def last_event_id(self) -> str | None:
        """The `Last-Event-ID` of the resume; None before any event (the whole stream)."""
        if self.last_seq == 0 or self.response_id is None:
            return None
        return f"{self.response_id}:{self.last_seq}"

    # --- the body ---------------------------------------------------------------------------

    def whole_frames(self, chunk: bytes) -> bytes:
        """The complete frames `chunk` finishes, without events already passed on."""
        if not self._held:
            if chunk.endswith(_BLANK_LINE_ENDS):  # the common case: whole frames, nothing held
                frames = chunk
            else:
                cut = _after_last_blank_line(chunk)
                if cut:
                    frames = chunk[:cut]
                self._hold(chunk[cut:])
                if not cut:
                    return b""
        else:  # the blank line may straddle the held bytes and this chunk
            before = self._held[-1][-3:]
            cut = _after_last_blank_line(before + chunk) - len(before)
            if cut <= 0:
                self._hold(chunk)
                return b""
            frames = b"".join(self._held) + chunk[:cut]
            self._held, self._held_size = [], 0
            self._hold(chunk[cut:])
        if self._skip_through is not None:
            frames = self._drop_known(frames)
        seq = _last_seq(frames)
        if seq is not None and seq > self.last_seq:
            self.last_seq = seq
            self.without_progress = 0
        return frames

    def _hold(self, piece: bytes) -> None:
        if not piece:
            return
        self._held.append(piece)
        self._held_size += len(piece)
        if self._held_size > self.max_frame_bytes:
            raise FrameTooLargeError(self.max_frame_bytes, self._held_size)

    def _drop_known(self, frames: bytes) -> bytes:
        """The frames after the known events; from the first new event on, everything passes."""
        known = self._skip_through
        assert known is not None
        kept: list[bytes] = []
        for match in _FRAME.finditer(frames):
            frame = match.group()
            if self._skip_through is None:
                kept.append(frame)
                continue
            seq = _last_seq(frame)
            if seq is None:  # a comment, [DONE] or an error of the reading side: never a dup
                kept.append(frame)
            elif seq > known:
                self._skip_through = None
                kept.append(frame)
        return b"".join(kept)


def _after_last_blank_line(data: bytes) -> int:
    """The index after the last blank line (LF or CRLF) in `data`, 0 when there is none."""
    lf, crlf = data.rfind(b"\n\n"), data.rfind(b"\r\n\r\n")
    return max(lf + 2 if lf >= 0 else 0, crlf + 4 if crlf >= 0 else 0)


def _last_seq(frames: bytes) -> int | None:
    """The `seq` in the last `id:` line of whole frames, if any. An `id:` line starts a line,
    and no JSON `data:` line holds a line break, so the search cannot land inside an event."""
    at = frames.rfind(b"\nid: ")
    if at >= 0:
        at += 1
    elif frames.startswith(b"id: "):
        at = 0
    else:
        return None
    end = frames.find(b"\n", at)
    line = frames[at + 4 : end if end >= 0 else len(frames)].rstrip(b"\r")
    _, colon, seq = line.rpartition(b":")
    return int(seq) if colon and seq.isdigit() else None


__all__ = ["ResumeLimits", "StreamResume"]
