"""The reading side of a stream: every HTTP response, the first or a resumed one, is a reader of
the store, written as SSE (`..wire`): stored events, then live ones, then `[DONE]`.

A reader that finds the producer gone without an end (its server died, or lost Redis
mid-stream) ends the stream for every reader with a `ProducerLostError` entry.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator

from ...jsonwire import dumps, error_object
from .. import wire
from ..config import ServerSettings
from ..logs import stream_ref
from ..stores import (
    ProducerLostError,
    StoreError,
    StoreUnavailableError,
    StreamStore,
    UnknownStreamError,
)
from .error_lines import INTERNAL, store_lost
from .priority import BurstClock, StartPriority

log = logging.getLogger("modelstream.server")


class SSEWriter:
    """The SSE body of a stream for a reader (module docstring)."""

    def __init__(
        self, settings: ServerSettings, store: StreamStore, priority: StartPriority
    ) -> None:
        self.settings = settings
        self.store = store
        self.priority = priority

    async def sse(self, response_id: str, after_seq: int) -> AsyncGenerator[bytes, None]:
        """The SSE body of a stream from `after_seq` on: stored events, then live ones, then
        `[DONE]`; keep-alive comments while nothing arrives."""
        after = after_seq
        burst = BurstClock()
        priority = self.priority
        while True:
            reader = self.store.read(
                response_id, after, idle_timeout=self.settings.keepalive_seconds
            )
            try:
                async with contextlib.aclosing(reader) as batches:
                    async for batch in batches:
                        if batch:
                            after = batch[-1][0]
                        yield wire.frames(response_id, batch) if batch else wire.KEEPALIVE
                        if priority.must_yield(burst):  # a first event elsewhere goes first
                            await priority.yield_to_starts()
            except ProducerLostError as exc:
                if await self._end_orphaned(response_id, exc):
                    continue  # read on: its error line, then the end
                yield wire.error_frame(store_lost("while reading this stream", "resume later"))
            except UnknownStreamError as exc:
                yield wire.error_frame({"error": {"type": "NotFoundError", "message": str(exc)}})
            except StoreError as exc:
                ref = stream_ref(response_id)
                log.error("stream %s: reading from the store failed: %s", ref, exc)
                if isinstance(exc, StoreUnavailableError):  # no id: the client may resume
                    yield wire.error_frame(store_lost("while reading this stream", "resume later"))
                else:
                    yield wire.error_frame(INTERNAL)
            break
        yield wire.DONE

    async def _end_orphaned(self, response_id: str, lost: ProducerLostError) -> bool:
        """Finish a stream whose producer is gone with `lost` as its error line (or see that it
        finished, or that its producer came back, meanwhile); False if the store failed."""
        log.warning("stream %s: %s", stream_ref(response_id), lost)
        try:
            if await self.store.finish_orphaned(response_id, dumps(error_object(lost))):
                await self.store.expire(response_id, self.settings.retain_seconds)
        except StoreError as exc:
            log.error("stream %s: ending it failed: %s", stream_ref(response_id), exc)
            return False
        return True
