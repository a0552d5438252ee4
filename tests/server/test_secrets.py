"""No key — neither the upstream key from the config's environment variable nor a client's
bearer key, right or wrong — appears in the server's logs, error bodies or stored events."""

from __future__ import annotations

import logging

import httpx
import pytest

from modelstream.testing import Emulator, Reply, Turn
from support.server import (
    AUTH,
    CLIENT_KEY,
    UPSTREAM_KEY,
    UPSTREAM_KEY_ENV,
    Serve,
    post_stream,
    read_sse,
    stream_body,
)

GUESSED_KEY = "msk-guessed-but-wrong-31415"


def streams_and_replays(http: httpx.Client, count: int) -> list[str]:
    """`count` streams, each as sent and as a resume from its start replays it: what a client
    reads of the stored events."""
    seen: list[str] = []
    for _ in range(count):
        stream = post_stream(http, stream_body("anthropic"))
        seen.append(stream.raw.decode())
        replay = http.get(f"/v1/streams/{stream.response_id}", headers=AUTH)
        seen.append(read_sse(replay).raw.decode())
    return seen


def test_no_key_appears_in_logs_error_bodies_or_events(
    serve: Serve, emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echoed = {"type": "error", "error": {"type": "authentication_error", "message": UPSTREAM_KEY}}
    emu.queue(
        Reply.turn(Turn.text("fine")),
        Reply.status(401, body=echoed),  # an upstream that echoes the key it was sent
        Reply.turn(Turn.text("cut " * 200), fragment_size=4, disconnect_after_bytes=2000),
    )
    server = serve()
    seen: list[str] = []
    with httpx.Client(base_url=server.url) as http:
        seen += streams_and_replays(http, 3)
        for headers in ({}, {"authorization": f"Bearer {GUESSED_KEY}"}):
            seen.append(http.post("/v1/stream", json=stream_body(), headers=headers).text)
        seen.append(http.post("/v1/stream", content=b"{", headers=AUTH).text)
        seen.append(http.get("/v1/models", headers=AUTH).text)
        seen.append(http.get("/metrics").text)

    logged = [record.getMessage() + (record.exc_text or "") for record in caplog.records]
    assert any("stream resp_" in line for line in logged)  # the server did log its streams
    assert any("authentication_error" in body for body in seen)  # the echo came back, masked
    for text in seen + logged:
        for key in (UPSTREAM_KEY, CLIENT_KEY, GUESSED_KEY):
            assert key not in text
    assert all(UPSTREAM_KEY in " ".join(r.headers.values()) for r in emu.requests)


def test_a_short_upstream_key_is_never_written_by_the_server_itself(
    serve: Serve, emu: Emulator, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Shorter than the masking length, so nothing would mask it: nothing may write it at all.
    short = "Zq7xW"
    monkeypatch.setenv(UPSTREAM_KEY_ENV, short)
    caplog.set_level(logging.DEBUG)
    emu.queue(Reply.turn(Turn.text("fine")), Reply.status(401), Reply.status(503))
    server = serve()
    seen: list[str] = []
    with httpx.Client(base_url=server.url) as http:
        seen += streams_and_replays(http, 3)
        seen.append(http.get("/v1/models", headers=AUTH).text)

    logged = [record.getMessage() + (record.exc_text or "") for record in caplog.records]
    assert any("AuthenticationError" in text for text in seen)  # the refusal was relayed
    assert all(short in " ".join(r.headers.values()) for r in emu.requests)  # and sent
    for text in seen + logged:
        assert short not in text
