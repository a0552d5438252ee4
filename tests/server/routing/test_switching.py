"""When a turn moves to the next deployment, and when it never does (docs/routing.md), through a
real server in front of emulators that fail as providers do: each failure before the first
event moves the turn on and is recorded (metrics, trace, the answer's deployment header); once
content has reached the caller, the turn ends with the strict error and its partial instead."""

from __future__ import annotations

import time
from typing import Any

import httpx
import orjson
import pytest

from modelstream.server.stores.redis import RedisStore
from modelstream.testing import Emulator, Reply, Turn
from modelstream.traces import TraceStore
from modelstream.web.keys import key_hash
from support.routing import (
    claude_models,
    closed_port_url,
    deployment_notes,
    metric,
    metrics_of,
)
from support.server import (
    AUTH,
    CLIENT_KEY,
    PROVIDER_WIRES,
    UPSTREAM_KEY,
    Serve,
    SSEStream,
    post_stream,
    stream_body,
    wire_turn,
)

ECHO = "echo: hello"
SWITCHES = "modelstream_server_deployment_switches_total"
COOLDOWNS = "modelstream_server_deployment_cooldowns_total"
# an Anthropic stream that opens and then reports an overload before any content
OVERLOADED_IN_STREAM = (
    b"event: message_start\ndata: "
    b'{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
    b'"model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
    b"event: error\ndata: "
    b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
)


@pytest.fixture(params=["memory", "redis"])
def start(request: pytest.FixtureRequest, serve: Serve, prefix: str) -> Serve:
    """`serve`, with the router's state in this process or in Redis (as with `--redis`)."""
    if request.param == "memory":
        return serve
    redis_url = request.getfixturevalue("redis_url")
    return lambda **overrides: serve(
        store=RedisStore.from_url(redis_url, prefix=prefix), **overrides
    )


def text_of(stream: SSEStream) -> str:
    return "".join(
        item.get("text", "")
        for event in stream.events
        for item in event["content_items"]
        if item["type"] == "text.delta"
    )


def one_turn(url: str, text: str = "hello") -> SSEStream:
    with httpx.Client(base_url=url, timeout=20) as http:
        return post_stream(http, stream_body("claude", text))


def switches(url: str, **labels: str) -> float:
    return metric(metrics_of(url), SWITCHES, model="claude", **labels)


def test_a_429_moves_the_turn_on_and_its_retry_after_sets_the_deployment_aside(
    start: Serve, emu: Emulator, west: Emulator
) -> None:
    emu.queue(Reply.status(429, retry_after=30))
    server = start(models=claude_models(emu, west))

    first = one_turn(server.url)
    second = one_turn(server.url)  # east is cooling down: west takes it at once

    assert first.done and text_of(first) == ECHO
    assert second.done and text_of(second) == ECHO
    assert (len(emu.requests), len(west.requests)) == (1, 2)
    page = metrics_of(server.url)
    assert metric(page, SWITCHES, model="claude", reason="rate_limited", to="west") == 1
    assert metric(page, COOLDOWNS, deployment="east") == 1
    assert metric(page, "modelstream_server_deployment_turns_total", deployment="west") == 2


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply.status(502), "server_error"),
        (Reply.status(529), "overloaded"),
        (Reply.error_in_body(500), "server_error"),
        (Reply.body(OVERLOADED_IN_STREAM, content_type="text/event-stream"), "overloaded"),
        (Reply.echo(disconnect_after_bytes=0), "broken"),
        (Reply.echo(malformed_frame_at=0), "broken"),
        (Reply.status(401), "key_refused"),
    ],
    ids=["502", "529", "500-in-200", "overload-in-stream", "disconnect", "malformed", "401"],
)
def test_a_failure_before_the_first_event_moves_the_turn_to_the_next_deployment(
    start: Serve, emu: Emulator, west: Emulator, reply: Reply, reason: str
) -> None:
    emu.queue(reply)
    server = start(models=claude_models(emu, west))

    stream = one_turn(server.url)

    assert stream.done and not stream.errors
    assert text_of(stream) == ECHO
    assert (len(emu.requests), len(west.requests)) == (1, 1)
    assert switches(server.url, **{"from": "east", "to": "west", "reason": reason}) == 1
    # one failure is not enough to cool down (cooldown_failures = 3)
    assert metric(metrics_of(server.url), COOLDOWNS, deployment="east") == 0


