"""Turns streamed over real HTTP from the loopback emulator, through `Client` and `AsyncClient`
alike (the `drive` fixture runs each test once per client)."""

from __future__ import annotations

import time

import orjson
import pytest

from modelstream import ProviderError, ToolCallArgumentParseError, check_events
from modelstream.testing import Emulator, Reply, Text, Thinking, ToolCall, Turn, embedding_for
from modelstream.types import Message
from support.client import HELLO, MODELS, STREAMING, Drive, user

RICH_TURN = Turn(
    items=[
        Thinking("The user wants weather and time.", signature="sig-thinking-1"),
        Text("Let me look both up."),
        ToolCall("get_weather", {"city": "Paris"}, id="call_weather"),
        ToolCall("get_time", {"tz": "Europe/Paris"}, id="call_time"),
    ]
)


@pytest.mark.parametrize("client_type", STREAMING)
def test_a_text_turn_streams_as_deltas_then_a_final_message(
    drive: Drive, emu: Emulator, client_type: str
) -> None:
    emu.queue(Reply.turn(Turn.text("Hello there, general Kenobi."), fragment_size=5))
    outcome = drive.stream(MODELS[client_type], client_type=client_type)

    assert outcome.error is None
    check_events(outcome.events)
    assert len([d for d in outcome.deltas if d["type"] == "text.delta"]) > 3
    assert outcome.streamed_text == "Hello there, general Kenobi."
    assert outcome.result is not None and outcome.result.status == "final"
    items = outcome.result.message["content_items"]
    assert [(item["type"], item.get("text")) for item in items] == [
        ("text.done", "Hello there, general Kenobi.")
    ]
    assert outcome.result.message["finish_reason"] == "stop"


@pytest.mark.parametrize("client_type", STREAMING)
def test_thinking_text_and_parallel_tool_calls_arrive_as_done_items_in_order(
    drive: Drive, emu: Emulator, client_type: str
) -> None:
    emu.queue(Reply.turn(RICH_TURN))
    outcome = drive.stream(MODELS[client_type], client_type=client_type)

    assert outcome.error is None
    check_events(outcome.events)
    done = outcome.done_items
    assert [item["type"] for item in done] == [
        "thinking.done",
        "text.done",
        "tool_call.done",
        "tool_call.done",
    ]
    assert done[0]["thinking"] == "The user wants weather and time."
    assert "sig-thinking-1" in orjson.dumps(done[0].get("fidelity", {})).decode()
    assert done[1]["text"] == "Let me look both up."
    assert [(d["name"], d["arguments"]) for d in done[2:]] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "Europe/Paris"}),
    ]
    assert outcome.result is not None and outcome.result.status == "final"
    assert outcome.result.message["finish_reason"] == "tool_call"


@pytest.mark.parametrize("client_type", STREAMING)
def test_thinking_fidelity_goes_back_to_the_provider_on_the_next_turn(
    drive: Drive, emu: Emulator, client_type: str
) -> None:
    emu.queue(Reply.turn(Turn(items=[Thinking("Hmm.", signature="sig-replay-7"), Text("Hi!")])))
    first = drive.stream(MODELS[client_type], client_type=client_type)
    assert first.result is not None and first.result.status == "final"
    history = [*HELLO, first.result.message, user("and again")]

    second = drive.stream(MODELS[client_type], history, client_type=client_type)

    assert second.error is None
    requests = emu.requests
    assert len(requests) == 2
    assert b"sig-replay-7" not in requests[0].body
    assert b"sig-replay-7" in requests[1].body


@pytest.mark.parametrize("client_type", ["openai-embedding", "gemini-embedding"])
def test_embeddings_come_back_one_vector_per_input_message(
    drive: Drive, emu: Emulator, client_type: str
) -> None:
    outcome = drive.stream(
        MODELS[client_type], [user("first text"), user("second text")], client_type=client_type
    )

    assert outcome.error is None
    check_events(outcome.events)
    vectors = [item["embedding"] for item in outcome.done_items]
    assert len(vectors) == 2
    assert vectors[0] == pytest.approx(embedding_for("first text", len(vectors[0])))
    assert vectors[1] == pytest.approx(embedding_for("second text", len(vectors[1])))
    assert outcome.result is not None and outcome.result.status == "final"


