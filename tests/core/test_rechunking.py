"""Chunk boundaries never matter: every capture, cut anywhere, decodes exactly as one feed does.

The network decides where a body is cut (TCP segments, proxies, HTTP chunked encoding), so the
events, the error and the metadata must not depend on it: not inside a UTF-8 character, not
between a CR and its LF, not one byte at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream import StreamMetadata
from modelstream.protocols import PROTOCOLS
from support import (
    BODY_SUFFIXES,
    CORPUS,
    capture_names,
    decode_chunks,
    load_capture,
    pieces,
    require_corpus,
)

CAPTURES = [pytest.param(p, n, id=f"{p}/{n}") for p in PROTOCOLS for n in capture_names(p)]


@dataclass
class Outcome:
    """Everything a consumer can observe of one decoded body."""

    events: list[Any]
    error: tuple[str, str] | None  # type and message
    partial: tuple[Any, ...] | None  # status, reason, items, open item, usage
    metadata: StreamMetadata


def decode(protocol: str, chunks: list[bytes], lenient: bool) -> Outcome:
    decoded = decode_chunks(protocol, chunks, lenient_tool_arguments=lenient)
    assert decoded.decoder is not None
    error = decoded.error
    partial = error.partial if error is not None else None
    return Outcome(
        events=decoded.events,
        error=(type(error).__name__, str(error)) if error is not None else None,
        partial=(
            (partial.status, partial.reason, partial.items, partial.open_item, partial.usage)
            if partial is not None
            else None
        ),
        metadata=decoded.decoder.metadata,
    )


@cache
def body_of(protocol: str, name: str) -> bytes:
    return load_capture(protocol, name).body


@cache
def one_feed(protocol: str, name: str, lenient: bool) -> Outcome:
    return decode(protocol, [body_of(protocol, name)], lenient)


def interesting_cuts(body: bytes) -> list[int]:
    """Cut points where a decoder's state matters: around line ends and inside characters
    (SSE), and in and around the 12-byte prelude of each binary event-stream message."""
    if body[:1] == b"\x00":  # an AWS event stream: messages start with a 4-byte length
        cuts, at = [], 0
        while at + 4 <= len(body):
            cuts += [at + d for d in (-1, 1, 4, 8, 11, 12, 13) if 0 < at + d < len(body)]
            at += int.from_bytes(body[at : at + 4], "big")
        return cuts
    return [
        i
        for i, byte in enumerate(body)
        if byte in b"\r\n" or byte >= 0x80 or (i and body[i - 1] in b"\r\n")
    ]


@pytest.mark.parametrize(("protocol", "name"), CAPTURES)
def test_feeding_one_byte_at_a_time_decodes_as_one_feed(protocol, name):
    require_corpus()
    body = body_of(protocol, name)
    expected = one_feed(protocol, name, False)
    assert decode(protocol, [body[i : i + 1] for i in range(len(body))], False) == expected


@pytest.mark.parametrize(("protocol", "name"), CAPTURES)
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), lenient=st.booleans())
def test_cutting_a_capture_at_random_points_decodes_as_one_feed(protocol, name, data, lenient):
    require_corpus()
    body = body_of(protocol, name)
    special = interesting_cuts(body)
    anywhere = st.integers(0, len(body))
    cut = st.one_of(anywhere, st.sampled_from(special)) if special else anywhere
    strategy = st.one_of(
        st.lists(cut, min_size=1, max_size=60),
        # A fixed piece size, as a buffered reader would cut.
        st.sampled_from([2, 3, 7, 64, 1000, 4096]).map(lambda n: list(range(n, len(body), n))),
    )
    cuts = data.draw(strategy, label="cuts")
    assert decode(protocol, pieces(body, cuts), lenient) == one_feed(protocol, name, lenient)


def test_the_corpus_has_captures_for_every_protocol():
    require_corpus()
    for protocol in PROTOCOLS:
        assert [p for s in BODY_SUFFIXES for p in (CORPUS / protocol).glob(f"*{s}")], protocol
