"""The sans-IO pipeline: response body bytes in, grammar-valid events out.

    bytes ─► framer ─► provider adapter ─► ItemAssembler ─► events

The framer is made by the protocol's `framing` (`modelstream.framing`: SSE, a whole JSON body, or
the binary AWS event stream); every framer gives the same `(event, data, id, retry)` frames.

`StreamDecoder` is what every IO shell (HTTP client, server, `replay`, tests) drives. It never
reads a socket or a clock: the caller feeds bytes, passes the time if it wants `created_at`
stamped, and calls `end()` when the body is over.

Errors: a stream error is raised by the first `feed`/`end` call after every event before it has
been returned, so a consumer sees all deltas that preceded the failure. The error carries a
`partial` response; `result` holds it too. The result is read from the assembler, which already
holds every done item, so the hot path does not accumulate events a second time.

Lost content (SPEC §4): an adapter raises `MalformedFrameError` for a data frame that is not JSON
and `SequenceGapError` where numbered events skip a number; the decoder numbers the frame and
ends the turn as incomplete. With `lenient_frames=True` it skips the frame instead (after a gap,
the intact event that revealed it is decoded), counts it in `metadata.lost_frames` and notes it
in the diagnostics, so a final result still says that something was lost.

Event-stream messages whose CRC fails (`CorruptedMessageError`) are lost content too: skipped and
counted when lenient if only the message CRC failed (its length was intact), else the turn ends.

`frame_filter` sees every batch of frames before the adapter does, with their SSE ids: resuming a
modelstream server's stream (`client/resume.py`) drops events already seen there, and
`restart_framing()` drops a frame cut off by a dropped connection.

A 200 response whose body is one JSON document instead of an event stream (its first byte is
`{` or `[`: `Framing.starts_document`) is a provider's error object (`error_bodies`, read with
every provider's error words): it ends the turn as `ProviderError`.

`redact` (the client passes its key's masking) is applied to every error's message and facts.
`pricing` (the client passes the model catalogue's `turn_cost`) gives results their `cost`;
without it a result's cost is None: the sans-IO core reads no catalogue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .assembler import ItemAssembler
from .error_bodies import error_document
from .errors import (
    CorruptedMessageError,
    IncompleteStreamError,
    LostContentError,
    MalformedFrameError,
    ProviderError,
    SequenceGapError,
    StreamError,
    StreamProtocolError,
)
from .framing import DEFAULT_MAX_FRAME_BYTES, Framer, JSONBodyFramer, RawFrame
from .protocols import error_words_of, protocol_named
from .protocols.descriptor import Protocol
from .results import (
    AssistantMessage,
    FinalResponse,
    PartialResponse,
    PartialStatus,
    Pricing,
    StreamMetadata,
)
from .types import Event


class StreamDecoder:
    """Decode one provider response body for `protocol` into events."""

    def __init__(
        self,
        protocol: str | Protocol,
        *,
        provider: str | None = None,
        lenient_tool_arguments: bool = False,
        lenient_frames: bool = False,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        redact: Callable[[str], str] | None = None,
        frame_filter: Callable[[list[RawFrame]], list[RawFrame]] | None = None,
        pricing: Pricing | None = None,
    ) -> None:
        descriptor = protocol_named(protocol)
        adapter_class = descriptor.decoder
        self._read_error_body = descriptor.read_error_body  # the protocol's error shape
        self._error_words = error_words_of(descriptor)  # every provider's names of causes
        self.metadata = StreamMetadata(
            protocol=descriptor.name, provider=provider or adapter_class.default_provider
        )
        self.error: StreamError | None = None
        self._framing = descriptor.framing
        self._framer: Framer = self._framing.framer(max_frame_bytes)
        self._frame_filter = frame_filter
        self._comments_before = 0  # SSE comments counted by framers dropped in a restart
        self._assembler = ItemAssembler(
            self.metadata, lenient_tool_arguments=lenient_tool_arguments
        )
        self._adapter = adapter_class(self._assembler, self._error_words)
        self._max_frame_bytes = max_frame_bytes
        self._lenient_frames = lenient_frames
        self._redact = redact
        self._pricing = pricing  # the results' cost (the catalogue's `turn_cost`)
        self._frames_seen = 0  # data frames given to the adapter, to name a broken one
        # A body is watched until its first byte: it may be a JSON document, not frames.
        self._sniffing = True
        self._document: JSONBodyFramer | None = None  # the body, when it is one
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
            self._mask_diagnostics()
            return FinalResponse(
                message=self._message(), metadata=self.metadata, pricing=self._pricing
            )
        return self._partial

    def feed(self, data: bytes, now_ms: int = 0) -> list[Event]:
        """Decode the next bytes of the body; returns the events they completed."""
        if self.error is not None:
            raise self.error
        assembler = self._assembler
        assembler.now_ms = now_ms
        try:
            if self._sniffing:
                self._sniff(data)
            frames = self._framer.feed_fields(data)
            if self._frame_filter is not None:
                frames = self._frame_filter(frames)
            self._decode(frames)
        except CorruptedMessageError as exc:
            self._salvage(exc)
        except Exception as exc:
            self._fail(exc)
        if self.error is None and self._created_at is not None and not self._framer.comments:
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
            if self._document is not None:
                self._read_document(self._document.body())
            frames = self._framer.end_fields()
            if self._frame_filter is not None:
                frames = self._frame_filter(frames)
            self._decode(frames)
            self._adapter.on_end()
            self._assembler.end_of_input()
        except CorruptedMessageError as exc:
            self._salvage(exc, ending=True)
        except Exception as exc:
            self._fail(exc)
        return self._drain()

    def restart_framing(self) -> None:
        """Forget the bytes of a frame still arriving: the connection that carried it is gone,
        and the next one (a resume) starts at a frame boundary."""
        self._comments_before += self._framer.comments
        self._framer = self._framing.framer(self._max_frame_bytes)
        self._sniffing = True

    def cancel(self, reason: str = "cancelled by the caller") -> PartialResponse:
        """Record that the caller stopped reading; returns the partial response."""
        if self._partial is None and not self._assembler.stopped:
            self._partial = self._make_partial("cancelled", reason)
        return self._partial or self._make_partial("cancelled", reason)

    def _decode(self, frames: list[RawFrame]) -> None:
        """Give the frames to the adapter. Lost content is the slow path, off the hot loop."""
        on_frame = self._adapter.on_frame
        while True:
            frame = None
            try:
                for frame in frames:
                    on_frame(frame[0], frame[1])
            except LostContentError as exc:
                assert frame is not None
                position = next(i for i, seen in enumerate(frames) if seen is frame)
                self._frames_seen += position + 1
                self._lost(exc, frame)
                frames = frames[position + 1 :]
            else:
                self._frames_seen += len(frames)
                return

    def _salvage(self, error: CorruptedMessageError, ending: bool = False) -> None:
        """A damaged frame (an event-stream message): decode the frames before it, then fail the
        turn, or skip the frame and read on when lenient and its length was intact."""
        framer = self._framer
        try:
            while True:
                self._decode(framer.take_salvaged())
                if not (self._lenient_frames and error.resumable):
                    raise error
                self.metadata.lost_frames += 1
                self._assembler.skip("corrupted_message")
                self._assembler.diagnostic({"type": "corrupted_message", **error.fields()})
                try:
                    self._decode(framer.end_fields() if ending else framer.feed_fields(b""))
                    if ending:
                        self._adapter.on_end()
                        self._assembler.end_of_input()
                    return
                except CorruptedMessageError as again:
                    error = again
        except Exception as exc:
            self._fail(exc)

    def _lost(self, error: LostContentError, frame: RawFrame) -> None:
        """Fail the turn for a lost frame or event, or note it and go on when lenient."""
        if isinstance(error, MalformedFrameError):
            error = MalformedFrameError(frame[1], self._frames_seen)
        if not self._lenient_frames:
            raise error
        kind = "sequence_gap" if isinstance(error, SequenceGapError) else "malformed_frame"
        self.metadata.lost_frames += error.lost
        self._assembler.skip(kind)
        self._assembler.diagnostic({"type": kind, "frame": self._frames_seen, **error.fields()})
        if isinstance(error, SequenceGapError):  # the event after the gap arrived intact
            self._adapter.on_frame(frame[0], frame[1])

    def _sniff(self, data: bytes) -> None:
        document = self._framing.starts_document(data)
        if document is not None:
            self._sniffing = False
            if document:
                self._document = JSONBodyFramer(self._max_frame_bytes)
                self._framer = self._document

    def _read_document(self, body: bytes) -> None:
        """A 200 body that is one JSON document: the provider's error object, or no stream."""
        error = error_document(
            body,
            provider=self.metadata.provider,
            words=self._error_words,
            reader=self._read_error_body,
        )
        if error is not None:
            raise error
        preview = body[:200].decode("utf-8", "replace")
        raise IncompleteStreamError(
            "event stream", f"the body is one JSON document, not an event stream: {preview!r}"
        )

    def _drain(self) -> list[Event]:
        events = self._assembler.drain()
        if events and self._created_at is None:
            self._created_at = events[0]["created_at"]
        comments = self._comments_before + self._framer.comments
        if comments:
            self.metadata.skipped["sse_comment"] = comments
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
        if self._redact is not None:
            self.error.redact(self._redact)

    def _partial_for(self, error: StreamError) -> PartialResponse:
        if isinstance(error, ProviderError):
            return self._make_partial("failed", f"provider error: {error.provider_message}")
        status: PartialStatus = (
            "incomplete" if isinstance(error, IncompleteStreamError) else "failed"
        )
        return self._make_partial(status, str(error))

    def _make_partial(self, status: PartialStatus, reason: str) -> PartialResponse:
        self._mask_diagnostics()
        assembler = self._assembler
        return PartialResponse(
            status=status,
            reason=reason,
            items=list(assembler.done_items),
            open_item=assembler.open_item(),
            usage=assembler.usage,
            metadata=self.metadata,
            pricing=self._pricing,
        )

    def _mask_diagnostics(self) -> None:
        """Adapters copy provider payloads into diagnostics (an error event, a chunk's preview),
        which may echo the key: mask them before the result is handed out."""
        if self._redact is not None and self.metadata.diagnostics:
            self.metadata.diagnostics[:] = [
                _masked(note, self._redact) for note in self.metadata.diagnostics
            ]

    def _message(self) -> AssistantMessage:
        message = AssistantMessage(
            role="assistant",
            content_items=list(self._assembler.done_items),
            usage_metadata=self._assembler.final_usage,
            finish_reason=self.metadata.finish_reason,
        )
        if self._created_at is not None:
            message["created_at"] = self._created_at
        return message


def _masked(value: Any, mask: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {key: _masked(item, mask) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item, mask) for item in value]
    return value


def decode_body(
    protocol: str | Protocol,
    chunks: Iterable[bytes],
    *,
    provider: str | None = None,
    lenient_tool_arguments: bool = False,
    lenient_frames: bool = False,
) -> Iterator[Event]:
    """Events for a body given as chunks; raises the stream's error after its last event."""
    decoder = StreamDecoder(
        protocol,
        provider=provider,
        lenient_tool_arguments=lenient_tool_arguments,
        lenient_frames=lenient_frames,
    )
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield from decoder.end()
