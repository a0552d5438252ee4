"""The sans-IO pipeline: response body bytes in, grammar-valid events out.

    bytes ─► SSEDecoder ─► provider adapter ─► ItemAssembler ─► events ─► Accumulator

`StreamDecoder` is what every IO shell (HTTP client, server, `replay`, tests) drives. It never
reads a socket or a clock: the caller feeds bytes, passes the time if it wants `created_at`
stamped, and calls `end()` when the body is over.

Errors: a stream error is raised by the first `feed`/`end` call after every event before it has
been returned, so a consumer sees all deltas that preceded the failure. The error carries a
`partial` response; `result` holds it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .accumulator import Accumulator
from .assembler import ItemAssembler
from .errors import (
    IncompleteStreamError,
    ProviderError,
    StreamError,
    StreamProtocolError,
)
from .providers import decoder_class
from .results import FinalResponse, PartialResponse, PartialStatus, StreamMetadata
from .sse import DEFAULT_MAX_FRAME_BYTES, SSEDecoder
from .types import Event


class StreamDecoder:
    """Decode one provider response body for `protocol` into events."""

    def __init__(
        self,
        protocol: str,
        *,
        provider: str | None = None,
        lenient_tool_arguments: bool = False,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        adapter_class = decoder_class(protocol)
        self.metadata = StreamMetadata(
            protocol=protocol, provider=provider or adapter_class.default_provider
        )
        self.accumulator = Accumulator()
        self.error: StreamError | None = None
        self._sse = SSEDecoder(max_frame_bytes)
        self._assembler = ItemAssembler(
            self.metadata, lenient_tool_arguments=lenient_tool_arguments
        )
        self._adapter = adapter_class(self._assembler)
        self._partial: PartialResponse | None = None
        self._ended = False

    @property
    def stopped(self) -> bool:
        """The `stop` event has been produced: the turn is final."""
        return self._assembler.stopped

    @property
    def result(self) -> FinalResponse | PartialResponse | None:
        """Final after `stop`, partial after an error or `cancel()`, None while running."""
        if self.accumulator.stopped:
            return self.accumulator.final(self.metadata)
        return self._partial

    def feed(self, data: bytes, now_ms: int = 0) -> list[Event]:
        """Decode the next bytes of the body; returns the events they completed."""
        self._raise_pending()
        self._assembler.now_ms = now_ms
        try:
            for frame in self._sse.feed(data):
                self._adapter.on_frame(frame)
        except Exception as exc:
            self._fail(exc)
        return self._drain()

    def end(self, now_ms: int = 0) -> list[Event]:
        """The body is over: flush the last frame, emit `stop` or raise why the turn is partial."""
        self._raise_pending()
        if self._ended:
            return []
        self._ended = True
        self._assembler.now_ms = now_ms
        try:
            for frame in self._sse.end():
                self._adapter.on_frame(frame)
            self._adapter.on_end()
            self._assembler.end_of_input()
        except Exception as exc:
            self._fail(exc)
        return self._drain()

    def cancel(self, reason: str = "cancelled by the caller") -> PartialResponse:
        """Record that the caller stopped reading; returns the partial response."""
        if self._partial is None and not self.accumulator.stopped:
            self._partial = self.accumulator.partial(
                "cancelled", reason, self.metadata, usage=self._assembler.usage
            )
        return self._partial or self.accumulator.partial("cancelled", reason, self.metadata)

    def _drain(self) -> list[Event]:
        events = self._assembler.drain()
        apply = self.accumulator.apply
        for event in events:
            apply(event)
        if self._sse.comments:
            self.metadata.skipped["sse_comment"] = self._sse.comments
        if self.error is not None and self._partial is None:
            self._partial = self.error.partial = self._partial_for(self.error)
        if not events:
            self._raise_pending()
        return events

    def _raise_pending(self) -> None:
        if self.error is not None:
            raise self.error

    def _fail(self, exc: Exception) -> None:
        if isinstance(exc, StreamError):
            self.error = exc
        else:  # an adapter crashed on input it did not expect: a bug, reported as such
            self.error = StreamProtocolError("adapter", f"{type(exc).__name__}: {exc}")
            self.error.__cause__ = exc

    def _partial_for(self, error: StreamError) -> PartialResponse:
        status: PartialStatus = (
            "incomplete" if isinstance(error, IncompleteStreamError) else "failed"
        )
        if isinstance(error, ProviderError):
            reason = f"provider error: {error.provider_message}"
        else:
            reason = str(error)
        return self.accumulator.partial(status, reason, self.metadata, usage=self._assembler.usage)


def decode_body(
    protocol: str,
    chunks: Iterable[bytes],
    *,
    provider: str | None = None,
    lenient_tool_arguments: bool = False,
) -> Iterator[Event]:
    """Events for a body given as chunks; raises the stream's error after its last event."""
    decoder = StreamDecoder(
        protocol, provider=provider, lenient_tool_arguments=lenient_tool_arguments
    )
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield from decoder.end()
