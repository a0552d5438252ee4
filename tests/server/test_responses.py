"""`EventStreamResponse` (server/responses.py) on a real uvicorn over loopback: every chunk in
order, and its body closed however the response ends: run out, the client gone mid-stream, or
the client gone just as the last chunk was written (a race that must not log an error)."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import AsyncGenerator, Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from modelstream.server import BackgroundServer
from modelstream.server.responses import EventStreamResponse


class Bodies:
    """The bodies served, and how each ended."""

    def __init__(self) -> None:
        self.started = 0
        self.closed = 0
        self.ran_out = 0

    async def body(self, chunks: int, pause: float) -> AsyncGenerator[bytes, None]:
        self.started += 1
        try:
            for n in range(chunks):
                yield b"data: %d\n\n" % n
                await asyncio.sleep(pause)
            self.ran_out += 1
        finally:
            self.closed += 1


@pytest.fixture
def served(caplog: pytest.LogCaptureFixture) -> Iterator[tuple[str, Bodies]]:
    bodies = Bodies()

    async def stream(request: Request) -> EventStreamResponse:
        chunks = int(request.query_params.get("chunks", "5"))
        pause = float(request.query_params.get("pause", "0"))
        return EventStreamResponse(bodies.body(chunks, pause), {"x-test": "1"})

    app = Starlette(routes=[Route("/stream", stream, methods=["GET", "POST"])])
    caplog.set_level(logging.WARNING)
    with BackgroundServer(app, log_config=None) as server:
        yield server.url, bodies
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]


def wait_for(condition: object, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_every_chunk_arrives_in_order_and_the_body_is_closed(served: tuple[str, Bodies]) -> None:
    url, bodies = served
    response = httpx.post(f"{url}/stream?chunks=50", content=b"a request body")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-test"] == "1"
    assert response.text == "".join(f"data: {n}\n\n" for n in range(50))
    assert wait_for(lambda: bodies.closed == 1) and bodies.ran_out == 1


def test_a_client_gone_mid_stream_closes_the_body_at_once(served: tuple[str, Bodies]) -> None:
    url, bodies = served
    with (
        httpx.Client() as http,
        http.stream("GET", f"{url}/stream?chunks=1000&pause=0.01") as response,
    ):
        for _ in response.iter_raw():
            break
    gone = time.monotonic()
    assert wait_for(lambda: bodies.closed == 1)
    assert time.monotonic() - gone < 1.0  # not 10 s later, when the body would have run out
    assert bodies.ran_out == 0


def test_clients_gone_as_the_last_chunk_is_written_end_cleanly(
    served: tuple[str, Bodies],
) -> None:
    """Raw sockets that close the moment the final chunk arrives, many times: whichever of the
    disconnect and the end the server sees first, no error is logged and every body closes."""
    url, bodies = served
    host, port = url.removeprefix("http://").split(":")
    for _ in range(40):
        with socket.create_connection((host, int(port))) as conn:
            conn.sendall(b"GET /stream?chunks=3 HTTP/1.1\r\nhost: x\r\n\r\n")
            data = b""
            while not data.endswith(b"0\r\n\r\n"):
                piece = conn.recv(65536)
                if not piece:
                    break
                data += piece
    assert wait_for(lambda: bodies.closed == 40)
    assert bodies.started == 40
