"""`client_type="modelstream"`: the client streams from a live modelstream server (uvicorn on
127.0.0.1, the emulator upstream), raises the server's typed errors as themselves, and resumes a
dropped connection so that the caller sees one uninterrupted stream: none lost, none twice."""

from __future__ import annotations

import base64
import time
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from modelstream import (
    ConfigurationError,
    EmptyResponseError,
    FrameTooLargeError,
    IncompleteStreamError,
    MalformedFrameError,
    PoolExhaustedError,
    ProviderError,
    SequenceGapError,
    StreamDecoder,
    StreamProtocolError,
    StreamTimeoutError,
    ToolCallArgumentParseError,
    UnsupportedParameterError,
    check_events,
)
from modelstream.client import Client, RetryPolicy, Timeouts
from modelstream.client.resume import StreamResume
from modelstream.framing.sse import SSEDecoder
from modelstream.jsonwire import dumps, error_object
from modelstream.protocols.modelstream.decoder import error_from_wire
from modelstream.server.stores import ProducerLostError
from modelstream.testing import Emulator, Reply, Text, Thinking, ToolCall, Turn
from modelstream.types import unknown_usage
from support.modelstream_client import (
    MODES,
    Fault,
    FaultyProxy,
    drive,
    stored_events,
    without_clock,
)
from support.server import SERVED, LiveServer, Serve, user

RICH_TURN = Turn(
    items=[
        Thinking("The user wants the weather in two cities.", signature="sig-thinking-1"),
        Text("Let me look both up."),
        ToolCall("get_weather", {"city": "Paris"}, id="call_paris"),
        ToolCall("get_weather", {"city": "Tokyo", "units": "metric"}, id="call_tokyo"),
    ]
)
STORY = Turn.text("Once upon a time, a stream was cut and resumed without losing a word. " * 4)


def paced_story() -> Reply:
    return Reply.turn(STORY, fragment_size=7, delay=0.002)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(serve: Serve) -> LiveServer:
    return serve()


# --- streaming through the server -------------------------------------------------------------


@pytest.mark.parametrize("model", list(SERVED))
def test_thinking_text_and_tool_calls_stream_through_the_server_as_the_server_sent_them(
    server: LiveServer, emu: Emulator, mode: str, model: str
) -> None:
    emu.queue(Reply.turn(RICH_TURN, fragment_size=5))
    outcome = drive(mode, server.url, model=model)

    assert outcome.error is None
    check_events(outcome.events)
    assert outcome.result is not None and outcome.result.status == "final"
    assert outcome.response_id is not None and outcome.response_id.startswith("resp_")
    stored, ids = stored_events(server.url, outcome.response_id)
    # event for event, byte for byte what the server stored (its clock included), then [DONE]
    assert [dumps(event).decode() for event in outcome.events] == stored[:-1]
    assert stored[-1] == "[DONE]" and len(ids) == len(stored)
    message = outcome.result.message
    assert [item["type"] for item in message["content_items"]] == [
        "thinking.done",
        "text.done",
        "tool_call.done",
        "tool_call.done",
    ]
    calls = [item for item in message["content_items"] if item["type"] == "tool_call.done"]
    assert [call["arguments"] for call in calls] == [
        {"city": "Paris"},
        {"city": "Tokyo", "units": "metric"},
    ]
    assert message["finish_reason"] == "tool_call"
    assert message["usage_metadata"] == outcome.events[-1]["usage_metadata"]
    assert outcome.result.metadata.provider == "modelstream"
    assert outcome.result.metadata.model == model


def test_the_request_carries_the_bearer_key_the_model_and_the_config(
    server: LiveServer, emu: Emulator, mode: str
) -> None:
    emu.queue(Reply.turn(Turn.text("Bonjour.")))
    config: Any = {"system_prompt": "Answer in French.", "max_tokens": 64, "temperature": None}
    outcome = drive(mode, server.url, [user("Hello!")], config, model="chat")

    assert outcome.error is None
    (upstream,) = emu.requests
    body = upstream.json
    assert body["model"] == SERVED["chat"][0]  # the server routed "chat" to its upstream model
    assert body["max_tokens"] == 64  # deepseek-chat: a compatible server's key
    assert body["messages"][0] == {"role": "system", "content": "Answer in French."}
    assert "temperature" not in body  # None means unset, as for every client type


