"""Fields that select, on the provider's side, another model or agent or state stored on the
operator's account (Interactions' `agent`, Responses' `previous_response_id`, ...) never reach an
upstream from a caller's `extra_body` unless the served model allows them (`allow_selectors`,
docs/server.md); through the gateway too (Anthropic's `container`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from modelstream.server import ServerConfigError, settings_from_mapping
from modelstream.testing import Emulator, Reply
from support.server import (
    AUTH,
    UPSTREAM_KEY_ENV,
    Serve,
    config_for,
    post_stream,
    stream_body,
)


def interactions_model(emu: Emulator, **extra: Any) -> dict[str, Any]:
    return {
        "server_model_id": "interactions",
        "model": "gemini-2.5-flash",
        "client_type": "gemini-interactions",
        "base_url": emu.base_url("gemini-interactions"),
        "api_key": "$" + UPSTREAM_KEY_ENV,
        "max_attempts": 1,
        **extra,
    }


@pytest.fixture
def models(emu: Emulator) -> list[dict[str, Any]]:
    return [*config_for(emu)["models"], interactions_model(emu)]


@pytest.fixture
def http(serve: Serve, models: list[dict[str, Any]]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=serve(models=models).url) as client:
        yield client


@pytest.mark.parametrize(
    ("model", "field", "value"),
    [
        ("interactions", "agent", "deep-research-pro-preview-12-2025"),
        ("interactions", "previous_interaction_id", "v1_ChdXSmRB"),
        ("responses", "previous_response_id", "resp_0123"),
        ("responses", "conversation", "conv_0123"),
        ("responses", "prompt", {"id": "pmpt_0123"}),
        ("gemini", "cachedContent", "cachedContents/abc"),
        ("anthropic", "container", "container_0123"),
    ],
)
def test_a_selector_in_extra_body_is_refused_before_the_upstream(
    http: httpx.Client, emu: Emulator, model: str, field: str, value: Any
) -> None:
    response = http.post(
        "/v1/stream", json=stream_body(model, extra_body={field: value}), headers=AUTH
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["parameter"] == f"extra_body.{field}"
    assert f'allow_selectors = ["{field}"]' in error["message"]
    assert emu.requests == []


def test_a_model_that_allows_a_selector_forwards_it(
    serve: Serve, emu: Emulator, models: list[dict[str, Any]]
) -> None:
    allowed = [*models[:-1], interactions_model(emu, allow_selectors=["previous_interaction_id"])]
    emu.queue(Reply.turn("again"))
    with httpx.Client(base_url=serve(models=allowed).url) as http:
        body = stream_body("interactions", extra_body={"previous_interaction_id": "v1_abc"})
        assert post_stream(http, body).done
        body = stream_body("interactions", extra_body={"agent": "x"})
        assert http.post("/v1/stream", json=body, headers=AUTH).status_code == 400
    assert [request.json.get("previous_interaction_id") for request in emu.requests] == ["v1_abc"]


def test_the_gateway_refuses_a_selector_among_native_fields(
    http: httpx.Client, emu: Emulator
) -> None:
    body = {
        "model": "anthropic",
        "max_tokens": 64,
        "stream": True,
        "container": "container_0123",
        "messages": [{"role": "user", "content": "hi"}],
    }
    response = http.post("/v1/messages", json=body, headers=AUTH)
    assert response.status_code == 400, response.text
    assert "container" in response.text
    assert emu.requests == []


def test_allow_selectors_names_only_the_protocols_selectors(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(UPSTREAM_KEY_ENV, "k")
    config = config_for(emu, models=[interactions_model(emu, allow_selectors=["agnet"])])
    with pytest.raises(ServerConfigError, match="'agnet' is not a field that selects"):
        settings_from_mapping(config, os.environ)
