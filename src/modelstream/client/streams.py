"""The decisions of one `stream()` call, shared by the async and sync shells.

`StreamCall` holds no socket: the shell sends the request, hands it each chunk of the body and
each failure, and does what it answers. It owns the attempts, the decoder of the current attempt,
the wall clock stamped on events, the timings, the retry decision and the call's result.

Theory of operation. A call is in one `CallState` at a time; each method the shell calls is an
event that is legal only in some states, and moves the call as this table says (`_TRANSITIONS`
below is the same table as data). Anything else raises `CallStateError`, naming the state and the
event: a shell that calls out of order is a bug, never a stream failure.

    state      event         next       the method, and what decides the next state
    IDLE       begin         SENDING    begin_attempt(): the first attempt
    RETRYING   begin         SENDING    begin_attempt(): a new attempt, a fresh decoder
    RESUMING   begin         SENDING    begin_attempt(): the same attempt goes on (a resume GET)
    SENDING    accepted      STREAMING  accepts(): a 2xx, the body is the stream
    SENDING    refused       REFUSED    accepts(): any other status, the body is an error
    REFUSED    http_error    REFUSED    http_error(): the error the shell raises (then fail)
    STREAMING  feed          STREAMING  feed() / end(): events, none of them `stop`
    STREAMING  stop          STOPPED    feed() / end() delivered `stop`: the turn is final
    STOPPED    feed          STOPPED    the rest of the body drains; it changes nothing
    SENDING    fail          BROKEN     fail(): a modelstream stream, resumable (see below)
    REFUSED    fail          BROKEN
    STREAMING  fail          BROKEN
    SENDING    fail          FAILED     fail(): anything else; the partial is the result
    REFUSED    fail          FAILED
    STREAMING  fail          FAILED
    STOPPED    fail          STOPPED    fail() answers None: the turn was already final
    BROKEN     retry_delay   RESUMING   retry_delay(): resumed, right away or after a backoff
    FAILED     retry_delay   RETRYING   retry_delay(): retried after a delay
    FAILED     retry_delay   ENDED      retry_delay() answers None: the error ends the call
    *          interrupted   ENDED      interrupted(): the caller stopped reading, or a bug;
    STOPPED    interrupted   STOPPED      a final turn stays final

`request()`, `past_deadline()`, `read_deadline()`, `record_trace()` and `result` read the state
and move nothing. When `retry_delay()` moves to RETRYING it leaves a `RetryNotice` in
`retry_notice` (None otherwise), which the shell hands the client's `on_retry` before it
waits. The happy path is IDLE → SENDING → STREAMING → STOPPED; `feed()` checks its state with
two identity tests, so the hot path pays nothing for the table.

An attempt may be retried only while no event has reached the caller (`delivered` is False), so
an event is never delivered twice (SPEC §6). Once the `stop` event is out the turn is final, and
a connection that breaks while the rest of the body drains changes nothing.

A modelstream server's stream is resumed instead (client type "modelstream", docs/server.md):
when its connection drops or goes idle, before or after the first event, the next attempt is
`GET /v1/streams/{response_id}` with the `Last-Event-ID` of the last event decoded, and its body
goes on into the same decoder (its framing restarted at a frame boundary; `StreamResume` reads
the SSE ids of the decoded frames and drops events already seen), so the caller sees one
uninterrupted stream. Resumes are bounded (`ResumeLimits`); the
first one after progress is immediate, the next ones back off. The server's own error line, a
refused resume (a 404 once the stream expired) or the attempt deadline end the call as usual.
"""

from __future__ import annotations

import dataclasses
import enum
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from ..auth.signing import RequestSigner, SignableRequest
from ..errors import (
    IncompleteStreamError,
    ModelstreamError,
    PoolExhaustedError,
    ProviderConnectionError,
    ProviderError,
    StreamError,
    StreamTimeoutError,
)
from ..protocols import error_words_of, protocol_named
from ..protocols.descriptor import Protocol
from ..protocols.modelstream.decoder import error_from_wire
from ..results import FinalResponse, PartialResponse, PartialStatus, StreamMetadata, TurnCost
from ..stream import StreamDecoder
from ..traces.record import TraceSink, TurnRecorder, record_turn
from ..types import Event, Usage
from .failures import Failure, Fault
from .http_errors import provider_error_from_http
from .prepare import PreparedRequest
from .resume import ResumeLimits, StreamResume
from .retry import RetryNotice, RetryPolicy, backoff_delay, retry_cause, retry_delay
from .timeouts import Timeouts

if TYPE_CHECKING:
    from ..structured.output import OutputType


