"""What `modelstream serve` does with requests built to hurt it (docs/server.md, Limits and
exposure): JSON nested too deep is a 400 that names the limit, never a 500 or a traceback;
connections that send their headers or body too slowly are cut, and no more than
`limits.max_connections` stay open; one key cannot take every stream; a large body is parsed
without stalling the other streams. The tests run a real server process against the
emulator."""

from __future__ import annotations

import itertools
import select
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from modelstream import SSEDecoder
from modelstream.bounded_json import MAX_DEPTH
from modelstream.server import Limits, ServerConfigError, settings_from_mapping
from modelstream.testing import Emulator, Reply, Turn
from support.server import AUTH, read_sse, stream_body, user
from support.server_process import ServeProcess, write_config

SECOND_KEY = "msk-second-3f8a1c6e2d9b57"
SECOND_KEY_ENV = "MODELSTREAM_TEST_SECOND_KEY"
SECOND = {"authorization": f"Bearer {SECOND_KEY}"}

CONFIG = """
keys = ["${client}", "$MODELSTREAM_TEST_SECOND_KEY"]
resume_grace_seconds = 1

[limits]
{limits}

[[models]]
server_model_id = "claude"
model = "claude-sonnet-4-5"
base_url = "{base_url}"
api_key = "${upstream}"
max_attempts = 1

[[models]]
server_model_id = "nowhere"  # an upstream that refuses connections at once
model = "claude-sonnet-4-5"
base_url = "http://127.0.0.1:9"
api_key = "${upstream}"
max_attempts = 1
"""


def start_server(folder: Path, emu: Emulator, **limits: Any) -> tuple[ServeProcess, str]:
    """`modelstream serve` with these `[limits]`, and its URL."""
    lines = "\n".join(f"{name} = {value!r}" for name, value in limits.items())
    path = write_config(folder, emu, CONFIG.replace("{limits}", lines))
    server = ServeProcess("--config", str(path), "--port", "0")
    url = server.wait_for(r"listening on (http://127\.0\.0\.1:\d+)").group(1)
    return server, url


