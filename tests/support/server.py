"""What the server tests share (the `serve` fixture is loaded for every folder by
tests/conftest.py): a real uvicorn server on 127.0.0.1 (an ephemeral port, in a thread) in
front of the loopback emulator, an SSE reader built on `modelstream.SSEDecoder`, and the steps
of a stream cut and resumed with `Last-Event-ID`.

`serve(**overrides)` starts a server whose four models are the emulator's four streaming
protocols, keyed by `UPSTREAM_KEY_ENV`; each test gets its own server and emulator.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
import pytest

from modelstream import SSEDecoder
from modelstream.jsonwire import loads_event
from modelstream.server import BackgroundServer, settings_from_mapping
from modelstream.server.stores import StreamStore
from modelstream.serving import create_app
from modelstream.testing import Emulator, Reply, Turn
from modelstream.types import Event, Message

UPSTREAM_KEY = "sk-upstream-7b3f9e2a41d8c6"
UPSTREAM_KEY_ENV = "MODELSTREAM_TEST_UPSTREAM_KEY"
CLIENT_KEY = "msk-client-5c1e8d0f9a2b74"
CLIENT_KEY_ENV = "MODELSTREAM_TEST_CLIENT_KEY"
AUTH = {"authorization": f"Bearer {CLIENT_KEY}"}

# server model id -> (upstream model, client type)
SERVED = {
    "chat": ("deepseek-chat", "openai-chat"),
    "responses": ("gpt-5-mini", "openai-responses"),
    "anthropic": ("claude-sonnet-4-5", "anthropic-messages"),
    "gemini": ("gemini-2.5-flash", "gemini-generate-content"),
}


def user(text: str) -> Message:
    return {"role": "user", "content_items": [{"type": "text.done", "text": text}]}


def stream_body(model: str = "anthropic", text: str = "hello", **config: Any) -> dict[str, Any]:
    return {"model": model, "messages": [user(text)], "config": config}


def config_for(emu: Emulator, **overrides: Any) -> dict[str, Any]:
    """A server config whose models are the emulator's four streaming protocols."""
    config: dict[str, Any] = {
        "models": [
            {
                "server_model_id": server_id,
                "model": model,
                "client_type": client_type,
                "base_url": emu.base_url(client_type),
                "api_key": "$" + UPSTREAM_KEY_ENV,
                "max_attempts": 1,
            }
            for server_id, (model, client_type) in SERVED.items()
        ],
        "keys": ["${" + CLIENT_KEY_ENV + "}"],
        "keepalive_seconds": 5,
        "resume_grace_seconds": 5,
        "retain_seconds": 60,
    }
    config.update(overrides)
    return config


def wire_turn(wire: str, model: str, key: str) -> tuple[str, dict[str, str], dict[str, Any]]:
    """One streaming turn of the served `model` in an inbound wire (`stream`, or a provider's
    client type): its route, the headers that carry `key`, and its body."""
    bearer = {"authorization": f"Bearer {key}"}
    hello = [{"role": "user", "content": "hello"}]
    turns: dict[str, tuple[str, dict[str, str], dict[str, Any]]] = {
        "stream": ("/v1/stream", bearer, stream_body(model)),
        "openai-chat": (
            "/v1/chat/completions",
            bearer,
            {"model": model, "stream": True, "max_tokens": 16, "messages": hello},
        ),
        "openai-responses": (
            "/v1/responses",
            bearer,
            {"model": model, "stream": True, "input": "hello"},
        ),
        "anthropic-messages": (
            "/v1/messages",
            {"x-api-key": key, "anthropic-version": "2023-06-01"},
            {"model": model, "max_tokens": 64, "stream": True, "messages": hello},
        ),
        "gemini-generate-content": (
            f"/v1beta/models/{model}:streamGenerateContent?alt=sse",
            {"x-goog-api-key": key},
            {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]},
        ),
    }
    return turns[wire]


PROVIDER_WIRES = (
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "gemini-generate-content",
)


LiveServer = BackgroundServer
Serve = Callable[..., LiveServer]


