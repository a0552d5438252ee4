"""Streams through a real server (uvicorn on loopback) from the emulator's four protocols: the
SPEC §7 wire with an SSE id per event, errors after the stream began as one error line, keep-alive
comments, and the /v1/models, /healthz and /metrics routes."""

from __future__ import annotations

import re
import time

import httpx
import pytest

from modelstream import check_events
from modelstream.testing import Emulator, Reply, Text, Thinking, ToolCall, Turn
from support.server import (
    AUTH,
    SERVED,
    UPSTREAM_KEY,
    Serve,
    config_for,
    post_stream,
    read_sse,
    stream_body,
)

RICH_TURN = Turn(
    items=[
        Thinking("The user wants weather and time.", signature="sig-thinking-1"),
        Text("Let me look both up."),
        ToolCall("get_weather", {"city": "Paris"}, id="call_weather"),
        ToolCall("get_time", {"tz": "Europe/Paris"}, id="call_time"),
    ]
)


@pytest.mark.parametrize("server_model", sorted(SERVED))
def test_thinking_text_and_tool_calls_stream_through_the_server_with_an_id_per_event(
    serve: Serve, emu: Emulator, server_model: str
) -> None:
    emu.queue(Reply.turn(RICH_TURN, fragment_size=6))
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body(server_model, "weather and time in Paris?"))

    assert stream.done and stream.errors == []
    events = stream.events
    check_events(events)
    assert stream.response_id is not None and re.fullmatch(r"resp_[0-9a-f]{32}", stream.response_id)
    assert stream.ids[:-1] == [f"{stream.response_id}:{n}" for n in range(1, len(events) + 1)]
    done = [e["content_items"][0] for e in events if e["content_items"]]
    done = [item for item in done if item["type"].endswith(".done")]
    assert [item["type"] for item in done] == [
        "thinking.done",
        "text.done",
        "tool_call.done",
        "tool_call.done",
    ]
    assert done[0]["thinking"] == "The user wants weather and time."
    assert done[1]["text"] == "Let me look both up."
    assert [(d["name"], d["arguments"]) for d in done[2:]] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "Europe/Paris"}),
    ]
    assert events[-1]["event_type"] == "stop" and events[-1]["finish_reason"] == "tool_call"
    (upstream,) = emu.requests
    assert UPSTREAM_KEY in " ".join(upstream.headers.values())  # the configured key went up
    assert "weather and time in Paris?" in upstream.body.decode()


def test_a_text_stream_carries_the_whole_text_in_its_deltas(serve: Serve, emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("Hello there, general Kenobi."), fragment_size=3))
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("chat"))

    deltas = [e["content_items"][0] for e in stream.events if e["event_type"] == "delta"]
    text = "".join(d["text"] for d in deltas if d["type"] == "text.delta")
    assert text == "Hello there, general Kenobi."
    assert len(deltas) > 5


def test_a_mid_stream_upstream_failure_is_one_error_line_then_done(
    serve: Serve, emu: Emulator
) -> None:
    emu.queue(
        Reply.turn(Turn.text("a long answer " * 80), fragment_size=8, disconnect_after_bytes=2000)
    )
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("anthropic"))

    assert stream.events and all(e["event_type"] == "delta" for e in stream.events)
    (error,) = stream.errors
    assert error["type"] == "IncompleteStreamError"
    assert error["partial_status"] == "incomplete"
    assert stream.data[-2].startswith('{"error"') and stream.data[-1] == "[DONE]"
    assert stream.seqs == list(range(1, len(stream.events) + 2))  # the error line has its id too


def test_an_upstream_refusal_after_acceptance_is_an_error_line_with_its_status(
    serve: Serve, emu: Emulator
) -> None:
    emu.queue(Reply.status(400))
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("responses"))

    assert stream.events == []
    (error,) = stream.errors
    assert error["type"] == "BadRequestError" and error["status"] == 400
    assert stream.done


