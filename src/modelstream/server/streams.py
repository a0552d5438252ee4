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
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from dataclasses import dataclass

import httpx

from ..client import AsyncClient, AsyncEventStream, RetryPolicy, Timeouts
from ..client.routing import resolve_route
from ..client.tls import ssl_context_for
from ..client.transports import async_transport
from ..errors import StreamError
from ..jsonwire import dumps, error_object
from ..results import FinalResponse, PartialResponse
from ..traces.record import TurnRecorder, record_turn
from ..traces.sinks import close_sinks, resolve_sinks
from ..types import Usage
from . import wire
from .config import ModelEntry, ServerSettings
from .errors import Refusal, StreamCancelledError, abandoned, shutting_down, store_unavailable
from .limits import StreamSlots, off_loop, per_key_limit
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


POOL_SIZE = 32  # upstream connections per pool (`StreamRelay._shard`)
MAX_PENDING = 1024  # events read from the upstream and not yet stored before the pump waits
BURST_SECONDS = 0.0005  # steps of one stream closer than this are a burst (BurstClock)


@dataclass(eq=False)
class _Shard:
    """One upstream client (one connection pool) of a model, and the streams it runs now."""

    client: AsyncClient
    streams: int = 0

    def busy(self) -> int:
        return self.streams

    def release(self, _task: object = None) -> None:
        self.streams -= 1