@pytest.fixture
def serve(emu: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[Serve]:
    """`serve(store=None, **config_overrides)` starts a server; all are stopped after the test."""
    monkeypatch.setenv(UPSTREAM_KEY_ENV, UPSTREAM_KEY)
    monkeypatch.setenv(CLIENT_KEY_ENV, CLIENT_KEY)
    servers: list[LiveServer] = []

    def start(store: StreamStore | None = None, **overrides: Any) -> LiveServer:
        settings = settings_from_mapping(config_for(emu, **overrides), os.environ)
        # log_config=None: uvicorn's records reach the root logger, so caplog sees them
        server = LiveServer(create_app(settings, store=store), log_level="debug", log_config=None)
        servers.append(server.start())
        return server

    yield start
    for server in servers:
        server.stop()


@dataclass
class SSEStream:
    """What a client read from one SSE response."""

    response_id: str | None
    ids: list[str | None] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    comments: int = 0
    raw: bytes = b""

    @property
    def events(self) -> list[Event]:
        return [loads_event(d) for d in self.data if d != "[DONE]" and '"error"' not in d[:10]]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [orjson.loads(d)["error"] for d in self.data if d.startswith('{"error"')]

    @property
    def done(self) -> bool:
        return bool(self.data) and self.data[-1] == "[DONE]"

    @property
    def seqs(self) -> list[int]:
        return [int(i.rsplit(":", 1)[1]) for i in self.ids if i is not None]


def read_sse(response: httpx.Response, *, stop_after_bytes: int | None = None) -> SSEStream:
    """Read an SSE response with `SSEDecoder` (up to `stop_after_bytes` raw bytes, if given:
    a frame cut there is dropped, as a client that disconnects would drop it)."""
    decoder = SSEDecoder()
    out = SSEStream(response.headers.get("x-response-id"))
    # a response already read (httpx.get) is parsed from its content
    chunks = iter([response.content]) if response.is_stream_consumed else response.iter_raw()
    for chunk in chunks:
        if stop_after_bytes is not None:
            chunk = chunk[: stop_after_bytes - len(out.raw)]
        out.raw += chunk
        for frame in decoder.feed(chunk):
            out.ids.append(frame.id if frame.data != "[DONE]" else None)
            out.data.append(frame.data)
        if stop_after_bytes is not None and len(out.raw) >= stop_after_bytes:
            break
    out.comments = decoder.comments
    return out


def post_stream(
    http: httpx.Client, body: dict[str, Any], headers: dict[str, str] | None = None
) -> SSEStream:
    with http.stream("POST", "/v1/stream", json=body, headers=headers or AUTH) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return read_sse(response)


# --- a stream cut and resumed (SPEC §6) ---------------------------------------------------------

STORY = Turn.text("Once upon a time, a stream was cut and resumed without losing a word. " * 4)


def paced_story() -> Reply:
    return Reply.turn(STORY, fragment_size=7, delay=0.002)


def without_clock(stream: SSEStream) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "created_at"} for e in stream.events]


def resume(
    http: httpx.Client, response_id: str, last_id: str | None, stop_after_bytes: int | None = None
) -> SSEStream:
    headers = {**AUTH, **({"last-event-id": last_id} if last_id else {})}
    with http.stream("GET", f"/v1/streams/{response_id}", headers=headers) as response:
        assert response.status_code == 200, response.read()
        return read_sse(response, stop_after_bytes=stop_after_bytes)


def last_event_id(pieces: list[SSEStream]) -> str | None:
    """The id of the last complete event received over all connections: what a client resumes
    from (None before any: the resume starts at the beginning)."""
    ids = [i for piece in pieces for i in piece.ids if i]
    return ids[-1] if ids else None


def first_piece(http: httpx.Client, stop_after_bytes: int | None) -> SSEStream:
    with http.stream("POST", "/v1/stream", json=stream_body(), headers=AUTH) as response:
        assert response.status_code == 200
        return read_sse(response, stop_after_bytes=stop_after_bytes)
