"""Streams that outlive their connection: a producer per stream writes events into the store;
every HTTP response, the first or a resumed one, is a reader of that store.

    POST /v1/stream ─► start() ─► producer task ─► store.append(seq, event) … finish(terminal)
                         │                                  │
                         └─► sse(rid, 0) ◄── store.read ◄───┴───► sse(rid, n) ◄── GET /v1/streams/…

The producer never waits for a reader: it relays at the upstream's pace, bounded by the store's
caps. When no reader has been attached for `resume_grace_seconds` (the client dropped and did
not come back), the producer cancels the upstream call and ends the stream with a
`StreamCancelledError` entry. A finished stream stays readable for `retain_seconds`.

The producer sends the store a heartbeat every second (its lease, in a shared store). A reader
that finds the producer gone without an end (its server died, or lost Redis mid-stream) ends
the stream for every reader with a `ProducerLostError` entry.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx

from ..client import AsyncClient, AsyncEventStream, RetryPolicy, Timeouts
from ..errors import StreamError
from ..jsonwire import dumps, error_object
from ..traces.record import TurnRecorder, record_turn
from ..traces.sinks import close_sinks, resolve_sinks
from ..types import Usage
from . import wire
from .config import ModelEntry, ServerSettings
from .errors import Refusal, StreamCancelledError, abandoned, shutting_down
from .limits import StreamSlots
from .logs import stream_ref
from .masking import KeyMask
from .metrics import ServerMetrics
from .stores import (
    ProducerLostError,
    StoreError,
    StoreFullError,
    StoreLimitError,
    StoreUnavailableError,
    StreamStore,
    UnknownStreamError,
)
from .wire import StreamRequest

log = logging.getLogger("modelstream.server")

_INTERNAL = {
    "error": {
        "type": "InternalServerError",
        "message": "the server failed while relaying this stream; its log says why",
    }
}


@dataclass
class _Progress:
    """What a producer has relayed so far."""

    seq: int = 0
    first_event_at: float | None = None
    usage: Usage | None = None
    error_type: str | None = None  # of the terminal entry

    def outcome(self, terminal: bytes | None) -> str:
        """The /metrics outcome: stop, error or cancelled."""
        if terminal is None:
            return "stop"
        return "cancelled" if self.error_type == StreamCancelledError.__name__ else "error"


class StreamRelay:
    """Starts producers and serves readers (module docstring)."""

    def __init__(
        self, settings: ServerSettings, store: StreamStore, metrics: ServerMetrics
    ) -> None:
        self.settings = settings
        self.store = store
        self.metrics = metrics
        self.slots = StreamSlots(settings.limits.max_concurrent_streams)
        self._clients: dict[str, AsyncClient] = {}
        self._pools: list[httpx.AsyncClient] = []  # the clients' connection pools
        self._tasks: set[asyncio.Task[None]] = set()
        self._pumps: dict[str, asyncio.Task[bytes | None]] = {}  # upstream calls, for stop()
        self._trace_sinks = resolve_sinks(settings.traces, os.environ, limits=settings.trace_limits)
        grace = settings.resume_grace_seconds
        self._poll = min(1.0, max(0.02, grace / 4))  # how often a producer looks for readers

    # --- lifecycle --------------------------------------------------------------------------

    def open(self) -> None:
        """One client (one connection pool) per served model."""
        for entry in self.settings.models:
            self._client(entry)

    def _client(self, entry: ModelEntry) -> AsyncClient:
        client = self._clients.get(entry.server_model_id)
        if client is None:
            timeouts = Timeouts(idle=entry.idle_timeout_seconds)
            # every stream this process may run at once could be on this model: one connection
            # each, or the streams past httpx's default pool (100) would queue for one
            pool = httpx.AsyncClient(
                timeout=timeouts.httpx_timeout(),
                limits=httpx.Limits(max_connections=self.settings.limits.max_concurrent_streams),
            )
            self._pools.append(pool)
            client = self._clients[entry.server_model_id] = AsyncClient(
                entry.model,
                api_key=entry.api_key.reveal() if entry.api_key else None,
                base_url=entry.base_url,
                client_type=entry.client_type,
                platform=entry.platform,
                retry=RetryPolicy(max_attempts=entry.max_attempts),
                timeouts=timeouts,
                http_client=pool,
                traces=False,  # the relay records every served turn itself, as "server"
            )
        return client

    async def aclose(self) -> None:
        """Cancel running streams (each ends with a cancelled entry), then close the clients."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        for client in self._clients.values():
            await client.aclose()
        for pool in self._pools:  # given to the clients, so theirs to close is not
            await pool.aclose()
        self._clients.clear()
        self._pools.clear()
        close_sinks(self._trace_sinks)

    @property
    def in_flight(self) -> int:
        return self.slots.in_use

    # --- producing --------------------------------------------------------------------------

    async def start(self, entry: ModelEntry, request: StreamRequest) -> str:
        """Plan the upstream call (raising the library's errors for bad messages or config),
        take a slot (or a 429 `Refusal`), register the stream for its caller's key hash and start
        its producer."""
        stream = self._client(entry).stream(request.messages, request.config)
        self.slots.acquire()
        response_id = wire.new_response_id()
        try:
            await self.store.create(response_id, request.caller or "")
        except StoreFullError as exc:
            self.slots.release()
            raise Refusal(
                503, "StoreFullError", str(exc), outcome="store_full", headers={"retry-after": "1"}
            ) from None
        except StoreError:
            self.slots.release()
            raise _store_unavailable() from None
        except BaseException:
            self.slots.release()
            raise
        self.metrics.in_flight.inc()
        recorder = self._recorder(entry, request, response_id)
        task = asyncio.create_task(
            self._produce(response_id, entry, stream, time.monotonic(), recorder)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return response_id

    def _recorder(
        self, entry: ModelEntry, request: StreamRequest, response_id: str
    ) -> TurnRecorder | None:
        """Every served turn is traced: under the caller's trace_id, else its response id, in
        the namespace of the caller's key (`<key hash>/<id>`), so no key adds to another's."""
        if not self._trace_sinks:
            return None
        trace_id = request.config.get("trace_id")
        if not (isinstance(trace_id, str) and trace_id):
            trace_id = response_id
        return TurnRecorder(
            trace_id=f"{request.caller}/{trace_id}" if request.caller else trace_id,
            source="server",
            model=entry.server_model_id,
            client_type=entry.client_type or "",
            provider=None,
            config=request.config,
            messages=request.messages,
            secrets=(entry.api_key.reveal(),) if entry.api_key else (),
        )

    async def _produce(
        self,
        response_id: str,
        entry: ModelEntry,
        stream: AsyncEventStream,
        started: float,
        recorder: TurnRecorder | None = None,
    ) -> None:
        progress = _Progress()
        pump = asyncio.create_task(
            self._pump(response_id, entry, stream, progress, started, recorder)
        )
        self._pumps[response_id] = pump
        terminal: bytes | None = None
        try:
            terminal = await self._supervise(response_id, pump, progress)
        except asyncio.CancelledError:  # the server is shutting down
            pump.cancel()
            await asyncio.wait({pump})
            terminal = _cancelled(shutting_down(), progress)
            raise
        finally:
            # the upstream call is over: free its slot before readers can see the end
            self._pumps.pop(response_id, None)
            self._account(response_id, entry, progress, terminal, started)
            if recorder is not None and stream.result is not None:
                record_turn(recorder, stream.result, self._trace_sinks)
            with contextlib.suppress(StoreError):
                await self.store.finish(response_id, terminal)
                await self.store.expire(response_id, self.settings.retain_seconds)

    def _account(
        self,
        response_id: str,
        entry: ModelEntry,
        progress: _Progress,
        terminal: bytes | None,
        started: float,
    ) -> None:
        self.slots.release()
        self.metrics.in_flight.inc(amount=-1)
        elapsed = time.monotonic() - started
        outcome = progress.outcome(terminal)
        self.metrics.requests.inc("stream", outcome)
        self.metrics.duration.observe(elapsed, entry.server_model_id)
        ttfe = progress.first_event_at
        log.info(
            "stream %s model=%s outcome=%s events=%d%s ttfe_ms=%s total_ms=%.0f",
            stream_ref(response_id),
            entry.server_model_id,
            outcome,
            progress.seq,
            f" error={progress.error_type}" if progress.error_type else "",
            "-" if ttfe is None else f"{(ttfe - started) * 1000:.0f}",
            elapsed * 1000,
        )

    async def _supervise(
        self, response_id: str, pump: asyncio.Task[bytes | None], progress: _Progress
    ) -> bytes | None:
        """Wait for the pump; cancel it when nobody has read the stream for the grace period."""
        grace = self.settings.resume_grace_seconds
        while True:
            done, _ = await asyncio.wait({pump}, timeout=self._poll)
            if done:
                if pump.cancelled():  # stop(): a reader asked to end it
                    return _cancelled(stopped(), progress)
                return pump.result()
            try:
                unread = await self.store.heartbeat(response_id)
            except StoreError as exc:  # a store hiccup is not a reader leaving: ask again
                log.warning(
                    "stream %s: asking the store for readers failed: %s",
                    stream_ref(response_id),
                    exc,
                )
                continue
            if unread is not None and unread >= grace:
                pump.cancel()
                await asyncio.wait({pump})
                if not pump.cancelled():  # it finished on its own meanwhile
                    return pump.result()
                return _cancelled(abandoned(grace), progress)

    def stop(self, response_id: str) -> bool:
        """Cancel a running stream's upstream call now (a person pressed Stop); the stream ends
        with a `StreamCancelledError` entry. False when no upstream call of that id runs here."""
        pump = self._pumps.get(response_id)
        if pump is None or pump.done():
            return False
        pump.cancel()
        return True

    async def _pump(
        self,
        response_id: str,
        entry: ModelEntry,
        stream: AsyncEventStream,
        progress: _Progress,
        started: float,
        recorder: TurnRecorder | None = None,
    ) -> bytes | None:
        """Relay the upstream events into the store; the terminal entry (an error) or None."""
        model = entry.server_model_id
        mask = KeyMask(entry.api_key)  # the upstream key never reaches the store (masking.py)
        try:
            async with stream:  # leaving it (cancellation included) closes the upstream response
                async for event in stream:
                    if recorder is not None:
                        recorder.observe(event)
                    progress.seq += 1
                    await self.store.append(response_id, progress.seq, mask(dumps(event)))
                    if progress.first_event_at is None:
                        progress.first_event_at = time.monotonic()
                        self.metrics.time_to_first_event.observe(
                            progress.first_event_at - started, model
                        )
                    self.metrics.events.inc(model)
                    if event["event_type"] == "stop":
                        progress.usage = event["usage_metadata"]
                        self._count_tokens(model, progress.usage)
        except (StreamError, StoreLimitError) as exc:
            if isinstance(exc, StoreLimitError):
                progress.seq -= 1  # the entry that did not fit
            progress.error_type = type(exc).__name__
            return mask(dumps(error_object(exc)))
        except StoreError as exc:
            progress.error_type = type(exc).__name__
            log.error("stream %s: the store failed: %s", stream_ref(response_id), exc)
            if isinstance(exc, StoreUnavailableError):  # stored only if the store is back
                return dumps(_store_lost("while relaying this stream", "retry the turn"))
            return dumps(_INTERNAL)
        except Exception:
            progress.error_type = "InternalServerError"
            log.exception("stream %s: relaying failed", stream_ref(response_id))
            return dumps(_INTERNAL)
        return None

    def _count_tokens(self, model: str, usage: Usage | None) -> None:
        if not usage:
            return
        tokens_in = (usage.get("cached_tokens") or 0) + (usage.get("prompt_tokens") or 0)
        tokens_out = (usage.get("thoughts_tokens") or 0) + (usage.get("response_tokens") or 0)
        self.metrics.tokens.inc(model, "in", amount=tokens_in)
        self.metrics.tokens.inc(model, "out", amount=tokens_out)

    # --- reading ----------------------------------------------------------------------------

    async def readable_by(self, response_id: str, owner: str) -> bool:
        """Whether the stream is stored and was started with the key `owner` hashes: a stream
        of another key reads as unknown, so a resume does not tell it exists."""
        try:
            stored = await self.store.owner(response_id)
        except StoreError:
            raise _store_unavailable() from None
        return stored is not None and hmac.compare_digest(stored.encode(), owner.encode())

    async def sse(self, response_id: str, after_seq: int) -> AsyncIterator[bytes]:
        """The SSE body of a stream from `after_seq` on: stored events, then live ones, then
        `[DONE]`; keep-alive comments while nothing arrives."""
        after = after_seq
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
            except ProducerLostError as exc:
                if await self._end_orphaned(response_id, exc):
                    continue  # read on: its error line, then the end
                yield wire.error_frame(_store_lost("while reading this stream", "resume later"))
            except UnknownStreamError as exc:
                yield wire.error_frame({"error": {"type": "NotFoundError", "message": str(exc)}})
            except StoreError as exc:
                ref = stream_ref(response_id)
                log.error("stream %s: reading from the store failed: %s", ref, exc)
                if isinstance(exc, StoreUnavailableError):  # no id: the client may resume
                    yield wire.error_frame(_store_lost("while reading this stream", "resume later"))
                else:
                    yield wire.error_frame(_INTERNAL)
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


def _store_lost(doing: str, then: str) -> dict[str, dict[str, str]]:
    """The error line of a stream whose store went away `doing` something."""
    message = f"the server lost its stream store {doing}; {then}"
    return {"error": {"type": StoreUnavailableError.__name__, "message": message}}


def _store_unavailable() -> Refusal:
    return Refusal(
        503,
        "StoreUnavailableError",
        "the server's stream store is unavailable; retry later",
        outcome="store_unavailable",
        headers={"retry-after": "1"},
    )


def _cancelled(error: StreamCancelledError, progress: _Progress) -> bytes:
    progress.error_type = type(error).__name__
    return dumps(error_object(error))


def stopped() -> StreamCancelledError:
    return StreamCancelledError(
        "stopped",
        "a client stopped this stream, so the server cancelled the upstream call; the events "
        "before this one are the partial turn",
    )
