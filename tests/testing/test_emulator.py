"""The loopback emulator (`modelstream.testing`): real HTTP on 127.0.0.1, every endpoint, every
fault, what it records, and scripted turns that decode back to what was scripted."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream import IncompleteStreamError, MalformedFrameError, StreamDecoder
from modelstream.protocols import REGISTRY, ProviderRequest, encode_request
from modelstream.testing import (
    Embedding,
    Emulator,
    Reply,
    Text,
    Thinking,
    ToolCall,
    Turn,
    embedding_for,
    render,
    render_frames,
)
from modelstream.testing.emulation import StreamEmulator
from modelstream.testing.render import STREAM_PROTOCOLS
from modelstream.testing.routes import emulator_for
from modelstream.types import Message, Usage
from support import CORPUS, REPO, decode_chunks, require_corpus

SAMPLE = REPO / "src/modelstream/samples/anthropic-tool-call.sse"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _request(protocol: str, text: str, model: str) -> ProviderRequest:
    """The request our own encoder makes for `protocol` (the registry's, so every protocol
    the emulator serves is covered)."""
    message: Message = {"role": "user", "content_items": [{"type": "text.done", "text": text}]}
    return encode_request(protocol, model, [message])


def endpoint(emu: Emulator, protocol: str, model: str = "test-model") -> str:
    """The full URL a client of `protocol` streams from."""
    return emu.base_url(protocol) + _request(protocol, "hi", model).path


def request_body(protocol: str, text: str, model: str = "test-model") -> dict[str, Any]:
    """A minimal streaming request in `protocol`'s shape whose last user message is `text`."""
    return _request(protocol, text, model).json


def decode(protocol: str, body: bytes) -> Any:
    """Decode a whole body; returns the decoder (its `result` holds the message)."""
    decoder = StreamDecoder(protocol)
    decoder.feed(body)
    decoder.end()
    return decoder


def post_stream(emu: Emulator, protocol: str, text: str = "hi") -> httpx.Response:
    return httpx.post(endpoint(emu, protocol), json=request_body(protocol, text), timeout=10)


# --- endpoints and the default echo -------------------------------------------------------------


@pytest.mark.parametrize("protocol", STREAM_PROTOCOLS)
def test_each_streaming_endpoint_echoes_the_last_user_text_in_its_wire_format(
    emu: Emulator, protocol: str
) -> None:
    response = post_stream(emu, protocol, "What is the capital of France?")

    assert response.status_code == 200
    content_type = emulator_for(protocol).content_type  # type: ignore[union-attr]
    assert response.headers["content-type"] == content_type
    assert response.headers["transfer-encoding"] == "chunked"
    message = decode(protocol, response.content).result.message
    assert message["content_items"] == [
        {"type": "text.done", "text": "echo: What is the capital of France?", **_fidelity(message)}
    ]
    assert message["finish_reason"] == "stop"
    assert emu.requests[0].protocol == protocol


def _fidelity(message: Any) -> dict[str, Any]:
    """Responses puts the item id on text; the others have no fidelity on plain text."""
    item = message["content_items"][0]
    return {"fidelity": item["fidelity"]} if "fidelity" in item else {}


@pytest.mark.parametrize(
    ("protocol", "body", "expected"),
    [
        (
            "openai-chat",
            {
                "messages": [
                    {"role": "user", "content": "weather?"},
                    {"role": "assistant", "tool_calls": []},
                    {"role": "tool", "tool_call_id": "c1", "content": "18°C"},
                ]
            },
            "echo: 18°C",
        ),
        (
            "openai-responses",
            {"input": [{"type": "function_call_output", "call_id": "c1", "output": "18°C"}]},
            "echo: 18°C",
        ),
        (
            "anthropic-messages",
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": "t1", "content": "18°C"}
                        ],
                    }
                ]
            },
            "echo: 18°C",
        ),
        (
            "gemini-generate-content",
            {
                "contents": [
                    {"role": "user", "parts": [{"text": "weather?"}]},
                    {"role": "model", "parts": [{"functionCall": {"name": "w", "args": {}}}]},
                    {
                        "role": "user",
                        "parts": [{"functionResponse": {"name": "w", "response": {"t": 18}}}],
                    },
                ]
            },
            'echo: {"t": 18}',
        ),
        ("openai-responses", {"input": "plain string input"}, "echo: plain string input"),
    ],
)
def test_the_default_turn_echoes_a_tool_result_when_it_is_the_last_user_input(
    emu: Emulator, protocol: str, body: dict[str, Any], expected: str
) -> None:
    response = httpx.post(endpoint(emu, protocol), json=body, timeout=10)

    items = decode(protocol, response.content).result.message["content_items"]
    assert [item["text"] for item in items] == [expected]


