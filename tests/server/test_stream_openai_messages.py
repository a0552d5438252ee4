"""`POST /v1/stream` takes OpenAI-style messages (`{"role": "user", "content": "hi"}`, assistant
`tool_calls`, `tool` messages) beside SPEC ones, converted before the shape checks; one that
cannot be converted is a 400 naming it and the accepted shapes, before anything reaches the
upstream. A real server on loopback in front of the emulator (tests/support/server.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from modelstream.openai_messages import MESSAGE_SHAPES
from modelstream.testing import Emulator, Reply, Turn
from support.server import AUTH, Serve, post_stream, user

TOOL_ROUND_TRIP: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "Weather in Lisbon?"}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_w1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_w1", "content": "21 °C"},
]


@pytest.fixture
def http(serve: Serve) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=serve().url) as client:
        yield client


def test_an_openai_style_tool_round_trip_streams_through_the_server(
    http: httpx.Client, emu: Emulator
) -> None:
    emu.queue(Reply.turn(Turn.text("21 °C in Lisbon.")))

    stream = post_stream(http, {"model": "anthropic", "messages": TOOL_ROUND_TRIP})

    assert stream.done and not stream.errors
    texts = [item.get("text") for e in stream.events for item in e["content_items"]]
    assert "21 °C in Lisbon." in texts
    sent = emu.requests[0].json["messages"]
    assert sent[1]["content"][0] == {
        "type": "tool_use",
        "id": "call_w1",
        "name": "get_weather",
        "input": {"city": "Lisbon"},
    }
    assert sent[2]["content"][0]["tool_use_id"] == "call_w1"


def test_spec_and_openai_style_messages_mix_in_one_request(
    http: httpx.Client, emu: Emulator
) -> None:
    emu.queue(Reply.turn(Turn.text("Fine.")))
    messages = [
        user("first"),
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "and now?"},
    ]

    stream = post_stream(http, {"model": "chat", "messages": messages})

    assert stream.done and not stream.errors
    assert emu.requests[0].json["messages"] == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "and now?"},
    ]


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ({"role": "system", "content": "Be brief."}, "message 1 has role 'system'"),
        ({"role": "user"}, "message 1 has neither content_items nor content"),
        (
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{oops"}}],
            },
            "message 1 tool call 0 ('f') has arguments that are not a JSON object",
        ),
        ({"role": "tool", "content": "21 °C"}, "message 1 (role 'tool') needs the tool_call_id"),
    ],
    ids=["system", "no-content", "bad-arguments", "tool-without-id"],
)
def test_a_message_that_cannot_be_converted_is_a_400_naming_the_accepted_shapes(
    http: httpx.Client, emu: Emulator, message: dict[str, Any], words: str
) -> None:
    body = {"model": "chat", "messages": [{"role": "user", "content": "hi"}, message]}

    response = http.post("/v1/stream", content=orjson.dumps(body), headers=AUTH)

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "InvalidMessageError"
    assert error["message"].startswith(words)
    assert error["message"].endswith(MESSAGE_SHAPES)
    assert emu.requests == []
