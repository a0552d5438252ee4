"""The request-side limits (docs/server.md#limits-and-exposure): large bodies checked off the
event loop, the count of streams running at once (in all and per key), and the connection-level
limits uvicorn does not have (`connection_protocol`). The bounded body read with its deadline
is the web layer's (`..web.bodies.read_body`).
"""

from __future__ import annotations

import asyncio
import http
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from ..web.refusals import Refusal
from .config import Limits

log = logging.getLogger("modelstream.server")

T = TypeVar("T")

# A body larger than this is parsed and checked in a worker thread (`off_loop`): 50,000
# messages (4 MB) took the loop for more than a second, stalling every other stream
LARGE_BODY_BYTES = 256 * 1024


def headers_too_slow(seconds: float) -> Refusal:
    return Refusal(
        408,
        "RequestTimeoutError",
        f"the request line and headers did not arrive within {seconds:g} s, the server's "
        "limit (limits.header_timeout_seconds)",
        outcome="request_timeout",
        fields={"limit": seconds},
    )


def headers_too_large(limit: int) -> Refusal:
    return Refusal(
        431,
        "RequestHeadersTooLargeError",
        f"the request line and headers are larger than the server's limit of {limit} bytes "
        "(limits.max_header_bytes)",
        outcome="too_large",
        fields={"limit": limit},
    )


def too_many_connections(limit: int) -> Refusal:
    return Refusal(
        503,
        "TooManyConnectionsError",
        f"the server already holds {limit} open connections, its limit "
        "(limits.max_connections); retry after a moment",
        outcome="too_many_connections",
        headers={"retry-after": "1"},
        fields={"limit": limit},
    )


async def off_loop(size: int, work: Callable[..., T], *args: Any) -> T:
    """`work(*args)`, the parsing and checking of a request body of `size` bytes: in a worker
    thread when the body is larger than `LARGE_BODY_BYTES`, so that it does not stall the
    other streams; at once otherwise (a thread costs more than a small body's checks)."""
    if size <= LARGE_BODY_BYTES:
        return work(*args)
    return await asyncio.to_thread(work, *args)