def test_openai_embeddings_default_to_one_deterministic_vector_per_input(emu: Emulator) -> None:
    response = httpx.post(
        emu.base_url("openai-embedding") + "/embeddings",
        json={"model": "text-embedding-3-small", "input": ["first", "second"], "dimensions": 5},
    )

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert [entry["embedding"] for entry in body["data"]] == [
        embedding_for("first", 5),
        embedding_for("second", 5),
    ]
    assert [entry["index"] for entry in body["data"]] == [0, 1]
    assert body["model"] == "text-embedding-3-small"
    assert embedding_for("first", 5) != embedding_for("second", 5)


def test_gemini_embed_content_answers_one_vector_and_batch_answers_a_list(emu: Emulator) -> None:
    base = emu.base_url("gemini-embedding") + "/v1beta/models/text-embedding-004"
    single = httpx.post(base + ":embedContent", json={"content": {"parts": [{"text": "a"}]}})
    batch = httpx.post(
        base + ":batchEmbedContents",
        json={
            "requests": [
                {"content": {"parts": [{"text": "a"}]}, "outputDimensionality": 3},
                {"content": {"parts": [{"text": "b"}]}, "outputDimensionality": 3},
            ]
        },
    )

    assert single.json() == {"embedding": {"values": embedding_for("a")}}
    assert batch.json() == {
        "embeddings": [{"values": embedding_for("a", 3)}, {"values": embedding_for("b", 3)}]
    }
    assert [r.protocol for r in emu.requests] == ["gemini-embedding", "gemini-embedding"]


@pytest.mark.parametrize("protocol", ["openai-embedding", "gemini-embedding"])
def test_embedding_bodies_decode_to_one_embedding_item_per_input(protocol: str) -> None:
    turn = Turn.embeddings([0.5, -0.25], [1.0, 0.0])

    decoder = decode(protocol, render(protocol, turn))

    items = decoder.result.message["content_items"]
    assert [item["embedding"] for item in items] == [[0.5, -0.25], [1.0, 0.0]]


def test_base_url_adds_v1_for_the_openai_family_only(emu: Emulator) -> None:
    assert emu.url.startswith("http://127.0.0.1:")
    assert emu.base_url("openai-chat") == emu.url + "/v1"
    assert emu.base_url("openai-responses") == emu.url + "/v1"
    assert emu.base_url("openai-embedding") == emu.url + "/v1"
    assert emu.base_url("anthropic-messages") == emu.url
    assert emu.base_url("gemini-generate-content") == emu.url
    assert emu.base_url("gemini-embedding") == emu.url


def test_an_unknown_path_is_a_404_with_a_json_error(emu: Emulator) -> None:
    response = httpx.post(emu.url + "/v2/chat", json={})

    assert response.status_code == 404
    assert "no emulated endpoint at POST /v2/chat" in response.json()["error"]["message"]
    assert emu.requests[0].protocol is None


def test_a_get_on_an_endpoint_is_a_405(emu: Emulator) -> None:
    response = httpx.get(emu.url + "/v1/messages")

    assert response.status_code == 405
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_chat_completions_reports_usage_only_when_the_request_asks_for_it(emu: Emulator) -> None:
    asked = request_body("openai-chat", "hi")
    not_asked = {key: value for key, value in asked.items() if key != "stream_options"}

    with_usage = httpx.post(endpoint(emu, "openai-chat"), json=asked).content
    without_usage = httpx.post(endpoint(emu, "openai-chat"), json=not_asked).content

    assert b'"usage":{"prompt_tokens"' in with_usage
    assert b'"usage"' not in without_usage
    decoder = decode("openai-chat", without_usage)
    assert {"type": "usage_missing"} in decoder.metadata.diagnostics


# --- queued replies -----------------------------------------------------------------------------


def test_queued_replies_are_served_first_in_first_out(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("one")), Reply.turn(Turn.text("two")))
    emu.queue(Reply.turn(Turn.text("three")))

    texts = [
        decode("anthropic-messages", post_stream(emu, "anthropic-messages").content).result.message[
            "content_items"
        ][0]["text"]
        for _ in range(4)
    ]

    assert texts == ["one", "two", "three", "echo: hi"]
    assert emu.pending == 0


