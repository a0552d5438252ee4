"""The three timeouts of a call, and how each is enforced.

- `connect`: opening the TCP/TLS connection (httpx's connect and pool timeouts).
- `idle`: no bytes for N seconds while waiting for the response or mid-stream (httpx's read
  timeout, which restarts with every read).
- `attempt`: the whole of one attempt, from sending the request to the last byte (a deadline
  the shell checks: `asyncio.timeout_at` around each read in the async client; in the sync client
  between reads, with the read timeout capped at `min(idle, attempt)` so that no single read
  outlives the attempt by more than that).

A timeout before the first event is retried like a connection error; after it, or once the
attempts are used up, it ends the stream with `StreamTimeoutError`, an `IncompleteStreamError`
that carries the partial response.
"""

from __future__ import annotations

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
