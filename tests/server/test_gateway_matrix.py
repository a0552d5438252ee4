"""Any client in, any provider out: every inbound wire × every upstream protocol, judged by the
official SDKs (tests/support/gateway_sdks.py) over real HTTP on loopback.

One server fronts the emulator, with one served model per upstream protocol. Each test scripts
the upstream's turn, drives the caller's SDK, and compares what the SDK saw with the script.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from modelstream.server import BackgroundServer, create_app, settings_from_mapping
from modelstream.testing import Emulator, Reply, Text, Thinking, Turn, render
from support.gateway_sdks import DRIVERS, Driver

CLIENT_KEY = "msk-gateway-client-3e9a71c0d2"
UPSTREAM_KEY = "sk-gateway-upstream-58b0f4aa"

# served model id -> (upstream model, upstream protocol)
UPSTREAMS = {
    "chat": ("deepseek-chat", "openai-chat"),
    "responses": ("gpt-5-mini", "openai-responses"),
    "anthropic": ("claude-sonnet-4-5", "anthropic-messages"),
    "gemini": ("gemini-2.5-flash", "gemini-generate-content"),
    "interactions": ("gemini-2.5-flash", "gemini-interactions"),
    "bedrock": ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "bedrock-converse-stream"),
}
# a 1×1 red PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
USAGE = {"cached_tokens": 0, "prompt_tokens": 11, "thoughts_tokens": 0, "response_tokens": 7}


@pytest.fixture(scope="module")
def upstream() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


@pytest.fixture(scope="module")
def server(upstream: Emulator) -> Iterator[BackgroundServer]:
    env = {**os.environ, "GW_CLIENT_KEY": CLIENT_KEY, "GW_UPSTREAM_KEY": UPSTREAM_KEY}
    config: dict[str, Any] = {
        "keys": ["$GW_CLIENT_KEY"],
        "models": [
            {
                "server_model_id": server_id,
                "model": model,
                "client_type": protocol,
                "base_url": upstream.base_url(protocol),
                "api_key": "$GW_UPSTREAM_KEY",
                "max_attempts": 1,
                "idle_timeout_seconds": 1.0,  # a stalled upstream ends its stream within a second
            }
            for server_id, (model, protocol) in UPSTREAMS.items()
        ],
        "traces": False,
    }
    settings = settings_from_mapping(config, env)
    with BackgroundServer(create_app(settings)) as background:
        yield background


@pytest.fixture(autouse=True)
def fresh_upstream(upstream: Emulator) -> None:
    """Each test starts with no queued reply (a failed test may leave its second one)."""
    upstream.reset()


@pytest.fixture(params=sorted(DRIVERS))
def caller(request: pytest.FixtureRequest, server: BackgroundServer) -> Driver:
    return DRIVERS[request.param](server.url, CLIENT_KEY)


@pytest.fixture(params=sorted(UPSTREAMS))
def served(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def last_request_body(upstream: Emulator) -> bytes:
    return upstream.requests[-1].body


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_a_text_turn_reaches_the_sdk_whole_with_its_usage_and_finish(
    caller: Driver, served: str, upstream: Emulator, stream: bool
) -> None:
    answer = "The sky is blue because air scatters short wavelengths more."
    upstream.queue(Reply.turn(Turn.text(answer, usage=USAGE), fragment_size=7))

    seen = caller.run(served, [caller.user("Why is the sky blue?")], tools=False, stream=stream)

    assert seen.text == answer
    assert seen.calls == []
    assert seen.finish == "stop"
    assert (seen.input_tokens, seen.output_tokens) == (11, 7)
    assert b"Why is the sky blue?" in last_request_body(upstream)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_a_tool_loop_round_trips_the_call_and_its_result(
    caller: Driver, served: str, upstream: Emulator, stream: bool
) -> None:
    upstream.queue(
        Reply.turn(Turn.tool_call("get_weather", {"city": "Lisbon"}), fragment_size=5),
        Reply.turn(Turn.text("It is 21 °C and sunny in Lisbon.")),
    )
    history = [caller.user("What's the weather in Lisbon?")]

    first = caller.run(served, history, tools=True, stream=stream)

    assert first.finish == "tool_call"
    assert [(name, args) for _, name, args in first.calls] == [("get_weather", {"city": "Lisbon"})]
    assert b"get_weather" in last_request_body(upstream)  # the tool was offered upstream

    history += caller.tool_results(first.calls, "21 C, sunny")
    second = caller.run(served, history, tools=True, stream=stream)

    assert second.text == "It is 21 °C and sunny in Lisbon."
    assert second.finish == "stop"
    sent = last_request_body(upstream)
    assert b"21 C, sunny" in sent
    assert b"get_weather" in sent  # the call itself went back, ahead of its result


def test_thinking_reaches_the_sdk_and_its_signature_comes_back_on_the_next_turn(
    caller: Driver, served: str, upstream: Emulator
) -> None:
    signature = "c2lnLWZyb20tdGhlLXVwc3RyZWFt"
    upstream.queue(
        Reply.turn(
            Turn([Thinking("Rayleigh scattering, so blue.", signature=signature), Text("Blue.")])
        ),
        Reply.turn(Turn.text("You're welcome.")),
    )
    history = [caller.user("What colour is the sky?")]

    seen = caller.run(served, history, tools=False, stream=True)

    assert seen.thinking == "Rayleigh scattering, so blue."
    assert seen.text == "Blue."
    history.append(caller.user("Thanks!"))
    caller.run(served, history, tools=False, stream=True)
    sent = last_request_body(upstream)
    assert b"Thanks!" in sent
    if caller.wire != "openai-chat":  # Chat has no field a client sends reasoning back in
        assert signature.encode() in sent


def test_an_image_in_the_callers_message_reaches_the_upstream(
    caller: Driver, served: str, upstream: Emulator
) -> None:
    upstream.queue(Reply.turn(Turn.text("A red dot.")))

    seen = caller.run(
        served, [caller.user_with_image("What is this?", PNG)], tools=False, stream=True
    )

    assert seen.text == "A red dot."
    sent = last_request_body(upstream)
    assert base64.b64encode(PNG) in sent  # inline, as every upstream here takes images
    assert b"What is this?" in sent


def test_a_stream_cut_off_upstream_never_reads_as_finished(
    caller: Driver, served: str, upstream: Emulator
) -> None:
    model, protocol = UPSTREAMS[served]
    turn = Turn.text("Once upon a time " * 30)
    body = render(protocol, turn, model=model, fragment_size=10)
    upstream.queue(
        Reply.turn(turn, fragment_size=10, disconnect_after_bytes=len(body) * 2 // 3),
    )

    with pytest.raises(caller.failed):
        caller.run(served, [caller.user("Tell me a story.")], tools=False, stream=True)


def test_a_corrupted_frame_mid_stream_is_the_sdks_error_not_a_finish(
    caller: Driver, served: str, upstream: Emulator
) -> None:
    upstream.queue(Reply.turn(Turn.text("Once upon a time " * 10), malformed_frame_at=5))

    with pytest.raises(caller.failed):
        caller.run(served, [caller.user("Tell me a story.")], tools=False, stream=True)


def test_an_upstream_that_stalls_past_its_idle_timeout_is_the_sdks_error(
    caller: Driver, served: str, upstream: Emulator
) -> None:
    model, protocol = UPSTREAMS[served]
    turn = Turn.text("Once upon a time " * 30)
    body = render(protocol, turn, model=model, fragment_size=10)
    upstream.queue(Reply.turn(turn, fragment_size=10, stall_after_bytes=(len(body) // 2, 3.0)))

    with pytest.raises(caller.failed):
        caller.run(served, [caller.user("Tell me a story.")], tools=False, stream=True)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_tool_arguments_that_are_not_a_json_object_never_reach_the_caller_as_a_call(
    caller: Driver, upstream: Emulator, stream: bool
) -> None:
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + json.dumps({**chunk, "choices": [choice]}).encode() + b"\n\n"

    call = {"index": 0, "id": "call_1", "type": "function"}
    body = b"".join(
        [
            frame({"role": "assistant", "content": "Checking."}),
            frame({"tool_calls": [{**call, "function": {"name": "get_weather", "arguments": ""}}]}),
            frame({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": Lisb'}}]}),
            frame({}, "tool_calls"),
            b"data: [DONE]\n\n",
        ]
    )
    upstream.queue(Reply.body(body, content_type="text/event-stream"))

    # the arguments stream as they come (a Chat upstream's calls carry no fidelity to wait
    # for); the stream then ends in the wire's error, never in the call. Anthropic's SDK parses
    # the partial JSON as it arrives and raises on it first, a ValueError of its own
    with pytest.raises((*caller.failed, ValueError)) as raised:
        caller.run("chat", [caller.user("Weather in Lisbon?")], tools=True, stream=stream)

    assert "JSON" in str(raised.value) or "json" in str(raised.value)


def test_an_upstream_429_is_the_sdks_rate_limit_error_with_retry_after(
    caller: Driver, served: str, upstream: Emulator
) -> None:
    upstream.queue(Reply.status(429, retry_after=2))

    with pytest.raises(caller.rate_limited) as raised:
        caller.run(served, [caller.user("Hello")], tools=False, stream=True)

    assert getattr(raised.value, "status_code", getattr(raised.value, "code", None)) == 429
    assert caller.retry_after(raised.value) == "2"


def test_an_unknown_model_is_a_404_in_the_callers_shape(caller: Driver) -> None:
    with pytest.raises(Exception) as raised:
        caller.run("no-such-model", [caller.user("Hello")], tools=False, stream=True)

    assert getattr(raised.value, "status_code", getattr(raised.value, "code", None)) == 404