@dataclass
class _Progress:
    """What a producer has relayed so far."""

    seq: int = 0
    first_event_at: float | None = None
    usage: Usage | None = None
    error_type: str | None = None  # of the terminal entry
    started: bool = False  # counted out of `StreamRelay.starting`

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
        per_key = per_key_limit(settings.limits, len(settings.keys))
        self.slots = StreamSlots(settings.limits.max_concurrent_streams, per_key)
        self._shards: dict[str, list[_Shard]] = {}  # per served model
        self._clients: list[AsyncClient] = []
        self._pools: list[httpx.AsyncClient] = []  # the clients' connection pools
        self._tasks: set[asyncio.Task[None]] = set()
        self._pumps: dict[str, asyncio.Task[bytes | None]] = {}  # upstream calls, for stop()
        # streams started whose first event is not stored yet: while there are any, the other
        # producers let the loop run after each event, so a first event never waits behind
        # other streams' bulk (a fast upstream delivers a whole answer in one read)
        self.starting = 0
        self.arriving = 0  # stream requests being read and checked, not started yet
        self._gate = _BulkGate()
        self._trace_sinks = resolve_sinks(settings.traces, os.environ, limits=settings.trace_limits)
        grace = settings.resume_grace_seconds
        self._poll = min(1.0, max(0.02, grace / 4))  # how often a producer looks for readers

    # --- lifecycle --------------------------------------------------------------------------

    def open(self) -> None:
        """The first connection pool of each served model."""
        for entry in self.settings.models:
            self._shards_of(entry)

    def _shards_of(self, entry: ModelEntry) -> list[_Shard]:
        shards = self._shards.get(entry.server_model_id)
        if shards is None:
            shards = self._shards[entry.server_model_id] = [self._new_shard(entry)]
        return shards

    def _shard(self, entry: ModelEntry) -> _Shard:
        """The least busy pool of the model, or a new one while every pool is full. httpcore
        walks every connection of a pool each time a request starts or ends (and polls each
        idle socket), so one pool of 1,000 connections costs O(streams) per stream: pools of
        `POOL_SIZE` keep that constant. The stream slots bound the streams, and the least busy
        pool of ceil(max / POOL_SIZE) is never full, so no stream waits for a connection."""
        shards = self._shards_of(entry)
        shard = min(shards, key=_Shard.busy)
        if shard.streams >= POOL_SIZE:
            shard = self._new_shard(entry)
            shards.append(shard)
        return shard

    def _new_shard(self, entry: ModelEntry) -> _Shard:
        timeouts = Timeouts(idle=entry.idle_timeout_seconds)
        pool = httpx.AsyncClient(
            timeout=timeouts.httpx_timeout(),
            # the process's one TLS context (client/tls.py); lean HTTP/1.1 (client/transports.py)
            transport=async_transport(
                ssl_context_for(entry.base_url), httpx.Limits(max_connections=POOL_SIZE)
            ),
        )
        self._pools.append(pool)
        client = AsyncClient(
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
        self._clients.append(client)
        return _Shard(client)

    async def aclose(self) -> None:
        """Cancel running streams (each ends with a cancelled entry), then close the clients."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        for client in self._clients:
            await client.aclose()
        for pool in self._pools:  # given to the clients, so theirs to close is not
            await pool.aclose()
        self._clients.clear()
        self._pools.clear()
        self._shards.clear()
        close_sinks(self._trace_sinks)

    @property
    def in_flight(self) -> int:
        return self.slots.in_use

    # --- producing --------------------------------------------------------------------------

    async def start(self, entry: ModelEntry, request: StreamRequest, body_size: int = 0) -> str:
        """Take a slot for the caller (or a 429 `Refusal`), plan the upstream call (raising the
        library's errors for bad messages or config; in a worker thread when the request came
        in a large body of `body_size` bytes: `limits.off_loop`), register the stream for its
        caller's key hash and start its producer."""
        caller = request.caller
        self.slots.acquire(caller)
        shard = self._shard(entry)
        # counted before the awaits: the starts that run meanwhile see this pool's stream, so
        # none is handed a pool with no free connection (it would wait in the pool for another
        # stream to end)
        shard.streams += 1
        response_id = wire.new_response_id()
        try:
            stream = await off_loop(
                body_size, shard.client.stream, request.messages, request.config
            )
            await self.store.create(response_id, _owner_record(caller or "", request.meta))
        except BaseException as exc:
            self.slots.release(caller)
            shard.release()
            if isinstance(exc, StoreFullError):
                raise Refusal(
                    503,
                    "StoreFullError",
                    str(exc),
                    outcome="store_full",
                    headers={"retry-after": "1"},
                ) from None
            if isinstance(exc, StoreError):
                raise store_unavailable() from None
            raise
        self.metrics.in_flight.inc()
        self.starting += 1
        recorder = self._recorder(entry, request, response_id, shard.client.redact)
        task = asyncio.create_task(
            self._produce(response_id, entry, stream, caller, time.monotonic(), recorder)
        )
        task.add_done_callback(shard.release)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return response_id

    def _recorder(
        self,
        entry: ModelEntry,
        request: StreamRequest,
        response_id: str,
        redact: Callable[[str], str],
    ) -> TurnRecorder | None:
        """Every served turn is traced: under the caller's trace_id, else its response id, in
        the namespace of the caller's key (`<key hash>/<id>`), so no key adds to another's;
        `redact` is the upstream client's (its key, or a platform's AWS or Google credentials)."""
        if not self._trace_sinks:
            return None
        trace_id = request.config.get("trace_id")
        if not (isinstance(trace_id, str) and trace_id):
            trace_id = response_id
        return TurnRecorder(
            trace_id=f"{request.caller}/{trace_id}" if request.caller else trace_id,
            source="server",
            model=entry.server_model_id,
            # the protocol the upstream speaks: the config's, else the one its model routes to
            client_type=resolve_route(entry.model, entry.client_type, entry.platform).client_type,
            provider=entry.provider,
            config=request.config,
            messages=request.messages,
            redact=redact,
        )

    async def _produce(
        self,
        response_id: str,
        entry: ModelEntry,
        stream: AsyncEventStream,
        caller: str | None,
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
            self.slots.release(caller)
            if progress.first_event_at is None:
                self._started(progress)
            self._account(response_id, entry, progress, terminal, started)
            if recorder is not None and stream.result is not None:
                record_turn(recorder, stream.result, self._trace_sinks)
            with contextlib.suppress(StoreError):
                await self.store.finish(response_id, terminal)
                await self.store.expire(response_id, self.settings.retain_seconds)

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

    def _started(self, progress: _Progress) -> None:
        """The stream's first event is stored, or it ended without one: it starts no more."""
        if not progress.started:
            progress.started = True
            self.starting -= 1
            self._open_gate()

    def _open_gate(self) -> None:
        if not self.starting and not self.arriving:
            self._gate.open()

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

    def _account(
        self,
        response_id: str,
        entry: ModelEntry,
        progress: _Progress,
        terminal: bytes | None,
        started: float,
    ) -> None:
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
        """Relay the upstream events into the store; the terminal entry (an error) or None.

        The events the upstream delivered together (one read may complete several) go to the
        store as one `append_many` by the stream's `_Outbox`, so its readers wake, and write to
        their HTTP responses, once per batch; each event is serialized once, here."""
        model = entry.server_model_id
        mask = KeyMask(entry.api_key)  # the upstream key never reaches the store (masking.py)
        outbox = _Outbox(self.store, response_id, self.metrics, model)
        try:
            try:
                async with stream:  # leaving it (cancellation included) closes the upstream
                    burst = BurstClock()
                    async for event in stream:
                        if recorder is not None:
                            recorder.observe(event)
                        outbox.put(mask(dumps(event)))
                        if progress.first_event_at is None:
                            self._started(progress)
                            progress.first_event_at = time.monotonic()
                            self.metrics.time_to_first_event.observe(
                                progress.first_event_at - started, model
                            )
                        if event["event_type"] == "stop":
                            progress.usage = event["usage_metadata"]
                            self._count_tokens(model, progress.usage)
                        if outbox.full:
                            await outbox.drained()
                        elif self.must_yield(burst):
                            # another stream is waiting for its first event: let it go first
                            await self.yield_to_starts()
            except StreamError:
                await outbox.close()  # the events before the error are stored before it
                raise
            await outbox.close()
            self._count_cost(model, stream.result)
        except (StreamError, StoreLimitError) as exc:
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
        finally:
            outbox.cancel()  # cancelled mid-stream: nothing may be appended after the end
            progress.seq = outbox.stored
        return None

    def _count_tokens(self, model: str, usage: Usage | None) -> None:
        if not usage:
            return
        tokens_in = (usage.get("cached_tokens") or 0) + (usage.get("prompt_tokens") or 0)
        tokens_out = (usage.get("thoughts_tokens") or 0) + (usage.get("response_tokens") or 0)
        self.metrics.tokens.inc(model, "in", amount=tokens_in)
        self.metrics.tokens.inc(model, "out", amount=tokens_out)

    def _count_cost(self, model: str, result: FinalResponse | PartialResponse | None) -> None:
        cost = result.cost if result is not None else None
        total = cost.total if cost is not None else None
        if cost is not None and total is not None:
            self.metrics.cost.inc(model, cost.currency, amount=float(total))

    # --- reading ----------------------------------------------------------------------------

    async def readable_by(self, response_id: str, owner: str) -> bool:
        """Whether the stream is stored and was started with the key `owner` hashes: a stream
        of another key reads as unknown, so a resume does not tell it exists."""
        return await self.meta_for(response_id, owner) is not None

    async def meta_for(self, response_id: str, owner: str) -> str | None:
        """The stream's `StreamRequest.meta` ("" for none) when it is stored and was started
        with the key `owner` hashes; None otherwise (another key's stream reads as unknown)."""
        try:
            stored = await self.store.owner(response_id)
        except StoreError:
            raise store_unavailable() from None
        if stored is None:
            return None
        stored_owner, _, meta = stored.partition(_META_SEPARATOR)
        if not hmac.compare_digest(stored_owner.encode(), owner.encode()):
            return None
        return meta

    async def sse(self, response_id: str, after_seq: int) -> AsyncGenerator[bytes, None]:
        """The SSE body of a stream from `after_seq` on: stored events, then live ones, then
        `[DONE]`; keep-alive comments while nothing arrives."""
        after = after_seq
        burst = BurstClock()
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
                        if self.must_yield(burst):  # a first event elsewhere goes first
                            await self.yield_to_starts()
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
    """Lets one waiter through per turn of the event loop (`StreamRelay.yield_to_starts`);
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


class _Outbox:
    """The events a stream's pump has read and the store has not taken yet, and the task that
    hands them over: each time it runs it takes everything pending as one `append_many`. The
    pump only appends to a list; the store's work, the readers' wake-up and the metrics are
    paid once per batch. A store error ends the flushing; the pump sees it at its next `put`,
    or at `close`."""

    def __init__(
        self, store: StreamStore, response_id: str, metrics: ServerMetrics, model: str
    ) -> None:
        self.store = store
        self.response_id = response_id
        self.metrics = metrics
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
                self.metrics.events.inc(self.model)
            return
        self.stored += len(batch)
        self.metrics.events.inc(self.model, amount=len(batch))


# A stream's owner record in the store: the owner's key hash, then the stream's meta. Key hashes
# never hold the separator (`auth.key_hash`: "key-" and hex digits).
_META_SEPARATOR = "\n"


def _owner_record(owner: str, meta: str) -> str:
    return f"{owner}{_META_SEPARATOR}{meta}" if meta else owner


def _store_lost(doing: str, then: str) -> dict[str, dict[str, str]]:
    """The error line of a stream whose store went away `doing` something."""
    message = f"the server lost its stream store {doing}; {then}"
    return {"error": {"type": StoreUnavailableError.__name__, "message": message}}


def _cancelled(error: StreamCancelledError, progress: _Progress) -> bytes:
    progress.error_type = type(error).__name__
    return dumps(error_object(error))


def stopped() -> StreamCancelledError:
    return StreamCancelledError(
        "stopped",
        "a client stopped this stream, so the server cancelled the upstream call; the events "
        "before this one are the partial turn",
    )