@pytest.fixture(autouse=True)
def second_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The servers here take two keys (`AUTH` and `SECOND`)."""
    monkeypatch.setenv(SECOND_KEY_ENV, SECOND_KEY)


@pytest.fixture
def served(tmp_path: Path, emu: Emulator) -> Iterator[tuple[ServeProcess, str]]:
    server, url = start_server(tmp_path, emu)
    yield server, url
    server.stop()


def output_after_stop(server: ServeProcess) -> str:
    """Everything the server wrote, once it has stopped."""
    assert server.stop() == 0
    server.wait_for("Finished server process")
    return "".join(server.output)


# --- the settings -----------------------------------------------------------------------------


def test_the_connection_and_fairness_limits_are_settings_with_defaults() -> None:
    table = {"server_model_id": "m", "model": "claude-sonnet-4-5", "api_key": "$K"}
    limits = {"header_timeout_seconds": 0.5, "body_timeout_seconds": 2, "max_connections": 10}
    limits |= {"max_header_bytes": 8192, "max_streams_per_key": 3}

    given = settings_from_mapping({"models": [table], "limits": limits}, {"K": "k"}).limits
    default = settings_from_mapping({"models": [table]}, {"K": "k"}).limits

    assert given == Limits(**limits)  # type: ignore[arg-type]
    assert (default.header_timeout_seconds, default.body_timeout_seconds) == (10.0, 60.0)
    assert (default.max_connections, default.max_header_bytes) == (1024, 65536)
    assert default.max_streams_per_key is None  # derived from the keys (docs)
    for wrong in (
        {"max_connections": 1.5},
        {"header_timeout_seconds": 0},
        {"max_streams_per_key": -1},
    ):
        with pytest.raises(ServerConfigError, match=next(iter(wrong))):
            settings_from_mapping({"models": [table], "limits": wrong}, {"K": "k"})


# --- JSON nested too deep --------------------------------------------------------------------


def nested(depth: int) -> str:
    """A JSON schema-like object `depth` objects deep, as text (orjson writes at most 254)."""
    return '{"type": "object", "properties": {"a": ' * (depth // 2) + "{}" + "}}" * (depth // 2)


def deep_stream_body(place: str, depth: int) -> bytes:
    """A POST /v1/stream body whose config.extra_body or tool parameters nest `depth` deep."""
    messages = orjson.dumps([user("hello")]).decode()
    if place == "extra_body":
        config = '{"extra_body": {"metadata": ' + nested(depth) + "}}"
    else:
        config = '{"tools": [{"name": "f", "description": "d", "parameters": ' + nested(depth)
        config += "}]}"
    return f'{{"model": "claude", "messages": {messages}, "config": {config}}}'.encode()


def deep_chat_body(place: str, depth: int) -> bytes:
    """A Chat Completions body whose provider fields or tool parameters nest `depth` deep."""
    messages = '[{"role": "user", "content": "hello"}]'
    if place == "extra_body":
        extra = '"metadata": ' + nested(depth)
    else:
        function = '{"name": "f", "description": "d", "parameters": ' + nested(depth) + "}"
        extra = '"tools": [{"type": "function", "function": ' + function + "}]"
    return f'{{"model": "claude", "messages": {messages}, "stream": true, {extra}}}'.encode()


@pytest.mark.parametrize("place", ["extra_body", "tool_parameters"])
@pytest.mark.parametrize(
    ("path", "body"),
    [("/v1/stream", deep_stream_body), ("/v1/chat/completions", deep_chat_body)],
    ids=["stream", "chat-completions"],
)
def test_json_nested_too_deep_is_a_400_naming_the_limit_without_a_traceback(
    served: tuple[ServeProcess, str], emu: Emulator, path: str, body: Any, place: str
) -> None:
    server, url = served
    headers = {**AUTH, "content-type": "application/json"}
    with httpx.Client(base_url=url) as http:
        answers = [
            http.post(path, content=body(place, depth), headers=headers) for depth in (300, 500)
        ]
        assert http.get("/healthz").status_code == 200

    for answer in answers:
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        # the chat wire names the type its own way
        assert error["type"] in ("InvalidRequestError", "invalid_request_error")
        assert f"more than {MAX_DEPTH} levels deep" in error["message"]
        for internal in ("Error:", "recursion", "Traceback", "depth limit exceeded"):
            assert internal not in error["message"]
    assert emu.requests == []
    output = output_after_stop(server)
    assert "Traceback" not in output and "RecursionError" not in output


# --- slow clients and open connections -------------------------------------------------------

SLACK = 1.5  # seconds a deadline may be late on a busy machine


def connect(url: str) -> socket.socket:
    parsed = httpx.URL(url)
    assert parsed.port is not None
    return socket.create_connection((parsed.host, parsed.port), timeout=5)


def read_until_closed(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """What the server sends within `seconds`, and whether it closed the connection by then."""
    answer = b""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([sock], [], [], left)[0]:
            break
        try:
            chunk = sock.recv(65536)
        except OSError:  # reset: closed as well
            return True, answer
        if not chunk:
            return True, answer
        answer += chunk
    return False, answer


def trickle(sock: socket.socket, data: bytes, every: float, give_up: float) -> tuple[float, bytes]:
    """Send `data` a byte at a time, `every` seconds apart, reading whatever the server
    answers meanwhile: the seconds until the server closed the connection (inf: still open
    after `give_up` seconds), and its answer."""
    started = time.monotonic()
    answer = b""
    for byte in data:
        if time.monotonic() - started > give_up:
            break
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return time.monotonic() - started, answer
        closed, more = read_until_closed(sock, every)
        answer += more
        if closed:
            return time.monotonic() - started, answer
    return float("inf"), answer


def test_a_client_sending_its_headers_a_byte_at_a_time_is_cut_off_at_the_header_deadline(
    tmp_path: Path, emu: Emulator
) -> None:
    server, url = start_server(tmp_path, emu, header_timeout_seconds=1.0)
    head = b"POST /v1/stream HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    try:
        with connect(url) as sock:
            elapsed, answer = trickle(sock, head * 4, every=0.2, give_up=6)
    finally:
        server.stop()

    assert 0.9 <= elapsed <= 1.0 + SLACK
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408 ")


def test_a_connection_that_sends_nothing_is_closed_at_the_header_deadline(
    tmp_path: Path, emu: Emulator
) -> None:
    server, url = start_server(tmp_path, emu, header_timeout_seconds=1.0)
    try:
        with connect(url) as sock:
            started = time.monotonic()
            closed, answer = read_until_closed(sock, 6)
            elapsed = time.monotonic() - started
    finally:
        server.stop()

    assert closed and answer == b""  # nothing was asked: nothing to answer
    assert 0.9 <= elapsed <= 1.0 + SLACK


def test_a_body_sent_a_byte_at_a_time_is_a_408_at_the_body_deadline_and_closes(
    tmp_path: Path, emu: Emulator
) -> None:
    server, url = start_server(tmp_path, emu, body_timeout_seconds=1.0)
    body = orjson.dumps({"model": "claude", "messages": [user("hello " * 40)]})
    head = (
        f"POST /v1/stream HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        f"authorization: {AUTH['authorization']}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    )
    try:
        with connect(url) as sock:
            sock.sendall(head.encode())
            elapsed, answer = trickle(sock, body, every=0.2, give_up=6)
    finally:
        server.stop()

    assert 0.9 <= elapsed <= 1.0 + SLACK
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 408 Request Timeout"
    error = orjson.loads(rest.partition(b"\r\n\r\n")[2])["error"]
    assert error["type"] == "RequestTimeoutError" and error["limit"] == 1.0
    assert "limits.body_timeout_seconds" in error["message"]
    assert emu.requests == []


def test_an_unauthenticated_request_still_sending_its_body_is_closed_at_the_body_deadline(
    tmp_path: Path, emu: Emulator
) -> None:
    server, url = start_server(tmp_path, emu, body_timeout_seconds=1.0)
    head = (
        "POST /v1/stream HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        "content-length: 1000\r\n\r\n"
    )
    try:
        with connect(url) as sock:
            sock.sendall(head.encode())  # no key: answered 401 at once, the body still coming
            elapsed, answer = trickle(sock, b"x" * 1000, every=0.2, give_up=6)
    finally:
        server.stop()

    assert answer.startswith(b"HTTP/1.1 401 ")
    assert 0.9 <= elapsed <= 1.0 + SLACK


def test_headers_larger_than_max_header_bytes_are_a_431_and_close(
    tmp_path: Path, emu: Emulator
) -> None:
    server, url = start_server(tmp_path, emu, max_header_bytes=16384)
    head = "GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n" + "x-filler: " + "a" * 40_000
    try:
        with connect(url) as sock:
            sock.sendall(head.encode())  # and never the end of the headers
            closed, answer = read_until_closed(sock, 5)
        with httpx.Client(base_url=url) as http:
            health = http.get("/healthz")
    finally:
        server.stop()

    assert closed
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 431 Request Header Fields Too Large"
    error = orjson.loads(rest.partition(b"\r\n\r\n")[2])["error"]
    assert error["type"] == "RequestHeadersTooLargeError" and error["limit"] == 16384
    assert health.status_code == 200


def test_connections_past_max_connections_are_refused_until_others_close(
    tmp_path: Path, emu: Emulator
) -> None:
    server, url = start_server(tmp_path, emu, max_connections=3)
    try:
        idle = [connect(url) for _ in range(3)]
        time.sleep(0.3)  # the server accepts them
        with connect(url) as extra:
            closed, answer = read_until_closed(extra, 3)
        for sock in idle:
            sock.close()
        deadline = time.monotonic() + 5
        while True:  # the server sees the others go
            with httpx.Client(base_url=url) as http:
                try:
                    health = http.get("/healthz")
                except httpx.TransportError:
                    health = None
            if (health is not None and health.status_code == 200) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    finally:
        server.stop()

    assert closed
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 503 Service Unavailable"
    assert b"\r\nretry-after: 1\r\n" in rest.lower()
    error = orjson.loads(rest.partition(b"\r\n\r\n")[2])["error"]
    assert error["type"] == "TooManyConnectionsError" and error["limit"] == 3
    assert health is not None and health.status_code == 200


# --- fairness between keys, and the loop -----------------------------------------------------


@pytest.mark.parametrize(
    "limits",
    [{"max_streams_per_key": 2}, {"max_concurrent_streams": 4}],
    ids=["max_streams_per_key", "default-half-of-max_concurrent_streams"],
)
def test_one_key_cannot_take_every_stream_while_another_key_still_starts_one(
    tmp_path: Path, emu: Emulator, limits: dict[str, int]
) -> None:
    slow = Reply.turn(Turn.text("slow " * 15), fragment_size=5, delay=0.1)
    emu.queue(slow, slow, slow)
    server, url = start_server(tmp_path, emu, **limits)
    body = stream_body("claude")
    try:
        with (
            httpx.Client(base_url=url, timeout=10) as http,
            http.stream("POST", "/v1/stream", json=body, headers=AUTH) as first,
            http.stream("POST", "/v1/stream", json=body, headers=AUTH) as second,
        ):
            third = http.post("/v1/stream", json=body, headers=AUTH)
            with http.stream("POST", "/v1/stream", json=body, headers=SECOND) as other:
                others = read_sse(other)
            streams = [read_sse(first), read_sse(second)]
    finally:
        server.stop()

    assert third.status_code == 429, third.text
    error = third.json()["error"]
    assert error["type"] == "TooManyStreamsError" and error["limit"] == 2
    assert "limits.max_streams_per_key" in error["message"]
    assert third.headers["retry-after"] == "1"
    assert others.done and others.events[-1]["event_type"] == "stop"
    assert all(stream.done and stream.events[-1]["event_type"] == "stop" for stream in streams)
    assert len(emu.requests) == 3


def fifty_thousand_messages(path: str) -> bytes:
    """A body of 50,000 short messages (about 3.7 MB) in the wire of `path`, for the model
    whose upstream refuses at once: all the server's work is its own."""
    if path == "/v1/stream":
        return orjson.dumps(
            {"model": "nowhere", "messages": [user(f"msg {i}") for i in range(50_000)]}
        )
    messages = [{"role": "user", "content": f"msg {i}"} for i in range(50_000)]
    return orjson.dumps({"model": "nowhere", "stream": True, "messages": messages})


