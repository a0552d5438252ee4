"""`MemoryStore`: the stream log in this process's memory (one server instance).

Bounded twice: at most `max_events_per_stream` entries per stream, and at most `max_bytes` of
entry data over all streams. When an append would pass the byte cap, expired streams go first,
then the oldest finished ones (they may be resumed no longer); if running streams alone fill
the cap, the append raises `StoreFullError`, and so does `create` while less than a sixteenth
of the cap is free. Expiry is lazy: checked on every create and append,
so no timer task is needed. Use from one event loop only.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field

from .base import (
    Entry,
    StoreFullError,
    StreamStore,
    StreamTooLongError,
    UnknownStreamError,
)

DEFAULT_MAX_EVENTS_PER_STREAM = 100_000
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
ENTRY_OVERHEAD = 64  # bytes counted per entry beyond its data, so tiny entries are not free
MAX_BATCH = 1024  # entries handed to a reader at once


@dataclass(eq=False)
class _Stream:
    owner: str = ""
    entries: list[bytes] = field(default_factory=list)
    size: int = 0
    finished: bool = False
    readers: int = 0
    left_at: float = 0.0  # when the last reader left (or the stream was created)
    expires_at: float | None = None
    waiters: list[asyncio.Future[bool]] = field(default_factory=list)

    def wake(self) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(True)
        self.waiters.clear()


class MemoryStore(StreamStore):
    """The in-process stream store (module docstring)."""

    kind = "memory"

    def __init__(
        self,
        *,
        max_events_per_stream: int = DEFAULT_MAX_EVENTS_PER_STREAM,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_events_per_stream = max_events_per_stream
        self.max_bytes = max_bytes
        self._clock = clock
        self._streams: dict[str, _Stream] = {}
        self._finished: dict[str, None] = {}  # finished streams, oldest first
        self._expiry: list[tuple[float, str]] = []  # heap of (expires_at, response_id)
        self._size = 0

    @property
    def size(self) -> int:
        """Bytes counted against `max_bytes` now."""
        return self._size

    def __len__(self) -> int:
        return len(self._streams)

    async def create(self, response_id: str, owner: str = "") -> None:
        self._sweep()
        if response_id in self._streams:
            raise ValueError(f"stream {response_id!r} already exists")
        if not self._evict(self.max_bytes // 16):  # a new stream needs room for some events
            raise StoreFullError(self.max_bytes)
        self._streams[response_id] = _Stream(owner=owner, left_at=self._clock())

    async def append(self, response_id: str, seq: int, data: bytes) -> None:
        await self.append_many(response_id, seq, (data,))

    async def append_many(self, response_id: str, first_seq: int, entries: Sequence[bytes]) -> None:
        """All of `entries` or none (every check comes before the first entry is added); the
        readers are woken once for the batch."""
        stream = self._get(response_id)
        if stream.finished:
            raise ValueError(f"stream {response_id!r} is finished; nothing may be appended")
        held = len(stream.entries)
        if first_seq != held + 1:
            raise ValueError(f"stream {response_id!r}: expected seq {held + 1}, got {first_seq}")
        if not entries:
            return
        if held + len(entries) > self.max_events_per_stream:
            raise StreamTooLongError(self.max_events_per_stream)
        cost = sum(map(len, entries)) + ENTRY_OVERHEAD * len(entries)
        if self._size + cost > self.max_bytes:
            self._sweep()
            if self._size + cost > self.max_bytes and not self._evict(cost):
                raise StoreFullError(self.max_bytes)
        # orjson (≥3.12) hands back its ~4 KiB output buffer even for a short result: keep an
        # exact-size copy, or a retained stream would hold ~17 times the bytes the cap counts
        stream.entries.extend([b"".join((data, b"")) for data in entries])
        stream.size += cost
        self._size += cost
        if stream.waiters:
            stream.wake()

    async def finish(self, response_id: str, terminal: bytes | None = None) -> int:
        stream = self._get(response_id)
        if not stream.finished:
            if terminal is not None:
                self._add(stream, terminal, len(terminal) + ENTRY_OVERHEAD)
            stream.finished = True
            self._finished[response_id] = None
            stream.wake()
        return len(stream.entries)

    async def read(
        self, response_id: str, after_seq: int, *, idle_timeout: float
    ) -> AsyncGenerator[list[Entry], None]:
        stream = self._get(response_id)
        entries = stream.entries
        cursor = max(after_seq, 0)
        loop = asyncio.get_running_loop()
        # One keep-alive timer per reader, not one per wait: it is armed for the idle deadline
        # and, when it fires early (entries arrived meanwhile), re-armed for the new deadline.
        deadline = loop.time() + idle_timeout
        waiter: asyncio.Future[bool] | None = None
        timer: asyncio.TimerHandle | None = None

        def on_timer() -> None:
            nonlocal timer
            if loop.time() < deadline:
                timer = loop.call_at(deadline, on_timer)
                return
            timer = None
            if waiter is not None and not waiter.done():
                waiter.set_result(False)  # idle: the reader sends a keep-alive

        stream.readers += 1
        try:
            while True:
                if cursor < len(entries):
                    end = min(len(entries), cursor + MAX_BATCH)
                    batch = list(zip(range(cursor + 1, end + 1), entries[cursor:end], strict=True))
                    cursor = end
                    yield batch
                    deadline = loop.time() + idle_timeout
                    continue
                if stream.finished:
                    return
                waiter = loop.create_future()
                stream.waiters.append(waiter)
                if timer is None:
                    timer = loop.call_at(deadline, on_timer)
                woken = False
                try:
                    woken = await waiter
                finally:
                    if not woken:  # timed out or cancelled: `wake` did not take it off the list
                        with contextlib.suppress(ValueError):
                            stream.waiters.remove(waiter)
                    waiter = None
                if not woken:
                    yield []
                    deadline = loop.time() + idle_timeout
        finally:
            if timer is not None:
                timer.cancel()
            stream.readers -= 1
            if stream.readers == 0:
                stream.left_at = self._clock()

    async def exists(self, response_id: str) -> bool:
        self._sweep()
        return response_id in self._streams

    async def owner(self, response_id: str) -> str | None:
        self._sweep()
        stream = self._streams.get(response_id)
        return None if stream is None else stream.owner

    async def unread_seconds(self, response_id: str) -> float | None:
        stream = self._streams.get(response_id)
        if stream is None:
            return None
        if stream.readers:
            return 0.0
        return max(0.0, self._clock() - stream.left_at)

    async def expire(self, response_id: str, seconds: float) -> None:
        stream = self._get(response_id)
        stream.expires_at = self._clock() + max(0.0, seconds)
        heapq.heappush(self._expiry, (stream.expires_at, response_id))
        self._sweep()

    # --- bookkeeping ------------------------------------------------------------------------

    def _get(self, response_id: str) -> _Stream:
        stream = self._streams.get(response_id)
        if stream is None:
            raise UnknownStreamError(response_id)
        return stream

    def _add(self, stream: _Stream, data: bytes, cost: int) -> None:
        stream.entries.append(data)
        stream.size += cost
        self._size += cost
        if stream.waiters:
            stream.wake()

    def _drop(self, response_id: str) -> None:
        stream = self._streams.pop(response_id, None)
        if stream is not None:
            self._size -= stream.size
            self._finished.pop(response_id, None)

    def _sweep(self) -> None:
        """Forget the streams whose retention ended."""
        now = self._clock()
        while self._expiry and self._expiry[0][0] <= now:
            expires_at, response_id = heapq.heappop(self._expiry)
            stream = self._streams.get(response_id)
            if stream is not None and stream.expires_at == expires_at:
                self._drop(response_id)

    def _evict(self, needed: int) -> bool:
        """Drop the oldest finished streams until `needed` more bytes fit; False if they don't."""
        while self._size + needed > self.max_bytes and self._finished:
            self._drop(next(iter(self._finished)))
        return self._size + needed <= self.max_bytes
