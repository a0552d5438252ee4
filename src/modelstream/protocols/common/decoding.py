"""The surface every provider adapter offers, and shared helpers for the decoders."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import orjson

from ...errors import MalformedFrameError

if TYPE_CHECKING:
    from ...assembler import ItemAssembler
    from ...error_bodies import ErrorWords


class StreamDecoderAdapter(Protocol):
    """Decodes one provider's frames into calls on the `ItemAssembler`.

    It knows its wire format and nothing else: no grammar rules, no IO, no clock. Its framing
    is its descriptor's (`Protocol.framing`): one `on_frame` per SSE frame, per AWS event-stream
    message (event = `:event-type`), or once at the end with a whole JSON body (embeddings).
    An error it reads is classified with `error_words`, every provider's (a provider may relay
    another's error), which `StreamDecoder` gives it with the sink.
    """

    protocol: str  # e.g. "openai-chat"
    default_provider: str  # e.g. "openai"

    def __init__(self, sink: ItemAssembler, error_words: ErrorWords) -> None: ...

    def on_frame(self, event: str, data: str) -> None:
        """One frame, in order: its event name ("message" when unnamed) and its data."""

    def on_end(self) -> None:
        """The body ended (before the assembler checks that the turn finished)."""


def load_json(sink: ItemAssembler, data: str) -> Any:
    """Parse a frame's JSON payload; one that is not JSON raises `MalformedFrameError`."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        raise MalformedFrameError(data) from None


def malformed_frame(data: str) -> MalformedFrameError:
    """The error for a data frame that is not JSON: its content is lost, so the turn cannot be
    final. `StreamDecoder` numbers the frame, and skips it instead when told to be lenient."""
    return MalformedFrameError(data)


def int_or_none(value: Any) -> int | None:
    """A token count from a provider payload; anything that is not an int is unknown."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
