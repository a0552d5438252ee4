"""The framing stage of the sans-IO pipeline: response body bytes → frames.

    bytes ─► Framer ─► frames (event, data, id, retry) ─► provider adapter ─► ItemAssembler

A protocol names its framing (the adapter's `framing` attribute) and `make_framer` builds it:

- "sse": Server-Sent Events (`sse.SSEDecoder`), every streaming protocol over HTTP text;
- "json": the whole body is one JSON document (`json_body.JSONBodyFramer`), embeddings;
- "eventstream": the binary AWS event stream (`eventstream.EventStreamFramer`), Bedrock.

Every framer gives the same plain tuples, so adapters and `StreamDecoder` do not care which one
produced them. Only SSE frames have an `id` (and `retry`); the others leave them None.
"""

from __future__ import annotations

from typing import Protocol

from ..errors import ConfigurationError
from .eventstream import EventStreamFramer
from .json_body import JSONBodyFramer
from .sse import DEFAULT_MAX_FRAME_BYTES, RawFrame, SSEDecoder, SSEFrame


class Framer(Protocol):
    """Feed bytes in any split, get whole frames back; `end_fields` flushes at end of body."""

    comments: int  # keep-alive traffic seen and dropped (SSE comment lines)

    def feed_fields(self, chunk: bytes) -> list[RawFrame]: ...

    def end_fields(self) -> list[RawFrame]: ...


FRAMINGS = ("sse", "json", "eventstream")


def make_framer(framing: str, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> Framer:
    """The framer for a protocol's `framing`."""
    if framing == "sse":
        return SSEDecoder(max_frame_bytes)
    if framing == "json":
        return JSONBodyFramer(max_frame_bytes)
    if framing == "eventstream":
        return EventStreamFramer(max_frame_bytes)
    raise ConfigurationError(f"unknown framing {framing!r}; choose one of: {', '.join(FRAMINGS)}")


__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "FRAMINGS",
    "EventStreamFramer",
    "Framer",
    "JSONBodyFramer",
    "RawFrame",
    "SSEDecoder",
    "SSEFrame",
    "make_framer",
]
