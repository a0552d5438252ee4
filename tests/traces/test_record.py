"""Recording turns: the client records every turn whose config has a `trace_id` when its
stream ends, final or partial, with no secret in it; the server-side recorder works on any
event stream."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from modelstream import (
    AsyncClient,
    Client,
    Conversation,
    IncompleteStreamError,
    ProviderError,
    StreamDecoder,
)
from modelstream.testing import Emulator, Reply, Text, Thinking, ToolCall, Turn, render
from modelstream.traces import TraceStore, TraceTurn, TurnRecorder, redact_config, resolve_sinks
from modelstream.traces.record import looks_like_credential
from support.traces import API_KEY, usage, user

RICH = Turn(
    items=[
        Thinking("Weather, so call the tool.", signature="c2ln"),
        Text("Checking."),
        ToolCall("get_weather", {"city": "Lisbon"}, id="call_1"),
    ],
    usage=usage(cached=100, prompt=20, thoughts=7, response=12),
)


def test_a_traced_turn_is_recorded_with_request_items_usage_finish_and_timings(
    emu: Emulator, store: TraceStore
) -> None:
    emu.queue(Reply.turn(RICH, fragment_size=4, delay=0.002))
    request = [user("Weather in Lisbon?")]
    with (
        Client(
            "claude-sonnet-4-5",
            api_key=API_KEY,
            base_url=emu.base_url("anthropic-messages"),
            traces=store,
        ) as client,
        client.stream(request, {"trace_id": "t-1", "max_tokens": 300}) as stream,
    ):
        events = list(stream)
    result = stream.result
    assert result is not None and result.status == "final"

    (turn,) = store.get_trace("t-1")
    assert turn.turn == 1 and turn.source == "client"
    assert (turn.model, turn.client_type, turn.provider) == (
        "claude-sonnet-4-5",
        "anthropic-messages",
        "anthropic",
    )
    assert turn.config == {"max_tokens": 300}  # the trace id is the key, not config
    assert turn.messages == request
    assert turn.items == result.message["content_items"]
    assert [item["type"] for item in turn.items] == [
        "thinking.done",
        "text.done",
        "tool_call.done",
    ]
    assert turn.usage == result.message["usage_metadata"]
    assert turn.usage is not None and turn.usage["cached_tokens"] == 100
    assert (turn.finish_reason, turn.raw_finish_reason) == ("tool_call", "tool_use")
    assert (turn.status, turn.reason) == ("final", None)
    assert turn.response_id == result.metadata.response_id is not None
    assert turn.timings == result.metadata.timings
    assert 0 < turn.timings["ttfb_ms"] <= turn.timings["ttfe_ms"] <= turn.timings["total_ms"]
    assert abs(turn.created_at - events[0]["created_at"]) < turn.timings["total_ms"] + 1000


def test_the_timeline_has_one_span_per_item_from_its_first_delta_to_its_done(
    emu: Emulator, store: TraceStore
) -> None:
    emu.queue(Reply.turn(RICH, fragment_size=3, delay=0.003))
    with Client(
        "gpt-5-mini", api_key=API_KEY, base_url=emu.base_url("openai-responses"), traces=store
    ) as client:
        client.complete([user("hi")], {"trace_id": "timeline"})

    (turn,) = store.get_trace("timeline")
    spans = turn.item_timings
    assert [span["type"] for span in spans] == ["thinking", "text", "tool_call"]
    for span in spans:
        assert span["end_ms"] is not None and span["start_ms"] < span["end_ms"]
    for earlier, later in itertools.pairwise(spans):
        assert earlier["end_ms"] <= later["start_ms"]  # groups never interleave
    assert spans[0]["start_ms"] >= turn.timings["ttfe_ms"] - 2  # ms-resolution event stamps
    assert spans[-1]["end_ms"] <= turn.timings["total_ms"] + 2


def test_the_async_client_records_its_turns_too(emu: Emulator, store: TraceStore) -> None:
    emu.queue(Reply.turn(Turn.text("Bonjour !")))

    async def main() -> None:
        async with AsyncClient(
            "deepseek-chat", api_key=API_KEY, base_url=emu.base_url("openai-chat"), traces=store
        ) as client:
            await client.complete([user("Say hello in French.")], {"trace_id": "async-1"})

    asyncio.run(main())
    (turn,) = store.get_trace("async-1")
    assert turn.items == [{"type": "text.done", "text": "Bonjour !"}]
    assert (turn.client_type, turn.provider, turn.status) == ("openai-chat", "deepseek", "final")


def test_a_turn_without_a_trace_id_is_not_recorded(emu: Emulator, store: TraceStore) -> None:
    emu.queue(Reply.turn(Turn.text("untraced")))
    with Client(
        "deepseek-chat", api_key=API_KEY, base_url=emu.base_url("openai-chat"), traces=store
    ) as client:
        client.complete([user("hi")], {"max_tokens": 10})
    assert store.list_traces() == []
    assert not store.path.exists()  # the file is created by the first traced turn


def test_each_turn_of_a_tool_loop_is_recorded_with_only_its_new_messages_stored(
    emu: Emulator, store: TraceStore
) -> None:
    emu.queue(
        Reply.turn(Turn.tool_call("get_weather", {"city": "Lisbon"}, id="call_9")),
        Reply.turn(Turn.text("21 °C and sunny.")),
    )
    with Client(
        "gemini-2.5-flash",
        api_key=API_KEY,
        base_url=emu.base_url("gemini-generate-content"),
        traces=store,
    ) as client:
        chat = Conversation(client, {"trace_id": "loop"})
        chat.run("Weather in Lisbon?", {"get_weather": lambda city: {"temperature_c": 21}})

    _first, second = store.get_trace("loop")
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user"]
    assert second.messages == chat.history[:3]
    records = store.trace_records("loop")
    assert [r["context_turn"] for r in records] == [None, 1]
    assert [len(r["messages"]) for r in records] == [1, 2]  # the history is not repeated


def test_a_cancelled_stream_is_recorded_as_a_partial_with_its_open_item(
    emu: Emulator, store: TraceStore
) -> None:
    emu.queue(Reply.turn(Turn.text("a long answer " * 40), fragment_size=5, delay=0.005))
    with Client(
        "claude-sonnet-4-5",
        api_key=API_KEY,
        base_url=emu.base_url("anthropic-messages"),
        traces=store,
    ) as client:
        for event in client.stream([user("hi")], {"trace_id": "cancelled"}):
            if event["event_type"] == "delta":
                break

    (turn,) = store.get_trace("cancelled")
    assert (turn.status, turn.reason) == ("cancelled", "cancelled by the caller")
    assert turn.items == []
    assert turn.open_item is not None and turn.open_item["type"] == "text.delta"
    assert turn.item_timings == [
        {"type": "text", "start_ms": turn.item_timings[0]["start_ms"], "end_ms": None}
    ]


def test_a_broken_stream_is_recorded_incomplete_with_the_reason(
    emu: Emulator, store: TraceStore
) -> None:
    emu.queue(Reply.turn(Turn.text("never finished " * 30), disconnect_after_bytes=600))
    with (
        Client(
            "deepseek-chat", api_key=API_KEY, base_url=emu.base_url("openai-chat"), traces=store
        ) as client,
        pytest.raises(IncompleteStreamError),
    ):
        client.complete([user("hi")], {"trace_id": "broken"})

    (turn,) = store.get_trace("broken")
    assert turn.status == "incomplete"
    assert turn.reason is not None and "finish reason" in turn.reason
    assert turn.finish_reason is None


def test_a_refused_request_is_recorded_as_failed(emu: Emulator, store: TraceStore) -> None:
    emu.queue(Reply.status(400))
    with (
        Client(
            "gpt-5-mini", api_key=API_KEY, base_url=emu.base_url("openai-responses"), traces=store
        ) as client,
        pytest.raises(ProviderError),
    ):
        client.complete([user("hi")], {"trace_id": "refused"})

    (turn,) = store.get_trace("refused")
    assert turn.status == "failed" and turn.items == [] and turn.open_item is None
    assert turn.reason is not None and "400" in turn.reason


def test_no_credential_reaches_the_trace_file(emu: Emulator, tmp_path: Path) -> None:
    """The client's key, credential-looking extra_body entries and a key echoed back by the
    provider appear nowhere in the file, while the harmless config stays."""
    path = tmp_path / "traces.sqlite3"
    echoed = f'{{"error": {{"type": "invalid_request_error", "message": "bad key {API_KEY}"}}}}'
    emu.queue(Reply.turn(Turn.text("ok")), Reply.status(401, body=echoed.encode()))
    config: Any = {
        "trace_id": "secrets",
        "max_tokens": 50,
        "extra_body": {
            "api_key": "sk-extra-body-secret-1",
            "Authorization": "Bearer sk-extra-body-secret-2",
            "metadata": {"user_id": "u-7", "session_token": "sk-extra-body-secret-3"},
            "clientSecret": "sk-extra-body-secret-4",
            "header": "Bearer sk-extra-body-secret-5",
            "max_completion_tokens": 40,
        },
    }
    with Client(
        "deepseek-chat", api_key=API_KEY, base_url=emu.base_url("openai-chat"), traces=path
    ) as client:
        client.complete([user("hi")], config)
        with pytest.raises(ProviderError):
            client.complete([user("hi again")], config)

    ok, refused = TraceStore(path).get_trace("secrets")
    assert ok.config == {
        "max_tokens": 50,
        "extra_body": {"metadata": {"user_id": "u-7"}, "max_completion_tokens": 40},
    }
    assert refused.status == "failed"
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for secret in (API_KEY, *(f"sk-extra-body-secret-{n}" for n in range(1, 6))):
        assert secret.encode() not in raw


@pytest.mark.parametrize(
    ("key", "credential"),
    [
        ("api_key", True),
        ("apiKey", True),
        ("x-api-key", True),
        ("key", True),
        ("Authorization", True),
        ("access_token", True),
        ("refreshToken", True),
        ("client_secret", True),
        ("password", True),
        ("max_tokens", False),
        ("max_completion_tokens", False),
        ("tokenizer", False),
        ("cache_key", False),
        ("user", False),
    ],
)
def test_credential_looking_keys_are_told_apart_from_token_counts(
    key: str, credential: bool
) -> None:
    assert looks_like_credential(key) is credential


def test_the_recorded_config_drops_the_trace_id_and_nested_credentials() -> None:
    config: Any = {
        "trace_id": "t",
        "temperature": 0.2,
        "extra_body": {"list": [{"token": "x", "n": 1}], "auth": {"user": "a"}},
    }
    assert redact_config(config) == {"temperature": 0.2, "extra_body": {"list": [{"n": 1}]}}


def test_traces_false_records_nothing_even_with_a_trace_id(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELSTREAM_TRACES", str(tmp_path / "env.sqlite3"))
    emu.queue(Reply.turn(Turn.text("ok")))
    with Client(
        "deepseek-chat", api_key=API_KEY, base_url=emu.base_url("openai-chat"), traces=False
    ) as client:
        client.complete([user("hi")], {"trace_id": "t"})
    assert list(tmp_path.iterdir()) == []


def test_without_a_traces_argument_the_file_named_by_the_environment_is_used(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "from-env.sqlite3"
    monkeypatch.setenv("MODELSTREAM_TRACES", str(path))
    emu.queue(Reply.turn(Turn.text("ok")))
    with Client("deepseek-chat", api_key=API_KEY, base_url=emu.base_url("openai-chat")) as client:
        client.complete([user("hi")], {"trace_id": "env"})
    assert [t.trace_id for t in TraceStore(path).list_traces()] == ["env"]


def test_without_any_setting_traces_go_to_the_default_file_under_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MODELSTREAM_TRACES", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    (sink,) = resolve_sinks(None, os.environ)
    assert isinstance(sink, TraceStore)
    assert sink.path == tmp_path / "modelstream" / "traces.sqlite3"
    assert resolve_sinks(None, {"MODELSTREAM_TRACES": "off"}) == []


def test_a_failing_sink_is_logged_and_never_fails_the_stream(
    emu: Emulator, store: TraceStore, caplog: pytest.LogCaptureFixture
) -> None:
    class BrokenSink:
        def append(self, turn: TraceTurn) -> None:
            raise OSError("disk full")

    emu.queue(Reply.turn(Turn.text("still fine")))
    with Client(
        "deepseek-chat",
        api_key=API_KEY,
        base_url=emu.base_url("openai-chat"),
        traces=[BrokenSink(), store],
    ) as client:
        message = client.complete([user("hi")], {"trace_id": "sinks"})
    assert message["content_items"][0]["text"] == "still fine"
    assert [t.trace_id for t in store.list_traces()] == ["sinks"]  # the next sink still got it
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "disk full" in warning.getMessage() and "sinks" in warning.getMessage()


def test_a_server_records_a_turn_from_any_event_stream_with_the_recorder(
    store: TraceStore,
) -> None:
    """What the server does per turn: observe the events it relays, finish with the result,
    append. Here the events come from the sans-IO decoder, with no client at all."""
    body = render("anthropic-messages", RICH, model="claude-sonnet-4-5", fragment_size=5)
    recorder = TurnRecorder(
        trace_id="srv-1",
        source="server",
        model="house-model",
        client_type="anthropic-messages",
        provider="anthropic",
        config={"trace_id": "srv-1", "temperature": 0.1},
        messages=[user("hi")],
        started_at_ms=1_000_000,
    )
    decoder = StreamDecoder("anthropic-messages")
    for at, chunk in enumerate([body[i : i + 50] for i in range(0, len(body), 50)]):
        for event in decoder.feed(chunk, now_ms=1_000_010 + at):
            recorder.observe(event)
    for event in decoder.end(now_ms=1_000_100):
        recorder.observe(event)
    assert decoder.result is not None

    number = store.append(recorder.finish(decoder.result))

    (turn,) = store.get_trace("srv-1")
    assert number == turn.turn == 1
    assert (turn.source, turn.model, turn.config) == ("server", "house-model", {"temperature": 0.1})
    assert turn.created_at == 1_000_000
    assert [span["type"] for span in turn.item_timings] == ["thinking", "text", "tool_call"]
    assert all(10 <= span["start_ms"] <= span["end_ms"] <= 100 for span in turn.item_timings)  # type: ignore[operator]


def test_a_turn_served_for_a_virtual_key_carries_the_keys_name_and_others_none() -> None:
    body = render("openai-chat", Turn.text("Hello, alice."), model="gpt-4o-mini")

    def recorded(**options: Any) -> TraceTurn:
        recorder = TurnRecorder(
            trace_id="key-0123456789abcdef/chat-1",
            source="server",
            model="house-model",
            client_type="openai-chat",
            provider="openai",
            config={},
            messages=[user("hi")],
            secrets=["sk-upstream-key-0123456789"],  # masking keeps the key's name
            **options,
        )
        decoder = StreamDecoder("openai-chat")
        for event in decoder.feed(body, 1) + decoder.end(2):
            recorder.observe(event)
        assert decoder.result is not None
        return recorder.finish(decoder.result)

    assert recorded(key_name="alice").key_name == "alice"
    assert recorded().key_name is None  # a static key, an open server, the library