def test_a_reply_queued_for_a_path_waits_for_a_request_to_that_path(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("for gemini")), path="/v1beta/models/m:streamGenerateContent")
    emu.queue(Reply.turn(Turn.text("for anyone")))

    chat = post_stream(emu, "openai-chat")
    gemini = httpx.post(
        endpoint(emu, "gemini-generate-content", model="m"),
        json=request_body("gemini-generate-content", "hi"),
    )

    chat_items = decode("openai-chat", chat.content).result.message["content_items"]
    gemini_items = decode("gemini-generate-content", gemini.content).result.message
    assert chat_items[0]["text"] == "for anyone"
    assert gemini_items["content_items"][0]["text"] == "for gemini"


def test_a_queued_turn_is_rendered_in_the_protocol_of_the_endpoint_called(emu: Emulator) -> None:
    turn = Turn(items=[Thinking("hmm", signature="sig-1"), Text("Paris.")])
    for protocol in STREAM_PROTOCOLS:
        emu.queue(Reply.turn(turn))
        message = decode(protocol, post_stream(emu, protocol).content).result.message
        kinds = [item["type"] for item in message["content_items"]]
        assert kinds == ["thinking.done", "text.done"], protocol


def test_a_recorded_body_is_replayed_byte_for_byte_in_small_chunks(emu: Emulator) -> None:
    recorded = SAMPLE.read_bytes()
    emu.queue(Reply.body(recorded, chunk_size=7, delay=0.001))

    response = post_stream(emu, "anthropic-messages")

    assert response.content == recorded
    message = decode("anthropic-messages", response.content).result.message
    assert message["finish_reason"] == "tool_call"


def test_chunk_size_sets_the_size_of_every_http_chunk(emu: Emulator) -> None:
    recorded = SAMPLE.read_bytes()
    emu.queue(Reply.body(recorded, chunk_size=7))

    sizes, body = _raw_chunked_post(emu, "/v1/messages", b"{}")

    assert body == recorded
    assert set(sizes[:-1]) == {7}
    assert 1 <= sizes[-1] <= 7


def _raw_chunked_post(emu: Emulator, path: str, payload: bytes) -> tuple[list[int], bytes]:
    """POST over a bare socket and parse the chunked framing by hand: (chunk sizes, body)."""
    host, port = emu.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(payload)}\r\n"
            "Connection: close\r\n\r\n".encode()
            + payload
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    assert b"transfer-encoding: chunked" in head.lower()
    sizes, body = [], b""
    while True:
        size_line, rest = rest.split(b"\r\n", 1)
        size = int(size_line, 16)
        if size == 0:
            return sizes, body
        sizes.append(size)
        body += rest[:size]
        rest = rest[size + 2 :]


def test_a_turn_the_endpoint_cannot_send_is_answered_with_a_500_that_says_why(
    emu: Emulator,
) -> None:
    emu.queue(Reply.turn(Turn.embeddings([0.1, 0.2])))

    response = post_stream(emu, "openai-chat")

    assert response.status_code == 500
    assert "not embeddings" in response.json()["error"]["message"]
    assert emu.requests[0].error is not None


def test_a_queued_reply_that_is_no_reply_is_rejected(emu: Emulator) -> None:
    with pytest.raises(TypeError, match="Reply objects"):
        emu.queue(Turn.text("not wrapped"))  # type: ignore[arg-type]


# --- faults -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "error_fields"),
    [
        ("openai-chat", {"type": "requests", "code": "rate_limit_exceeded"}),
        ("anthropic-messages", {"type": "rate_limit_error"}),
        ("gemini-generate-content", {"code": 429, "status": "RESOURCE_EXHAUSTED"}),
    ],
)
def test_a_status_reply_sends_retry_after_and_the_protocols_json_error(
    emu: Emulator, protocol: str, error_fields: dict[str, Any]
) -> None:
    emu.queue(Reply.status(429, retry_after=1.5))

    response = post_stream(emu, protocol)

    assert response.status_code == 429
    assert response.headers["retry-after"] == "1.5"
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error_fields.items() <= error.items()
    assert error["message"]
    assert emu.requests[0].status == 429


def test_a_gemini_rate_limit_carries_its_retry_delay_in_the_body(emu: Emulator) -> None:
    emu.queue(Reply.status(429, retry_after=2))

    error = post_stream(emu, "gemini-generate-content").json()["error"]

    assert error["details"] == [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}
    ]


