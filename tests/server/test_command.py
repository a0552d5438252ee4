"""`modelstream serve` as a process: it loads the config, says where it listens and whether it
is open, serves, stops gracefully on Ctrl-C or SIGTERM with status 0, and refuses a bad config
with one line and status 2."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from modelstream.serving.command import add_command
from modelstream.testing import Emulator, Reply, Turn
from support.server import (
    CLIENT_KEY,
    CLIENT_KEY_ENV,
    UPSTREAM_KEY,
    UPSTREAM_KEY_ENV,
    post_stream,
    stream_body,
)
from support.server_process import ServeProcess


def test_serve_streams_the_configured_model_and_stops_gracefully_on_ctrl_c(
    running: tuple[ServeProcess, str], emu: Emulator
) -> None:
    server, url = running
    emu.queue(Reply.turn(Turn.text("served by a process")))
    with httpx.Client(base_url=url) as http:
        assert http.get("/healthz").json()["status"] == "ok"
        stream = post_stream(http, stream_body("claude"))

    assert stream.done and stream.events[-1]["event_type"] == "stop"
    assert server.stop() == 0
    output = "".join(server.output)
    assert f"clients must send a bearer key ({CLIENT_KEY_ENV})" in output
    assert "stream resp_" in output and "outcome=stop" in output
    assert UPSTREAM_KEY not in output and CLIENT_KEY not in output


def test_a_server_without_keys_announces_that_it_is_open_and_stops_on_sigterm(
    tmp_path: Path, emu: Emulator
) -> None:
    path = tmp_path / "open.toml"
    path.write_text(
        '[[models]]\nserver_model_id = "m"\nmodel = "claude-sonnet-4-5"\n'
        f'base_url = "{emu.base_url("anthropic-messages")}"\napi_key = "${UPSTREAM_KEY_ENV}"\n'
    )
    server = ServeProcess("--config", str(path), "--port", "0")
    url = server.wait_for(r"listening on (http://\S+)").group(1)
    server.wait_for("this server is OPEN")
    with httpx.Client(base_url=url) as http:
        assert http.get("/v1/models").status_code == 200  # no key needed

    assert server.stop(signal.SIGTERM) == 0


def test_a_bad_config_is_one_line_on_stderr_and_status_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        '[[models]]\nserver_model_id = "m"\nmodel = "claude-sonnet-4-5"\napi_key = "sk-x"\n'
    )

    done = subprocess.run(
        [sys.executable, "-m", "modelstream.server", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert done.returncode == 2
    assert done.stderr.startswith("modelstream serve: error: ")
    assert "models[0].api_key must name an environment variable" in done.stderr
    assert "Traceback" not in done.stderr and "sk-x" not in done.stderr


def test_a_port_in_use_is_status_2(config_file: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, UPSTREAM_KEY_ENV: UPSTREAM_KEY, CLIENT_KEY_ENV: CLIENT_KEY}
        command = [sys.executable, "-m", "modelstream.server", "--config", str(config_file)]
        done = subprocess.run(
            [*command, "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )

    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


def test_a_bad_catalogue_file_stops_the_server_before_it_listens(
    config_file: Path, tmp_path: Path
) -> None:
    """Every finished stream is costed with the catalogue: a broken MODELSTREAM_MODELS file is
    one line and status 2 at start, not an error on every stream later."""
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[models."x"]\nprovider = "p"\nprotocols = ["openai-chat"]\ninput = ["text"]\n'
        'output = ["text"]\nthinks = false\n[models."x".price]\ncurrency = "USD"\n'
        'input = nan\noutput = 1\nas_of = 2026-11-30\nsource = "https://example.com"\n'
    )
    env = {**os.environ, UPSTREAM_KEY_ENV: UPSTREAM_KEY, CLIENT_KEY_ENV: CLIENT_KEY}
    env["MODELSTREAM_MODELS"] = str(prices)
    done = subprocess.run(
        [sys.executable, "-m", "modelstream.server", "--config", str(config_file), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )

    assert done.returncode == 2
    assert done.stderr.startswith("modelstream serve: error: ")
    assert "prices.toml" in done.stderr and "finite" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_serve_parser_plugs_into_the_modelstream_command() -> None:
    parser = argparse.ArgumentParser(prog="modelstream")
    add_command(parser.add_subparsers(dest="command"))

    args = parser.parse_args(["serve", "--config", "s.toml", "--port", "9000"])

    assert (args.command, args.config, args.host, args.port) == (
        "serve",
        "s.toml",
        "127.0.0.1",
        9000,
    )
    assert callable(args.run)