def test_a_refused_connect_moves_the_turn_on(start: Serve, west: Emulator) -> None:
    server = start(models=claude_models(closed_port_url(), west))

    stream = one_turn(server.url)

    assert stream.done and text_of(stream) == ECHO
    assert switches(server.url, reason="connect", to="west") == 1


@pytest.mark.parametrize(
    "stall",
    [Reply.echo(delay_first_byte=10), Reply.echo(stall_after_bytes=(0, 10))],
    ids=["before-the-headers", "after-the-headers"],
)
def test_an_upstream_that_stalls_before_its_first_event_is_left_after_first_event_timeout(
    start: Serve, emu: Emulator, west: Emulator, stall: Reply
) -> None:
    emu.queue(stall)
    models = claude_models(emu, west, east_fields={"first_event_timeout_seconds": 0.5})
    server = start(models=models)

    started = time.monotonic()
    stream = one_turn(server.url)

    assert time.monotonic() - started < 5
    assert stream.done and text_of(stream) == ECHO
    assert switches(server.url, reason="timeout", to="west") == 1


@pytest.mark.parametrize(
    "fault",
    [
        {"disconnect_after_bytes": 700},
        {"stall_after_bytes": (700, 10)},
        {"malformed_frame_at": 5},
    ],
    ids=["disconnect", "stall", "malformed"],
)
def test_once_content_reached_the_caller_the_turn_never_switches(
    start: Serve, emu: Emulator, west: Emulator, fault: dict[str, Any]
) -> None:
    story = "Once upon a time, a stream was cut after its first words. " * 4
    emu.queue(Reply.turn(Turn.text(story), fragment_size=8, **fault))
    east = {"first_event_timeout_seconds": 0.5, "idle_timeout_seconds": 1.0}
    server = start(models=claude_models(emu, west, east_fields=east))

    stream = one_turn(server.url)

    partial = text_of(stream)
    assert partial and story.startswith(partial) and partial != story
    assert stream.errors and stream.done  # the strict error, after the partial
    assert len(west.requests) == 0
    assert switches(server.url) == 0


def test_a_request_the_provider_finds_wrong_is_the_callers_error_and_never_switches(
    start: Serve, emu: Emulator, west: Emulator
) -> None:
    emu.queue(
        Reply.status(
            400,
            body={
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "messages: bad"},
            },
        )
    )
    server = start(models=claude_models(emu, west))

    stream = one_turn(server.url)

    assert not stream.events and stream.errors
    assert len(west.requests) == 0
    assert switches(server.url) == 0


def test_fallbacks_are_tried_in_order_after_every_deployment_failed(
    start: Serve, emu: Emulator, west: Emulator, backup: Emulator
) -> None:
    emu.queue(Reply.status(503))
    west.queue(Reply.status(500))
    server = start(models=claude_models(emu, west, backup))

    stream = one_turn(server.url)

    assert stream.done and text_of(stream) == ECHO  # OpenAI Chat's echo, as a SPEC stream
    assert [len(e.requests) for e in (emu, west, backup)] == [1, 1, 1]
    assert backup.requests[0].path.endswith("/chat/completions")
    assert switches(server.url, **{"from": "east", "to": "west"}) == 1
    assert switches(server.url, **{"from": "west", "to": "backup"}) == 1


def test_when_every_candidate_fails_the_caller_gets_the_last_error(
    start: Serve, emu: Emulator, west: Emulator
) -> None:
    emu.queue(Reply.status(503))
    west.queue(Reply.status(429, retry_after=7))
    server = start(models=claude_models(emu, west))

    stream = one_turn(server.url)

    assert not stream.events
    (error,) = stream.errors
    assert error["type"] == "RateLimitError"


def test_cooldown_failures_sets_a_deployment_aside_after_that_many_failures(
    start: Serve, emu: Emulator, west: Emulator
) -> None:
    emu.queue(Reply.status(500), Reply.status(500))
    server = start(
        models=claude_models(emu, west),
        router={"cooldown_failures": 2, "cooldown_window_seconds": 60, "cooldown_seconds": 30},
    )

    first, second, third = (one_turn(server.url) for _ in range(3))

    assert all(s.done and text_of(s) == ECHO for s in (first, second, third))
    assert (len(emu.requests), len(west.requests)) == (2, 3)  # the third went to west at once
    assert metric(metrics_of(server.url), COOLDOWNS, deployment="east") == 1