def test_a_stream_past_the_event_cap_ends_with_an_error_line_and_cancels_upstream(
    serve: Serve, emu: Emulator
) -> None:
    emu.queue(Reply.turn(Turn.text("many small pieces " * 20), fragment_size=2, delay=0.005))
    server = serve(limits={"max_events_per_stream": 5})
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("chat"))

    assert len(stream.events) == 5
    (error,) = stream.errors
    assert error["type"] == "StreamTooLongError" and error["limit"] == 5
    assert stream.seqs == [1, 2, 3, 4, 5, 6] and stream.done
    (upstream,) = emu.wait_for_requests(1, finished=True)
    assert upstream.client_closed_early


def test_keep_alive_comments_flow_while_the_upstream_is_silent(serve: Serve, emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("finally"), delay_first_byte=0.7))
    server = serve(keepalive_seconds=0.1)
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("gemini"))

    assert stream.comments >= 4
    assert stream.raw.startswith(b": keep-alive\n\n")
    assert stream.done and stream.events[-1]["event_type"] == "stop"


def test_the_response_id_arrives_before_the_first_event(serve: Serve, emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("late"), delay_first_byte=3.0))
    server = serve()
    started = time.monotonic()
    with (
        httpx.Client(base_url=server.url) as http,
        http.stream("POST", "/v1/stream", json=stream_body(), headers=AUTH) as response,
    ):
        header_after = time.monotonic() - started
        response_id = response.headers["x-response-id"]
        stream = read_sse(response)

    assert header_after < 3.0  # had it waited for the upstream's first byte: 3 s or more
    assert stream.ids[0] == f"{response_id}:1"


def test_the_models_route_lists_served_ids_in_the_openai_shape(serve: Serve) -> None:
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        listing = http.get("/v1/models", headers=AUTH)

    assert listing.status_code == 200
    assert listing.json() == {
        "object": "list",
        "data": [
            {"id": "chat", "object": "model", "owned_by": "deepseek"},
            {"id": "responses", "object": "model", "owned_by": "openai"},
            {"id": "anthropic", "object": "model", "owned_by": "anthropic"},
            {"id": "gemini", "object": "model", "owned_by": "google"},
        ],
    }


def test_healthz_answers_without_a_key_and_reports_the_store(serve: Serve) -> None:
    server = serve()
    health = httpx.get(server.url + "/healthz")

    assert health.status_code == 200
    assert health.json() == {
        "status": "ok",
        "streams_in_flight": 0,
        "store": {"kind": "memory", "status": "ok"},
    }


def test_metrics_count_outcomes_latency_and_tokens(serve: Serve, emu: Emulator) -> None:
    from modelstream.testing import Reply as R

    emu.queue(
        R.turn(Turn(items=[Text("ok")], usage={"prompt_tokens": 12, "response_tokens": 3})),
        R.turn(Turn.text("broken " * 100), fragment_size=4, disconnect_after_bytes=2000),
    )
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        post_stream(http, stream_body("anthropic"))
        post_stream(http, stream_body("anthropic"))
        http.post("/v1/stream", json=stream_body("no-such-model"), headers=AUTH)
        http.post("/v1/stream", json=stream_body("anthropic"))  # no key
        text = _settled_metrics(http)

    assert text.startswith("# HELP ")
    assert 'modelstream_server_requests_total{route="stream",outcome="stop"} 1\n' in text
    assert 'modelstream_server_requests_total{route="stream",outcome="error"} 1\n' in text
    assert 'modelstream_server_requests_total{route="stream",outcome="unknown_model"} 1\n' in text
    assert 'modelstream_server_requests_total{route="stream",outcome="unauthorized"} 1\n' in text
    assert "modelstream_server_streams_in_flight 0\n" in text
    assert 'modelstream_server_tokens_total{model="anthropic",direction="in"} 12\n' in text
    assert 'modelstream_server_tokens_total{model="anthropic",direction="out"} 3\n' in text
    assert 'modelstream_server_time_to_first_event_seconds_count{model="anthropic"} 2\n' in text
    assert 'modelstream_server_stream_duration_seconds_count{model="anthropic"} 2\n' in text
    assert (
        'modelstream_server_stream_duration_seconds_bucket{model="anthropic",le="+Inf"} 2\n' in text
    )
    assert "# TYPE modelstream_server_time_to_first_event_seconds histogram\n" in text
    # claude-sonnet-4-5 at $3 input and $15 output per million: 12 * 3 + 3 * 15 = 81 / 1e6;
    # the cut-off turn's cost is unknown and not counted
    (cost,) = [line for line in text.splitlines() if line.startswith("modelstream_server_cost")]
    assert cost.startswith('modelstream_server_cost_total{model="anthropic",currency="USD"} ')
    assert float(cost.rsplit(" ", 1)[1]) == pytest.approx(81e-6)


