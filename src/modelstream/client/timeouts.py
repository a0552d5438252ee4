"""The three timeouts of a call, and how each is enforced.

- `connect`: opening the TCP/TLS connection (httpx's connect and pool timeouts).
- `idle`: no bytes for N seconds while waiting for the response or mid-stream (httpx's read
  timeout, which restarts with every read).
- `attempt`: the whole of one attempt, from sending the request to the last byte: a deadline
  (`StreamCall.deadline`) around the send and around each read that could outlive it. Both
  clients run the same code (the sync one is generated from the async one): the async client's
  `asyncio.timeout_at` interrupts the wait; the sync client's `timeout_at` below cannot interrupt
  a blocking read, so it checks the deadline when the read returns, and every read is capped at
  `min(idle, attempt)` so that none outlives the attempt by more than that.

A timeout before the first event is retried like a connection error; after it, or once the
attempts are used up, it ends the stream with `StreamTimeoutError`, an `IncompleteStreamError`
that carries the partial response.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx


@dataclass(frozen=True)
class Timeouts:
    """Seconds for each timeout; None disables it."""

    connect: float | None = 10.0
    attempt: float | None = 600.0
    idle: float | None = 60.0

    def httpx_timeout(self, *, cap_read_by_attempt: bool = False) -> httpx.Timeout:
        read = self.idle
        if cap_read_by_attempt and self.attempt is not None:
            read = self.attempt if read is None else min(read, self.attempt)
        return httpx.Timeout(connect=self.connect, read=read, write=read, pool=self.connect)


@contextmanager
def timeout_at(deadline: float | None) -> Iterator[None]:
    """The blocking twin of `asyncio.timeout_at` (same clock, `time.monotonic`): a block that
    ends past `deadline` raises `TimeoutError`, as if it had been interrupted there."""
    yield
    if deadline is not None and time.monotonic() >= deadline:
        raise TimeoutError