def test_a_status_reply_can_carry_a_body_of_its_own(emu: Emulator) -> None:
    emu.queue(Reply.status(503, body={"error": {"message": "down for lunch"}}))

    response = post_stream(emu, "openai-chat")

    assert response.status_code == 503
    assert response.json() == {"error": {"message": "down for lunch"}}
    assert "retry-after" not in response.headers


def test_delay_first_byte_holds_back_the_status_line(emu: Emulator) -> None:
    emu.queue(Reply.echo(delay_first_byte=0.3))
    start = time.monotonic()

    with httpx.stream(
        "POST", endpoint(emu, "openai-chat"), json=request_body("openai-chat", "hi")
    ) as response:
        headers_at = time.monotonic()
        response.read()

    assert headers_at - start >= 0.29
    assert response.status_code == 200


def test_delay_first_byte_lets_a_client_read_timeout_fire(emu: Emulator) -> None:
    emu.queue(Reply.echo(delay_first_byte=2.0))

    with pytest.raises(httpx.ReadTimeout):
        httpx.post(
            endpoint(emu, "openai-chat"),
            json=request_body("openai-chat", "hi"),
            timeout=httpx.Timeout(5.0, read=0.2),
        )
    record = emu.wait_for_requests(1, finished=True)[0]
    assert record.status is None
    assert record.client_closed_early


def test_a_stall_pauses_the_body_after_n_bytes(emu: Emulator) -> None:
    emu.queue(Reply.echo(stall_after_bytes=(100, 0.4)))

    arrivals = []
    with httpx.stream(
        "POST", endpoint(emu, "openai-chat"), json=request_body("openai-chat", "x" * 40)
    ) as response:
        received = 0
        for chunk in response.iter_raw():
            received += len(chunk)
            arrivals.append((received, time.monotonic()))

    before = max(at for count, at in arrivals if count <= 100)
    after = min(at for count, at in arrivals if count > 100)
    assert any(count == 100 for count, _ in arrivals)
    assert after - before >= 0.39
    assert emu.requests[0].bytes_sent == received


def test_delay_paces_the_chunks(emu: Emulator) -> None:
    turn = Turn.text("abcdefghij")
    frames = render_frames("openai-chat", turn, fragment_size=2)
    emu.queue(Reply.turn(turn, fragment_size=2, delay=0.05))
    start = time.monotonic()

    response = post_stream(emu, "openai-chat")

    assert time.monotonic() - start >= 0.05 * (len(frames) - 1) * 0.95
    assert decode("openai-chat", response.content).result.message["content_items"][0] == {
        "type": "text.done",
        "text": "abcdefghij",
    }


def test_a_disconnect_after_n_bytes_leaves_the_client_an_incomplete_body(emu: Emulator) -> None:
    emu.queue(Reply.echo(disconnect_after_bytes=150))

    received = b""
    with (
        pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"),
        httpx.stream(
            "POST",
            endpoint(emu, "anthropic-messages"),
            json=request_body("anthropic-messages", "hi"),
        ) as response,
    ):
        for chunk in response.iter_raw():
            received += chunk

    assert len(received) == 150
    record = emu.wait_for_requests(1, finished=True)[0]
    assert record.bytes_sent == 150
    assert not record.client_closed_early
    decoder = StreamDecoder("anthropic-messages")
    decoder.feed(received)
    with pytest.raises(IncompleteStreamError):
        decoder.end()


def test_a_disconnect_after_the_whole_body_still_leaves_the_chunked_body_unfinished(
    emu: Emulator,
) -> None:
    emu.queue(Reply.body(b"data: [DONE]\n\n", disconnect_after_bytes=10_000))

    with pytest.raises(httpx.RemoteProtocolError):
        post_stream(emu, "openai-chat")


def test_a_malformed_frame_is_inserted_before_frame_k(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("fine"), malformed_frame_at=1))

    response = post_stream(emu, "gemini-generate-content")

    frames = response.content.split(b"\r\n\r\n")
    assert frames[1] == b"data: {not json"
    with pytest.raises(MalformedFrameError) as raised:  # content lost: never final
        decode("gemini-generate-content", response.content)
    assert raised.value.frame == 2


def test_a_malformed_frame_goes_into_a_recorded_body_between_its_frames(emu: Emulator) -> None:
    recorded = SAMPLE.read_bytes()
    emu.queue(Reply.body(recorded, malformed_frame_at=3))

    body = post_stream(emu, "anthropic-messages").content

    frames = body.split(b"\n\n")
    assert frames[3] == b"data: {not json"
    assert body.replace(b"data: {not json\n\n", b"") == recorded


