"""Every request the server refuses gets its documented status and `{"error": {"type",
"message"}}` body (docs/server.md#errors), reaches no upstream, and never crashes the server."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream.server import MemoryStore
from modelstream.testing import Emulator, Reply, Turn
from support.server import AUTH, CLIENT_KEY, Serve, read_sse, stream_body, user


def refusal(response: httpx.Response, status: int, error_type: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error: dict[str, Any] = response.json()["error"]
    assert error["type"] == error_type
    assert isinstance(error["message"], str) and len(error["message"]) > 20
    return error


@pytest.fixture
def http(serve: Serve) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=serve(limits={"max_body_bytes": 4096}).url) as client:
        yield client


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"authorization": "Bearer wrong-key"},
        {"authorization": f"Bearer {CLIENT_KEY}x"},
        {"authorization": f"Basic {CLIENT_KEY}"},
        {"authorization": CLIENT_KEY},
    ],
    ids=["missing", "wrong", "longer", "other-scheme", "no-scheme"],
)
def test_a_missing_or_wrong_key_is_a_401_on_every_v1_route(
    http: httpx.Client, emu: Emulator, headers: dict[str, str]
) -> None:
    stream = http.post("/v1/stream", json=stream_body(), headers=headers)
    models = http.get("/v1/models", headers=headers)
    resume = http.get("/v1/streams/resp_" + "0" * 32, headers=headers)

    for response in (stream, models, resume):
        refusal(response, 401, "AuthenticationError")
        assert response.headers["www-authenticate"] == "Bearer"
    assert emu.requests == []


def test_the_key_is_accepted_with_any_case_of_bearer(http: httpx.Client) -> None:
    response = http.get("/v1/models", headers={"authorization": f"bearer {CLIENT_KEY}"})

    assert response.status_code == 200


def test_an_unknown_model_is_a_404_that_points_to_the_model_list(
    http: httpx.Client, emu: Emulator
) -> None:
    error = refusal(
        http.post("/v1/stream", json=stream_body("gpt-7"), headers=AUTH), 404, "NotFoundError"
    )

    assert "'gpt-7'" in error["message"] and "/v1/models" in error["message"]
    assert emu.requests == []


def test_an_oversized_body_is_a_413_whether_declared_or_chunked(
    http: httpx.Client, emu: Emulator
) -> None:
    declared = http.post("/v1/stream", json=stream_body(text="x" * 5000), headers=AUTH)

    def chunks() -> Iterator[bytes]:
        yield b'{"model": "anthropic", "messages": ['
        for _ in range(10):
            yield orjson.dumps(user("y" * 1000)) + b","
        yield b"]}"

    chunked = http.post("/v1/stream", content=chunks(), headers=AUTH)

    for response in (declared, chunked):
        assert refusal(response, 413, "RequestTooLargeError")["limit"] == 4096
    assert "transfer-encoding" not in declared.request.headers
    assert chunked.request.headers["transfer-encoding"] == "chunked"
    assert emu.requests == []


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b'{"model": "anthropic", "messages": [', "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"messages": []}', "'model'"),
        (b'{"model": "anthropic", "messages": {}}', "'messages'"),
        (b'{"model": "anthropic", "messages": [], "config": [1]}', "'config'"),
    ],
    ids=["truncated", "not-an-object", "no-model", "messages-not-a-list", "config-not-an-object"],
)
def test_a_malformed_request_is_a_400(
    http: httpx.Client, emu: Emulator, body: bytes, fragment: str
) -> None:
    response = http.post("/v1/stream", content=body, headers=AUTH)

    assert fragment in refusal(response, 400, "InvalidRequestError")["message"]
    assert emu.requests == []


def test_invalid_messages_are_a_400_typed_as_the_library_error(http: httpx.Client) -> None:
    body = {"model": "anthropic", "messages": [{"role": "system", "content_items": []}]}

    error = refusal(http.post("/v1/stream", json=body, headers=AUTH), 400, "InvalidMessageError")

    assert error["message"].startswith("messages[0].role must be one of 'user', 'assistant'")
    assert error["path"] == "messages[0].role"


def test_an_item_of_an_unexpected_shape_is_a_400_not_a_crash(http: httpx.Client) -> None:
    body = {
        "model": "chat",
        "messages": [{"role": "user", "content_items": [{"type": "text.done"}]}],
    }

    error = refusal(http.post("/v1/stream", json=body, headers=AUTH), 400, "InvalidMessageError")

    assert error["message"] == "messages[0].content_items[0].text is missing"


def test_a_config_the_protocol_cannot_express_is_a_400_naming_the_parameter(
    http: httpx.Client,
) -> None:
    response = http.post(
        "/v1/stream", json=stream_body("anthropic", thinking_level="bogus"), headers=AUTH
    )

    error = refusal(response, 400, "UnsupportedParameterError")
    assert "thinking_level" in error["message"]


def test_a_stream_past_the_concurrency_limit_is_a_429_with_retry_after(
    serve: Serve, emu: Emulator
) -> None:
    emu.queue(Reply.turn(Turn.text("slow " * 20), fragment_size=5, delay=0.05))
    server = serve(limits={"max_concurrent_streams": 1})
    first_event = threading.Event()

    def hold_one_stream() -> None:
        with (
            httpx.Client(base_url=server.url) as http,
            http.stream("POST", "/v1/stream", json=stream_body(), headers=AUTH) as response,
        ):
            for _ in response.iter_raw():  # read to the end, holding the slot meanwhile
                first_event.set()

    holder = threading.Thread(target=hold_one_stream)
    holder.start()
    assert first_event.wait(5)
    with httpx.Client(base_url=server.url) as http:
        second = http.post("/v1/stream", json=stream_body(), headers=AUTH)
        holder.join(10)
        third = http.post("/v1/stream", json=stream_body(), headers=AUTH)  # a slot is free again

    error = refusal(second, 429, "TooManyStreamsError")
    assert error["limit"] == 1 and second.headers["retry-after"] == "1"
    assert third.status_code == 200
    assert len(emu.requests) == 2


def test_a_store_full_of_running_streams_is_a_503(serve: Serve, emu: Emulator) -> None:
    store = MemoryStore(max_bytes=100_000)

    async def fill() -> None:
        await store.create("resp_running")
        await store.append("resp_running", 1, b"x" * 99_000)

    asyncio.run(fill())
    server = serve(store=store)
    with httpx.Client(base_url=server.url) as http:
        response = http.post("/v1/stream", json=stream_body(), headers=AUTH)

    refusal(response, 503, "StoreFullError")
    assert response.headers["retry-after"] == "1"
    assert emu.requests == []


def test_an_unknown_route_or_method_is_a_json_404(http: httpx.Client) -> None:
    for response in (http.get("/v2/anything"), http.get("/v1/stream", headers=AUTH)):
        assert "POST /v1/stream" in refusal(response, 404, "NotFoundError")["message"]


def test_resuming_an_unknown_stream_is_a_404(http: httpx.Client) -> None:
    for response_id in ("resp_" + "a" * 32, "resp_../../etc", "x"):
        response = http.get(f"/v1/streams/{response_id}", headers=AUTH)
        refusal(response, 404, "NotFoundError")


@pytest.mark.parametrize(
    "headers",
    [{"last-event-id": "resp_other:3"}, {"last-event-id": "nonsense"}, {"last-event-id": "R:-1"}],
)
def test_a_malformed_resume_point_is_a_400(http: httpx.Client, headers: dict[str, str]) -> None:
    response = http.get("/v1/streams/resp_" + "b" * 32, headers={**AUTH, **headers})

    assert "Last-Event-ID" in refusal(response, 400, "InvalidRequestError")["message"]


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
ITEM = st.fixed_dictionaries(
    {"type": st.sampled_from(["text.done", "tool_result.done", "image_url.done", "bogus", 3])},
    optional={"text": JSON, "tool_call_id": JSON, "image_url": JSON, "images": JSON},
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", None])},
    optional={"content_items": st.lists(ITEM, max_size=2) | JSON},
)
BODY = st.fixed_dictionaries(
    {"model": st.sampled_from(["chat", "gemini", "unknown", ""]) | JSON},
    optional={"messages": st.lists(MESSAGE, max_size=2) | JSON, "config": JSON},
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=BODY)
def test_no_request_body_crashes_the_server(http: httpx.Client, body: dict[str, Any]) -> None:
    response = http.post("/v1/stream", json=body, headers=AUTH)

    assert response.status_code in (200, 400, 404), response.text
    if response.status_code == 200:
        assert read_sse(response).done
    else:
        assert set(response.json()["error"]) >= {"type", "message"}
