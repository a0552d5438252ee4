"""Red-team scenarios against real processes, as a stranger meets them: a `modelstream playground`
process's sign-in cookie (no key in it, not readable by scripts, refused to another site's page,
gone after sign-out), and a `modelstream serve` process whose Bedrock model is signed with the
environment's AWS credentials, which an upstream echoes into its answer: they never reach the
server's trace file. (Nesting, slow clients, fairness and Host names: server/test_limits.py and
server/test_hosts.py; the viewer's offset: pages/test_traces_viewer.py.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from modelstream.testing import Emulator, Reply, Turn
from modelstream.traces import TraceStore
from modelstream.web.keys import key_hash
from support.server import (
    AUTH,
    CLIENT_KEY,
    CLIENT_KEY_ENV,
    UPSTREAM_KEY,
    UPSTREAM_KEY_ENV,
    post_stream,
    stream_body,
)
from support.server_process import ServeProcess, write_config


@pytest.fixture
def playground(tmp_path: Path, emu: Emulator) -> Iterator[str]:
    """`modelstream playground` (a server with a key) on an ephemeral port: its base URL."""
    config = write_config(tmp_path, emu)  # a key, and a "claude" on the emulator
    env = {**os.environ, UPSTREAM_KEY_ENV: UPSTREAM_KEY, CLIENT_KEY_ENV: CLIENT_KEY}
    command = [sys.executable, "-m", "modelstream", "playground", "--config", str(config)]
    process = subprocess.Popen(
        [*command, "--port", "0"], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stderr is not None
        for _ in range(6):
            found = re.search(r"(http://127\.0\.0\.1:\d+)/playground/", process.stderr.readline())
            if found:
                break
        assert found is not None, "the playground did not announce its page"
        yield found.group(1)
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_the_playground_cookie_holds_no_key_and_dies_with_sign_out(
    playground: str, emu: Emulator
) -> None:
    with httpx.Client(base_url=playground, timeout=10) as http:
        foreign = http.post(
            "/playground/login",
            data={"key": CLIENT_KEY},
            headers={"origin": "https://evil.example", "sec-fetch-site": "cross-site"},
        )
        assert foreign.status_code == 403
        assert "set-cookie" not in foreign.headers

        signed_in = http.post("/playground/login", data={"key": CLIENT_KEY})
        assert signed_in.status_code == 303, signed_in.text
        cookie = signed_in.headers["set-cookie"]
        assert CLIENT_KEY not in cookie
        assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()

        emu.queue(Reply.turn(Turn.text("signed in")))
        body = stream_body("claude", "hi")
        with http.stream("POST", "/playground/api/v1/stream", json=body) as answer:
            assert answer.status_code == 200
            assert b"signed in" in answer.read()

        stolen = dict(http.cookies)
        assert http.post("/playground/logout").status_code in (200, 303)
    with httpx.Client(base_url=playground, cookies=stolen, timeout=10) as replayed:
        again = replayed.post("/playground/api/v1/stream", json=body)
        assert again.status_code == 401


def test_aws_credentials_echoed_upstream_stay_out_of_a_served_trace(
    tmp_path: Path, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_id, secret, token = "AKIAREDTEAMKEYID0001", "redTeamSecretAccessKey000000001", "FQo" * 20
    for name, value in (
        ("AWS_ACCESS_KEY_ID", key_id),
        ("AWS_SECRET_ACCESS_KEY", secret),
        ("AWS_SESSION_TOKEN", token),
        ("BEDROCK_BASE_URL", emu.base_url("bedrock-converse-stream")),
    ):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    traces = tmp_path / "traces.sqlite3"
    config = tmp_path / "server.toml"
    config.write_text(
        f'keys = ["${CLIENT_KEY_ENV}"]\ntraces = "{traces}"\n\n[[models]]\n'
        'server_model_id = "nova"\nmodel = "us.amazon.nova-lite-v1:0"\n'
        'platform = { name = "bedrock", region = "us-east-1" }\n'
    )
    emu.queue(Reply.turn(Turn.text(f"I saw {key_id} {secret} {token} ok")))
    server = ServeProcess("--config", str(config), "--port", "0")
    try:
        url = server.wait_for(r"listening on (http://127\.0\.0\.1:\d+)").group(1)
        with httpx.Client(base_url=url, timeout=10) as http:
            stream = post_stream(http, stream_body("nova", "echo my keys"), headers=AUTH)
    finally:
        assert server.stop() == 0

    (turn,) = TraceStore(traces).get_trace(f"{key_hash(CLIENT_KEY)}/{stream.response_id}")
    assert turn.items == [{"type": "text.done", "text": "I saw *** *** *** ok"}]
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("traces.sqlite3*"))
    for credential in (key_id, secret, token):
        assert credential.encode() not in stored
    assert not any(secret in line or token in line for line in server.output)