def test_a_cooling_deployment_is_still_the_last_resort(
    start: Serve, emu: Emulator, west: Emulator
) -> None:
    emu.queue(Reply.status(429, retry_after=30))
    server = start(models=claude_models(emu, west))
    one_turn(server.url)  # east cools down
    west.queue(Reply.status(503))

    stream = one_turn(server.url)  # west fails: east, cooling, is tried rather than nothing

    assert stream.done and text_of(stream) == ECHO
    assert (len(emu.requests), len(west.requests)) == (2, 2)


def test_each_switch_is_in_the_trace_without_the_upstream_key(
    start: Serve, emu: Emulator, west: Emulator, backup: Emulator, tmp_path: Any
) -> None:
    path = tmp_path / "served.sqlite3"
    emu.queue(Reply.status(429, retry_after=30))
    west.queue(Reply.status(502))
    server = start(models=claude_models(emu, west, backup), traces=str(path))

    stream = one_turn(server.url)
    server.stop()

    (turn,) = TraceStore(path).get_trace(f"{key_hash(CLIENT_KEY)}/{stream.response_id}")
    assert deployment_notes(turn.diagnostics) == [
        {
            "kind": "deployment_switch",
            "from": "east",
            "to": "west",
            "reason": "rate_limited",
            "error": "RateLimitError",
            "status": 429,
            "cooled": True,
        },
        {
            "kind": "deployment_switch",
            "from": "west",
            "to": "backup",
            "reason": "server_error",
            "error": "ServerError",
            "status": 502,
            "cooled": False,
        },
        {"kind": "deployment", "name": "backup"},
    ]
    assert turn.status == "final"
    assert UPSTREAM_KEY not in path.read_bytes().decode("utf-8", "replace")


@pytest.mark.parametrize("wire", PROVIDER_WIRES)
def test_every_providers_wire_says_which_deployment_answered(
    start: Serve, emu: Emulator, west: Emulator, wire: str
) -> None:
    path, headers, body = wire_turn(wire, "claude", CLIENT_KEY)
    emu.queue(Reply.status(502))
    server = start(models=claude_models(emu, west))

    with httpx.Client(base_url=server.url, timeout=20) as http:
        switched = http.post(path, content=orjson.dumps(body), headers=headers)
        direct = http.post(path, content=orjson.dumps(body), headers=headers)

    assert switched.status_code == 200, switched.text
    assert switched.headers["x-modelstream-deployment"] == "west"
    assert "echo: he" in switched.text  # the echo's first fragment, in the caller's wire
    assert direct.headers["x-modelstream-deployment"] == "east"
    assert UPSTREAM_KEY not in switched.text + str(switched.headers)
    assert switches(server.url, to="west", reason="server_error") == 1


def test_the_streams_route_switches_the_same_way(
    start: Serve, emu: Emulator, west: Emulator
) -> None:
    """/v1/stream sends its headers at once: the switch is in the metrics and the trace."""
    emu.queue(Reply.status(503))
    server = start(models=claude_models(emu, west))

    with (
        httpx.Client(base_url=server.url, timeout=20) as http,
        http.stream("POST", "/v1/stream", json=stream_body("claude"), headers=AUTH) as response,
    ):
        assert response.status_code == 200
        assert "x-modelstream-deployment" not in response.headers
        response.read()

    assert switches(server.url, to="west") == 1


def test_a_deployment_given_max_attempts_retries_before_the_turn_moves_on(
    start: Serve, emu: Emulator, west: Emulator
) -> None:
    emu.queue(Reply.status(502), Reply.status(502))
    server = start(models=claude_models(emu, west, east_fields={"max_attempts": 2}))

    stream = one_turn(server.url)

    assert stream.done and text_of(stream) == ECHO
    assert (len(emu.requests), len(west.requests)) == (2, 1)
    assert switches(server.url, reason="server_error", to="west") == 1
