"""First events first: while a stream is starting (its request being read and checked, or its
first event not stored yet), a step of another stream's bulk work (a fast upstream's backlog,
a reader's backlog) waits its turn of the event loop, so a first event never waits behind
other streams' bulk (a fast upstream delivers a whole answer in one read)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Iterator

BURST_SECONDS = 0.0005  # steps of one stream closer than this are a burst (BurstClock)


class StartPriority:
    """Counts the streams starting (`starting`) and arriving (`arriving`), and holds back the
    other streams' bulk steps while there are any."""

    def __init__(self) -> None:
        # streams started whose first event is not stored yet: while there are any, the other
        # producers let the loop run after each event
        self.starting = 0
        self.arriving = 0  # stream requests being read and checked, not started yet
        self._gate = _BulkGate()

    def must_yield(self, burst: BurstClock) -> bool:
        """Whether a step of bulk work waits for the streams that are starting: only when some
        are, and this step follows its stream's last one at once (a fast upstream's backlog, a
        reader's backlog). At a model's pace a step waits for the network anyway."""
        return burst.tick() and bool(self.starting or self.arriving)

    async def yield_to_starts(self) -> None:
        """A step of bulk work (another event, another batch) waits here while streams are
        starting: one such step passes per turn of the event loop, however many streams are
        busy, so a starting stream's every step is a turn away, never a turn of all of them."""
        await self._gate.wait()

    def stream_starting(self) -> None:
        """A stream started: it is starting until `stream_started`."""
        self.starting += 1

    def stream_started(self) -> None:
        """A starting stream's first event is stored, or it ended without one."""
        self.starting -= 1
        self._open_gate()

    @contextlib.contextmanager
    def arrival(self) -> Iterator[None]:
        """Around a stream request's reading and checks: until it starts (or is refused), the
        other streams' bulk yields to it too (`yield_to_starts`)."""
        self.arriving += 1
        try:
            yield
        finally:
            self.arriving -= 1
            self._open_gate()

    def _open_gate(self) -> None:
        if not self.starting and not self.arriving:
            self._gate.open()


class BurstClock:
    """Tells whether a stream's step follows its last one at once (within `BURST_SECONDS`)."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last = -1.0

    def tick(self) -> bool:
        now = time.monotonic()
        burst = now - self._last < BURST_SECONDS
        self._last = now
        return burst


class _BulkGate:
    """Lets one waiter through per turn of the event loop (`StartPriority.yield_to_starts`);
    `open` lets every waiter through at once."""

    def __init__(self) -> None:
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._scheduled = False

    async def wait(self) -> None:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append(waiter)
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._release)
        await waiter

    def _release(self) -> None:
        self._scheduled = False
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():  # a cancelled waiter takes no turn
                waiter.set_result(None)
                break
        if self._waiters:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._release)

    def open(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
