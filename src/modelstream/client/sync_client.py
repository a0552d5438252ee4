"""`Client`: the blocking shell around `StreamCall`, the twin of `AsyncClient`.

GENERATED from async_client.py by `python scripts/generate_sync.py`; do not edit: edit the
async client and regenerate (tests/client/test_unasync.py fails while this file is stale).
"""

from __future__ import annotations

import inspect
import random as _random
import ssl
import time
from collections.abc import Callable, Generator, Iterator
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, Unpack

import httpx

from ..auth.signing import RequestSigner
from ..errors import IncompleteStreamError, StreamError
from ..messages import Prompt
from ..platforms import PlatformOption
from ..protocols.descriptor import Protocol
from ..results import AssistantMessage, FinalResponse, PartialResponse
from ..structured.output import parsed_message
from ..structured.streaming import Partial, PartialReader, elements_of
from ..traces.sinks import TracesOption
from ..types import Config, Event
from .failures import classify
from .http_errors import MAX_ERROR_BODY
from .model_list import ListedModel
from .prepare import CallPlan
from .retry import RetryNotice, RetryOption
from .settings import ClientSettings
from .streams import StreamCall
from .timeouts import TimeoutsOption, timeout_at
from .tls import ssl_context_for
from .transports import sync_transport

_FAILURES = (httpx.HTTPError, StreamError, TimeoutError)