# --- what the emulator records ------------------------------------------------------------------


def test_each_request_is_recorded_with_its_json_headers_and_query(emu: Emulator) -> None:
    body = request_body("gemini-generate-content", "hello")

    httpx.post(
        endpoint(emu, "gemini-generate-content", model="gemini-2.5-flash"),
        json=body,
        headers={"x-goog-api-key": "secret-key-123", "X-Trace": "t1"},
    )

    # the server marks a request finished after its last write, which may trail the client
    (record,) = emu.wait_for_requests(1, finished=True)
    assert record.method == "POST"
    assert record.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert record.query == {"alt": "sse"}
    assert record.json == body
    assert orjson.loads(record.body) == body
    assert record.headers["x-goog-api-key"] == "secret-key-123"
    assert record.headers["x-trace"] == "t1"
    assert record.protocol == "gemini-generate-content"
    assert record.finished


def test_a_recorded_request_never_shows_credentials_in_its_repr(emu: Emulator) -> None:
    httpx.post(
        endpoint(emu, "openai-chat"),
        json=request_body("openai-chat", "hi"),
        headers={"authorization": "Bearer sk-very-secret", "x-api-key": "also-secret"},
    )

    text = repr(emu.requests[0])

    assert "sk-very-secret" not in text
    assert "also-secret" not in text
    assert "authorization" in text


def test_arrival_times_are_monotonic_clock_readings_in_order(emu: Emulator) -> None:
    before = time.monotonic()
    for _ in range(3):
        post_stream(emu, "openai-chat")
        time.sleep(0.05)

    arrivals = [record.received_at for record in emu.requests]

    assert before <= arrivals[0] < arrivals[1] < arrivals[2] <= time.monotonic()
    assert arrivals[2] - arrivals[0] >= 0.1


def test_a_client_that_closes_a_stream_midway_is_recorded_as_closed_early(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("word " * 100), fragment_size=5, delay=0.01))

    with httpx.Client(timeout=10) as client:
        with client.stream(
            "POST", endpoint(emu, "openai-chat"), json=request_body("openai-chat", "hi")
        ) as response:
            next(response.iter_lines())
        closed_at = time.monotonic()
        record = emu.wait_for_requests(1, finished=True)[0]

    assert record.client_closed_early
    assert 0 < record.bytes_sent < len(render("openai-chat", Turn.text("word " * 100)))
    assert record.finished_at is not None
    assert record.finished_at - closed_at < 0.5


def test_a_client_that_reads_to_the_end_is_not_recorded_as_closed_early(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("word " * 20), fragment_size=5, delay=0.001))

    response = post_stream(emu, "openai-chat")

    record = emu.wait_for_requests(1, finished=True)[0]
    assert not record.client_closed_early
    assert record.bytes_sent == len(response.content)


def test_waiting_for_more_requests_than_arrive_times_out(emu: Emulator) -> None:
    post_stream(emu, "openai-chat")

    with pytest.raises(TimeoutError, match="1 of 2 requests arrived"):
        emu.wait_for_requests(2, timeout=0.1)