def test_inline_data_in_the_history_goes_to_the_server_as_base64_and_back_to_the_upstream(
    server: LiveServer, emu: Emulator
) -> None:
    picture = b"\x89PNG\r\n\x1a\n-not-really-a-picture"
    history: Any = [
        user("Draw me a cat."),
        {
            "role": "assistant",
            "content_items": [
                {"type": "inline_data.done", "data": picture, "mime_type": "image/png"}
            ],
        },
        user("Thanks!"),
    ]
    emu.queue(Reply.turn(Turn.text("You are welcome.")))
    outcome = drive("sync", server.url, history, model="gemini")

    assert outcome.error is None
    (upstream,) = emu.requests
    parts = upstream.json["contents"][1]["parts"]
    assert parts[0]["inlineData"]["mimeType"] == "image/png"
    assert base64.b64decode(parts[0]["inlineData"]["data"]) == picture
    assert history[1]["content_items"][0]["data"] == picture  # the caller's message untouched


# --- typed errors, raised as themselves ----------------------------------------------------


def error_line(server_url: str, response_id: str) -> dict[str, Any]:
    """The error line the server stored for a stream."""
    data, _ = stored_events(server_url, response_id)
    (line,) = [d for d in data if d.startswith('{"error"')]
    return dict(orjson.loads(line)["error"])


def test_an_upstream_that_breaks_off_ends_in_the_incomplete_stream_error_the_server_sent(
    server: LiveServer, emu: Emulator, mode: str
) -> None:
    emu.queue(Reply.turn(STORY, fragment_size=5, disconnect_after_bytes=900))
    outcome = drive(mode, server.url)

    assert isinstance(outcome.error, IncompleteStreamError)
    assert outcome.error.missing == "finish reason"
    assert outcome.events and outcome.events[-1]["event_type"] == "delta"
    result = outcome.result
    assert result is not None and result.status == "incomplete"
    assert result.open_item is not None and result.open_item["type"] == "text.delta"
    assert outcome.response_id is not None
    assert error_object(outcome.error)["error"] == error_line(server.url, outcome.response_id)


def test_an_upstream_refusal_is_the_provider_error_it_was_with_its_fields(
    server: LiveServer, emu: Emulator, mode: str
) -> None:
    emu.queue(Reply.status(429, retry_after=7))
    outcome = drive(mode, server.url, retry=RetryPolicy(max_attempts=1))

    error = outcome.error
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.retryable) == (429, "rate_limit_error", True)
    assert error.retry_after == 7.0
    assert outcome.events == []
    assert outcome.result is not None and outcome.result.status == "failed"
    assert error.partial is not None and error.partial.metadata.response_id is not None
    line = error_line(server.url, error.partial.metadata.response_id)
    assert error_object(error)["error"] == line


def test_an_upstream_429_relayed_before_the_first_event_is_retried_like_any_provider_s(
    server: LiveServer, emu: Emulator, mode: str
) -> None:
    emu.queue(Reply.status(429, retry_after=0.01), Reply.turn(Turn.text("Second time lucky.")))
    outcome = drive(mode, server.url)

    assert outcome.error is None and outcome.result is not None
    assert outcome.result.status == "final"
    assert outcome.sleeps == [0.01]
    assert len(emu.requests) == 2


def test_tool_arguments_the_server_cannot_parse_raise_the_tool_call_argument_parse_error(
    server: LiveServer, emu: Emulator, mode: str
) -> None:
    body = b"".join(
        b"event: %s\ndata: %s\n\n" % (name.encode(), data.encode())
        for name, data in [
            ("message_start", '{"type":"message_start","message":{"id":"msg_1","model":"m",'
             '"usage":{"input_tokens":5,"output_tokens":0}}}'),
            ("content_block_start", '{"type":"content_block_start","index":0,"content_block":'
             '{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}'),
            ("content_block_delta", '{"type":"content_block_delta","index":0,"delta":'
             '{"type":"input_json_delta","partial_json":"{\\"city\\": \\"Par"}}'),
            ("content_block_stop", '{"type":"content_block_stop","index":0}'),
        ]
    )  # fmt: skip
    emu.queue(Reply.body(body))
    outcome = drive(mode, server.url)

    error = outcome.error
    assert isinstance(error, ToolCallArgumentParseError)
    assert (error.name, error.tool_call_id) == ("get_weather", "toolu_1")
    assert error.raw_length == len('{"city": "Par') and "Par" in error.preview
    assert outcome.result is not None and outcome.result.status == "failed"
    assert outcome.result.items == []  # the call is never a done item: it must not run
    assert outcome.response_id is not None
    assert error_object(error)["error"] == error_line(server.url, outcome.response_id)


