"""Shared fixtures of the tests that need a real `redis-server`, loaded with `pytest_plugins`:
one session server (`redis_url`) that keeps nothing on disk, keys of its own per test
(`prefix`), and `RedisProcess` for a test that kills a Redis and starts it again with its data.

Without the binary these tests are skipped, except under CI, where they fail.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from support import missing

NO_DISK = ("--save", "", "--appendonly", "no")
# every write reaches the disk before Redis answers: a killed Redis comes back with all of it
EVERY_WRITE_ON_DISK = ("--save", "", "--appendonly", "yes", "--appendfsync", "always")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def redis_binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        missing("redis-server is not installed (Debian: apt-get install -y redis-server)")
    return binary


class RedisProcess:
    """A redis-server on 127.0.0.1 that can be killed and started again on the same port, with
    the data it kept in `folder`."""

    def __init__(self, folder: Path, options: tuple[str, ...] = NO_DISK) -> None:
        self.binary = redis_binary()
        self.folder = folder
        self.options = options
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisProcess:
        """Start on a free port (the first time) or on the same port again."""
        for _ in range(5):  # another process may take a free port before redis-server binds it
            port = self.port or free_port()
            if self._start_on(port):
                self.port = port
                return self
            if self.port:
                time.sleep(0.2)  # the port is still held by the killed one: wait and retry
        pytest.fail("redis-server did not start on 127.0.0.1")

    def kill(self) -> None:
        """SIGKILL: a crash, with no chance to save anything it did not save already."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def _start_on(self, port: int) -> bool:
        process = subprocess.Popen(
            [
                *(self.binary, "--bind", "127.0.0.1", "--port", str(port)),
                *self.options,
                *("--dir", str(self.folder)),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + 10
        while process.poll() is None and time.monotonic() < deadline:
            try:
                with redis.Redis.from_url(url, socket_timeout=1) as client:
                    client.ping()
                self.process = process
                return True
            except redis.exceptions.BusyLoadingError:
                time.sleep(0.02)  # still reading its data back
            except redis.ConnectionError:
                time.sleep(0.02)
        process.kill()
        process.wait()
        return False


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of this session's redis-server."""
    server = RedisProcess(tmp_path_factory.mktemp("redis")).start()
    yield server.url
    server.stop()


@pytest.fixture
def prefix() -> str:
    """Keys of its own for each test: stores of one test share them, other tests' don't."""
    return f"mstest:{uuid.uuid4().hex[:12]}:"
