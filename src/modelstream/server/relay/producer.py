"""The producing side of a stream: one task per stream runs its upstream call and writes its
events into the store, at the upstream's pace, never waiting for a reader.

A supervisor around the pump sends the store a heartbeat every second (its lease, in a shared
store) and cancels the upstream call when no reader has been attached for
`resume_grace_seconds` (the client dropped and did not come back), or when a reader asks
(`stop`); the stream then ends with a `StreamCancelledError` entry. A finished stream stays
readable for `retain_seconds`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from ...client import AsyncEventStream
from ...client.routing import resolve_route
from ...errors import StreamError, StreamTimeoutError
from ...jsonwire import dumps, error_object
from ...traces.record import TurnRecorder, record_turn
from ...traces.sinks import close_sinks, resolve_sinks
from ...types import Event, Usage
from ..config import ModelEntry, ServerSettings
from ..errors import StreamCancelledError, abandoned, shutting_down
from ..keys import Ticket
from ..limits import StreamSlots
from ..logs import stream_ref
from ..masking import KeyMask
from ..stores import StoreError, StoreLimitError, StoreUnavailableError, StreamStore
from ..wire import StreamRequest
from .attempts import Attempts
from .error_lines import INTERNAL, store_lost
from .ledger import KeyLedger
from .observers import RelayObserver, token_split
from .outbox import Outbox
from .priority import BurstClock, StartPriority

log = logging.getLogger("modelstream.server")


@dataclass
class Progress:
    """What a producer has relayed so far."""

    seq: int = 0
    first_event_at: float | None = None
    usage: Usage | None = None
    error_type: str | None = None  # of the terminal entry
    started: bool = False  # counted out of `StartPriority.starting`
    stream: AsyncEventStream | None = None  # the upstream call on now (the last one, at the end)

    def outcome(self, terminal: bytes | None) -> str:
        """The /metrics outcome: stop, error or cancelled."""
        if terminal is None:
            return "stop"
        return "cancelled" if self.error_type == StreamCancelledError.__name__ else "error"


class Producer:
    """Starts, supervises and stops the streams' producer tasks (module docstring)."""

    def __init__(
        self,
        settings: ServerSettings,
        store: StreamStore,
        slots: StreamSlots,
        priority: StartPriority,
        observer: RelayObserver,
        ledger: KeyLedger | None = None,
    ) -> None:
        self.settings = settings
        self.ledger = ledger
        self.store = store
        self.slots = slots
        self.priority = priority
        self.observer = observer
        self._tasks: set[asyncio.Task[None]] = set()
        self._pumps: dict[str, asyncio.Task[bytes | None]] = {}  # upstream calls, for stop()
        self._attempts: dict[str, Attempts] = {}  # each running stream's, by response id
        self._trace_sinks = resolve_sinks(settings.traces, os.environ, limits=settings.trace_limits)
        grace = settings.resume_grace_seconds
        self._poll = min(1.0, max(0.02, grace / 4))  # how often a producer looks for readers

    def start(
        self,
        response_id: str,
        entry: ModelEntry,
        request: StreamRequest,
        stream: AsyncEventStream,
        attempts: Attempts,
        ticket: Ticket | None = None,
    ) -> asyncio.Task[None]:
        """The producer task of a stream whose slot is taken and whose store entry is made; it
        releases the caller's slot when the upstream call is over. `stream` is the first of
        `attempts`; `entry` the served model's deployment the request was checked against."""
        self.observer.stream_started(entry.server_model_id)
        self.priority.stream_starting()
        recorder = self._recorder(entry, request, response_id, attempts.redact)
        self._attempts[response_id] = attempts
        task = asyncio.create_task(
            self._produce(
                response_id,
                entry,
                stream,
                attempts,
                request.caller,
                time.monotonic(),
                recorder,
                ticket,
            )
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def deployment_of(self, response_id: str) -> ModelEntry | None:
        """The deployment a running stream is on now (`StreamRelay.deployment_of`)."""
        attempts = self._attempts.get(response_id)
        return None if attempts is None else attempts.entry

    def stop(self, response_id: str) -> bool:
        """Cancel a running stream's upstream call now (a person pressed Stop); the stream ends
        with a `StreamCancelledError` entry. False when no upstream call of that id runs here."""
        pump = self._pumps.get(response_id)
        if pump is None or pump.done():
            return False
        pump.cancel()
        return True

    async def cancel_all(self) -> None:
        """Cancel running streams (each ends with a cancelled entry) and wait for them."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)

    def close_traces(self) -> None:
        close_sinks(self._trace_sinks)

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
            key_name=request.key.key_name if request.key is not None else None,
        )

    async def _produce(
        self,
        response_id: str,
        entry: ModelEntry,
        stream: AsyncEventStream,
        attempts: Attempts,
        caller: str | None,
        started: float,
        recorder: TurnRecorder | None = None,
        ticket: Ticket | None = None,
    ) -> None:
        progress = Progress(stream=stream)
        pump = asyncio.create_task(
            self._pump(response_id, entry, attempts, progress, started, recorder)
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
            result = progress.stream.result if progress.stream is not None else None
            self.observer.answered(entry.server_model_id, attempts, progress.usage, result)
            if recorder is not None and result is not None:
                for note in _deployment_notes(attempts):
                    recorder.note(note)
                record_turn(recorder, result, self._trace_sinks)
            with contextlib.suppress(StoreError):
                await self.store.finish(response_id, terminal)
                await self.store.expire(response_id, self.settings.retain_seconds)
            # the gateway reads the deployment that answered once the first entries are in,
            # which may be after a short turn's end
            loop = asyncio.get_running_loop()
            loop.call_later(_KEEP_ATTEMPTS_SECONDS, self._attempts.pop, response_id, None)
            await self._count_tokens(attempts, progress.usage)
            if ticket is not None and self.ledger is not None:
                answered = progress.first_event_at is not None
                await self.ledger.settle(ticket, result, progress.usage, answered)

    def _started(self, progress: Progress) -> None:
        """The stream's first event is stored, or it ended without one: it starts no more."""
        if not progress.started:
            progress.started = True
            self.priority.stream_started()

    def _account(
        self,
        response_id: str,
        entry: ModelEntry,
        progress: Progress,
        terminal: bytes | None,
        started: float,
    ) -> None:
        elapsed = time.monotonic() - started
        outcome = progress.outcome(terminal)
        self.observer.stream_ended(entry.server_model_id, outcome, elapsed)
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
        self, response_id: str, pump: asyncio.Task[bytes | None], progress: Progress
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

    async def _count_tokens(self, attempts: Attempts, usage: Usage | None) -> None:
        """The answering deployment's tokens, against its tpm."""
        if attempts.entry is None or attempts.entry.tpm is None or not usage:
            return
        tokens = sum(count or 0 for count in token_split(usage))
        try:
            await attempts.router.used(attempts.entry, tokens)
        except Exception as exc:  # the router's store is advice: a turn never fails on it
            log.warning("counting a deployment's tokens failed: %s", type(exc).__name__)

    async def _pump(
        self,
        response_id: str,
        entry: ModelEntry,
        attempts: Attempts,
        progress: Progress,
        started: float,
        recorder: TurnRecorder | None = None,
    ) -> bytes | None:
        """Relay the upstream events into the store; the terminal entry (an error) or None.

        The events the upstream delivered together (one read may complete several) go to the
        store as one `append_many` by the stream's `Outbox`, so its readers wake, and write to
        their HTTP responses, once per batch; each event is serialized once, here. An attempt
        that fails before its first event moves the turn to the next deployment
        (`Attempts.after`); after it, the error ends the stream."""
        model = entry.server_model_id
        observer = self.observer
        priority = self.priority
        outbox = Outbox(self.store, response_id, observer, model)
        stream = progress.stream
        assert stream is not None
        # the upstream key never reaches the store (masking.py)
        mask = KeyMask(attempts.entry.api_key if attempts.entry else entry.api_key)
        try:
            while True:
                try:
                    async with stream:  # leaving it (cancellation included) closes the upstream
                        burst = BurstClock()
                        async for event in _events(stream, attempts.entry):
                            if recorder is not None:
                                recorder.observe(event)
                            outbox.put(mask(dumps(event)))
                            if progress.first_event_at is None:
                                self._started(progress)
                                progress.first_event_at = time.monotonic()
                                observer.first_event(model, progress.first_event_at - started)
                            if event["event_type"] == "stop":
                                progress.usage = event["usage_metadata"]
                                observer.usage(model, progress.usage)
                            if outbox.full:
                                await outbox.drained()
                            elif priority.must_yield(burst):
                                # another stream is waiting for its first event: let it go first
                                await priority.yield_to_starts()
                except StreamError as exc:
                    following = None
                    if progress.first_event_at is None:  # nothing relayed: it may move on
                        following = await attempts.after(exc)
                    if following is None:
                        await outbox.close()  # the events before the error are stored before it
                        raise
                    observer.switched(model, attempts.switches[-1])
                    stream = progress.stream = following
                    mask = KeyMask(attempts.entry.api_key if attempts.entry else None)
                    continue
                break
            await outbox.close()
            observer.turn_finished(model, stream.result)
        except (StreamError, StoreLimitError) as exc:
            progress.error_type = type(exc).__name__
            return mask(dumps(error_object(exc)))
        except StoreError as exc:
            progress.error_type = type(exc).__name__
            log.error("stream %s: the store failed: %s", stream_ref(response_id), exc)
            if isinstance(exc, StoreUnavailableError):  # stored only if the store is back
                return dumps(store_lost("while relaying this stream", "retry the turn"))
            return dumps(INTERNAL)
        except Exception:
            progress.error_type = "InternalServerError"
            log.exception("stream %s: relaying failed", stream_ref(response_id))
            return dumps(INTERNAL)
        finally:
            outbox.cancel()  # cancelled mid-stream: nothing may be appended after the end
            progress.seq = outbox.stored
        return None


_KEEP_ATTEMPTS_SECONDS = 10.0


async def _first_within(stream: AsyncEventStream, seconds: float) -> AsyncIterator[Event]:
    """`stream`'s events; a `StreamTimeoutError` when `seconds` pass before the first one (the
    turn may then move on to its next deployment)."""
    iterator = aiter(stream)
    try:
        async with asyncio.timeout(seconds):
            first = await anext(iterator)
    except StopAsyncIteration:
        return
    except TimeoutError:
        raise StreamTimeoutError("first_event", seconds, "the first event") from None
    yield first
    async for event in iterator:
        yield event


def _events(stream: AsyncEventStream, entry: ModelEntry | None) -> AsyncIterator[Event]:
    """The attempt's events, under its deployment's `first_event_timeout_seconds` if it has one
    (without one, the stream itself: no wrapper per event)."""
    seconds = entry.first_event_timeout_seconds if entry is not None else None
    return stream if seconds is None else _first_within(stream, seconds)


def _deployment_notes(attempts: Attempts) -> list[dict[str, object]]:
    """The trace's notes of a turn's deployments: each switch, then the one that answered
    (when there was a switch, or the served model has several deployments)."""
    notes: list[dict[str, object]] = [switch.as_json() for switch in attempts.switches]
    entry = attempts.entry
    if entry is not None and (attempts.switches or entry.deployment != entry.server_model_id):
        notes.append({"kind": "deployment", "name": entry.deployment})
    return notes


def _cancelled(error: StreamCancelledError, progress: Progress) -> bytes:
    progress.error_type = type(error).__name__
    return dumps(error_object(error))


def stopped() -> StreamCancelledError:
    return StreamCancelledError(
        "stopped",
        "a client stopped this stream, so the server cancelled the upstream call; the events "
        "before this one are the partial turn",
    )