def test_a_turn_of_thinking_only_raises_the_empty_response_error_with_its_usage(
    server: LiveServer, emu: Emulator, mode: str
) -> None:
    emu.queue(Reply.turn(Turn(items=[Thinking("Hmm.", signature="sig")])))
    outcome = drive(mode, server.url)

    error = outcome.error
    assert isinstance(error, EmptyResponseError)
    assert error.thinking_only and error.finish_reason == "stop"
    assert error.usage is not None and error.usage["response_tokens"] is not None
    assert outcome.response_id is not None
    assert error_object(error)["error"] == error_line(server.url, outcome.response_id)


def test_a_config_the_upstream_cannot_take_raises_the_unsupported_parameter_error(
    server: LiveServer, emu: Emulator, mode: str
) -> None:
    outcome = drive(mode, server.url, config={"seed": 7}, model="anthropic")

    error = outcome.error
    assert isinstance(error, UnsupportedParameterError)
    assert "seed" in str(error) and "Anthropic" in str(error)
    assert emu.requests == []
    assert outcome.result is not None and outcome.result.status == "failed"


@pytest.mark.parametrize(
    ("api_key", "model", "status", "error_type"),
    [
        ("msk-wrong-key", "anthropic", 401, "AuthenticationError"),
        (None, "no-such-model", 404, "NotFoundError"),
    ],
)
def test_a_refused_request_is_a_provider_error_with_the_server_s_status_and_type(
    server: LiveServer,
    emu: Emulator,
    mode: str,
    api_key: str | None,
    model: str,
    status: int,
    error_type: str,
) -> None:
    options = {} if api_key is None else {"api_key": api_key}
    outcome = drive(mode, server.url, model=model, **options)

    error = outcome.error
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type, error.retryable) == (status, error_type, False)
    assert "msk-wrong-key" not in str(error)
    assert emu.requests == []


