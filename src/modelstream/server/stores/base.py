"""The contract between a stream's producer and its readers: an append-only log per response id.

Theory of operation. The producer of a stream (one upstream call) appends each event as one
entry, `(seq, data)`, with `seq` counting from 1 without gaps; it then finishes the stream,
optionally with one terminal entry (the error line) that is accepted even when a cap is reached,
so a stream that hit a limit can still say so. Readers (HTTP responses, first or resumed) read
the entries after a sequence number, in order, waiting for new ones until the stream is
finished. Nothing here knows HTTP, JSON or SSE: `data` is opaque bytes.

A store also tells the producer whether anyone is reading (`unread_seconds`), so a stream whose
client dropped keeps going for a grace period and is cancelled when nobody resumes it. Readers
are counted while a `read` iterator is open; a store shared by several processes (Redis) keeps
that as a lease its readers refresh.

The producer asks through `heartbeat`, at least every second while its stream runs, which in a
shared store also renews the producer's own lease. A producer can die, or lose the store, without
finishing its stream; a reader of a shared store that finds the lease lapsed (and no end) raises
`ProducerLostError`, and its server ends the stream for everyone with `finish_orphaned`.

Everything a store raises is a `StoreError`. The in-memory store is `MemoryStore`; a Redis
Streams store implements the same methods so that any instance can serve a resume.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from ...errors import ModelstreamError

MAX_NAMES = 100_000  # stream names kept in a process (`StreamStore.name_stream`)

# (seq, data) of one stored event
Entry = tuple[int, bytes]


class StoreError(ModelstreamError):
    """A stream store could not do what was asked."""


class UnknownStreamError(StoreError):
    """No stream has this response id: it never existed, or it expired."""

    def __init__(self, response_id: str) -> None:
        self.response_id = response_id
        super().__init__(
            f"no stream {response_id!r} is stored: it never existed, or it finished longer ago "
            "than the server retains streams"
        )

    def fields(self) -> dict[str, Any]:
        return {"response_id": self.response_id}


class StoreUnavailableError(StoreError):
    """The store cannot be reached (its Redis is down or restarting); retrying later may work."""


class ProducerLostError(StoreError):
    """The stream's producer stopped renewing its lease without finishing the stream: its server
    died, or lost the store mid-stream. Nothing more will be written to the stream."""

    def __init__(self, response_id: str, lapsed_seconds: float) -> None:
        self.response_id = response_id
        self.lapsed_seconds = lapsed_seconds
        super().__init__(
            "the server that was running this stream stopped renewing its lease "
            f"{lapsed_seconds:.0f} s ago without finishing it (it stopped, or lost its stream "
            "store mid-stream); the events before this one are the partial turn: retry the turn"
        )

    def fields(self) -> dict[str, Any]:
        return {"lapsed_seconds": round(self.lapsed_seconds, 3), "partial_status": "incomplete"}


class StoreLimitError(StoreError):
    """An append would pass one of the store's caps; the stream must end."""

    def __init__(self, message: str, *, limit: int) -> None:
        self.limit = limit
        super().__init__(message)

    def fields(self) -> dict[str, Any]:
        return {"limit": self.limit}


class StreamTooLongError(StoreLimitError):
    """The stream reached the per-stream event cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the stream reached the server's limit of {limit} events and was ended; "
            "raise limits.max_events_per_stream if such long streams are expected",
            limit=limit,
        )


class StoreFullError(StoreLimitError):
    """The store holds as many bytes as it may; nothing older could be evicted."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the server's stream buffer is full ({limit} bytes held by running streams); "
            "retry later, or raise limits.max_store_bytes",
            limit=limit,
        )