def test_events_are_stamped_with_the_wall_clock_and_the_result_has_timings(
    drive: Drive, emu: Emulator
) -> None:
    emu.queue(Reply.turn(Turn.text("one two three"), fragment_size=4, delay=0.02))
    before = time.time() * 1000
    outcome = drive.stream(MODELS["anthropic-messages"])
    after = time.time() * 1000

    stamps = [event["created_at"] for event in outcome.events]
    assert all(before - 1 <= stamp <= after + 1 for stamp in stamps)
    assert stamps == sorted(stamps) and stamps[-1] - stamps[0] >= 20
    assert outcome.result is not None
    timings = outcome.result.metadata.timings
    assert 0 < timings["ttfb_ms"] <= timings["ttfe_ms"] <= timings["total_ms"]
    assert timings["total_ms"] <= after - before + 1


def test_the_request_carries_the_encoded_body_and_the_protocol_headers(
    drive: Drive, emu: Emulator
) -> None:
    drive.stream(MODELS["anthropic-messages"], config={"max_tokens": 99})

    request = emu.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.json["model"] == MODELS["anthropic-messages"]
    assert request.json["max_tokens"] == 99
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "text/event-stream"
    assert "anthropic-version" in request.headers


def test_model_can_be_chosen_per_call(drive: Drive, emu: Emulator) -> None:
    if drive.mode == "sync":
        from modelstream.client import Client

        with Client(
            client_type="openai-chat", base_url=emu.base_url("openai-chat"), api_key="k"
        ) as client:
            message = client.complete(HELLO, model="my-local-model")
    else:
        import asyncio

        from modelstream.client import AsyncClient

        async def run() -> Message:
            async with AsyncClient(
                client_type="openai-chat", base_url=emu.base_url("openai-chat"), api_key="k"
            ) as client:
                return await client.complete(HELLO, model="my-local-model")

        message = asyncio.run(run())
    assert emu.requests[0].json["model"] == "my-local-model"
    assert message["content_items"] == [{"type": "text.done", "text": "echo: hello"}]


def test_complete_returns_the_final_message(drive: Drive, emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("All done.")))
    message = drive.complete(MODELS["gemini-generate-content"])

    assert message["role"] == "assistant"
    assert message["content_items"] == [{"type": "text.done", "text": "All done."}]
    assert message["finish_reason"] == "stop"


def test_complete_raises_the_provider_error_of_a_refused_request(
    drive: Drive, emu: Emulator
) -> None:
    emu.queue(
        Reply.status(
            400,
            body={
                "error": {"type": "invalid_request_error", "code": "bad_param", "message": "nope"}
            },
        )
    )
    with pytest.raises(ProviderError) as caught:
        drive.complete(MODELS["openai-chat"])

    assert caught.value.status == 400
    assert caught.value.error_type == "invalid_request_error"
    assert caught.value.code == "bad_param"
    assert caught.value.provider_message == "nope"
    assert len(emu.requests) == 1  # a 400 is never retried


BROKEN_TOOL_CALL = b"".join(
    b"event: %s\ndata: %s\n\n" % (name.encode(), orjson.dumps(data))
    for name, data in [
        ("message_start", {"type": "message_start", "message": {"id": "msg_1", "usage": {}}}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"city": "Par'},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
)


@pytest.mark.parametrize("lenient", [False, True])
def test_lenient_tool_arguments_reaches_the_decoder(
    drive: Drive, emu: Emulator, lenient: bool
) -> None:
    emu.queue(Reply.body(BROKEN_TOOL_CALL, content_type="text/event-stream"))
    outcome = drive.stream(MODELS["anthropic-messages"], lenient_tool_arguments=lenient)

    if lenient:
        assert outcome.error is None
        assert outcome.done_items[0]["arguments"] == {"city": "Par"}
        diagnostics = outcome.result.metadata.diagnostics if outcome.result else []
        assert any(d["type"] == "tool_arguments_recovered" for d in diagnostics)
    else:
        assert isinstance(outcome.error, ToolCallArgumentParseError)
        assert outcome.result is not None and outcome.result.status == "failed"
        assert len(emu.requests) == 1  # what the decoder finds in a body is never retried