def per_key_limit(limits: Limits, keys: int, virtual_keys: bool = False) -> int | None:
    """How many streams one bearer key may run at once: `limits.max_streams_per_key`, else half
    of `max_concurrent_streams` when the server has `keys` > 1 or takes virtual keys (many
    callers); None for no cap of its own (one key has the whole server; an open server's
    callers have no key to tell them apart)."""
    if keys == 0 and not virtual_keys:
        return None
    if limits.max_streams_per_key is not None:
        return limits.max_streams_per_key
    several = keys > 1 or virtual_keys
    return max(1, (limits.max_concurrent_streams + 1) // 2) if several else None


class StreamSlots:
    """At most `limit` streams run at once in this process, and at most `per_key` of them for
    one caller's key (None: no cap per key); a request past either gets a 429."""

    def __init__(self, limit: int, per_key: int | None = None) -> None:
        self.limit = limit
        self.per_key = per_key
        self.in_use = 0
        self._by_key: dict[str, int] = {}  # streams running per caller (`web.keys.key_hash`)

    def acquire(self, caller: str | None = None) -> None:
        """Take a slot for `caller` or raise the 429 `Refusal` (no await: checking and taking is
        atomic)."""
        held = self._by_key.get(caller, 0) if caller is not None else 0
        if self.per_key is not None and caller is not None and held >= self.per_key:
            raise _too_many_streams(
                f"this key is already running {self.per_key} streams, its limit "
                "(limits.max_streams_per_key); retry when one of them has ended",
                self.per_key,
            )
        if self.in_use >= self.limit:
            raise _too_many_streams(
                f"the server is already running {self.limit} streams, its limit "
                "(limits.max_concurrent_streams); retry after a moment",
                self.limit,
            )
        self.in_use += 1
        if caller is not None:
            self._by_key[caller] = held + 1

    def release(self, caller: str | None = None) -> None:
        self.in_use -= 1
        if caller is not None:
            held = self._by_key.pop(caller, 0) - 1
            if held > 0:
                self._by_key[caller] = held


def _too_many_streams(message: str, limit: int) -> Refusal:
    """The 429 of a full server or of a key at its own cap: the client retries after a second."""
    return Refusal(
        429,
        "TooManyStreamsError",
        message,
        outcome="too_many_streams",
        headers={"retry-after": "1"},
        fields={"limit": limit},
    )


def connection_protocol(limits: Limits) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol (httptools) with the connection limits uvicorn does not have,
    for `uvicorn.Config(http=...)`:

    - `header_timeout_seconds`: a connection that has not sent a whole request line and headers
      this long after it opened (a kept-alive one: after its next request's first byte) is
      answered 408 and closed; one that sent nothing is closed. uvicorn waits forever for a new
      connection's headers (its keep-alive timer runs only after a response), so 100 clients
      sending a byte every 2 s held 100 connections for as long as they liked.
    - `max_header_bytes`: httptools has no limit of its own; past it the answer is 431.
    - `max_connections`: a connection past it is answered 503 at once and closed. uvicorn's
      `limit_concurrency` answers 503 only once a request's headers are complete, so the slow
      connections it should bound never reach it.
    - A request answered before its body arrived (a refusal) must send the rest of its body
      within `body_timeout_seconds`, or the connection is closed: uvicorn reads and drops it
      for as long as it comes. (The deadline for a body the app reads is `web.bodies.read_body`'s.)

    A subclass of the protocol rather than a middleware: an ASGI app sees a request only once
    its headers are complete, and never sees a connection at all."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class LimitedConnection(HttpToolsProtocol):
        _deadline: asyncio.TimerHandle | None = None
        _in_head = True  # reading a request's line and headers (a new connection: the first)
        _begun = False  # ... and some of them have arrived
        _head_bytes = 0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                log.warning(
                    "refused a connection: %d are open, limits.max_connections",
                    limits.max_connections,
                )
                self._refuse(too_many_connections(limits.max_connections))
                return
            self._arm(limits.header_timeout_seconds, self._head_too_slow)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._in_head and self._begun and not self.transport.is_closing():
                self._head_bytes += len(data)
                if self._head_bytes > limits.max_header_bytes:
                    self._refuse(headers_too_large(limits.max_header_bytes))

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if not self._in_head:  # the next request on a kept-alive connection
                self._in_head, self._head_bytes = True, 0
                self._arm(limits.header_timeout_seconds, self._head_too_slow)
            self._begun = True

        def on_headers_complete(self) -> None:
            self._in_head = self._begun = False
            self._disarm()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._disarm()  # the body arrived (after its answer, perhaps: see on_response_complete)
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            cycle = self.cycle
            if cycle is not None and cycle.more_body and not self.transport.is_closing():
                self._arm(limits.body_timeout_seconds, self.transport.close)

        def _head_too_slow(self) -> None:
            self._deadline = None
            if self._begun:
                self._refuse(headers_too_slow(limits.header_timeout_seconds))
            else:  # nothing asked, nothing to answer
                self.transport.close()

        def _refuse(self, refusal: Refusal) -> None:
            """Answer `refusal` and close, unless a response is being written (then close)."""
            if self.transport.is_closing():
                return
            if self.cycle is None or self.cycle.response_complete:
                self.transport.write(raw_answer(refusal))
            self.transport.close()

        def _arm(self, seconds: float, then: Callable[[], None]) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, then)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

    return LimitedConnection


def raw_answer(refusal: Refusal) -> bytes:
    """A refusal as a whole HTTP/1.1 response that closes its connection, for the protocol to
    write where no app answers."""
    body = orjson.dumps(refusal.body())
    headers = {"content-type": "application/json", "content-length": str(len(body))}
    headers |= {**refusal.headers, "connection": "close"}
    lines = [f"HTTP/1.1 {refusal.status} {http.HTTPStatus(refusal.status).phrase}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
