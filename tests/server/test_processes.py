"""Several server processes behind one Redis (docs/server-redis.md, "Several server processes"):
two `modelstream serve` processes on their own ports, and two uvicorn workers on one port from
the docs' app factory, each against a redis-server of the test's own. A stream started on one
process is resumed on another, none lost, none twice; a process killed mid-stream is noticed
by a reader on the other.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from modelstream.testing import Emulator, Reply
from support import REPO
from support.redis_server import RedisProcess, free_port
from support.server import (
    AUTH,
    CLIENT_KEY,
    CLIENT_KEY_ENV,
    STORY,
    UPSTREAM_KEY,
    UPSTREAM_KEY_ENV,
    SSEStream,
    first_piece,
    last_event_id,
    read_sse,
    resume,
    stream_body,
)
from support.server_process import ServeProcess, write_config

CONFIG = """
keys = ["${client}"]
resume_grace_seconds = 10

[[models]]
server_model_id = "anthropic"
model = "claude-sonnet-4-5"
base_url = "{base_url}"
api_key = "${upstream}"
"""
DOC = (REPO / "docs" / "server-redis.md").read_text()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    server = RedisProcess(tmp_path).start()
    yield server
    server.stop()


@pytest.fixture
def config_file(tmp_path: Path, emu: Emulator) -> Path:
    return write_config(tmp_path, emu, CONFIG)


@pytest.fixture
def two_servers(
    config_file: Path, own_redis: RedisProcess
) -> Iterator[list[tuple[ServeProcess, str]]]:
    """Two `modelstream serve` processes on free ports, both on `own_redis`, and their URLs."""
    servers = [
        ServeProcess("--config", str(config_file), "--port", "0", "--redis", own_redis.url)
        for _ in range(2)
    ]
    urls = []
    for server in servers:
        urls.append(server.wait_for(r"listening on (http://127\.0\.0\.1:\d+)").group(1))
        server.wait_for(r"streams are kept in Redis")
    yield list(zip(servers, urls, strict=True))
    for server in servers:
        server.stop()


def joined(pieces: list[SSEStream]) -> list[str]:
    return [d for piece in pieces for d in piece.data if d != "[DONE]"]


def test_a_stream_started_on_one_process_is_resumed_on_the_other(
    two_servers: list[tuple[ServeProcess, str]], emu: Emulator
) -> None:
    (_, url_a), (_, url_b) = two_servers
    emu.queue(Reply.turn(STORY, fragment_size=4, delay=0.01))
    with httpx.Client(base_url=url_a) as http_a, httpx.Client(base_url=url_b) as http_b:
        first = first_piece(http_a, 300)  # A's client drops...
        assert first.response_id is not None and first.seqs
        rest = resume(http_b, first.response_id, last_event_id([first]))  # ...and B serves
        replay_on_a = resume(http_a, first.response_id, None)

    assert rest.done and not rest.errors
    assert rest.events[-1]["event_type"] == "stop"
    seqs = first.seqs + rest.seqs
    assert seqs == list(range(1, len(seqs) + 1))  # none lost, none twice
    assert joined([first, rest]) == joined([replay_on_a])  # the bytes B served, A has too
    (upstream,) = emu.wait_for_requests(1, finished=True)
    assert not upstream.client_closed_early  # B's reader kept A's producer going


def test_a_process_killed_mid_stream_is_noticed_by_a_reader_on_the_other(
    two_servers: list[tuple[ServeProcess, str]], emu: Emulator
) -> None:
    """A's process dies (SIGKILL) while its stream runs: a resume on B gets what A stored, then
    a `ProducerLostError` line and [DONE] once A's lease lapsed (5 s, then 2.5 s to confirm),
    instead of keep-alives until the stream's keys expire."""
    (a, url_a), (_, url_b) = two_servers
    emu.queue(Reply.turn(STORY, fragment_size=2, delay=0.05))  # ~15 s of stream
    with httpx.Client(base_url=url_a) as http_a, httpx.Client(base_url=url_b, timeout=30) as http_b:
        first = first_piece(http_a, 1000)
        assert first.response_id is not None and first.seqs
        a.process.send_signal(signal.SIGKILL)
        a.process.wait(10)
        killed = time.monotonic()
        rest = resume(http_b, first.response_id, last_event_id([first]))
        took = time.monotonic() - killed

    assert rest.done
    (error,) = rest.errors
    assert error["type"] == "ProducerLostError" and error["partial_status"] == "incomplete"
    seqs = first.seqs + rest.seqs
    assert seqs == list(range(1, len(seqs) + 1))
    assert took < 15


