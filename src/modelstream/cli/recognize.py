"""Which protocol a response body speaks, read from its first bytes (sans-IO).

No table of signatures: each protocol's own decoder reads the head of the body, and the one that
finds the most of the grammar in it (items, usage, a stop, or the protocol's own error event)
wins. Every other decoder finds nothing in a body that is not its protocol's: their frames
differ in shape (`choices`, `type: message_start`, `candidates`, AWS event-stream messages, ...).
A tie, or nothing found by any, is no answer: the caller asks for `--protocol`. A body that is
one JSON error document (a 200 that failed before its first event) is read by the decoder as the
client reads it, so a protocol given for it finds its error; every protocol reads it alike, so
recognition ties.
"""

from __future__ import annotations

from ..errors import ProviderError, StreamError
from ..protocols import REGISTRY, protocol_named
from ..stream import StreamDecoder
from ..types import Event

HEAD_BYTES = 64 * 1024  # read before choosing: several frames of every known protocol


def grammar_found(protocol: str, head: bytes) -> int:
    """How much of the grammar `protocol`'s decoder finds in `head`, read as a whole body: a
    count of items, usages and stops, plus one when it reads the protocol's own error (an error
    event, or a body that is one error document, which the decoder reads at its end)."""
    decoder = StreamDecoder(protocol, lenient_frames=True)
    found = 0
    try:
        found += _grammar_in(decoder.feed(head))
        found += _grammar_in(decoder.end())
    except ProviderError:
        found += 1  # an error this protocol knows the shape of
    except StreamError:
        pass  # what it read until then counts
    return found


def _grammar_in(events: list[Event]) -> int:
    return sum(
        len(event["content_items"])
        + (event["event_type"] == "stop")
        + (event["usage_metadata"] is not None)
        for event in events
    )


def recognize(head: bytes) -> str | None:
    """The one protocol whose decoder finds the most in `head`; None when none finds anything
    or two find as much."""
    scores = {name: grammar_found(name, head) for name in REGISTRY}
    ranked = sorted(scores.values(), reverse=True)
    if not ranked or ranked[0] == 0 or (len(ranked) > 1 and ranked[1] == ranked[0]):
        return None
    return max(scores, key=scores.__getitem__)


def mismatch(protocol: str, head: bytes) -> str | None:
    """Why `head` cannot be a `protocol` body, in one phrase, or None when it may be one:
    another protocol's frames, or none of the framing the protocol uses at all."""
    if not head.strip() or grammar_found(protocol, head):
        return None
    other = recognize(head)
    if other is not None and other != protocol:
        return f"no {protocol} frames found (this looks like {other}): pass --protocol {other}"
    framing = protocol_named(protocol).framing
    if framing.finds_frames(head):
        return None
    start = head[:40].decode("utf-8", "replace")
    return (
        f"no {protocol} frames found (this is not {framing.description}: it starts with {start!r})"
    )