@pytest.mark.parametrize("path", ["/v1/stream", "/v1/chat/completions"])
def test_a_large_body_is_parsed_without_stalling_a_running_stream(
    tmp_path: Path, emu: Emulator, path: str
) -> None:
    # Parsed and checked on the event loop, such a body stopped every other stream for most of
    # the time its request took (1.3-2.4 s of 1.4-2.7 s here); off the loop, the running
    # stream's longest pause is a garbage collection's (0.1-0.4 s). Measured against the
    # request's own time, so that a slow machine slows both alike.
    emu.queue(Reply.turn(Turn.text("tick " * 400), fragment_size=5, delay=0.02))
    big = fifty_thousand_messages(path)
    server, url = start_server(tmp_path, emu)
    arrivals: list[float] = []
    first, enough = threading.Event(), threading.Event()

    def follow_the_running_stream() -> None:
        with (
            httpx.Client(base_url=url, timeout=30) as http,
            http.stream("POST", "/v1/stream", json=stream_body("claude"), headers=AUTH) as sse,
        ):
            decoder = SSEDecoder()
            for chunk in sse.iter_raw():
                arrivals.extend(time.monotonic() for _ in decoder.feed(chunk))
                first.set()
                if enough.is_set():
                    return

    follower = threading.Thread(target=follow_the_running_stream)
    follower.start()
    try:
        assert first.wait(10)
        time.sleep(0.3)
        with httpx.Client(base_url=url, timeout=60) as http:
            began = time.monotonic()
            answer = http.post(
                path, content=big, headers={**AUTH, "content-type": "application/json"}
            )
            ended = time.monotonic()
        time.sleep(0.3)
        enough.set()
        follower.join(30)
    finally:
        server.stop()

    assert answer.status_code in (200, 502), answer.text  # the upstream refused: after parsing
    assert arrivals[-1] > ended, "the running stream ended before the large request did"
    pauses = [
        later - earlier
        for earlier, later in itertools.pairwise(arrivals)
        if later >= began and earlier <= ended
    ]
    assert max(pauses) < 0.5 * (ended - began), (max(pauses), ended - began)