def factory_example() -> str:
    (block,) = [
        block
        for block in re.findall(r"```python\n(.*?)```", DOC, flags=re.S)
        if block.startswith("# serve_workers.py")
    ]
    return block


# The docs' factory, with each response naming the worker process that served it
TAGGED = """
import os

import serve_workers


def app():
    inner, pid = serve_workers.app(), str(os.getpid()).encode()

    async def tagged(scope, receive, send):
        async def send_tagged(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], (b"x-worker", pid)]}
            await send(message)

        await inner(scope, receive, send_tagged)

    return tagged
"""


def worker_piece(url: str, response_id: str | None, after: str | None) -> tuple[str, SSEStream]:
    """A new stream's first ~600 bytes (no `response_id`), or a resume to its end, on a new
    connection; and the worker that served it."""
    with httpx.Client(base_url=url, timeout=30) as http:
        if response_id is None:
            request = http.stream("POST", "/v1/stream", json=stream_body(), headers=AUTH)
        else:
            headers = {**AUTH, **({"last-event-id": after} if after else {})}
            request = http.stream("GET", f"/v1/streams/{response_id}", headers=headers)
        with request as response:
            assert response.status_code == 200, response.read()
            piece = read_sse(response, stop_after_bytes=600 if response_id is None else None)
            return response.headers["x-worker"], piece


def test_uvicorn_workers_from_the_docs_factory_serve_any_resume(
    tmp_path: Path, config_file: Path, own_redis: RedisProcess, emu: Emulator
) -> None:
    """Two workers on one port, as the docs run them: streams started on one worker are resumed
    on the other (with a store in each worker's memory, those would be 404s)."""
    (tmp_path / "serve_workers.py").write_text(factory_example())
    (tmp_path / "tagged_workers.py").write_text(TAGGED)
    port = free_port()
    env = {
        **os.environ,
        "MODELSTREAM_CONFIG": str(config_file),
        "REDIS_URL": own_redis.url,
        UPSTREAM_KEY_ENV: UPSTREAM_KEY,
        CLIENT_KEY_ENV: CLIENT_KEY,
        "PYTHONPATH": str(tmp_path),
    }
    command = ["tagged_workers:app", "--factory", "--workers", "2", "--port", str(port)]
    workers = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", *command, "--log-level", "warning"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    crossed: list[tuple[SSEStream, SSEStream]] = []
    try:
        wait_until_up(url, workers)
        with ThreadPoolExecutor(12) as pool:
            for _ in range(10):  # rounds of concurrent connections, until some cross workers
                for _ in range(12):
                    emu.queue(Reply.turn(STORY, fragment_size=16, delay=0.005))
                firsts = list(pool.map(lambda _: worker_piece(url, None, None), range(12)))
                rests = list(
                    pool.map(
                        lambda first: worker_piece(
                            url, first[1].response_id, last_event_id([first[1]])
                        ),
                        firsts,
                    )
                )
                for (started_on, first), (resumed_on, rest) in zip(firsts, rests, strict=True):
                    assert rest.done and not rest.errors
                    seqs = first.seqs + rest.seqs
                    assert seqs == list(range(1, len(seqs) + 1))
                    if started_on != resumed_on:
                        crossed.append((first, rest))
                if len(crossed) >= 3:
                    break
    finally:
        workers.send_signal(signal.SIGINT)
        try:
            workers.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            workers.kill()
            workers.communicate()

    assert len(crossed) >= 3, "the kernel never handed a resume to the other worker"
    for _, rest in crossed:
        assert rest.events[-1]["event_type"] == "stop"


def wait_until_up(url: str, process: subprocess.Popen[str], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1]
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    pytest.fail("the uvicorn workers did not answer /healthz")
