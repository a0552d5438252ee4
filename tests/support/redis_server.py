"""Shared fixtures of the tests that need a real `redis-server` (loaded for every folder by
tests/conftest.py): one session server (`redis_url`) that keeps nothing on disk, keys of its own
per test (`prefix`), `RedisProcess` for a test that kills a Redis and starts it again with its
data, and `ReplyDroppingProxy`, which loses one of Redis's replies on the way back.

Without the binary these tests are skipped, except under CI, where they fail.
"""

from __future__ import annotations

import asyncio
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


class ReplyDroppingProxy:
    """A TCP relay to Redis on 127.0.0.1 that, once, lets a command through whose bytes hold
    `marker` and then cuts the connection instead of passing Redis's reply back."""

    def __init__(self, redis_url: str, marker: bytes) -> None:
        parts = redis_url.removeprefix("redis://").split("/")[0].split(":")
        self.target = (parts[0], int(parts[1]))
        self.marker = marker
        self.dropped = 0
        self._armed = True
        self._server: asyncio.Server | None = None

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"redis://127.0.0.1:{port}/0"

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        drop_reply = asyncio.Event()

        async def to_redis() -> None:
            while chunk := await reader.read(65536):
                if self._armed and self.marker in chunk:
                    self._armed = False
                    drop_reply.set()
                up_writer.write(chunk)
                await up_writer.drain()

        async def to_client() -> None:
            while chunk := await up_reader.read(65536):
                if drop_reply.is_set():  # Redis did it; the client never hears so
                    self.dropped += 1
                    return
                writer.write(chunk)
                await writer.drain()

        tasks = [asyncio.create_task(to_redis()), asyncio.create_task(to_client())]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        writer.close()
        up_writer.close()