def _settled_metrics(http: httpx.Client) -> str:
    """/metrics once every producer has finished (a reader may see [DONE] just before)."""
    deadline = time.monotonic() + 5
    while True:
        text = http.get("/metrics").text
        if "modelstream_server_streams_in_flight 0\n" in text or time.monotonic() > deadline:
            return text
        time.sleep(0.01)


def test_the_server_retries_a_refused_upstream_call_and_the_caller_sees_one_clean_stream(
    serve: Serve, emu: Emulator
) -> None:
    """The server's own upstream retries (`max_attempts`): a 429 and a 503, each with
    Retry-After, then the turn. The caller gets one stream from seq 1, no error line, and the
    server waited as long as the upstream asked before each attempt."""
    emu.queue(
        Reply.status(429, retry_after=1),
        Reply.status(503, retry_after=0.5),
        Reply.turn(Turn.text("third time lucky"), fragment_size=4),
    )
    models = [{**model, "max_attempts": 3} for model in config_for(emu)["models"]]
    server = serve(models=models)
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("anthropic"))
        metrics = _settled_metrics(http)

    assert stream.done and stream.errors == []
    assert stream.seqs == list(range(1, len(stream.events) + 1))
    check_events(stream.events)
    texts = [
        i["text"] for e in stream.events for i in e["content_items"] if i["type"] == "text.done"
    ]
    assert texts == ["third time lucky"]
    assert stream.events[-1]["finish_reason"] == "stop"
    first, second, third = emu.wait_for_requests(3, finished=True)
    assert [first.status, second.status, third.status] == [429, 503, 200]
    assert second.received_at - first.received_at >= 1.0  # Retry-After: 1
    assert third.received_at - second.received_at >= 0.5  # Retry-After: 0.5
    assert 'modelstream_server_requests_total{route="stream",outcome="stop"} 1\n' in metrics


def test_a_model_served_on_a_platform_reaches_the_platform_paths(
    serve: Serve, emu: Emulator
) -> None:
    """Azure by deployment: the server's model table names the platform and its api-version,
    and the relayed call goes to the deployment path with the `api-key` header."""
    azure = {
        "server_model_id": "azure-gpt",
        "model": "my-gpt-deployment",
        "client_type": "openai-chat",
        "platform": {"name": "azure", "api_version": "2024-10-21"},
        "base_url": emu.url,
        "api_key": "$MODELSTREAM_TEST_UPSTREAM_KEY",
        "max_attempts": 1,
    }
    server = serve(models=[azure])
    emu.queue(Reply.turn(Turn.text("hello from Azure")))

    with httpx.Client(base_url=server.url, timeout=10) as http:
        stream = post_stream(http, stream_body("azure-gpt"))

    deltas = [
        i["text"] for e in stream.events for i in e["content_items"] if i["type"] == "text.delta"
    ]
    assert "".join(deltas) == "hello from Azure"
    assert stream.events[-1]["event_type"] == "stop"
    request = emu.requests[0]
    assert request.path == "/openai/deployments/my-gpt-deployment/chat/completions"
    assert request.query == {"api-version": "2024-10-21"}
    assert request.headers["api-key"] == UPSTREAM_KEY
