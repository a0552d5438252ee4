"""Every turn the server serves is recorded as a "server" trace (docs/traces.md)."""

from __future__ import annotations

import httpx

from modelstream.testing import Reply, Turn
from modelstream.traces import TraceStore
from modelstream.web.keys import key_hash
from support.server import CLIENT_KEY, UPSTREAM_KEY, post_stream, stream_body

CALLER = key_hash(CLIENT_KEY)  # served turns are recorded in the namespace of the caller's key


def test_a_served_turn_is_recorded_under_its_response_id_in_the_callers_namespace(
    serve, emu, tmp_path
):
    path = tmp_path / "served.sqlite3"
    emu.queue(Reply.turn(Turn.text("Paris is sunny.")))
    server = serve(traces=str(path))
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("anthropic", "weather in Paris?"))
    server.stop()  # closes the trace file

    (turn,) = TraceStore(path).get_trace(f"{CALLER}/{stream.response_id}")
    assert turn.source == "server"
    assert turn.model == "anthropic"
    assert turn.status == "final"
    assert turn.items == [{"type": "text.done", "text": "Paris is sunny."}]
    assert turn.messages[0]["content_items"][0]["text"] == "weather in Paris?"
    assert turn.item_timings and turn.item_timings[0]["end_ms"] is not None
    assert UPSTREAM_KEY not in path.read_bytes().decode("utf-8", "replace")


def test_a_served_turn_with_a_trace_id_joins_that_trace(serve, emu, tmp_path):
    path = tmp_path / "served.sqlite3"
    emu.queue(Reply.turn(Turn.text("one")), Reply.turn(Turn.text("two")))
    server = serve(traces=str(path))
    with httpx.Client(base_url=server.url) as http:
        post_stream(http, stream_body("chat", "first", trace_id="agent-run-7"))
        post_stream(http, stream_body("gemini", "second", trace_id="agent-run-7"))
    server.stop()

    turns = TraceStore(path).get_trace(f"{CALLER}/agent-run-7")
    assert [t.model for t in turns] == ["chat", "gemini"]
    assert [t.items[0]["text"] for t in turns] == ["one", "two"]


def test_a_server_configured_without_traces_records_nothing(serve, emu, tmp_path, monkeypatch):
    default = tmp_path / "default.sqlite3"
    monkeypatch.setenv("MODELSTREAM_TRACES", str(default))
    emu.queue(Reply.turn(Turn.text("untraced")))
    server = serve(traces=False)
    with httpx.Client(base_url=server.url) as http:
        post_stream(http, stream_body("responses", "hi", trace_id="t"))
    server.stop()
    assert not default.exists()


def test_a_served_turn_records_the_protocol_its_model_routes_to_and_its_cost(serve, emu, tmp_path):
    """A model table without client_type: the turn still names the protocol the upstream
    spoke (the viewer's "client type"), the provider, and what the turn cost."""
    path = tmp_path / "served.sqlite3"
    claude = {
        "server_model_id": "claude",
        "model": "claude-sonnet-4-5",
        "base_url": emu.base_url("anthropic-messages"),
        "api_key": "$MODELSTREAM_TEST_UPSTREAM_KEY",
        "max_attempts": 1,
    }
    usage = {
        "cached_tokens": 0,
        "prompt_tokens": 1000,
        "thoughts_tokens": None,
        "response_tokens": 100,
    }
    emu.queue(Reply.turn(Turn.text("Routed by name.", usage=usage)))
    server = serve(traces=str(path), models=[claude])
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("claude", "who speaks?"))
    server.stop()

    (turn,) = TraceStore(path).get_trace(f"{CALLER}/{stream.response_id}")
    assert (turn.client_type, turn.provider) == ("anthropic-messages", "anthropic")
    # claude-sonnet-4-5: $3 input and $15 output per million tokens
    assert turn.cost is not None and turn.cost["total"] == "0.0045"


def test_aws_credentials_a_served_model_echoes_are_masked_in_its_trace(
    serve, emu, tmp_path, monkeypatch
):
    """A Bedrock model signed with the environment's AWS credentials (no api_key): what the
    upstream repeats of them reaches the caller but never the server's trace."""
    key_id, secret, token = "AKIAEXAMPLEKEYID0001", "wJalrXUtnFEMIexampleSecretKey0001", "IQo" * 20
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_SESSION_TOKEN", token)
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    # the environment's credentials go only where the environment points them
    monkeypatch.setenv("BEDROCK_BASE_URL", emu.base_url("bedrock-converse-stream"))
    nova = {
        "server_model_id": "nova",
        "model": "us.amazon.nova-lite-v1:0",
        "platform": {"name": "bedrock", "region": "us-east-1"},
        "max_attempts": 1,
    }
    echoed = f"You sent {key_id} with {secret} and {token} ."
    emu.queue(Reply.turn(Turn.text(echoed)))
    path = tmp_path / "served.sqlite3"
    server = serve(traces=str(path), models=[nova])
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("nova", "what did I send?"))
    server.stop()

    seen = "".join(e["content_items"][0].get("text", "") for e in stream.events[:-1])
    assert key_id in seen  # the caller's own answer is not masked
    (turn,) = TraceStore(path).get_trace(f"{CALLER}/{stream.response_id}")
    assert turn.items == [{"type": "text.done", "text": "You sent *** with *** and *** ."}]
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("served"))
    for credential in (key_id, secret, token):
        assert credential.encode() not in stored
