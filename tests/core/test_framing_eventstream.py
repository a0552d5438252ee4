"""The AWS event-stream framer: messages, typed headers, both CRCs, cut-off bodies, any split.

Messages are built by hand from the format's description (struct + zlib, support/eventstream.py),
not with the library's own `encode_message`, so an error in the decoder cannot hide in a shared
helper; one test checks that `encode_message` writes what this independent writer writes.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelstream import (
    CorruptedMessageError,
    FinalResponse,
    FrameTooLargeError,
    IncompleteStreamError,
    LostContentError,
    ProviderError,
    StreamDecoder,
)
from modelstream.framing import EVENT_STREAM, EventStreamFramer
from modelstream.framing.eventstream import EventStreamDecoder, EventStreamMessage, encode_message
from support.eventstream import event, exception, header, message, string


def pull(decoder: EventStreamDecoder) -> list[EventStreamMessage]:
    out = []
    while (msg := decoder.next_message()) is not None:
        out.append(msg)
    return out


def decode_all(body: bytes, sizes: list[int] | None = None) -> list[EventStreamMessage]:
    decoder = EventStreamDecoder()
    out: list[EventStreamMessage] = []
    pos, i = 0, 0
    while pos < len(body):
        size = sizes[i % len(sizes)] if sizes else len(body)
        decoder.feed(body[pos : pos + size])
        out += pull(decoder)
        pos += size
        i += 1
    decoder.end()
    return out


TURN = (
    event("messageStart", '{"role":"assistant"}')
    + event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"Hello"}}')
    + event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":" wörld"}}')
    + event("contentBlockStop", '{"contentBlockIndex":0}')
    + event("messageStop", '{"stopReason":"end_turn"}')
    + event("metadata", '{"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5}}')
)

# --- headers ---------------------------------------------------------------------------------

WHEN = datetime(2026, 8, 18, 21, 17, 5, 123000, tzinfo=UTC)
ID = uuid.UUID("12345678-1234-5678-1234-567812345678")
EVERY_TYPE = (
    header("yes", 0, b"")
    + header("no", 1, b"")
    + header("byte", 2, struct.pack(">b", -5))
    + header("short", 3, struct.pack(">h", -300))
    + header("int", 4, struct.pack(">i", -70_000))
    + header("long", 5, struct.pack(">q", 2**40 + 1))
    + header("bytes", 6, struct.pack(">H", 3) + b"\x00\xff\x10")
    + header("string", 7, struct.pack(">H", 6) + "héllo".encode())
    + header("when", 8, struct.pack(">q", 1_787_087_825_123))
    + header("uuid", 9, ID.bytes)
)
EVERY_VALUE = {
    "yes": True,
    "no": False,
    "byte": -5,
    "short": -300,
    "int": -70_000,
    "long": 2**40 + 1,
    "bytes": b"\x00\xff\x10",
    "string": "héllo",
    "when": WHEN,
    "uuid": ID,
}


def test_headers_of_every_value_type_are_read_typed() -> None:
    [msg] = decode_all(message(EVERY_TYPE, b'{"x":1}'))
    assert msg.headers == EVERY_VALUE
    assert [type(v) for v in msg.headers.values()] == [type(v) for v in EVERY_VALUE.values()]
    assert msg.payload == b'{"x":1}'


def test_a_message_without_headers_or_payload_is_sixteen_bytes() -> None:
    body = message(b"", b"")
    assert len(body) == 16
    assert decode_all(body) == [EventStreamMessage({}, b"")]


def test_encode_message_writes_what_the_format_says() -> None:
    explicit = {
        "yes": True,
        "no": False,
        "byte": (2, -5),
        "short": (3, -300),
        "int": -70_000,
        "long": 2**40 + 1,
        "bytes": b"\x00\xff\x10",
        "string": "héllo",
        "when": WHEN,
        "uuid": ID,
    }
    assert encode_message(explicit, b'{"x":1}') == message(EVERY_TYPE, b'{"x":1}')  # type: ignore[arg-type]


def test_a_header_with_an_unknown_value_type_is_a_broken_stream() -> None:
    decoder = EventStreamDecoder()
    decoder.feed(message(header("odd", 42, b""), b"{}"))
    with pytest.raises(IncompleteStreamError, match="headers of message 0 cannot be read"):
        decoder.next_message()


# --- frames ----------------------------------------------------------------------------------


def test_frames_are_named_by_event_exception_and_error_type() -> None:
    error_headers = (
        string(":message-type", "error")
        + string(":error-code", "InternalFailure")
        + string(":error-message", "boom")
    )
    body = TURN[:60] + TURN[60:] + exception("throttlingException", '{"message":"slow"}')
    body += message(error_headers, b"")
    framer = EVENT_STREAM.framer()
    frames = framer.feed_fields(body) + framer.end_fields()
    assert [f[0] for f in frames] == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
        "exception:throttlingException",
        "error:InternalFailure",
    ]
    assert frames[2][1] == '{"contentBlockIndex":0,"delta":{"text":" wörld"}}'
    assert frames[6][1] == '{"message":"slow"}'
    assert frames[7][1] == "boom"
    assert all(f[2] is None and f[3] is None for f in frames)  # no SSE id or retry here


def test_feeding_one_byte_at_a_time_gives_the_same_messages() -> None:
    whole = decode_all(TURN)
    assert len(whole) == 6
    assert decode_all(TURN, [1]) == whole
    assert decode_all(TURN, [11, 1, 5, 300]) == whole


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=120), min_size=1, max_size=30))
def test_any_split_of_the_body_gives_the_same_messages(sizes: list[int]) -> None:
    body = TURN + message(EVERY_TYPE, b"payload") + TURN
    assert decode_all(body, sizes) == decode_all(body)


# --- damage ----------------------------------------------------------------------------------


def corrupt(body: bytes, at: int) -> bytes:
    return body[:at] + bytes([body[at] ^ 0x20]) + body[at + 1 :]


def test_a_bad_message_crc_names_the_message_and_the_decoder_goes_on_after_it() -> None:
    first = event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"a"}}')
    second = event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"b"}}')
    third = event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"c"}}')
    body = first + corrupt(second, len(second) - 8) + third  # a payload byte of message 1
    decoder = EventStreamDecoder()
    decoder.feed(body)
    assert decoder.next_message() is not None  # message 0 comes first, intact
    with pytest.raises(CorruptedMessageError) as caught:
        decoder.next_message()
    error = caught.value
    assert (error.message_index, error.crc, error.resumable) == (1, "message", True)
    assert isinstance(error, LostContentError)  # content is lost: never a final turn
    assert "message CRC-32 of event-stream message 1" in str(error)
    third_message = decoder.next_message()
    assert third_message is not None and b'"c"' in third_message.payload
    decoder.end()


def test_a_bad_prelude_crc_stops_the_decoder_for_good() -> None:
    body = corrupt(TURN, 2)  # a byte of the first total length
    decoder = EventStreamDecoder()
    decoder.feed(body)
    with pytest.raises(CorruptedMessageError) as caught:
        decoder.next_message()
    assert (caught.value.message_index, caught.value.crc, caught.value.resumable) == (
        0,
        "prelude",
        False,
    )
    assert "lenient" not in str(caught.value)  # nothing can be skipped past a damaged length
    with pytest.raises(CorruptedMessageError):
        decoder.next_message()
    with pytest.raises(CorruptedMessageError):
        decoder.end()


@pytest.mark.parametrize("cut", [1, 11, 12, 40])
def test_a_message_cut_off_at_the_end_of_the_body_is_an_incomplete_stream(cut: int) -> None:
    last = event("messageStop", '{"stopReason":"end_turn"}')
    decoder = EventStreamDecoder()
    decoder.feed(TURN + last[:cut])
    assert len(pull(decoder)) == 6
    with pytest.raises(IncompleteStreamError, match="the body ended inside") as caught:
        decoder.end()
    assert not isinstance(caught.value, CorruptedMessageError)


def test_a_length_over_the_frame_limit_is_refused_before_it_is_buffered() -> None:
    prelude = struct.pack(">II", 2**31, 10)
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + b"x" * 100
    decoder = EventStreamDecoder(max_frame_bytes=1024)
    decoder.feed(body)
    with pytest.raises(FrameTooLargeError) as caught:
        decoder.next_message()
    assert (caught.value.limit, caught.value.size) == (1024, 2**31)


def test_lengths_that_cannot_hold_a_message_are_a_broken_stream() -> None:
    prelude = struct.pack(">II", 20, 10)  # 10 bytes of headers do not fit in 20 - 16
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + b"\x00" * 8
    decoder = EventStreamDecoder()
    decoder.feed(body)
    with pytest.raises(IncompleteStreamError, match="cannot be"):
        decoder.next_message()


# --- through the pipeline --------------------------------------------------------------------

PROTOCOL = "bedrock-converse-stream"


def test_a_corrupted_message_ends_the_turn_with_everything_before_it_kept() -> None:
    stop = event("contentBlockStop", '{"contentBlockIndex":0}')
    body = TURN[: TURN.index(stop)] + corrupt(stop, 20) + TURN[TURN.index(stop) + len(stop) :]
    decoder = StreamDecoder(PROTOCOL)
    events = decoder.feed(body)
    assert [e["content_items"][0]["text"] for e in events] == ["Hello", " wörld"]
    with pytest.raises(CorruptedMessageError) as caught:
        decoder.end()
    assert caught.value.message_index == 3
    partial = caught.value.partial
    assert partial is not None and partial.status == "incomplete"
    assert partial.open_item == {"type": "text.delta", "text": "Hello wörld"}


def test_lenient_frames_skip_a_corrupted_message_and_count_it() -> None:
    lost = event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":" wörld"}}')
    at = TURN.index(lost)
    body = TURN[:at] + corrupt(lost, len(lost) - 6) + TURN[at + len(lost) :]
    for size in (len(body), 1, 7):
        decoder = StreamDecoder(PROTOCOL, lenient_frames=True)
        for i in range(0, len(body), size):
            decoder.feed(body[i : i + size])
        decoder.end()
        result = decoder.result
        assert isinstance(result, FinalResponse)
        assert result.message["content_items"] == [{"type": "text.done", "text": "Hello"}]
        assert result.metadata.lost_frames == 1
        assert result.metadata.skipped["corrupted_message"] == 1
        [note] = [d for d in result.metadata.diagnostics if d["type"] == "corrupted_message"]
        assert (note["message_index"], note["crc"]) == (2, "message")


def test_lenient_frames_cannot_skip_a_damaged_prelude() -> None:
    first_length = struct.unpack(">I", TURN[:4])[0]
    body = TURN[:first_length] + corrupt(TURN[first_length:], 1)
    decoder = StreamDecoder(PROTOCOL, lenient_frames=True)
    with pytest.raises(CorruptedMessageError) as caught:
        decoder.feed(body)
        decoder.end()
    assert (caught.value.message_index, caught.value.crc) == (1, "prelude")


def test_an_error_message_is_a_provider_error() -> None:
    error_headers = (
        string(":message-type", "error")
        + string(":error-code", "InternalFailure")
        + string(":error-message", "the server failed")
    )
    decoder = StreamDecoder(PROTOCOL)
    decoder.feed(event("contentBlockDelta", '{"contentBlockIndex":0,"delta":{"text":"Hi"}}'))
    with pytest.raises(ProviderError) as caught:
        decoder.feed(message(error_headers, b""))
        decoder.end()
    assert caught.value.error_type == "InternalFailure"
    assert caught.value.provider_message == "the server failed"


def test_a_json_document_instead_of_an_event_stream_is_not_read_as_messages() -> None:
    """`{` cannot start an event stream (it would be a length over a gigabyte): the body is
    read as a JSON document by Bedrock's error-body reader: Bedrock's error object
    (`{"message"}`) is the provider's error, and a document that is no error object is no
    stream."""
    decoder = StreamDecoder(PROTOCOL)
    decoder.feed(b'{"message":"The security token included in the request is invalid."}')
    with pytest.raises(ProviderError) as refused:
        decoder.end()
    assert refused.value.provider_message == (
        "The security token included in the request is invalid."
    )
    assert not refused.value.retryable

    decoder = StreamDecoder(PROTOCOL)
    decoder.feed(b'{"output":{"message":{"role":"assistant"}}}')
    with pytest.raises(IncompleteStreamError, match="one JSON document") as caught:
        decoder.end()
    assert caught.value.missing == "event stream"


def test_the_framer_keeps_the_frames_before_a_damaged_message() -> None:
    framer = EventStreamFramer()
    body = TURN[: len(TURN) - 10] + corrupt(TURN[len(TURN) - 10 :], 3)
    with pytest.raises(CorruptedMessageError):
        framer.feed_fields(body)
    assert [f[0] for f in framer.take_salvaged()] == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
    ]


# --- the framer's hot loop: preludes and header blocks it has seen before ----------------------

# Forty deltas of one length: from the second on, the framer checks each prelude and names each
# message from what it remembers, so damage there must still be caught by the same checks.
REPEATED = [
    event("contentBlockDelta", f'{{"contentBlockIndex":0,"delta":{{"text":"w{n:02d}"}}}}')
    for n in range(40)
]


def test_damage_after_the_same_prelude_was_seen_is_still_caught() -> None:
    assert len({len(m) for m in REPEATED}) == 1  # every message has the same prelude
    for damaged_at, crc in ((len(REPEATED[30]) - 8, "message"), (9, "prelude")):
        body = b"".join(REPEATED[:30]) + corrupt(REPEATED[30], damaged_at)
        framer = EventStreamFramer()
        framer.feed_fields(b"".join(REPEATED[:30]))  # the framer has seen this prelude
        with pytest.raises(CorruptedMessageError) as caught:
            framer.feed_fields(body[len(b"".join(REPEATED[:30])) :])
        assert (caught.value.message_index, caught.value.crc) == (30, crc)


def test_a_damaged_delta_deep_in_a_run_keeps_every_frame_before_it() -> None:
    body = b"".join(REPEATED[:25]) + corrupt(REPEATED[25], 20) + b"".join(REPEATED[26:])
    framer = EventStreamFramer()
    with pytest.raises(CorruptedMessageError) as caught:
        framer.feed_fields(body)
    assert caught.value.message_index == 25
    salvaged = framer.take_salvaged()
    assert [frame[1] for frame in salvaged][-1] == '{"contentBlockIndex":0,"delta":{"text":"w24"}}'
    assert len(salvaged) == 25


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=30))
def test_the_framer_gives_the_same_frames_for_any_split_of_a_long_run(sizes: list[int]) -> None:
    body = TURN + b"".join(REPEATED) + exception("throttlingException", '{"message":"slow"}')
    framer, frames, pos, i = EventStreamFramer(), [], 0, 0
    while pos < len(body):
        frames += framer.feed_fields(body[pos : pos + sizes[i % len(sizes)]])
        pos += sizes[i % len(sizes)]
        i += 1
    frames += framer.end_fields()
    whole = EventStreamFramer().feed_fields(body)
    assert frames == whole
    assert len(whole) == 6 + 40 + 1
    assert whole[-1][0] == "exception:throttlingException"
    assert [f[1] for f in whole[6:46]] == [m[m.index(b"{") : -4].decode() for m in REPEATED]