def test_concurrent_requests_each_take_one_queued_reply(emu: Emulator) -> None:
    texts = [f"reply {n}" for n in range(12)]
    emu.queue(*(Reply.turn(Turn.text(text), delay=0.002) for text in texts))
    answers: list[str] = []
    lock = threading.Lock()

    def ask() -> None:
        content = post_stream(emu, "anthropic-messages").content
        text = decode("anthropic-messages", content).result.message["content_items"][0]["text"]
        with lock:
            answers.append(text)

    threads = [threading.Thread(target=ask) for _ in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert sorted(answers) == sorted(texts)
    assert emu.pending == 0
    assert len(emu.requests) == len(texts)


# --- shutting down ------------------------------------------------------------------------------


def test_stopping_does_not_hang_while_a_reply_is_stalled() -> None:
    emu = Emulator().start()
    emu.queue(Reply.echo(stall_after_bytes=(20, 60.0)))
    errors: list[BaseException] = []

    def read() -> None:
        try:
            post_stream(emu, "openai-chat")
        except httpx.HTTPError as exc:
            errors.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    emu.wait_for_requests(1)
    time.sleep(0.1)
    start = time.monotonic()
    emu.stop()
    stopped_in = time.monotonic() - start
    reader.join(timeout=5)

    assert stopped_in < 2.0
    assert not reader.is_alive()
    assert len(errors) == 1


def test_stopping_does_not_hang_while_a_client_does_not_read() -> None:
    emu = Emulator().start()
    emu.queue(Reply.body(b"data: " + b"x" * 8_000_000 + b"\n\n"))
    host, port = emu.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
    emu.wait_for_requests(1)
    time.sleep(0.2)  # the server is now blocked writing into full socket buffers
    start = time.monotonic()
    emu.stop()
    stopped_in = time.monotonic() - start
    sock.close()

    assert stopped_in < 2.0
    assert emu.requests[0].status == 200
    assert emu.requests[0].bytes_sent < 8_000_008


# --- async --------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_emulator_serves_an_async_client_from_async_with() -> None:
    async with Emulator() as emu:
        emu.queue(Reply.turn(Turn.text("async hello"), delay=0.001))
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.post(
                endpoint(emu, "openai-responses"), json=request_body("openai-responses", "hi")
            )
        records = await emu.wait_for_requests_async(1, finished=True)

    message = decode("openai-responses", response.content).result.message
    assert message["content_items"][0]["text"] == "async hello"
    assert records[0].json == request_body("openai-responses", "hi")


@pytest.mark.anyio
async def test_an_async_client_closing_a_stream_midway_is_recorded_as_closed_early() -> None:
    async with Emulator() as emu:
        emu.queue(Reply.turn(Turn.text("word " * 100), fragment_size=5, delay=0.01))
        async with (
            httpx.AsyncClient(timeout=10) as client,
            client.stream(
                "POST",
                endpoint(emu, "anthropic-messages"),
                json=request_body("anthropic-messages", "hi"),
            ) as response,
        ):
            async for _ in response.aiter_lines():
                break
        record = (await emu.wait_for_requests_async(1, finished=True))[0]

    assert record.client_closed_early
    assert record.bytes_sent > 0


# --- render → decode round trips ----------------------------------------------------------------


# where each decoder keeps a thinking signature (one key per protocol)
SIGNATURE_KEYS = ("signature", "encrypted_content", "thought_signature")
# the wire formats that carry a signature on a tool call (Gemini's thought signatures)
SIGNED_CALLS = ("gemini-generate-content", "gemini-interactions")
# the wire formats that count thinking inside the output tokens, not apart (Anthropic's counts
# it inside too, and splits it out in `output_tokens_details.thinking_tokens`, as the capture
# pydanticai-anthropic-pause-turn shows and the Anthropic writer writes it)
THINKING_IN_OUTPUT = ("bedrock-converse-stream",)


def signature_of(protocol: str, fidelity: dict[str, Any] | None) -> str | None:
    """The signature a decoder kept on an item, under its protocol's key."""
    found = [value for key, value in (fidelity or {}).items() if key in SIGNATURE_KEYS]
    assert len(found) <= 1, (protocol, fidelity)
    return found[0] if found else None


def decoded_items(protocol: str, items: list[Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for item in items:
        fidelity = item.get("fidelity")
        if item["type"] == "text.done":
            out.append(("text", item["text"]))
        elif item["type"] == "thinking.done":
            out.append(("thinking", item["thinking"], signature_of(protocol, fidelity)))
        else:
            signed = protocol in SIGNED_CALLS
            signature = (fidelity or {}).get("thought_signature") if signed else None
            out.append(("tool_call", item["name"], item["arguments"], signature))
    return out


def scripted_items(protocol: str, turn: Turn) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for item in turn.items:
        if isinstance(item, Text):
            out.append(("text", item.text))
        elif isinstance(item, Thinking):
            out.append(("thinking", item.thinking, item.signature))
        elif isinstance(item, ToolCall):
            signature = item.signature if protocol in SIGNED_CALLS else None
            out.append(("tool_call", item.name, dict(item.arguments), signature))
    return out


def expected_finish(turn: Turn) -> str:
    calls = any(isinstance(item, ToolCall) for item in turn.items)
    finish = turn.finish_reason
    return "tool_call" if finish == "stop" and calls else finish


def expected_usage(protocol: str, usage: Usage) -> Usage:
    """Bedrock counts thinking inside the output tokens and does not split it out."""
    if protocol not in THINKING_IN_OUTPUT:
        return usage
    thoughts, response = usage["thoughts_tokens"] or 0, usage["response_tokens"] or 0
    return {**usage, "thoughts_tokens": None, "response_tokens": thoughts + response}


JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
TEXT = st.text(min_size=1, max_size=40)
SIGNATURES = st.none() | st.text("ABCDEFabcdef0123456789+/=", min_size=1, max_size=40)
IDS = st.none() | st.from_regex(r"call_[A-Za-z0-9]{1,12}", fullmatch=True)


@st.composite
def turns(draw: st.DrawFn) -> Turn:
    """Random turns: text, thinking (maybe signed), tool calls; never two texts or two
    thinkings side by side (Chat and Gemini join those), always something besides thinking."""
    items: list[Text | Thinking | ToolCall] = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["text", "thinking", "tool_call"]))
        previous = items[-1] if items else None
        if kind == "text" and not isinstance(previous, Text):
            items.append(Text(draw(TEXT)))
        elif kind == "thinking" and not isinstance(previous, Thinking):
            items.append(Thinking(draw(TEXT), signature=draw(SIGNATURES)))
        elif kind == "tool_call":
            arguments = draw(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4))
            name = draw(st.from_regex(r"[a-z_]{1,12}", fullmatch=True))
            items.append(ToolCall(name, arguments, id=draw(IDS), signature=draw(SIGNATURES)))
    if all(isinstance(item, Thinking) for item in items):
        items.append(Text(draw(TEXT)))
    counts = st.integers(1, 100_000)
    usage = draw(
        st.none()
        | st.builds(
            lambda c, p, t, r: Usage(
                cached_tokens=c, prompt_tokens=p, thoughts_tokens=t, response_tokens=r
            ),
            st.integers(0, 100_000),
            counts,
            counts,
            counts,
        )
    )
    finish = draw(st.sampled_from([None, "stop", "length", "unknown"]))
    return Turn(items=items, finish=finish, usage=usage)


