"""The sans-IO pipeline: response body bytes in, grammar-valid events out.

    bytes ─► SSEDecoder ─► provider adapter ─► ItemAssembler ─► events

`StreamDecoder` is what every IO shell (HTTP client, server, `replay`, tests) drives. It never
reads a socket or a clock: the caller feeds bytes, passes the time if it wants `created_at`
stamped, and calls `end()` when the body is over.

Errors: a stream error is raised by the first `feed`/`end` call after every event before it has
been returned, so a consumer sees all deltas that preceded the failure. The error carries a
`partial` response; `result` holds it too. The result is read from the assembler, which already
holds every done item, so the hot path does not accumulate events a second time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .assembler import ItemAssembler
from .errors import (
    FrameTooLargeError,
    IncompleteStreamError,
    ProviderError,
    StreamError,
    StreamProtocolError,
)
from .providers import decoder_class
from .results import FinalResponse, PartialResponse, PartialStatus, StreamMetadata
from .sse import DEFAULT_MAX_FRAME_BYTES, SSEDecoder
from .types import Event, Message


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
        self.error: StreamError | None = None
        self._sse = SSEDecoder(max_frame_bytes)
        self._assembler = ItemAssembler(
            self.metadata, lenient_tool_arguments=lenient_tool_arguments
        )
        self._adapter = adapter_class(self._assembler)
        # A JSON-framed body (embeddings) is decoded whole at the end, within the frame limit.
        self._whole_body: list[bytes] | None = (
            [] if getattr(adapter_class, "framing", "sse") == "json" else None
        )
        self._max_frame_bytes = max_frame_bytes
        self._partial: PartialResponse | None = None
        self._created_at: int | None = None
        self._ended = False

    @property
    def stopped(self) -> bool:
        """The `stop` event has been produced: the turn is final."""
        return self._assembler.stopped

    @property
    def result(self) -> FinalResponse | PartialResponse | None:
        """Final after `stop`, partial after an error or `cancel()`, None while running."""
        if self._assembler.stopped:
            return FinalResponse(message=self._message(), metadata=self.metadata)
        return self._partial

    def feed(self, data: bytes, now_ms: int = 0) -> list[Event]:
        """Decode the next bytes of the body; returns the events they completed."""
        if self.error is not None:
            raise self.error
        assembler = self._assembler
        assembler.now_ms = now_ms
        on_frame = self._adapter.on_frame
        try:
            if self._whole_body is not None:
                self._hold_body(data)
            else:
                for event, payload, _, _ in self._sse.feed_fields(data):
                    on_frame(event, payload)
        except Exception as exc:
            self._fail(exc)
        if self.error is None and self._created_at is not None and not self._sse.comments:
            return assembler.drain()  # the hot path: nothing to note, nothing to raise
        return self._drain()

    def end(self, now_ms: int = 0) -> list[Event]:
        """The body is over: flush the last frame, emit `stop` or raise why the turn is partial."""
        self._raise_pending()
        if self._ended:
            return []
        self._ended = True
        self._assembler.now_ms = now_ms
        try:
            if self._whole_body is not None:
                body = b"".join(self._whole_body).decode("utf-8", "replace")
                self._adapter.on_frame("message", body)
            else:
                for event, payload, _, _ in self._sse.end_fields():
                    self._adapter.on_frame(event, payload)
            self._adapter.on_end()
            self._assembler.end_of_input()
        except Exception as exc:
            self._fail(exc)
        return self._drain()

    def cancel(self, reason: str = "cancelled by the caller") -> PartialResponse:
        """Record that the caller stopped reading; returns the partial response."""
        if self._partial is None and not self._assembler.stopped:
            self._partial = self._make_partial("cancelled", reason)
        return self._partial or self._make_partial("cancelled", reason)

    def _hold_body(self, data: bytes) -> None:
        assert self._whole_body is not None
        self._whole_body.append(data)
        size = sum(len(piece) for piece in self._whole_body)
        if size > self._max_frame_bytes:
            raise FrameTooLargeError(self._max_frame_bytes, size)

    def _drain(self) -> list[Event]:
        events = self._assembler.drain()
        if events and self._created_at is None:
            self._created_at = events[0]["created_at"]
        if self._sse.comments:
            self.metadata.skipped["sse_comment"] = self._sse.comments
        error = self.error
        if error is not None:
            if self._partial is None:
                self._partial = error.partial = self._partial_for(error)
            if not events:
                raise error
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
        if isinstance(error, ProviderError):
            return self._make_partial("failed", f"provider error: {error.provider_message}")
        status: PartialStatus = (
            "incomplete" if isinstance(error, IncompleteStreamError) else "failed"
        )
        return self._make_partial(status, str(error))

    def _make_partial(self, status: PartialStatus, reason: str) -> PartialResponse:
        assembler = self._assembler
        return PartialResponse(
            status=status,
            reason=reason,
            items=list(assembler.done_items),
            open_item=assembler.open_item(),
            usage=assembler.usage,
            metadata=self.metadata,
        )

    def _message(self) -> Message:
        message: Message = {
            "role": "assistant",
            "content_items": list(self._assembler.done_items),
            "usage_metadata": self._assembler.final_usage,
            "finish_reason": self.metadata.finish_reason,
        }
        if self._created_at is not None:
            message["created_at"] = self._created_at
        return message


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
