"""The framing stage of the sans-IO pipeline: response body bytes → frames.

    bytes ─► Framer ─► frames (event, data, id, retry) ─► provider adapter ─► ItemAssembler

A protocol's descriptor names its framing (`Protocol.framing`), one `Framing` value of three:

- `SSE`: Server-Sent Events (`sse.SSEDecoder`), every streaming protocol over HTTP text;
- `JSON_BODY`: the whole body is one JSON document (`json_body.JSONBodyFramer`), embeddings;
- `EVENT_STREAM`: the binary AWS event stream (`eventstream.EventStreamFramer`), Bedrock.

A `Framing` is everything the rest of the library asks of a framing, so no caller branches on
which one it has: it makes the framer of one body, says whether the first bytes of a body are a
JSON (error) document instead of its frames, whether the head of a body holds any of its frames
(`modelstream replay` names a body that is not the protocol's), what to call a body of it, and
cuts a recorded body into frames (the emulator sends a recorded reply frame by frame). A framer
steps over a damaged frame where its wire lets it (`Framer.take_salvaged`).

Every framer gives the same plain tuples, so adapters and `StreamDecoder` do not care which one
produced them. Only SSE frames have an `id` (and `retry`); the others leave them None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..errors import ConfigurationError, StreamError
from .eventstream import EventStreamFramer, split_messages
from .frames import DEFAULT_MAX_FRAME_BYTES, Framer, RawFrame
from .json_body import JSONBodyFramer, split_document
from .sse import SSEDecoder, SSEFrame, split_frames

_BLANK = b" \t\r\n\xef\xbb\xbf"  # what may come before a JSON document's first byte (a BOM too)


@dataclass(frozen=True, eq=False)
class Framing:
    """One way a response body is cut into frames (a protocol's `framing`)."""

    name: str  # "sse", "json", "eventstream": what docs, traces and `repr` print
    description: str  # a body of it, as a sentence says it: "an SSE event stream"
    new_framer: Callable[[int], Framer] = field(repr=False)  # given the frame limit
    split: Callable[[bytes], list[bytes]] = field(repr=False)  # a recorded body, frame by frame
    whole_body: bool = False  # the body is one frame, read at its end (a JSON document)

    def framer(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> Framer:
        """A fresh framer for one body (or for what a resumed connection brings)."""
        return self.new_framer(max_frame_bytes)

    def starts_document(self, data: bytes) -> bool | None:
        """Whether a body that starts with `data` is one JSON document instead of this
        framing's frames (a 200 that carries a provider's error object); None while only blanks
        have arrived. No SSE stream starts with `{` or `[`, nor an AWS event stream (its first
        byte is the top byte of a message length: `{` would be over a gigabyte); a whole-body
        framing's document is its frame, read by the protocol's decoder."""
        if self.whole_body:
            return False
        head = data.lstrip(_BLANK)
        if not head:
            return None
        return head[:1] in (b"{", b"[")

    def finds_frames(self, head: bytes) -> bool:
        """Whether `head`, the start of a body, holds a whole frame of this framing; a
        whole-body framing's frame is whatever the body holds."""
        if self.whole_body:
            return True
        try:
            return bool(self.framer().feed_fields(head))
        except StreamError:
            return False


SSE = Framing("sse", "an SSE event stream", SSEDecoder, split_frames)
JSON_BODY = Framing("json", "a JSON document", JSONBodyFramer, split_document, whole_body=True)
EVENT_STREAM = Framing("eventstream", "an AWS event stream", EventStreamFramer, split_messages)

# Every framing, by name.
FRAMINGS: Mapping[str, Framing] = MappingProxyType(
    {framing.name: framing for framing in (SSE, JSON_BODY, EVENT_STREAM)}
)


def framing_named(name: str) -> Framing:
    """The framing called `name` ("sse", "json", "eventstream")."""
    try:
        return FRAMINGS[name]
    except KeyError:
        raise ConfigurationError(
            f"unknown framing {name!r}; choose one of: {', '.join(FRAMINGS)}"
        ) from None


__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "EVENT_STREAM",
    "FRAMINGS",
    "JSON_BODY",
    "SSE",
    "EventStreamFramer",
    "Framer",
    "Framing",
    "JSONBodyFramer",
    "RawFrame",
    "SSEDecoder",
    "SSEFrame",
    "framing_named",
]
