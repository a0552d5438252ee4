"""The gateway's server side, through the official SDKs on loopback: the Responses API's own
resume on a second instance behind Redis, count-token routes, keys, and the 400s a request gets
for what it may not ask (each in the caller's own error shape, as its SDK raises it)."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from modelstream.server.stores.redis import RedisStore
from modelstream.testing import Emulator, Reply, Turn
from support.server import CLIENT_KEY, Serve

STORY = "Once upon a time, a stream was cut and came back whole. " * 6


def anthropic_client(url: str, key: str = CLIENT_KEY) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=key, max_retries=0)


def openai_client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key=CLIENT_KEY, max_retries=0)


def sse_events(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in lines if line.startswith("data: ")]


def test_a_responses_stream_cut_mid_answer_is_completed_exactly_once_on_another_instance(
    serve: Serve, emu: Emulator, redis_url: str, prefix: str
) -> None:
    first = serve(store=RedisStore.from_url(redis_url, prefix=prefix))
    second = serve(store=RedisStore.from_url(redis_url, prefix=prefix))
    emu.queue(Reply.turn(Turn.text(STORY), fragment_size=8, delay=0.01))

    # a client behind a proxy that cuts the connection after a few events
    seen: list[dict[str, Any]] = []
    with (
        httpx.Client(timeout=10) as http,
        http.stream(
            "POST",
            first.url + "/v1/responses",
            headers={"authorization": f"Bearer {CLIENT_KEY}"},
            json={"model": "responses", "input": "Tell me a story.", "stream": True},
        ) as response,
    ):
        assert response.status_code == 200
        lines: list[str] = []
        for line in response.iter_lines():
            lines.append(line)
            seen = sse_events(lines)
            if sum(e["type"] == "response.output_text.delta" for e in seen) == 3:
                break
    response_id = seen[0]["response"]["id"]
    last = seen[-1]["sequence_number"]

    resumed = list(
        openai_client(second.url).responses.retrieve(response_id, stream=True, starting_after=last)
    )

    numbers = [e["sequence_number"] for e in seen] + [e.sequence_number for e in resumed]
    assert numbers == list(range(len(numbers)))  # none lost, none twice
    assert resumed[-1].type == "response.completed"
    text = [e["delta"] for e in seen if e["type"] == "response.output_text.delta"]
    text += [e.delta for e in resumed if e.type == "response.output_text.delta"]
    assert "".join(text) == STORY
    assert resumed[-1].response.output_text == STORY
    whole = openai_client(second.url).responses.retrieve(response_id)
    assert (whole.status, whole.output_text) == ("completed", STORY)
    assert len(emu.requests) == 1  # the upstream was asked once


def test_retrieving_an_unknown_id_or_another_wires_stream_is_a_404(
    serve: Serve, emu: Emulator
) -> None:
    server = serve()
    emu.queue(Reply.turn(Turn.text("Hello.")), Reply.turn(Turn.text("Hello.")))
    with openai_client(server.url).responses.stream(model="responses", input="Hi") as stream:
        response_id = stream.get_final_response().id
    raw = anthropic_client(server.url).messages.with_raw_response.create(
        model="anthropic", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
    )
    anthropic_stream = raw.headers["x-response-id"]

    assert openai_client(server.url).responses.retrieve(response_id).output_text == "Hello."
    with pytest.raises(openai.NotFoundError):
        openai_client(server.url).responses.retrieve("resp_" + "0" * 32)
    with pytest.raises(openai.NotFoundError):
        openai_client(server.url).responses.retrieve(anthropic_stream)


def test_count_token_routes_answer_an_estimate_in_each_sdks_shape(serve: Serve) -> None:
    server = serve()
    text = "How many tokens is this? " * 8

    counted = anthropic_client(server.url).messages.count_tokens(
        model="anthropic", messages=[{"role": "user", "content": text}]
    )
    gemini = genai.Client(
        api_key=CLIENT_KEY,
        http_options=genai_types.HttpOptions(base_url=server.url, api_version="v1beta"),
    )
    gemini_count = gemini.models.count_tokens(model="gemini", contents=text)

    assert counted.input_tokens == gemini_count.total_tokens == -(-len(text) // 4)


def test_a_wrong_key_is_each_wires_authentication_error(serve: Serve) -> None:
    server = serve()

    with pytest.raises(anthropic.AuthenticationError):
        anthropic_client(server.url, key="wrong").messages.create(
            model="anthropic", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
        )
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=server.url + "/v1", api_key="wrong", max_retries=0).responses.create(
            model="responses", input="Hi"
        )
    response = httpx.post(
        server.url + "/v1beta/models/gemini:generateContent?key=wrong",
        json={"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]},
    )
    assert response.status_code == 401
    assert response.json()["error"]["status"] == "UNAUTHENTICATED"


def test_the_gemini_key_may_come_as_a_query_parameter(serve: Serve, emu: Emulator) -> None:
    server = serve()
    emu.queue(Reply.turn(Turn.text("Hello from the query key.")))

    response = httpx.post(
        server.url + f"/v1beta/models/anthropic:generateContent?key={CLIENT_KEY}",
        json={"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]},
    )

    assert response.status_code == 200
    parts = response.json()["candidates"][0]["content"]["parts"]
    assert "".join(p["text"] for p in parts) == "Hello from the query key."


def test_an_unknown_field_is_a_400_naming_it_and_nothing_goes_upstream(
    serve: Serve, emu: Emulator
) -> None:
    server = serve()

    with pytest.raises(openai.BadRequestError) as raised:
        openai_client(server.url).chat.completions.create(
            model="chat", messages=[{"role": "user", "content": "Hi"}], extra_body={"top_k": 3}
        )

    assert "top_k" in str(raised.value)
    assert emu.requests == []


def test_a_server_tool_on_a_model_of_another_protocol_is_a_400_naming_it(
    serve: Serve, emu: Emulator
) -> None:
    server = serve()

    with pytest.raises(anthropic.BadRequestError) as raised:
        anthropic_client(server.url).messages.create(
            model="chat",  # an OpenAI Chat upstream cannot search the web for Claude
            max_tokens=64,
            messages=[{"role": "user", "content": "Search the news"}],
            tools=[{"type": "web_search_20250305", "name": "web_search"}],
        )

    assert "web_search" in str(raised.value)
    assert emu.requests == []


def test_an_edited_sealed_signature_is_a_400_not_an_upstream_error(
    serve: Serve, emu: Emulator
) -> None:
    server = serve()
    emu.queue(
        Reply.turn(
            Turn.tool_call("get_weather", {"city": "Oslo"}, signature="c2lnbmF0dXJlLW9uZQ==")
        )
    )
    client = anthropic_client(server.url)
    history: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
    tool = {"name": "get_weather", "input_schema": {"type": "object"}}
    message = client.messages.create(model="gemini", max_tokens=64, messages=history, tools=[tool])
    (call,) = [b for b in message.content if b.type == "tool_use"]
    assert "__MSF1" in call.id  # the Gemini signature rides in the id, sealed
    forged = call.id[:-6] + ("AAAA00" if not call.id.endswith("AAAA00") else "BBBB00")
    history += [
        {"role": "assistant", "content": [{**call.model_dump(exclude_none=True), "id": forged}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": forged, "content": "3 C"}],
        },
    ]

    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model="gemini", max_tokens=64, messages=history, tools=[tool])

    assert "altered" in str(raised.value)
    assert len(emu.requests) == 1  # only the first turn reached the upstream


def test_an_upstream_error_in_the_stream_is_gemini_sdks_error_after_the_text(
    serve: Serve, emu: Emulator
) -> None:
    server = serve()
    emu.queue(Reply.turn(Turn.text(STORY), fragment_size=16, disconnect_after_bytes=1500))
    gemini = genai.Client(
        api_key=CLIENT_KEY,
        http_options=genai_types.HttpOptions(base_url=server.url, api_version="v1beta"),
    )
    received = ""

    with pytest.raises(genai_errors.APIError):
        for chunk in gemini.models.generate_content_stream(model="anthropic", contents="Story?"):
            received += chunk.text or ""

    assert received and STORY.startswith(received) and received != STORY


def test_previous_response_id_continues_a_kept_turn_on_any_upstream(
    serve: Serve, emu: Emulator
) -> None:
    server = serve()
    client = openai_client(server.url)
    emu.queue(
        Reply.turn(Turn.text("Nice to meet you, Ada.")),
        Reply.turn(Turn.text("Your name is Ada.")),
    )
    first = client.responses.create(model="anthropic", input="My name is Ada.")

    second = client.responses.create(
        model="anthropic", input="What is my name?", previous_response_id=first.id
    )

    assert second.output_text == "Your name is Ada."
    sent = emu.requests[-1].json["messages"]  # the Anthropic upstream got the whole history
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "My name is Ada." in json.dumps(sent[0])
    assert "Nice to meet you, Ada." in json.dumps(sent[1])
    assert "What is my name?" in json.dumps(sent[2])


def test_a_turn_not_stored_cannot_be_continued(serve: Serve, emu: Emulator) -> None:
    server = serve()
    client = openai_client(server.url)
    emu.queue(Reply.turn(Turn.text("Noted.")))
    first = client.responses.create(model="responses", input="Remember 42.", store=False)

    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model="responses", input="What?", previous_response_id=first.id)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(
            model="responses", input="What?", previous_response_id="resp_" + "1" * 32
        )

    assert "store was false" in str(raised.value)
    assert len(emu.requests) == 1


@pytest.mark.parametrize("upstream", ["openai-embedding", "gemini-embedding"])
@pytest.mark.parametrize("encoding", [None, "float", "base64"])
def test_embeddings_through_the_openai_sdk_on_either_embedding_upstream(
    serve: Serve, emu: Emulator, upstream: str, encoding: str | None
) -> None:
    """The SDK asks for base64 itself when not told otherwise, and decodes it."""
    model = {
        "openai-embedding": "text-embedding-3-small",
        "gemini-embedding": "gemini-embedding-001",
    }
    served = {
        "server_model_id": "embed",
        "model": model[upstream],
        "client_type": upstream,
        "base_url": emu.base_url(upstream),
        "api_key": "$MODELSTREAM_TEST_UPSTREAM_KEY",
        "max_attempts": 1,
    }
    server = serve(models=[served])
    emu.queue(Reply.turn(Turn.embeddings([0.25, -0.5, 1.0], [0.125, 0.0, -1.0])))

    options: dict[str, Any] = {"encoding_format": encoding} if encoding else {}
    answer = openai_client(server.url).embeddings.create(
        model="embed", input=["first", "second"], **options
    )

    vectors: list[Any] = [d.embedding for d in answer.data]
    if encoding == "base64":  # asked for explicitly, the SDK hands the text over as is
        vectors = [list(struct.unpack("<3f", base64.b64decode(v))) for v in vectors]
    assert vectors == [[0.25, -0.5, 1.0], [0.125, 0.0, -1.0]]
    assert [d.index for d in answer.data] == [0, 1]
    assert b"first" in emu.requests[0].body and b"second" in emu.requests[0].body


def test_embedding_dimensions_need_an_openai_embedding_upstream(
    serve: Serve, emu: Emulator
) -> None:
    served = {
        "server_model_id": "embed",
        "model": "gemini-embedding-001",
        "client_type": "gemini-embedding",
        "base_url": emu.base_url("gemini-embedding"),
        "api_key": "$MODELSTREAM_TEST_UPSTREAM_KEY",
    }
    server = serve(models=[served])

    with pytest.raises(openai.BadRequestError) as raised:
        openai_client(server.url).embeddings.create(model="embed", input="x", dimensions=8)

    assert "dimensions" in str(raised.value)
    assert emu.requests == []


def test_each_sdk_lists_the_served_models_in_its_own_shape(serve: Serve) -> None:
    server = serve()
    served = {"chat", "responses", "anthropic", "gemini"}

    anthropic_ids = {m.id for m in anthropic_client(server.url).models.list()}
    openai_ids = {m.id for m in openai_client(server.url).models.list()}
    gemini = genai.Client(
        api_key=CLIENT_KEY,
        http_options=genai_types.HttpOptions(base_url=server.url, api_version="v1beta"),
    )
    gemini_names = {m.name for m in gemini.models.list()}

    assert anthropic_ids == openai_ids == served
    assert gemini_names == {f"models/{name}" for name in served}
    with pytest.raises(anthropic.AuthenticationError):  # Anthropic's own error shape
        anthropic_client(server.url, key="wrong").models.list()