class Client(ClientSettings):
    """Streams model turns over HTTP, one `for` over each; see docs/client.md."""

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client_type: str | Protocol | None = None,
        timeouts: TimeoutsOption | None = None,
        retry: RetryOption | None = None,
        timeout: TimeoutsOption | None = None,
        max_retries: int | None = None,
        on_retry: Callable[[RetryNotice], object] | None = None,
        lenient_tool_arguments: bool = False,
        lenient_frames: bool = False,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
        traces: TracesOption = None,
        signer: RequestSigner | None = None,
        platform: PlatformOption = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            client_type=client_type,
            timeouts=timeouts,
            retry=retry,
            timeout=timeout,
            max_retries=max_retries,
            lenient_tool_arguments=lenient_tool_arguments,
            lenient_frames=lenient_frames,
            random=random,
            traces=traces,
            signer=signer,
            platform=platform,
        )
        if http_client is not None and not isinstance(http_client, httpx.Client):
            raise TypeError(
                f"http_client must be an httpx.Client, got {type(http_client).__name__}"
            )
        if not callable(sleep):
            raise TypeError(f"sleep must be a function taking seconds, got {sleep!r}")
        self._sleep = sleep
        if on_retry is not None and (
            not callable(on_retry) or inspect.iscoroutinefunction(on_retry)
        ):  # called, never awaited: an async function's body would never run
            raise TypeError(
                "on_retry must be a plain (not async) function taking a RetryNotice, got "
                f"{on_retry!r}"
            )
        self._on_retry = on_retry  # told of each retry before its wait (docs/client.md)
        if ssl_context is not None and not isinstance(ssl_context, ssl.SSLContext):
            raise TypeError(
                f"ssl_context must be an ssl.SSLContext, got {type(ssl_context).__name__}"
            )
        self._owns_http = http_client is None
        # one TLS context per process (client/tls.py): building one costs ~15 ms of CPU
        self._http = http_client or httpx.Client(
            timeout=self.timeouts.httpx_timeout(),
            # the async client's own HTTP/1.1, the blocking one's httpx's (client/transports.py)
            transport=sync_transport(ssl_context_for(self.base_url, ssl_context)),
        )

    def stream(
        self,
        messages: Prompt,
        config: Config | None = None,
        *,
        model: str | None = None,
        timeout: TimeoutsOption | None = None,
        max_retries: int | None = None,
        **config_keys: Unpack[Config],
    ) -> EventStream:
        """The events of one turn; the request is sent when the first event is pulled.

        `messages` is the user's turn as a str, one message, or the history as a list of
        messages; `timeout` and `max_retries` override the client's settings for this call.
        Config keys go in `config` or as keyword arguments (`max_tokens=5`)."""
        plan, call = self._prepare(model, messages, config, timeout, max_retries, config_keys)
        return EventStream(lambda stream: self._events(plan, call, stream), call)

    def complete(
        self,
        messages: Prompt,
        config: Config | None = None,
        *,
        model: str | None = None,
        timeout: TimeoutsOption | None = None,
        max_retries: int | None = None,
        **config_keys: Unpack[Config],
    ) -> AssistantMessage:
        """The final assistant message of one turn, or the stream's error."""
        stream = self.stream(
            messages,
            config,
            model=model,
            timeout=timeout,
            max_retries=max_retries,
            **config_keys,
        )
        with stream:
            return stream.get_final_message()

    def list_models(self, *, model: str | None = None) -> list[ListedModel]:
        """The models the provider's models endpoint lists for this key (the route of `model`,
        else of the client's model or client type), each with its catalogue entry or None."""
        listing = self._model_list(model)
        while (request := listing.next_request(datetime.now(UTC))) is not None:
            response = self._http.request(
                request.method,
                request.url,
                headers=request.headers,
                timeout=self.timeouts.httpx_timeout(),
            )
            listing.read(response.status_code, response.headers, response.content, time.time())
        return listing.models()

    def close(self) -> None:
        if self._owns_http:
            self._http.close()
        self._close_traces()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _events(self, plan: CallPlan, call: StreamCall, stream: EventStream) -> Generator[Event]:
        # each read is capped by the attempt too, so a blocking read overshoots it by at most that
        timeout = call.timeouts.httpx_timeout(cap_read_by_attempt=True)
        try:
            while True:
                call.begin_attempt()
                response: httpx.Response | None = None
                chunks: Iterator[bytes] | None = None
                try:
                    req = call.request(plan.request)  # the planned POST, or a resume, signed
                    request = self._http.build_request(
                        req.method,
                        req.url,
                        content=req.content,
                        headers=req.headers,
                        timeout=timeout,
                    )
                    with timeout_at(call.deadline):
                        response = self._http.send(request, stream=True)
                    if not call.accepts(response.status_code, response.headers):
                        body = _read_limited(response, MAX_ERROR_BODY)
                        raise call.http_error(response.status_code, response.headers, body)
                    chunks = _body(response)
                    while True:
                        # httpx's read timeout (idle) ends a blocked read before the deadline
                        # unless the deadline is nearer: only then is the read bounded by it.
                        read_deadline = call.read_deadline()
                        if read_deadline is None:
                            chunk = next(chunks, None)
                        else:
                            with timeout_at(read_deadline):
                                chunk = next(chunks, None)
                        if chunk is None:
                            break
                        for event in call.feed(chunk):
                            yield event
                    for event in call.end():
                        yield event
                    return
                except _FAILURES as exc:
                    error = call.fail(classify(exc))
                    if error is None:  # the turn was already final
                        return
                finally:
                    _close(chunks, response)
                delay = call.retry_delay(error)
                if delay is None:
                    raise error
                if call.retry_notice is not None and self._on_retry is not None:
                    self._on_retry(call.retry_notice)  # a resume is no retry: it has none
                self._sleep(delay)
        except BaseException as exc:
            if isinstance(exc, Exception):  # not a cancellation: what get_final_message raises
                stream.error = exc
            # break, cancellation, close(), or a bug: the partial is kept
            call.interrupted(classify(exc))
            raise
        finally:
            call.record_trace()  # when the config has a trace_id: the turn, final or partial


