"""A framing is a unit (issue 19 item 2): one `Framing` value per way of cutting a body into
frames (`modelstream.framing.SSE`, `JSON_BODY`, `EVENT_STREAM`) makes the framer, tells a JSON
error document from frames, finds frames in the head of a body, names what a body of it is and
cuts a recorded body into frames, so the decoder, `replay` and the emulator branch on none."""

from __future__ import annotations

import ast
import re
from typing import Any

import pytest

from modelstream.errors import ConfigurationError
from modelstream.framing import (
    EVENT_STREAM,
    FRAMINGS,
    JSON_BODY,
    SSE,
    EventStreamFramer,
    Framing,
    JSONBodyFramer,
    SSEDecoder,
    framing_named,
)
from modelstream.framing.eventstream import encode_message
from modelstream.protocols import REGISTRY
from modelstream.testing.replies import split_frames
from support import REPO

SRC = REPO / "src" / "modelstream"

STOP = encode_message(
    {":event-type": "messageStop", ":message-type": "event"}, b'{"stopReason":"end_turn"}'
)


def test_each_framing_has_its_name_and_says_what_a_body_of_it_is() -> None:
    assert [(f.name, f.description) for f in FRAMINGS.values()] == [
        ("sse", "an SSE event stream"),
        ("json", "a JSON document"),
        ("eventstream", "an AWS event stream"),
    ]
    assert [FRAMINGS[name] for name in ("sse", "json", "eventstream")] == [
        SSE,
        JSON_BODY,
        EVENT_STREAM,
    ]


def test_every_protocol_names_one_of_the_framings() -> None:
    framings = {name: protocol.framing for name, protocol in REGISTRY.items()}
    assert all(framing in FRAMINGS.values() for framing in framings.values())
    assert framings["openai-chat"].name == "sse"
    assert framings["openai-embedding"] is JSON_BODY
    assert framings["bedrock-converse-stream"] is EVENT_STREAM


def test_a_framing_makes_a_fresh_framer_of_its_kind_with_the_frame_limit() -> None:
    assert isinstance(SSE.framer(), SSEDecoder)
    assert isinstance(JSON_BODY.framer(), JSONBodyFramer)
    framer = EVENT_STREAM.framer(1024)
    assert isinstance(framer, EventStreamFramer)
    assert framer.decoder.max_frame_bytes == 1024
    assert SSE.framer() is not SSE.framer()


def test_a_framing_or_its_name_makes_its_framer() -> None:
    assert isinstance(EVENT_STREAM.framer(), EventStreamFramer)
    assert isinstance(framing_named("sse").framer(), SSEDecoder)
    with pytest.raises(ConfigurationError, match="unknown framing 'xml'; choose one of: sse, json"):
        framing_named("xml")


@pytest.mark.parametrize("framing", [SSE, EVENT_STREAM], ids=lambda f: f.name)
@pytest.mark.parametrize(
    ("head", "document"),
    [
        (b'{"error": {"message": "overloaded"}}', True),
        (b'[{"error": {"code": 429}}]', True),
        (b'\xef\xbb\xbf \r\n{"error": {}}', True),
        (b" \n\t", None),
        (b"", None),
        (b"data: {}\n\n", False),
        (b": keep-alive\n", False),
        (STOP, False),
    ],
)
def test_a_streamed_body_starting_with_a_json_document_is_one(
    framing: Framing, head: bytes, document: bool | None
) -> None:
    assert framing.starts_document(head) is document


def test_a_whole_body_framing_never_takes_its_body_for_an_error_document() -> None:
    """The document is its one frame: the protocol's decoder reads an error object itself."""
    assert JSON_BODY.starts_document(b'{"error": {"message": "no"}}') is False
    assert JSON_BODY.starts_document(b"") is False


@pytest.mark.parametrize(
    ("framing", "head", "found"),
    [
        (SSE, b"event: ping\ndata: {}\n\n", True),
        (SSE, b"Dear diary,\ntoday I decoded a stream.\n", False),
        (SSE, b"data: {} with no blank line yet", False),
        (EVENT_STREAM, STOP + STOP[:5], True),
        (EVENT_STREAM, b"Dear diary,\ntoday I decoded a stream.\n", False),  # a broken prelude
        (JSON_BODY, b"anything at all", True),
    ],
)
def test_the_head_of_a_body_holds_frames_of_its_framing_or_not(
    framing: Framing, head: bytes, found: bool
) -> None:
    assert framing.finds_frames(head) is found


def test_a_recorded_sse_body_is_cut_after_each_blank_line() -> None:
    body = b"data: 1\n\nevent: x\r\ndata: 2\r\n\r\ndata: 3\r\rdata: cut"
    pieces = SSE.split(body)
    assert pieces == [b"data: 1\n\n", b"event: x\r\ndata: 2\r\n\r\n", b"data: 3\r\r", b"data: cut"]
    assert split_frames(body) == pieces  # the emulator's default framing


def test_a_recorded_event_stream_is_cut_after_each_message_by_its_length() -> None:
    body = STOP + STOP + STOP[:7]
    assert EVENT_STREAM.split(body) == [STOP, STOP, STOP[:7]]
    assert split_frames(body, EVENT_STREAM) == [STOP, STOP, STOP[:7]]


def test_a_recorded_json_body_is_one_frame() -> None:
    body = b'{"data": [\n\n{"embedding": [0.5]}]}'
    assert JSON_BODY.split(body) == [body]
    assert JSON_BODY.split(b"") == []


@pytest.mark.parametrize("framing", [SSE, JSON_BODY], ids=lambda f: f.name)
def test_a_framer_that_cannot_step_over_a_damaged_frame_salvages_nothing(
    framing: Framing,
) -> None:
    framer = framing.framer()
    framer.feed_fields(b"data: 1\n\n")
    assert framer.take_salvaged() == []


FRAMING_WORDS = {"sse", "json", "eventstream"}
FRAMER_CLASSES = {"SSEDecoder", "JSONBodyFramer", "EventStreamFramer", "framing_named"}


@pytest.mark.parametrize(
    "module",
    [
        "stream.py",
        "cli/recognize.py",
        "client/resume.py",
        "testing/routes.py",
        "testing/replies.py",
    ],
)
def test_the_pipeline_and_its_shells_do_not_branch_on_a_framing(module: str) -> None:
    """No framing's name and no framer class of one framing (the sniffed error document's
    `JSONBodyFramer` aside) appears where a framing is used: they call its methods."""
    tree = ast.parse((SRC / module).read_text())
    strings = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    allowed = {"JSONBodyFramer"} if module == "stream.py" else set()
    assert not strings & FRAMING_WORDS
    assert not (names & FRAMER_CLASSES) - allowed
    assert "framing.sse" not in (SRC / module).read_text()


def test_the_descriptor_example_of_adding_a_protocol_runs_as_written() -> None:
    page = (REPO / "docs" / "adding-a-protocol.md").read_text()
    section = page.split("## The descriptor", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), "docs/adding-a-protocol.md", "exec"), namespace)
    chat: Any = namespace["chat"]
    assert (chat.framing.name, chat.accept) == ("sse", "text/event-stream")
    assert chat.framing.description == "an SSE event stream"