class CallState(enum.Enum):
    """Where a `StreamCall` is (the table in the module docstring)."""

    IDLE = "idle"
    SENDING = "sending"
    STREAMING = "streaming"
    REFUSED = "refused"
    STOPPED = "stopped"
    BROKEN = "broken"
    FAILED = "failed"
    RESUMING = "resuming"
    RETRYING = "retrying"
    ENDED = "ended"


IDLE, SENDING, STREAMING, REFUSED, STOPPED = (
    CallState.IDLE,
    CallState.SENDING,
    CallState.STREAMING,
    CallState.REFUSED,
    CallState.STOPPED,
)
BROKEN, FAILED, RESUMING, RETRYING, ENDED = (
    CallState.BROKEN,
    CallState.FAILED,
    CallState.RESUMING,
    CallState.RETRYING,
    CallState.ENDED,
)

# (state, event) -> the states the event may lead to; the method picks one by what happened.
_TRANSITIONS: dict[tuple[CallState, str], frozenset[CallState]] = {
    (IDLE, "begin"): frozenset({SENDING}),
    (RETRYING, "begin"): frozenset({SENDING}),
    (RESUMING, "begin"): frozenset({SENDING}),
    (SENDING, "accepted"): frozenset({STREAMING}),
    (SENDING, "refused"): frozenset({REFUSED}),
    (REFUSED, "http_error"): frozenset({REFUSED}),
    (STREAMING, "feed"): frozenset({STREAMING}),
    (STREAMING, "stop"): frozenset({STOPPED}),
    (STOPPED, "feed"): frozenset({STOPPED}),
    (SENDING, "fail"): frozenset({BROKEN, FAILED}),
    (REFUSED, "fail"): frozenset({BROKEN, FAILED}),
    (STREAMING, "fail"): frozenset({BROKEN, FAILED}),
    (STOPPED, "fail"): frozenset({STOPPED}),
    (BROKEN, "retry_delay"): frozenset({RESUMING}),
    (FAILED, "retry_delay"): frozenset({RETRYING, ENDED}),
    **{(state, "interrupted"): frozenset({ENDED}) for state in CallState if state is not STOPPED},
    (STOPPED, "interrupted"): frozenset({STOPPED}),
}


class CallStateError(RuntimeError):
    """A shell called `StreamCall` out of order: a bug in the shell, never a stream failure
    (so no shell catches it as one)."""

    def __init__(self, state: CallState, event: str) -> None:
        super().__init__(f"a stream call in state {state.name} cannot take the event {event!r}")
        self.state = state
        self.event = event