class EventStream:
    """The events of one turn, read with `for`; `result` is the final or partial response
    once it ended. Leaving the `with`, `close()` or cancelling (the task, or Ctrl-C)
    closes the HTTP response at once and leaves the partial (status "cancelled") in `result`;
    so does `break` out of a blocking `for` (docs/client.md, Cancellation)."""

    def __init__(self, events: Callable[[EventStream], Generator[Event]], call: StreamCall) -> None:
        self._call = call
        self.error: Exception | None = None  # the error that ended the stream, if one did
        self._events = events(self)

    @property
    def result(self) -> FinalResponse | PartialResponse | None:
        """Final after `stop`, partial after an error or cancellation, None while running."""
        return self._call.result

    @property
    def text_stream(self) -> Iterator[str]:
        """Only the text as it arrives: `for piece in stream.text_stream`. Reads the
        same events (a stream is read once); the stream's error is raised at its end."""
        return self._text()

    def _text(self) -> Iterator[str]:
        for event in self:
            for item in event["content_items"]:
                if item["type"] == "text.delta" and item["text"]:
                    yield item["text"]

    @property
    def partial_objects(self) -> Iterator[Partial]:
        """The answer of a `response_format` turn as it grows: a `Partial` (its `value`, the
        `open_path` still being written, `instance` for a pydantic model) after each fragment
        that changes it; at the end the answer is checked once, strictly, and a wrong one
        raises its `StructuredOutputError`. Reads the same events (a stream is read once)."""
        return self._partials()

    def _partials(self) -> Iterator[Partial]:
        reader = self._reader()
        for event in self:
            partial = reader.feed(event)
            if partial is not None:
                yield partial
        self.get_final_message()

    def elements(self, path: str | tuple[str | int, ...]) -> Iterator[Any]:
        """Each element of the list at `path` of the answer (a field name, or a path such as
        `("order", "lines")`) once it is complete, in order; the answer is checked at the end
        as by `partial_objects`."""
        return self._elements((path,) if isinstance(path, str) else tuple(path))

    def _elements(self, path: tuple[str | int, ...]) -> Iterator[Any]:
        reader = self._reader()
        for event in self:
            reader.feed(event)
            for element in elements_of(reader, path):  # noqa: RUF100, UP028 (the sync twin: yield from)
                yield element
        self.get_final_message()

    def _reader(self) -> PartialReader:
        if self._call.output is None:
            raise TypeError(
                "partial_objects and elements read a structured answer: give the turn a "
                "response_format (a pydantic model, a dataclass, a TypedDict or a JSON schema)"
            )
        return PartialReader(self._call.output)

    def get_final_message(self) -> AssistantMessage:
        """Read the rest of the stream and return the final assistant message; a stream that
        did not finish raises its error (which carries the partial), never a partial message.
        With a `response_format`, `message.parsed` is the answer read into it, or this raises
        its `StructuredOutputError`."""
        for _ in self:
            pass
        result = self._call.result
        if isinstance(result, FinalResponse):
            return parsed_message(
                self._call.output, result.message, result.metadata.raw_finish_reason
            )
        if self.error is not None:
            raise self.error
        # closed or cancelled before the end: no provider error to raise, the turn is still cut
        reason = result.reason if result is not None else "the stream was never read"
        error = IncompleteStreamError("finish reason", f"the stream was closed early ({reason})")
        error.partial = result
        raise error

    def __repr__(self) -> str:
        status = self.result.status if self.result else "open"
        return f"<EventStream {self._call.model!r} via {self._call.protocol.name}: {status}>"

    def __iter__(self) -> Iterator[Event]:
        # A generator of its own, so that `break` (which drops it) closes the stream at once;
        # Python gives an async generator no such hook, so the async stream needs no wrapper.
        try:
            yield from self._events
        finally:
            self.close()

    def __next__(self) -> Event:
        return self._events.__next__()

    def close(self) -> None:
        """Stop reading: the HTTP response is closed and `result` holds the partial."""
        self._events.close()
        if self._call.result is None:  # closed before the first pull
            self._call.interrupted(classify(GeneratorExit()))

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _body(response: httpx.Response) -> Iterator[bytes]:
    """The body as it arrives: raw bytes unless the server compressed it."""
    encoding = response.headers.get("content-encoding", "identity").lower()
    return response.iter_raw() if encoding in ("", "identity") else response.iter_bytes()


def _read_limited(response: httpx.Response, limit: int) -> bytes:
    """Up to `limit` bytes of an error body; the rest is never buffered."""
    parts: list[bytes] = []
    size = 0
    for chunk in _body(response):
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(parts)[:limit]


def _close(chunks: Iterator[bytes] | None, response: httpx.Response | None) -> None:
    if isinstance(chunks, Generator):
        chunks.close()
    if response is not None:
        response.close()
