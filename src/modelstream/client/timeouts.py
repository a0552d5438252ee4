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

What a client or a call takes as `timeouts`/`timeout` (`timeouts_from`): a `Timeouts`; a number
of seconds, the longest one attempt may take (connect and idle keep their defaults when those are
shorter); an `httpx.Timeout` (its connect and read timeouts, the attempt keeps its default); or
`False`/`0`, no timeouts at all.

A timeout before the first event is retried like a connection error; after it, or once the
attempts are used up, it ends the stream with `StreamTimeoutError`, an `IncompleteStreamError`
that carries the partial response.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

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


NO_TIMEOUTS = Timeouts(connect=None, attempt=None, idle=None)
# What a client's `timeouts=` and a call's `timeout=` accept (module docstring).
TimeoutsOption = Timeouts | float | httpx.Timeout | Literal[False]


def timeouts_from(value: object, parameter: str = "timeouts") -> Timeouts:
    """The `Timeouts` a setting stands for; a `TypeError` naming `parameter` for anything else
    (checked when the client is made, not when a timeout would first matter)."""
    if isinstance(value, Timeouts):
        return value
    if value is False:
        return NO_TIMEOUTS
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value == 0:
            return NO_TIMEOUTS
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{parameter} must be a positive number of seconds, got {value!r}")
        default = Timeouts()
        return Timeouts(
            connect=min(default.connect or value, value),
            attempt=float(value),
            idle=min(default.idle or value, value),
        )
    if isinstance(value, httpx.Timeout):
        return Timeouts(connect=value.connect, idle=value.read)
    raise TypeError(
        f"{parameter} must be a number of seconds, an httpx.Timeout, a modelstream.Timeouts or "
        f"False (no timeouts), got {type(value).__name__} {value!r}"
    )


@contextmanager
def timeout_at(deadline: float | None) -> Iterator[None]:
    """The blocking twin of `asyncio.timeout_at` (same clock, `time.monotonic`): a block that
    ends past `deadline` raises `TimeoutError`, as if it had been interrupted there."""
    yield
    if deadline is not None and time.monotonic() >= deadline:
        raise TimeoutError
