"""The upstream key never leaves the server in a stream: an in-stream provider error event, or
model text, that echoes it is relayed and stored with the key masked (docs/server.md), where it
stands as a whole token and is 8 characters or more (issue 10 item 6)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from modelstream.testing import Emulator, Reply, Turn
from support.server import (
    AUTH,
    UPSTREAM_KEY,
    UPSTREAM_KEY_ENV,
    Serve,
    post_stream,
    read_sse,
    stream_body,
)


def anthropic_sse(*events: dict[str, object]) -> bytes:
    return b"".join(
        b"event: %s\ndata: %s\n\n" % (str(e["type"]).encode(), orjson.dumps(e)) for e in events
    )


ERROR_AFTER_TEXT = anthropic_sse(
    {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": f"the key you sent is {UPSTREAM_KEY}."},
    },
    {
        "type": "error",
        "error": {"type": "overloaded_error", "message": f"overloaded (key {UPSTREAM_KEY})"},
    },
)


def test_an_in_stream_error_and_model_text_that_echo_the_key_are_relayed_masked(
    serve: Serve, emu: Emulator, tmp_path: Path
) -> None:
    traces = tmp_path / "traces.sqlite3"
    emu.queue(Reply.body(ERROR_AFTER_TEXT, content_type="text/event-stream"))
    server = serve(traces=str(traces))
    with httpx.Client(base_url=server.url) as http:
        live = post_stream(http, stream_body("anthropic", trace_id="echo"))
        replay = read_sse(http.get(f"/v1/streams/{live.response_id}", headers=AUTH))

    for stream in (live, replay):
        assert UPSTREAM_KEY.encode() not in stream.raw
        texts = [i.get("text") for e in stream.events for i in e["content_items"]]
        assert "the key you sent is ***." in texts
        (error,) = stream.errors
        assert error["type"] == "OverloadedError"  # Anthropic's overloaded_error, by its cause
        assert "overloaded (key ***)" in error["message"]
    server.stop()  # closes the trace file
    with sqlite3.connect(traces) as db:
        rows = db.execute("SELECT body FROM turns").fetchall()
    assert len(rows) == 1 and b"the key you sent is ***." in rows[0][0]
    assert UPSTREAM_KEY.encode() not in traces.read_bytes()


def test_a_key_in_a_tool_call_argument_is_masked_too(serve: Serve, emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.tool_call("save", {"note": f"remember {UPSTREAM_KEY}"})))
    with httpx.Client(base_url=serve().url) as http:
        stream = post_stream(http, stream_body("chat"))

    assert UPSTREAM_KEY.encode() not in stream.raw
    done: list[dict[str, Any]] = [
        dict(i) for e in stream.events for i in e["content_items"] if i["type"].endswith(".done")
    ]
    assert [d["arguments"] for d in done] == [{"note": "remember ***"}]


def test_a_short_upstream_key_is_not_masked_so_model_text_is_relayed_and_stored_unchanged(
    serve: Serve, emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(UPSTREAM_KEY_ENV, "ollama")  # a local server's placeholder key
    hint = "try `ollama pull llama3.2`, then ask again"
    traces = tmp_path / "traces.sqlite3"
    emu.queue(Reply.turn(Turn.text(hint)))
    server = serve(traces=str(traces))
    with httpx.Client(base_url=server.url) as http:
        live = post_stream(http, stream_body("chat", trace_id="short-key"))
        replay = read_sse(http.get(f"/v1/streams/{live.response_id}", headers=AUTH))

    assert "ollama" in " ".join(r.headers.get("authorization", "") for r in emu.requests)
    for stream in (live, replay):
        done = [i for e in stream.events for i in e["content_items"] if i["type"] == "text.done"]
        assert [item["text"] for item in done] == [hint]
    server.stop()  # closes the trace file
    with sqlite3.connect(traces) as db:
        (body,) = db.execute("SELECT body FROM turns").fetchone()
    assert hint.encode() in body and b"***" not in body


def test_a_key_that_is_only_part_of_a_longer_word_is_relayed_as_it_is(
    serve: Serve, emu: Emulator
) -> None:
    glued = f"prefix{UPSTREAM_KEY}"  # not the key: a longer word that contains it
    emu.queue(Reply.turn(Turn.text(f"{glued} and {UPSTREAM_KEY}\nagain")))
    with httpx.Client(base_url=serve().url) as http:
        stream = post_stream(http, stream_body("anthropic"))

    done = [i for e in stream.events for i in e["content_items"] if i["type"] == "text.done"]
    assert [item["text"] for item in done] == [f"{glued} and ***\nagain"]