@pytest.mark.parametrize("protocol", STREAM_PROTOCOLS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turn=turns(), fragment_size=st.integers(1, 16), slice_size=st.integers(1, 64))
def test_any_rendered_turn_decodes_back_to_its_items_finish_and_usage(
    protocol: str, turn: Turn, fragment_size: int, slice_size: int
) -> None:
    body = render(protocol, turn, model="m-1", fragment_size=fragment_size)

    slices = [body[i : i + slice_size] for i in range(0, len(body), slice_size)]
    decoded = decode_chunks(protocol, slices)

    assert decoded.error is None, decoded.error
    message = decoded.decoder.result.message  # type: ignore[union-attr]
    assert decoded_items(protocol, message["content_items"]) == scripted_items(protocol, turn)
    assert message["finish_reason"] == expected_finish(turn)
    assert message["usage_metadata"] == expected_usage(protocol, turn.usage_counts())
    calls = [i for i in message["content_items"] if i["type"] == "tool_call.done"]
    scripted_calls = [item for item in turn.items if isinstance(item, ToolCall)]
    for call, scripted in zip(calls, scripted_calls, strict=True):
        assert call["tool_call_id"] == scripted.id if scripted.id else call["tool_call_id"]
    if names_model(protocol):  # Bedrock's payloads never name the model
        assert decoded.decoder.metadata.model == "m-1"  # type: ignore[union-attr]


def names_model(protocol: str) -> bool:
    emulator = emulator_for(protocol)
    return isinstance(emulator, StreamEmulator) and emulator.names_model


@pytest.mark.parametrize("protocol", ["anthropic-messages", "openai-responses"])
def test_a_signature_with_no_thinking_text_decodes_to_an_empty_signed_thinking_item(
    protocol: str,
) -> None:
    turn = Turn(items=[Thinking("", signature="opaque=="), Text("Answer.")])

    message = decode(protocol, render(protocol, turn)).result.message

    thinking = message["content_items"][0]
    assert thinking["thinking"] == ""
    assert signature_of(protocol, thinking["fidelity"]) == "opaque=="


def test_chat_thinking_without_a_signature_streams_as_reasoning_content() -> None:
    turn = Turn(items=[Thinking("Let me see."), Text("Yes.")])

    body = render("openai-chat", turn)

    # the gateway's Chat writer: reasoning_content mirrored in OpenRouter's reasoning_details,
    # which the decoder names `reasoning` (its name for mirrored text), with no signature
    assert b'"reasoning_content":"Let me' in body
    assert b'"reasoning_details":[{"type":"reasoning.text","text":"Let me' in body
    thinking = decode("openai-chat", body).result.message["content_items"][0]
    assert thinking["fidelity"] == {"reasoning_field": "reasoning"}