def test_the_modelstream_client_type_needs_the_server_s_url_and_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MODELSTREAM_API_KEY", raising=False)
    monkeypatch.delenv("MODELSTREAM_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="MODELSTREAM_BASE_URL"):
        Client("claude", client_type="modelstream", api_key="k")
    with pytest.raises(ConfigurationError, match="MODELSTREAM_API_KEY or pass api_key"):
        Client("claude", client_type="modelstream", base_url="http://127.0.0.1:8000")
    monkeypatch.setenv("MODELSTREAM_API_KEY", "msk-from-the-environment")
    with pytest.raises(ConfigurationError, match="never sent elsewhere"):
        Client("claude", client_type="modelstream", base_url="http://127.0.0.1:8000")
    monkeypatch.setenv("MODELSTREAM_BASE_URL", "http://127.0.0.1:8000")
    client = Client("claude", client_type="modelstream")
    assert "msk-from-the-environment" not in repr(client)
    client.close()


# --- resuming ---------------------------------------------------------------------------------


@pytest.fixture
def proxy(server: LiveServer) -> Any:
    with FaultyProxy(server.port) as faulty:
        yield faulty


@settings(
    max_examples=24,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    mode=st.sampled_from(MODES),
    cuts=st.lists(st.integers(0, 5000), min_size=1, max_size=4),
)
def test_a_connection_cut_at_random_points_resumes_into_the_uninterrupted_stream(
    server: LiveServer, proxy: FaultyProxy, emu: Emulator, mode: str, cuts: list[int]
) -> None:
    emu.queue(paced_story())
    reference = drive(mode, server.url)
    emu.queue(paced_story())
    proxy.plan(*(Fault(after) for after in cuts))
    outcome = drive(mode, proxy.url)

    assert outcome.error is None, outcome.error
    assert outcome.result is not None and outcome.result.status == "final"
    assert without_clock(outcome.events) == without_clock(reference.events)
    assert outcome.response_id is not None
    stored, _ = stored_events(server.url, outcome.response_id)
    assert [dumps(event).decode() for event in outcome.events] == stored[:-1]  # none lost/twice
    assert len(outcome.resumes) == proxy.tripped  # each cut was resumed, once
    event(f"connections cut: {proxy.tripped}")
    assert len(outcome.sleeps) == proxy.tripped and outcome.sleeps[:1] in ([], [0.0])
    message, expected = outcome.result.message, reference.result.message  # type: ignore[union-attr]
    assert message["content_items"] == expected["content_items"]
    assert message["usage_metadata"] == expected["usage_metadata"]


def test_a_connection_cut_before_the_first_event_resumes_from_the_start_not_as_a_new_turn(
    server: LiveServer, proxy: FaultyProxy, emu: Emulator, mode: str
) -> None:
    emu.queue(paced_story())
    proxy.plan(Fault(0))
    outcome = drive(mode, proxy.url)

    assert outcome.error is None and proxy.tripped == 1
    assert [r["after_seq"] for r in outcome.resumes] == [0]
    assert len(emu.requests) == 1  # one upstream call: the stream was resumed, not retried
    assert outcome.result is not None and outcome.result.status == "final"
    assert outcome.result.message["content_items"][0]["text"] == STORY.items[0].text  # type: ignore[union-attr]


def test_a_connection_that_stalls_past_the_idle_timeout_is_resumed(
    server: LiveServer, proxy: FaultyProxy, emu: Emulator, mode: str
) -> None:
    emu.queue(paced_story())
    proxy.plan(Fault(1500, "stall"))
    started = time.monotonic()
    outcome = drive(mode, proxy.url, timeouts=Timeouts(idle=0.3))

    assert outcome.error is None and proxy.tripped == 1
    assert outcome.result is not None and outcome.result.status == "final"
    resume = outcome.resumes[0]
    assert resume["after_seq"] > 0 and "idle" in resume["error"]
    assert time.monotonic() - started < 5


def test_resumes_that_bring_nothing_new_give_up_with_backoff_and_keep_the_partial(
    server: LiveServer, proxy: FaultyProxy, emu: Emulator, mode: str
) -> None:
    emu.queue(paced_story())
    proxy.plan(Fault(2000), *[Fault(0)] * 10)  # after some events, every resume is cut at once
    outcome = drive(mode, proxy.url)

    assert isinstance(outcome.error, IncompleteStreamError)
    assert outcome.events and outcome.result is not None
    assert outcome.result.status == "incomplete"
    assert proxy.tripped == 5  # the first cut, then four resumes without progress
    assert len(outcome.resumes) == 4
    assert outcome.sleeps[0] == 0.0 and len(outcome.sleeps) == 4  # then backoff with jitter
    assert all(0 <= s <= 0.5 * 2 ** (n - 1) for n, s in enumerate(outcome.sleeps[1:], 1))


def test_a_stream_that_expired_before_the_resume_ends_in_the_server_s_404(
    serve: Serve, emu: Emulator, mode: str
) -> None:
    server = serve(retain_seconds=0.2)
    emu.queue(Reply.turn(Turn.text("A short story."), fragment_size=3))
    with FaultyProxy(server.port) as proxy:
        proxy.plan(Fault(200))
        outcome = drive(mode, proxy.url, sleep=lambda _: time.sleep(1.0))

    error = outcome.error
    assert isinstance(error, ProviderError)
    assert (error.status, error.error_type) == (404, "NotFoundError")
    assert outcome.result is not None and outcome.result.status == "failed"
    assert len(outcome.resumes) == 1


# --- the wire, sans IO -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        ToolCallArgumentParseError(
            name="f", tool_call_id="call_1", raw='{"a": ' + "x" * 300, reason="unterminated"
        ),
        ToolCallArgumentParseError(
            name="f", tool_call_id="call_1", raw='{"a": "x', reason="EOF", cut_off=True
        ),
        EmptyResponseError(finish_reason="length", usage=unknown_usage(), thinking_only=True),
        IncompleteStreamError("finish reason", "the body ended first"),
        FrameTooLargeError(1024, 4096),
        StreamTimeoutError("idle", 60.0, "finish reason"),
        ProviderError(
            "overloaded", status=529, error_type="overloaded_error", retryable=True, retry_after=2
        ),
        StreamProtocolError("B", "block 3 received a fragment after it was done"),
        MalformedFrameError('{"type": "content_block_delta", "ind', frame=7),
        SequenceGapError(5, 7),
        PoolExhaustedError(5.0, "response"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_each_stream_error_comes_back_from_its_error_object_as_itself(error: Any) -> None:
    wire = orjson.loads(orjson.dumps(error_object(error)))["error"]
    rebuilt = error_from_wire(wire)

    assert type(rebuilt) is type(error)
    assert str(rebuilt) == str(error)
    assert rebuilt.fields() == error.fields()


def test_a_stream_whose_server_lost_its_producer_is_incomplete_not_a_provider_error() -> None:
    lost = ProducerLostError("resp_1", 7.0)
    wire = orjson.loads(orjson.dumps(error_object(lost)))["error"]
    error = error_from_wire(wire)

    assert type(error) is IncompleteStreamError
    assert str(error) == str(lost)


def test_an_error_type_the_client_does_not_know_is_a_provider_error_of_that_type() -> None:
    wire = {"type": "StreamCancelledError", "message": "the server shut down", "reason": "shutdown"}
    error = error_from_wire(wire)

    assert isinstance(error, ProviderError)
    assert (error.error_type, error.provider_message) == ("StreamCancelledError", wire["message"])
    assert not error.retryable


def test_a_relayed_stream_that_breaks_the_grammar_ends_in_a_stream_protocol_error() -> None:
    body = b"".join(
        b"data: %s\n\n" % dumps(event)
        for event in [
            {"role": "assistant", "event_type": "delta", "usage_metadata": None,
             "finish_reason": None, "created_at": 1,
             "content_items": [{"type": "thinking.delta", "thinking": "hm"}]},
            {"role": "assistant", "event_type": "delta", "usage_metadata": None,
             "finish_reason": None, "created_at": 2,
             "content_items": [{"type": "text.delta", "text": "hi"}]},
        ]
    )  # fmt: skip
    decoder = StreamDecoder("modelstream")
    events = decoder.feed(body)
    with pytest.raises(StreamProtocolError, match=r"text\.delta while a thinking item was open"):
        decoder.feed(b"")

    assert [e["content_items"][0]["type"] for e in events] == ["thinking.delta"]


# --- the resume point, sans IO ----------------------------------------------------------------


def frame(seq: int, data: str) -> bytes:
    return b"id: resp_x:%d\ndata: %s\n\n" % (seq, data.encode())


def passed(resume: StreamResume, framer: SSEDecoder, body: bytes) -> list[str]:
    """The data of the frames `resume` lets through, of `body` framed by the SSE framer."""
    return [data for _, data, _, _ in resume.frames(framer.feed_fields(body))]


def test_the_resume_point_is_the_last_event_id_however_the_bytes_are_split() -> None:
    body = frame(1, '{"a":1}') + b": keep-alive\n\n" + frame(2, '{"b":2}') + b"data: [DONE]\n\n"
    for size in (1, 2, 3, 5, 8, 13, len(body)):
        resume, framer = StreamResume(), SSEDecoder()
        out = [
            d for i in range(0, len(body), size) for d in passed(resume, framer, body[i : i + size])
        ]
        assert out == ['{"a":1}', '{"b":2}', "[DONE]"]
        assert resume.last_seq == 2


def test_after_a_reconnect_events_already_seen_are_dropped_even_if_the_server_replays_them() -> (
    None
):
    """A proxy that strips `Last-Event-ID` gets the whole stream again: only the new rest goes
    on to the decoder; `[DONE]`, which inherits the last id but has none of its own, passes."""
    resume, framer = StreamResume(), SSEDecoder()
    resume.responded("resp_x")
    assert passed(resume, framer, frame(1, "one") + frame(2, "two") + b"id: resp_x:3\nda") == [
        "one",
        "two",
    ]
    resume.reconnecting()
    framer = SSEDecoder()  # the caller restarts the framing: the cut frame is gone
    assert resume.last_event_id() == "resp_x:2"
    replayed = frame(1, "one") + frame(2, "two") + frame(3, "three") + frame(4, "four")
    assert passed(resume, framer, replayed[:30]) == []
    assert passed(resume, framer, replayed[30:]) == ["three", "four"]
    assert passed(resume, framer, frame(5, "five") + b"data: [DONE]\n\n") == ["five", "[DONE]"]
    assert resume.last_seq == 5


def test_done_after_a_replay_of_only_known_events_still_passes() -> None:
    """The connection dropped after the last event but before `[DONE]`; the replay brings the
    known events again and then `[DONE]`, which must reach the decoder."""
    resume, framer = StreamResume(), SSEDecoder()
    resume.responded("resp_x")
    passed(resume, framer, frame(1, "one") + frame(2, "two"))
    resume.reconnecting()
    framer = SSEDecoder()
    body = frame(1, "one") + frame(2, "two") + b"data: [DONE]\n\n"
    assert passed(resume, framer, body) == ["[DONE]"]


def test_the_resume_request_names_the_stream_and_the_last_event() -> None:
    resume = StreamResume()
    resume.responded("resp_0123")
    passed(resume, SSEDecoder(), b"id: resp_0123:41\r\ndata: {}\r\n\r\n")
    assert resume.resume_url("http://127.0.0.1:8000/v1/stream") == (
        "http://127.0.0.1:8000/v1/streams/resp_0123"
    )
    assert resume.last_event_id() == "resp_0123:41"


def test_a_base_url_that_is_not_a_modelstream_server_gets_a_404_provider_error(
    server: LiveServer, mode: str
) -> None:
    outcome = drive(mode, server.url + "/no/such/prefix")

    assert isinstance(outcome.error, ProviderError)
    assert (outcome.error.status, outcome.error.error_type) == (404, "NotFoundError")
