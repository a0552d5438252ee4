"""Resuming a modelstream server's stream after its connection dropped (SPEC §6, docs/server.md).

Every event of the server's stream has an SSE id `<response_id>:<seq>`, `seq` counting from 1;
the response id is also the `X-Response-Id` header. `StreamResume` works on the frames the
decoder's SSE framer produced (the project's one SSE parser), sans-IO, as the `StreamDecoder`'s
`frame_filter`:

- it keeps the `seq` of the last event passed on, the `Last-Event-ID` of the resume
  (`GET /v1/streams/{response_id}`);
- after a reconnect it drops every event whose `seq` it already passed on (a server or proxy
  that ignores `Last-Event-ID` replays from the start), so no event reaches the adapter twice.

A connection cut mid-frame leaves the start of that frame in the framer: the caller restarts the
framing (`StreamDecoder.restart_framing`) when it reconnects, so the next connection starts clean.
What counts as a dropped connection, and how often to try again, is `StreamCall`'s decision.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..framing import RawFrame
from ..protocols.modelstream.encoder import STREAM_PATH, resume_path


@dataclass(frozen=True)
class ResumeLimits:
    """How many times one call reconnects: `max_resumes` in all, and at most
    `max_without_progress` in a row that brought no new event (then the call fails)."""

    max_resumes: int = 32
    max_without_progress: int = 4


class StreamResume:
    """The resume point of one stream: response id and the last `seq` passed on."""

    def __init__(self) -> None:
        self.response_id: str | None = None
        self.last_seq = 0  # of the last event passed on to the decoder
        self.resumes = 0
        self.without_progress = 0  # resumes since an event last arrived
        self._skip_through: int | None = None  # after a reconnect: events up to here are known
        self._previous_id: str | None = None  # the id of the previous frame on this connection

    # --- the connection ---------------------------------------------------------------------

    def responded(self, response_id: str | None) -> None:
        """The response's `X-Response-Id` (a resume answers with the same one)."""
        if response_id and self.response_id is None:
            self.response_id = response_id

    def reconnecting(self) -> None:
        """The connection dropped: skip what is known on the next one."""
        self.resumes += 1
        self.without_progress += 1
        self._skip_through = self.last_seq
        self._previous_id = None

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

    # --- the frames -------------------------------------------------------------------------

    def frames(self, frames: list[RawFrame]) -> list[RawFrame]:
        """The frames to decode: all of them, but after a reconnect, not the events known.

        An SSE id persists across frames, so a frame that repeats the id of the frame before
        it had no `id:` line of its own (`[DONE]`, the error line of the reading side): it is
        never an event seen before, and its id is no progress."""
        if not frames:
            return frames
        kept: list[RawFrame] | None = [] if self._skip_through is not None else None
        previous = self._previous_id
        for frame in frames:
            frame_id = frame[2]
            own = frame_id is not None and frame_id != previous
            previous = frame_id
            seq = _seq(frame_id) if own else None
            if kept is not None:
                if seq is not None and seq <= (self._skip_through or 0):
                    continue  # an event passed on before the reconnect
                if seq is not None:
                    self._skip_through = None  # the first new event: everything else passes
                kept.append(frame)
            if seq is not None and seq > self.last_seq:
                self.last_seq = seq
                self.without_progress = 0
        self._previous_id = previous
        return frames if kept is None else kept


def _seq(frame_id: str | None) -> int | None:
    """The `seq` of an id `<response_id>:<seq>`."""
    if frame_id is None:
        return None
    _, colon, seq = frame_id.rpartition(":")
    return int(seq) if colon and seq.isdigit() else None


__all__ = ["ResumeLimits", "StreamResume"]