def test_tool_call_arguments_stream_in_several_fragments() -> None:
    turn = Turn.tool_call("get_weather", {"city": "Paris", "units": "celsius"}, id="call_1")

    for protocol in ("openai-chat", "openai-responses", "anthropic-messages"):
        decoder = StreamDecoder(protocol)
        events = decoder.feed(render(protocol, turn, fragment_size=5)) + decoder.end()
        fragments = [
            item["arguments"]
            for event in events
            for item in event["content_items"]
            if item["type"] == "tool_call.delta" and item["arguments"]
        ]
        assert len(fragments) > 3, protocol
        assert json.loads("".join(fragments)) == {"city": "Paris", "units": "celsius"}


@pytest.mark.parametrize(
    ("finish", "expected"),
    [("stop", "stop"), ("length", "length"), ("unknown", "unknown")],
)
@pytest.mark.parametrize("protocol", STREAM_PROTOCOLS)
def test_each_finish_reason_survives_the_round_trip(
    protocol: str, finish: Any, expected: str
) -> None:
    message = decode(protocol, render(protocol, Turn.text("x", finish=finish))).result.message

    assert message["finish_reason"] == expected


def test_gemini_frames_use_crlf_framing_and_geminis_json_spacing() -> None:
    body = render("gemini-generate-content", Turn.text("Hi there"), fragment_size=4)

    frames = body.split(b"\r\n\r\n")
    assert frames[-1] == b""
    assert all(frame.startswith(b'data: {"candidates": [{"content": ') for frame in frames[:-1])
    assert b'"finishReason": "STOP"' in frames[-2]


def test_chat_completions_ends_with_done() -> None:
    assert render("openai-chat", Turn.text("x")).endswith(b"data: [DONE]\n\n")


def test_rendering_embeddings_for_a_streaming_protocol_is_refused() -> None:
    with pytest.raises(ValueError, match="not embeddings"):
        render("openai-chat", Turn(items=[Embedding([1.0])]))


def test_redacted_thinking_is_refused_where_the_protocol_has_none() -> None:
    with pytest.raises(ValueError, match="no redacted thinking"):
        render("openai-chat", Turn(items=[Thinking("", redacted="x"), Text("y")]))
    with pytest.raises(ValueError, match="no text and no signature"):
        Thinking("text", redacted="x")


# --- the wire formats match the real captures ---------------------------------------------------


def _frame_shapes(protocol: str, body: bytes) -> set[tuple[str, str, frozenset[str]]]:
    """(event name, payload type, top-level keys) of every JSON frame of a body, cut by the
    protocol's own framing (SSE, or the AWS event stream)."""
    framer = REGISTRY[protocol].framing.framer()
    shapes = set()
    for event, data, _, _ in framer.feed_fields(body) + framer.end_fields():
        if not data or data == "[DONE]":
            continue
        payload = orjson.loads(data)
        shapes.add((event or "message", str(payload.get("type")), frozenset(payload)))
    return shapes


@pytest.mark.parametrize("protocol", STREAM_PROTOCOLS)
def test_every_frame_shape_written_also_occurs_in_a_real_capture(protocol: str) -> None:
    folder = require_corpus() / protocol
    real: dict[tuple[str, str], set[str]] = {}
    for path in [*folder.glob("*.sse"), *folder.glob("*.bin")]:
        for event, kind, keys in _frame_shapes(protocol, path.read_bytes()):
            real.setdefault((event, kind), set()).update(keys)
    turn = Turn(
        items=[
            Thinking("think", signature="c2ln"),
            Text("Hello"),
            ToolCall("f", {"a": 1}, id="call_1"),
        ]
    )

    written = _frame_shapes(protocol, render(protocol, turn))

    # AWS pads every event of a genuine body with `p`, whichever events a capture happens to hold
    padding = {"p"} & set().union(*real.values())
    assert written
    for event, kind, keys in written:
        assert (event, kind) in real, (event, kind)
        assert keys <= real[(event, kind)] | padding, (event, kind, keys - real[(event, kind)])
    assert CORPUS.is_dir()


# --- docs/testing.md ----------------------------------------------------------------------------

DOC = (REPO / "docs" / "testing.md").read_text()
DOC_EXAMPLES = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)


def test_the_testing_guide_has_examples() -> None:
    assert len(DOC_EXAMPLES) >= 6


@pytest.mark.parametrize("index", range(len(DOC_EXAMPLES)))
def test_each_example_of_the_testing_guide_runs_as_written(index: int) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(DOC_EXAMPLES[index], f"docs/testing.md example {index + 1}", "exec"), namespace)
    assert "Emulator" in namespace