class StreamCall:
    """One call's state: attempts, decoder, timings and result (module docstring)."""

    def __init__(
        self,
        *,
        protocol: str | Protocol,
        provider: str,
        model: str,
        url: str,
        signer: RequestSigner | None,
        retry: RetryPolicy,
        timeouts: Timeouts,
        lenient_tool_arguments: bool,
        random: Callable[[], float],
        lenient_frames: bool = False,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        trace: TurnRecorder | None = None,
        trace_sinks: Sequence[TraceSink] = (),
        resume_limits: ResumeLimits | None = None,
    ) -> None:
        self.protocol = protocol_named(protocol)  # the descriptor it encodes and decodes by
        self.provider = provider
        self.model = model
        self.url = url
        self.retry = retry
        self.timeouts = timeouts
        self.state = IDLE  # the table in the module docstring
        self.attempt = 0
        self.delivered = False  # an event has reached the caller: no retry from now on
        self.deadline: float | None = None  # monotonic end of the current attempt
        self._signer = signer  # signs each attempt; masks its secrets in errors
        # True when signing may refresh credentials (IO): an async shell signs in a thread
        self.signing_may_block = signer is not None and signer.may_block
        self._lenient = lenient_tool_arguments
        self._lenient_frames = lenient_frames
        self._random = random
        self._monotonic = monotonic
        self._wall = wall
        self._started = monotonic()
        self._timings: dict[str, float] = {}
        self._retries: list[dict[str, object]] = []
        self._result: FinalResponse | PartialResponse | None = None
        self._retryable = False
        self._retry_after: float | None = None
        self.retry_notice: RetryNotice | None = None  # the retry `retry_delay()` decided on
        # the type `response_format` asks the answer to have (set by the client), or None
        self.output: OutputType[Any] | None = None
        self._trace = trace
        self._trace_sinks = trace_sinks
        # a modelstream server's stream: resumed, not retried, once it has a response id
        self._resume = StreamResume() if self.protocol.relayed else None
        self.decoder = self._new_decoder()
        self._resume_limits = resume_limits or ResumeLimits()
        self._resuming = False  # this attempt reads the rest of the stream (a resume GET)
        self._cut: IncompleteStreamError | None = None  # the body ended before [DONE]

    # --- the attempt ---------------------------------------------------------------------

    def _move(self, event: str, to: CallState) -> None:
        """Take `event` into state `to`, if the table allows it from here."""
        if to not in _TRANSITIONS.get((self.state, event), ()):
            raise CallStateError(self.state, event)
        self.state = to

    def _expect(self, event: str) -> None:
        """Check that `event` is legal here; the method moves the state itself."""
        if (self.state, event) not in _TRANSITIONS:
            raise CallStateError(self.state, event)

    def begin_attempt(self) -> None:
        self._resuming = self.state is RESUMING
        self._move("begin", SENDING)
        if not self._resuming:
            self.attempt += 1
            if self.attempt > 1:
                if self._resume is not None:
                    self._resume = StreamResume()
                self.decoder = self._new_decoder()
        now = self._monotonic()
        self.deadline = None if self.timeouts.attempt is None else now + self.timeouts.attempt

    def request(self, planned: PreparedRequest) -> PreparedRequest:
        """What this attempt sends: the planned request, or the resume of its stream, signed
        now (the call's wall clock), so every retry and resume carries a fresh signature."""
        outgoing = planned
        if self._resuming:
            resume = self._resume
            assert resume is not None
            headers = {k: v for k, v in planned.headers.items() if k.lower() != "content-type"}
            last_event_id = resume.last_event_id()
            if last_event_id is not None:
                headers["last-event-id"] = last_event_id
            outgoing = PreparedRequest("GET", resume.resume_url(planned.url), b"", headers)
        if self._signer is None:
            return outgoing
        unsigned = SignableRequest(
            outgoing.method, outgoing.url, outgoing.headers, outgoing.content
        )
        now = datetime.fromtimestamp(self._wall(), UTC)
        signed = {**outgoing.headers, **self._signer.sign(unsigned, now)}
        return PreparedRequest(outgoing.method, outgoing.url, outgoing.content, signed)

    def accepts(self, status: int, headers: Mapping[str, str] | None = None) -> bool:
        """A 2xx status: the body is the stream. Anything else is read as an error."""
        ok = 200 <= status < 300
        self._move("accepted" if ok else "refused", STREAMING if ok else REFUSED)
        if not self._resuming:
            self._timings["ttfb_ms"] = self._elapsed_ms()  # of the attempt that answered last
        if ok and self._resume is not None and headers is not None:
            self._resume.responded(headers.get("x-response-id"))
            self.decoder.metadata.response_id = self._resume.response_id
        return ok

    def http_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ModelstreamError:
        """The error of a refused request: a `ProviderError`, or the library's own request
        error (`InvalidMessageError`, ...) that a modelstream server answered with."""
        self._move("http_error", REFUSED)
        if self._resume is not None:
            refused = _server_refusal(body)
            if refused is not None:
                return refused
        return provider_error_from_http(
            status,
            headers,
            body,
            provider=self.provider,
            now=self._wall(),
            model=self.model,
            redact=self._signer.redact if self._signer is not None else None,
            read_body=self.protocol.read_error_body,
            words=error_words_of(self.protocol),
        )

    def past_deadline(self) -> bool:
        return self.deadline is not None and self._monotonic() >= self.deadline

    def read_deadline(self) -> float | None:
        """The attempt deadline when the next read must be bounded by it; None while httpx's
        idle (read) timeout would end a blocked read before the deadline anyway."""
        deadline = self.deadline
        if deadline is None:
            return None
        idle = self.timeouts.idle
        if idle is not None and deadline - self._monotonic() > idle:
            return None
        return deadline

    # --- the body ------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> list[Event]:
        """The events `chunk` completed; the shell yields them at once, so from here on the
        call is never retried."""
        state = self.state
        if state is not STREAMING and state is not STOPPED:  # the table, without a lookup
            raise CallStateError(state, "feed")
        events = self.decoder.feed(chunk, int(self._wall() * 1000))
        # per chunk, only the first events, a trace or the stop need bookkeeping
        if events and (not self.delivered or self._trace is not None or self.decoder.stopped):
            self._delivering(events)
        return events

    def end(self) -> list[Event]:
        """The body is over: the last events (`stop`), or the decoder's error."""
        self._expect("feed")
        if self._resume is not None and not self.decoder.stopped and self.decoder.error is None:
            # a modelstream server ends every stream with [DONE]: this connection was cut
            self._cut = IncompleteStreamError(
                "finish reason", "the server's stream ended without its [DONE] line"
            )
            raise self._cut
        events = self.decoder.end(int(self._wall() * 1000))
        if events:
            self._delivering(events)
        self._finish()
        return events

    def _delivering(self, events: list[Event]) -> None:
        if self._trace is not None:
            for event in events:
                self._trace.observe(event)
        if not self.delivered:
            self.delivered = True
            self._timings["ttfe_ms"] = self._elapsed_ms()
        if self.decoder.stopped and self.state is not STOPPED:
            self._move("stop", STOPPED)
            self._finish()

    # --- failures ------------------------------------------------------------------------

    def fail(self, failure: Failure) -> StreamError | None:
        """The error that ends this attempt, carrying the partial (also the call's result unless
        a retry replaces it); None when the turn is already final and the failure changes
        nothing."""
        self._expect("fail")
        if self.state is STOPPED:
            return None
        exc = failure.exc
        error = self._as_stream_error(failure)
        if error is not exc:
            error.__cause__ = exc
        if isinstance(error, ProviderError) and self._resume is None:
            error.name_model(self.model)  # a relayed error names the server's upstream already
        if self._signer is not None:  # a provider's message may echo the key (SPEC §4)
            error.redact(self._signer.redact)
        if self._resume is not None and self._resumable(failure):
            self._move("fail", BROKEN)  # no partial yet: the stream goes on
            return error
        self._move("fail", FAILED)
        if isinstance(error, ProviderError):
            self._retryable, self._retry_after = error.retryable, error.retry_after
        else:  # a transport failure may be retried; what the decoder found in a body may not
            self._retryable, self._retry_after = error is not exc, None
        partial = error.partial
        if partial is None:
            status: PartialStatus = (
                "incomplete" if isinstance(error, IncompleteStreamError) else "failed"
            )
            partial = dataclasses.replace(
                self.decoder.cancel(str(error)), status=status, reason=str(error)
            )
            error.partial = partial
        self._finish(partial)
        return error

    def retry_delay(self, error: StreamError) -> float | None:
        """Seconds to wait before the next attempt, or None when `error` ends the call."""
        self.retry_notice = None
        if self.state is BROKEN:
            self._move("retry_delay", RESUMING)
            return self._resume_delay(error)
        self._expect("retry_delay")
        if self.delivered:
            self._move("retry_delay", ENDED)
            return None
        delay = retry_delay(
            self.retry,
            self.attempt,
            retryable=self._retryable,
            retry_after=self._retry_after,
            random=self._random,
        )
        if delay is not None:
            entry: dict[str, object] = {
                "type": "retry",
                "attempt": self.attempt,
                "error": str(error),
                "delay_s": round(delay, 3),
            }
            if isinstance(error, ProviderError) and error.status is not None:
                entry["status"] = error.status
            self._retries.append(entry)
            self._result = None
            self.retry_notice = RetryNotice(
                retry_cause(error), delay, self.attempt + 1, self.retry.max_attempts, error
            )
        self._move("retry_delay", ENDED if delay is None else RETRYING)
        return delay

    def _resumable(self, failure: Failure) -> bool:
        """Whether the stream's connection dropped (or went idle, or a resume met a 5xx/429)
        while the server still has the stream, and the resumes are not used up."""
        resume = self._resume
        assert resume is not None
        limits = self._resume_limits
        if (
            resume.response_id is None
            or self.decoder.error is not None  # the server's error line, or a broken grammar
            or resume.resumes >= limits.max_resumes
            or resume.without_progress >= limits.max_without_progress
        ):
            return False
        exc = failure.exc
        if exc is self._cut:
            return True
        if isinstance(exc, ProviderError):  # a refused resume
            return self._resuming and exc.retryable
        if failure.timed_out and self.past_deadline():
            return False  # the attempt deadline bounds the call, resumed or not
        return failure.connection

    def _resume_delay(self, error: StreamError) -> float:
        resume = self._resume
        assert resume is not None
        resume.reconnecting()
        self.decoder.restart_framing()
        # right away after progress; then full-jitter backoff as for retries
        failed = resume.without_progress - 1
        delay = backoff_delay(self.retry, failed, self._random) if failed else 0.0
        self._retries.append(
            {
                "type": "resume",
                "resume": resume.resumes,
                "after_seq": resume.last_seq,
                "error": str(error),
                "delay_s": round(delay, 3),
            }
        )
        return delay

    def interrupted(self, failure: Failure) -> None:
        """The caller stopped reading (cancellation, `break`, leaving the `with`) or something
        unexpected escaped: the result becomes the partial, unless the turn was already final."""
        if self.state is STOPPED:
            self._finish()
            return
        self._move("interrupted", ENDED)
        if self._result is not None and self._result.status != "final":
            return  # the error that ended the call, or the failure a retry would have replaced
        exc = failure.exc
        status: PartialStatus = "failed"
        reason = f"{type(exc).__name__}: {exc}"
        if self._signer is not None:
            reason = self._signer.redact(reason)
        if failure.fault is Fault.CANCELLED:
            status, reason = "cancelled", "cancelled by the caller"
        # (the decoder may hold the partial of an attempt that failed before a retry)
        partial = dataclasses.replace(self.decoder.cancel(reason), status=status, reason=reason)
        self._finish(partial)

    def record_trace(self) -> None:
        """The stream is over: give its turn to the trace sinks, once (when traced)."""
        if self._trace is None or self._result is None:
            return
        recorder, self._trace = self._trace, None
        record_turn(recorder, self._result, self._trace_sinks)

    # --- the result ----------------------------------------------------------------------

    @property
    def result(self) -> FinalResponse | PartialResponse | None:
        return self._result

    def _finish(self, partial: PartialResponse | None = None) -> None:
        if self._result is not None and partial is None:
            return
        metadata = self.decoder.metadata
        if metadata.model is None:
            metadata.model = self.model
        metadata.timings.update(self._timings)
        metadata.timings["total_ms"] = self._elapsed_ms()
        metadata.finished_at_ms = int(self._wall() * 1000)
        if self._retries and metadata.diagnostics[: len(self._retries)] != self._retries:
            metadata.diagnostics[:0] = self._retries
        if partial is not None:
            self._result = partial
        else:
            self._result = self.decoder.result

    def _new_decoder(self) -> StreamDecoder:
        return StreamDecoder(
            self.protocol,
            provider=self.provider,
            lenient_tool_arguments=self._lenient,
            lenient_frames=self._lenient_frames,
            redact=self._signer.redact if self._signer is not None else None,
            frame_filter=self._resume.frames if self._resume is not None else None,
            pricing=_turn_cost,
        )

    def _elapsed_ms(self) -> float:
        return round((self._monotonic() - self._started) * 1000, 3)

    def _as_stream_error(self, failure: Failure) -> StreamError:
        exc, fault = failure.exc, failure.fault
        if isinstance(exc, StreamError):
            return exc
        missing = "response" if self.state is SENDING else "finish reason"
        if fault is Fault.DEADLINE or (failure.timed_out and self.past_deadline()):
            return StreamTimeoutError("attempt", self.timeouts.attempt, missing)
        if fault is Fault.POOL_TIMEOUT:
            return PoolExhaustedError(self.timeouts.connect, missing)
        if fault is Fault.CONNECT_TIMEOUT:
            return StreamTimeoutError("connect", self.timeouts.connect, missing)
        if fault is Fault.IDLE_TIMEOUT:
            return StreamTimeoutError("idle", self.timeouts.idle, missing)
        if fault is Fault.CONNECT and not self.delivered:
            # nothing was sent, nothing received: not an incomplete stream (docs/client.md)
            return ProviderConnectionError(
                _origin(self.url),
                failure.reason,
                failure.detail,
                provider=self.provider,
                model=self.model,
                attempts=self.attempt,
            )
        if fault is Fault.CONNECT:  # a resume after events: the turn is partial
            detail = f"could not connect to {_origin(self.url)}: {exc}"
        else:
            detail = f"the connection broke: {type(exc).__name__}: {exc}"
        return IncompleteStreamError(missing, detail)


def _turn_cost(usage: Usage | None, metadata: StreamMetadata) -> TurnCost | None:
    """The catalogue's price of a turn; the catalogue is imported when a cost is first read."""
    from ..catalogue.cost import turn_cost

    return turn_cost(usage, metadata)


def _server_refusal(body: bytes) -> ModelstreamError | None:
    """A modelstream server's refusal that is the library's own request error, else None."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return None
    refused = error_from_wire(error, refusal=True)
    return None if isinstance(refused, StreamError) else refused


def _origin(url: str) -> str:
    """`scheme://host[:port]` of `url`, without credentials or a default port."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    port = parts.port
    if port is None or _DEFAULT_PORTS.get(parts.scheme) == port:
        return f"{parts.scheme}://{host}"
    return f"{parts.scheme}://{host}:{port}"


_DEFAULT_PORTS = {"http": 80, "https": 443}


__all__ = ["CallState", "CallStateError", "StreamCall"]