class StreamStore(ABC):
    """An append-only event log per response id (module docstring)."""

    kind = "custom"  # what /healthz calls the store

    @abstractmethod
    async def create(self, response_id: str, owner: str = "") -> None:
        """Register an empty, running stream, bound to `owner` (a hash of the key that started
        it, never the key). Raises `StoreFullError` when the store is full."""

    @abstractmethod
    async def append(self, response_id: str, seq: int, data: bytes) -> None:
        """Store one entry. `seq` is the previous entry's plus one (the first is 1); a gap, a
        repeat or an append to a finished stream is a bug and raises `ValueError`. Raises
        `StreamTooLongError` or `StoreFullError` at a cap, `UnknownStreamError` if unknown."""

    async def append_many(self, response_id: str, first_seq: int, entries: Sequence[bytes]) -> None:
        """Store consecutive entries `first_seq`, `first_seq + 1`, …: the same rules and errors
        as `append`, atomic per call (all stored or none) and still capped. The relay appends
        whatever events are ready in one call, so a store can wake its readers (or make its
        round trip) once per batch. This default loops over `append`; a store whose `append`
        can fail midway overrides it to keep the call atomic."""
        for offset, data in enumerate(entries):
            await self.append(response_id, first_seq + offset, data)

    @abstractmethod
    async def finish(self, response_id: str, terminal: bytes | None = None) -> int:
        """Mark the stream finished, storing `terminal` (if any) as its last entry regardless
        of the caps. Returns the last sequence number (0 for a stream with no entries)."""

    @abstractmethod
    def read(
        self, response_id: str, after_seq: int, *, idle_timeout: float
    ) -> AsyncGenerator[list[Entry], None]:
        """The entries after `after_seq`, in batches as they arrive. Yields an empty batch
        whenever nothing new arrived for `idle_timeout` seconds (the reader sends a keep-alive),
        and ends after the last entry of a finished stream. Raises `UnknownStreamError` on the
        first step for an unknown id. A reader counts as attached while the iterator is open."""

    @abstractmethod
    async def exists(self, response_id: str) -> bool:
        """Whether the stream is stored (running, or finished and not yet expired)."""

    @abstractmethod
    async def owner(self, response_id: str) -> str | None:
        """The `owner` the stream was created with; None for an unknown stream."""

    @abstractmethod
    async def unread_seconds(self, response_id: str) -> float | None:
        """0.0 while a reader is attached, else the seconds since the last one left (or since
        the stream was created); None for an unknown stream."""

    async def heartbeat(self, response_id: str) -> float | None:
        """The producer's sign of life, at least every second: renews its lease where the store
        keeps one, and answers `unread_seconds`. The default keeps no lease."""
        return await self.unread_seconds(response_id)

    async def finish_orphaned(self, response_id: str, terminal: bytes) -> bool:
        """Finish a stream whose producer's lease lapsed (after `ProducerLostError`), storing
        `terminal`; False if it finished or its producer renewed meanwhile. The default keeps
        no lease, so no producer is ever lost."""
        return False

    @abstractmethod
    async def expire(self, response_id: str, seconds: float) -> None:
        """Forget the stream `seconds` from now (used once it finished)."""

    async def name_stream(self, name: str, response_id: str, seconds: float) -> None:
        """Let `named_stream(name)` find this stream for `seconds`: a conversation's last stream,
        by a name its caller knows (the AI SDK's reconnect by chat id). A later call with the
        same name points it at the later stream. This default keeps the names in this process
        (the newest `MAX_NAMES`); a store that several processes share keeps them there."""
        names: dict[str, tuple[str, float]] = self.__dict__.setdefault("_stream_names", {})
        names.pop(name, None)
        names[name] = (response_id, time.monotonic() + seconds)
        while len(names) > MAX_NAMES:
            del names[next(iter(names))]

    async def named_stream(self, name: str) -> str | None:
        """The stream last named `name` (`name_stream`), None once the name lapsed."""
        names: dict[str, tuple[str, float]] = self.__dict__.get("_stream_names", {})
        found = names.get(name)
        if found is None or found[1] <= time.monotonic():
            return None
        return found[0]

    async def check(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Raise `StoreUnavailableError` unless the store can serve now (for /healthz); the
        default has nothing to check."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Release the store's resources (connections); the default holds none."""
