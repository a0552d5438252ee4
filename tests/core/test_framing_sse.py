"""The SSE decoder: WHATWG event-stream parsing, in any split of the bytes, with a size bound."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import modelstream
from modelstream import FrameTooLargeError, IncompleteStreamError
from modelstream.framing import SSE
from modelstream.framing.sse import SSEDecoder, SSEFrame


def test_the_sse_framer_is_the_one_the_package_exports_and_keeps_ids() -> None:
    assert (modelstream.SSEDecoder, modelstream.SSEFrame) == (SSEDecoder, SSEFrame)
    framer = SSE.framer()
    assert isinstance(framer, SSEDecoder)
    frames = framer.feed_fields(b"id: r:1\ndata: a\n\ndata: b\n\nid: r:2\ndata: c\n\n")
    assert [(f[1], f[2]) for f in frames] == [("a", "r:1"), ("b", "r:1"), ("c", "r:2")]


def decode(*chunks: bytes, max_frame_bytes: int | None = None) -> list[SSEFrame]:
    """Every frame of a body fed as `chunks`, including those flushed by end()."""
    decoder = SSEDecoder() if max_frame_bytes is None else SSEDecoder(max_frame_bytes)
    frames: list[SSEFrame] = []
    for chunk in chunks:
        frames += decoder.feed(chunk)
    return frames + decoder.end()


def split_every(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


# A body with CRLF pairs, a two-byte and a four-byte UTF-8 character, a comment and an id.
MIXED = (
    b": heartbeat\r\n"
    b"event: greeting\r\n"
    b"id: 7\r\n"
    b"data: h\xc3\xa9llo\r\n"
    b"data: w\xf0\x9f\x98\x80rld\r\n"
    b"\r\n"
    b"data: second\n"
    b"\n"
)
MIXED_FRAMES = [
    SSEFrame("greeting", "héllo\nw😀rld", "7"),
    SSEFrame("message", "second", "7"),
]


def test_a_body_fed_at_once_yields_its_frames():
    assert decode(MIXED) == MIXED_FRAMES


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13])
def test_any_fixed_split_yields_the_same_frames(size):
    assert decode(*split_every(MIXED, size)) == MIXED_FRAMES


def test_every_two_way_split_yields_the_same_frames():
    for cut in range(len(MIXED) + 1):
        assert decode(MIXED[:cut], MIXED[cut:]) == MIXED_FRAMES, cut


def test_a_split_inside_a_multibyte_character_keeps_the_character():
    body = "data: 😀é\n\n".encode()
    cut = body.index(b"\xf0") + 2  # inside the four-byte emoji
    assert decode(body[:cut], body[cut:]) == [SSEFrame("message", "😀é")]


def test_a_crlf_split_across_feeds_ends_one_line():
    # Were the \n read as a second line end, the blank line would dispatch "a" alone.
    assert decode(b"data: a\r", b"\ndata: b\r\n\r\n") == [SSEFrame("message", "a\nb")]


def test_a_cr_inside_a_feed_does_not_swallow_the_next_feeds_lf():
    # The \r ends "data: a" mid-feed; the \n at the start of the next feed ends "data: b".
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\rdata: b") == []
    assert decoder.feed(b"\n\n") == [SSEFrame("message", "a\nb")]


def test_empty_feeds_change_nothing():
    assert decode(b"", b"data: a\r", b"", b"\n\n", b"") == [SSEFrame("message", "a")]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_each_line_end_style_ends_lines(eol):
    body = b"data: one" + eol + b"data: two" + eol + eol + b"data: three" + eol + eol
    assert decode(body) == [SSEFrame("message", "one\ntwo"), SSEFrame("message", "three")]


def test_mixed_line_end_styles_in_one_body_end_lines():
    body = b"data: one\rdata: two\r\n\ndata: three\n\r"
    assert decode(body) == [SSEFrame("message", "one\ntwo"), SSEFrame("message", "three")]


def test_multi_line_data_joins_with_newlines():
    assert decode(b"data: a\ndata:\ndata: c\n\n") == [SSEFrame("message", "a\n\nc")]


def test_comment_lines_are_counted_and_produce_no_frame():
    decoder = SSEDecoder()
    frames = decoder.feed(b": keep-alive\n\n: OPENROUTER PROCESSING\n\ndata: x\n:inline\n\n")
    assert frames == [SSEFrame("message", "x")]
    assert decoder.comments == 3


def test_the_event_field_names_the_frame_and_resets_after_it():
    frames = decode(b"event: ping\ndata: 1\n\ndata: 2\n\n")
    assert [f.event for f in frames] == ["ping", "message"]


def test_the_id_persists_across_frames_until_changed():
    frames = decode(b"id: a\ndata: 1\n\ndata: 2\n\nid: b\ndata: 3\n\n")
    assert [f.id for f in frames] == ["a", "a", "b"]


def test_an_id_without_data_still_sets_the_last_event_id():
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 42\n\n") == []
    assert decoder.last_event_id == "42"
    assert decoder.feed(b"data: x\n\n") == [SSEFrame("message", "x", "42")]


def test_an_id_containing_nul_is_ignored():
    frames = decode(b"id: good\ndata: 1\n\nid: b\x00d\ndata: 2\n\n")
    assert [f.id for f in frames] == ["good", "good"]


def test_retry_is_read_as_an_integer_for_its_frame():
    assert decode(b"retry: 3000\ndata: x\n\n") == [SSEFrame("message", "x", None, 3000)]


@pytest.mark.parametrize("value", [b"3s", b"-5", b"1.5", b"", b" 10"])
def test_a_retry_that_is_not_only_ascii_digits_is_ignored(value):
    assert decode(b"retry: " + value + b"\ndata: x\n\n") == [SSEFrame("message", "x")]


def test_a_field_with_no_colon_is_a_field_with_an_empty_value():
    # "data" alone adds an empty data line; "event" alone names nothing.
    assert decode(b"data\ndata\n\n") == [SSEFrame("message", "\n")]
    assert decode(b"event\ndata: x\n\n") == [SSEFrame("message", "x")]


def test_data_with_no_space_after_the_colon_keeps_its_value():
    assert decode(b"data:x\n\n") == [SSEFrame("message", "x")]


def test_only_one_space_after_the_colon_is_removed():
    assert decode(b"data:  two spaces\n\n") == [SSEFrame("message", " two spaces")]


def test_an_unknown_field_is_ignored():
    assert decode(b"foo: bar\ndata: x\n\n") == [SSEFrame("message", "x")]


def test_a_leading_bom_is_dropped():
    assert decode(b"\xef\xbb\xbfdata: x\n\n") == [SSEFrame("message", "x")]


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_a_leading_bom_split_across_feeds_is_dropped(cut):
    body = b"\xef\xbb\xbfdata: x\n\n"
    assert decode(body[:cut], body[cut:]) == [SSEFrame("message", "x")]


def test_a_leading_bom_fed_one_byte_at_a_time_is_dropped():
    assert decode(*split_every(b"\xef\xbb\xbfdata: x\n\n", 1)) == [SSEFrame("message", "x")]


def test_a_bom_that_is_not_at_the_start_is_kept_as_data():
    assert decode(b"data: \xef\xbb\xbfx\n\n") == [SSEFrame("message", "\ufeffx")]


def test_only_the_first_of_two_boms_is_dropped():
    # The second BOM starts the first line's field name, which is then unknown.
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == [SSEFrame("message", "y")]


def test_an_event_with_no_data_is_not_dispatched():
    assert decode(b"event: ping\n\nevent: other\nid: 1\n\n") == []


def test_a_final_frame_without_its_blank_line_is_flushed_by_end():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: one\n\ndata: last\n") == [SSEFrame("message", "one")]
    assert decoder.end() == [SSEFrame("message", "last")]


def test_a_final_line_without_any_newline_is_flushed_by_end():
    decoder = SSEDecoder()
    assert decoder.feed(b"event: done\ndata: [DONE]") == []
    assert decoder.end() == [SSEFrame("done", "[DONE]")]


def test_a_final_line_ending_in_cr_is_flushed_by_end():
    assert decode(b"data: x\r") == [SSEFrame("message", "x")]


def test_end_of_an_empty_body_yields_nothing():
    assert decode() == []
    assert decode(b"\xef\xbb") == []


def test_invalid_utf8_in_data_becomes_the_replacement_character():
    assert decode(b"data: a\xffb\n\n") == [SSEFrame("message", "a\ufffdb")]


def test_a_giant_data_line_arriving_in_pieces_fails_with_frame_too_large():
    decoder = SSEDecoder(max_frame_bytes=1000)
    decoder.feed(b"data: ")
    with pytest.raises(FrameTooLargeError) as caught:
        for _ in range(100):
            decoder.feed(b"x" * 50)
    error = caught.value
    assert error.limit == 1000
    assert error.size > 1000
    assert "over the limit of 1000" in str(error)
    assert f"reached {error.size} bytes" in str(error)
    assert "max_frame_bytes" in str(error)


def test_a_frame_too_large_is_an_incomplete_stream():
    with pytest.raises(IncompleteStreamError):
        decode(b"data: " + b"x" * 200, max_frame_bytes=100)


def test_many_data_lines_in_one_frame_fail_with_frame_too_large():
    decoder = SSEDecoder(max_frame_bytes=1000)
    with pytest.raises(FrameTooLargeError) as caught:
        for _ in range(100):
            decoder.feed(b"data: " + b"y" * 20 + b"\n")
    assert caught.value.limit == 1000
    assert caught.value.size > 1000


def test_many_data_lines_in_one_feed_fail_with_frame_too_large():
    with pytest.raises(FrameTooLargeError):
        decode(b"data: 0123456789\n" * 200, max_frame_bytes=1000)


def test_many_small_frames_never_reach_the_limit():
    decoder = SSEDecoder(max_frame_bytes=100)
    frames: list[SSEFrame] = []
    for i in range(1000):
        frames += decoder.feed(b"data: " + b"z" * 40 + b"\n\n")
        assert len(frames) == i + 1
    assert all(f.data == "z" * 40 for f in frames)


def test_a_frame_exactly_at_the_limit_is_accepted():
    # The size counts each data value plus its joining newline: 9 + 1 = 10.
    assert decode(b"data: 123456789\n\n", max_frame_bytes=10) == [SSEFrame("message", "123456789")]
    with pytest.raises(FrameTooLargeError):
        decode(b"data: 1234567890\n\n", max_frame_bytes=10)


def test_a_long_line_in_small_pieces_is_decoded_in_linear_time():
    # 4 MB in 64-byte pieces: a decoder that re-copies the held line on every feed would take
    # minutes here (quadratic); this finishes in well under a second.
    payload = b"q" * (4 * 1024 * 1024)
    decoder = SSEDecoder()
    body = b"data: " + payload + b"\n\n"
    frames: list[SSEFrame] = []
    for i in range(0, len(body), 64):
        frames += decoder.feed(body[i : i + 64])
    assert len(frames) == 1 and len(frames[0].data) == len(payload)


# --- property: any split of any encoded frame list decodes to the intended frames ------------

_VALUE_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00")
_value = st.text(_VALUE_CHARS, max_size=12)
_eol = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def _frame_specs(draw: st.DrawFn) -> dict[str, object]:
    return {
        "comment": draw(st.none() | _value),
        "event": draw(st.none() | _value),
        "id": draw(st.none() | _value),
        "retry": draw(st.none() | st.integers(0, 10**6)),
        "data": draw(st.lists(_value, max_size=4)),  # empty: not dispatched
    }


def _encode(specs: list[dict[str, object]], eols: list[str], bom: bool) -> bytes:
    """SSE text for `specs`; a \\r line end is never followed by an empty \\n line."""
    out: list[str] = ["\ufeff"] if bom else []
    ends = itertools.cycle(eols)
    previous = ""

    def line(text: str) -> None:
        nonlocal previous
        eol = next(ends)
        if not text and previous == "\r" and eol == "\n":
            eol = "\r\n"  # "\r" then "\n" would read as one CRLF, not a blank line
        out.append(text + eol)
        previous = eol

    for spec in specs:
        if spec["comment"] is not None:
            line(f":{spec['comment']}")
        if spec["event"] is not None:
            line(f"event: {spec['event']}")
        if spec["id"] is not None:
            line(f"id: {spec['id']}")
        if spec["retry"] is not None:
            line(f"retry: {spec['retry']}")
        for value in spec["data"]:
            line(f"data: {value}")
        line("")
    return "".join(out).encode()


def _intended(specs: list[dict[str, object]]) -> list[SSEFrame]:
    frames: list[SSEFrame] = []
    last_id: str | None = None
    for spec in specs:
        if spec["id"] is not None:
            last_id = spec["id"]
        if spec["data"]:
            frames.append(
                SSEFrame(
                    spec["event"] or "message",
                    "\n".join(spec["data"]),
                    last_id,
                    spec["retry"],
                )
            )
    return frames


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specs=st.lists(_frame_specs(), max_size=6),
    eols=st.lists(_eol, min_size=1, max_size=8),
    bom=st.booleans(),
    data=st.data(),
)
def test_random_frames_split_at_random_points_decode_to_the_intended_frames(specs, eols, bom, data):
    body = _encode(specs, eols, bom)
    # Cut anywhere, and often right at a line end, where the decoder's state matters most.
    ends = [i for i, byte in enumerate(body) if byte in b"\r\n"]
    anywhere = st.integers(0, len(body))
    cut = (anywhere | st.sampled_from(ends)) if ends else anywhere
    cuts = sorted(data.draw(st.lists(cut, max_size=12)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    whole = decode(body)
    assert decode(*pieces) == whole
    assert whole == _intended(specs)
    comments = sum(spec["comment"] is not None for spec in specs)
    decoder = SSEDecoder()
    for piece in pieces:
        decoder.feed(piece)
    decoder.end()
    assert decoder.comments == comments


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(_frame_specs(), max_size=4), eols=st.lists(_eol, min_size=1, max_size=4))
def test_random_frames_fed_one_byte_at_a_time_decode_to_the_intended_frames(specs, eols):
    body = _encode(specs, eols, bom=True)
    assert decode(*split_every(body, 1)) == _intended(specs)
