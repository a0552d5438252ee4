"""`list_models()`: the provider's own models endpoint, asked over real HTTP with the call's
credentials, every page followed, each id marked with what the catalogue knows of it."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from modelstream import AsyncClient, AuthenticationError, Client, ConfigurationError
from modelstream.testing import Emulator, Reply

KEY = "sk-list-models-7f3a9c2e"


def page(document: object) -> Reply:
    return Reply.body(orjson.dumps(document), content_type="application/json")


def test_openai_lists_its_models_and_the_catalogue_marks_what_it_knows() -> None:
    with Emulator() as emu:
        emu.queue(
            page({"object": "list", "data": [{"id": "gpt-5-nano"}, {"id": "ft:gpt-5:acme"}]}),
            path="/v1/models",
        )
        with Client("gpt-5-nano", api_key=KEY, base_url=emu.base_url("openai-responses")) as client:
            listed = client.list_models()
        request = emu.requests[0]

    assert [(m.id, m.known) for m in listed] == [("gpt-5-nano", True), ("ft:gpt-5:acme", False)]
    assert listed[0].info is not None and listed[0].info.context_window == 400_000
    assert (request.method, request.path) == ("GET", "/v1/models")
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_anthropic_pages_are_followed_by_after_id() -> None:
    with Emulator() as emu:
        emu.queue(
            page(
                {
                    "data": [{"id": "claude-opus-5-5"}],
                    "has_more": True,
                    "last_id": "claude-opus-5-5",
                }
            ),
            page({"data": [{"id": "claude-haiku-5-5"}], "has_more": False, "last_id": "x"}),
            path="/v1/models",
        )

        async def listed() -> list[str]:
            async with AsyncClient(
                "claude-sonnet-5-5", api_key=KEY, base_url=emu.base_url("anthropic-messages")
            ) as client:
                return [model.id for model in await client.list_models()]

        ids = asyncio.run(listed())
        first, second = emu.requests

    assert ids == ["claude-opus-5-5", "claude-haiku-5-5"]
    assert first.query == {}
    assert second.query == {"after_id": "claude-opus-5-5", "limit": "1000"}
    assert second.headers["x-api-key"] == KEY


def test_gemini_pages_are_followed_by_their_token_and_ids_lose_models_prefix() -> None:
    with Emulator() as emu:
        emu.queue(
            page({"models": [{"name": "models/gemini-4-neon"}], "nextPageToken": "p2"}),
            page({"models": [{"name": "models/gemini-2.5-flash"}]}),
            path="/v1beta/models",
        )
        with Client(
            "gemini-2.5-flash", api_key=KEY, base_url=emu.base_url("gemini-generate-content")
        ) as client:
            listed = client.list_models()
        second = emu.requests[1]

    assert [m.id for m in listed] == ["gemini-4-neon", "gemini-2.5-flash"]
    assert all(m.known for m in listed)
    assert second.query == {"pageToken": "p2", "pageSize": "1000"}
    assert second.headers["x-goog-api-key"] == KEY


def test_a_refused_listing_raises_the_providers_error_without_the_key() -> None:
    with Emulator() as emu:
        emu.queue(Reply.status(401), path="/v1/models")
        with (
            Client("gpt-5-nano", api_key=KEY, base_url=emu.base_url("openai-chat")) as client,
            pytest.raises(AuthenticationError) as caught,
        ):
            client.list_models()

    assert caught.value.status == 401
    assert KEY not in str(caught.value)


def test_a_protocol_without_a_models_endpoint_says_so() -> None:
    with (
        Client("amazon.nova-pro-v1:0", api_key=KEY, base_url="http://127.0.0.1:9") as client,
        pytest.raises(ConfigurationError, match="bedrock-converse-stream has no models endpoint"),
    ):
        client.list_models()
