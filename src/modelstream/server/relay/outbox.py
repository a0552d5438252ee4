"""The hand-over from a stream's producer to the store: the events its pump has read and the
store has not taken yet, stored in batches by a task of their own."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..stores import StoreLimitError, StreamStore
from .observers import RelayObserver

MAX_PENDING = 1024  # events read from the upstream and not yet stored before the pump waits


class Outbox:
    """The events a stream's pump has read and the store has not taken yet, and the task that
    hands them over: each time it runs it takes everything pending as one `append_many`. The
    pump only appends to a list; the store's work, the readers' wake-up and the observers are
    paid once per batch. A store error ends the flushing; the pump sees it at its next `put`,
    or at `close`."""

    def __init__(
        self, store: StreamStore, response_id: str, observer: RelayObserver, model: str
    ) -> None:
        self.store = store
        self.response_id = response_id
        self.observer = observer
        self.model = model
        self.stored = 0  # entries the store holds
        self._pending: list[bytes] = []
        self._error: BaseException | None = None
        self._closing = False
        self._wake: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._task = asyncio.create_task(self._run())

    @property
    def full(self) -> bool:
        return len(self._pending) >= MAX_PENDING

    def put(self, data: bytes) -> None:
        """Queue one entry; raises the error that stopped the flushing, if one did."""
        if self._error is not None:
            raise self._error
        # an exact-size copy: orjson (≥3.12) returns its ~4 KiB output buffer even for a short
        # result, and a fast upstream leaves hundreds of entries pending per stream at once
        self._pending.append(b"".join((data, b"")))
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def drained(self) -> None:
        """Wait until the task took the pending entries (the store is slower than the upstream)."""
        if self._pending and self._error is None and not self._task.done():
            self._drained = asyncio.get_running_loop().create_future()
            await self._drained
        if self._error is not None:
            raise self._error

    async def close(self) -> None:
        """Store what is pending and stop; raises the error that stopped the flushing."""
        self._closing = True
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)
        await asyncio.shield(self._task)
        if self._error is not None:
            raise self._error

    def cancel(self) -> None:
        self._task.cancel()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                if not self._pending:
                    if self._closing:
                        return
                    self._wake = loop.create_future()
                    await self._wake
                    continue
                batch, self._pending = self._pending, []
                self._release_pump()
                await self._store(batch)
        except Exception as exc:  # handed to the pump, which reports it
            self._error = exc
            self._release_pump()

    def _release_pump(self) -> None:
        """Let a pump waiting in `drained` go on."""
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        self._drained = None

    async def _store(self, batch: Sequence[bytes]) -> None:
        try:
            await self.store.append_many(self.response_id, self.stored + 1, batch)
        except StoreLimitError:
            # all or none: store what still fits one by one, as many as one append each
            # would have stored, before the cap ends the stream
            for data in batch:
                await self.store.append(self.response_id, self.stored + 1, data)
                self.stored += 1
                self.observer.events_stored(self.model, 1)
            return
        self.stored += len(batch)
        self.observer.events_stored(self.model, len(batch))
