"""`modelstream serve` as a child process (`python -m modelstream.server`) with its output
collected line by line, the config it reads (one model on the emulator, keys from the
environment), and the fixtures `config_file` and `running` (a served process on a free port).
Loaded for every folder by tests/conftest.py."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from modelstream.testing import Emulator
from support.redis_server import RedisProcess
from support.server import CLIENT_KEY, CLIENT_KEY_ENV, UPSTREAM_KEY, UPSTREAM_KEY_ENV

LISTENING = r"listening on (http://127\.0\.0\.1:\d+)"

CONFIG = """
keys = ["${client}"]

[[models]]
server_model_id = "claude"
model = "claude-sonnet-4-5"
base_url = "{base_url}"
api_key = "${upstream}"
"""


class ServeProcess:
    """`python -m modelstream.server ...` with its stderr collected line by line."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, UPSTREAM_KEY_ENV: UPSTREAM_KEY, CLIENT_KEY_ENV: CLIENT_KEY}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "modelstream.server", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            self.lines.put(line)

    def wait_for(self, pattern: str, timeout: float = 20) -> re.Match[str]:
        while True:
            line = self.lines.get(timeout=timeout)
            match = re.search(pattern, line)
            if match:
                return match

    def stop(self, sig: signal.Signals = signal.SIGINT) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(20)


def write_config(folder: Path, emu: Emulator, template: str = CONFIG) -> Path:
    """`template` filled in (the keys' variables, the emulator's URL) as `folder`/server.toml."""
    path = folder / "server.toml"
    text = template.replace("{client}", CLIENT_KEY_ENV).replace("{upstream}", UPSTREAM_KEY_ENV)
    path.write_text(text.replace("{base_url}", emu.base_url("anthropic-messages")))
    return path


@pytest.fixture
def config_file(tmp_path: Path, emu: Emulator) -> Path:
    return write_config(tmp_path, emu)


@pytest.fixture
def running(config_file: Path) -> Iterator[tuple[ServeProcess, str]]:
    server = ServeProcess("--config", str(config_file), "--port", "0")
    url = server.wait_for(LISTENING).group(1)
    yield server, url
    server.stop()


@contextmanager
def serve_processes(config_file: Path, folder: Path, count: int = 2) -> Iterator[list[str]]:
    """The URLs of `count` `modelstream serve --redis` processes reading `config_file`, on a
    redis-server of their own (its data in `folder`); all stopped on leaving."""
    redis = RedisProcess(folder).start()
    servers = [
        ServeProcess("--config", str(config_file), "--port", "0", "--redis", redis.url)
        for _ in range(count)
    ]
    try:
        yield [server.wait_for(LISTENING).group(1) for server in servers]
    finally:
        for server in servers:
            server.stop()
        redis.stop()
