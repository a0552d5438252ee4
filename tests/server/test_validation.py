"""The server refuses, before anything reaches the upstream, a request whose messages or config
do not have their SPEC shapes (400 naming the field), an `extra_body` that would override a
field the server writes itself or that the operator forbids, and a header value HTTP cannot
carry (docs/server.md#errors)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from modelstream.server import ServerConfigError, settings_from_mapping
from modelstream.testing import Emulator
from support.server import (
    AUTH,
    CLIENT_KEY_ENV,
    UPSTREAM_KEY_ENV,
    Serve,
    config_for,
    post_stream,
    stream_body,
    user,
)


@pytest.fixture
def http(serve: Serve) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=serve().url) as client:
        yield client


def refused(response: httpx.Response, error_type: str) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["type"] == error_type
    return error


def with_items(*items: dict[str, Any]) -> dict[str, Any]:
    return {"model": "chat", "messages": [{"role": "user", "content_items": list(items)}]}


@pytest.mark.parametrize(
    ("body", "path", "message"),
    [
        (
            with_items({"type": "text.done", "text": "hi"}, {"type": "text.done", "text": 5}),
            "messages[0].content_items[1].text",
            "messages[0].content_items[1].text must be a string, got an integer 5",
        ),
        (
            with_items({"type": "inline_data.done", "data": "not*base64!", "mime_type": "x/y"}),
            "messages[0].content_items[0].data",
            "messages[0].content_items[0].data must be valid base64",
        ),
        (
            with_items({"type": "image_url.done", "image_url": ["https://example.com/a.png"]}),
            "messages[0].content_items[0].image_url",
            "messages[0].content_items[0].image_url must be a string, got a list",
        ),
        (
            with_items({"type": "tool_result.done", "tool_call_id": "c1"}),
            "messages[0].content_items[0].text",
            "messages[0].content_items[0].text is missing",
        ),
        (
            {"model": "chat", "messages": [{"role": "system", "content_items": []}]},
            "messages[0].role",
            "messages[0].role must be one of 'user', 'assistant', got a string 'system'",
        ),
        (
            with_items({"type": "text.delta", "text": "hi"}),
            "messages[0].content_items[0].type",
            "messages[0].content_items[0].type must be one of 'text.done',",
        ),
    ],
    ids=["text-not-string", "bad-base64", "url-not-string", "missing-text", "role", "delta"],
)
def test_a_message_field_of_the_wrong_shape_is_a_400_naming_its_path(
    http: httpx.Client, emu: Emulator, body: dict[str, Any], path: str, message: str
) -> None:
    error = refused(http.post("/v1/stream", json=body, headers=AUTH), "InvalidMessageError")

    assert error["path"] == path
    assert error["message"].startswith(message)
    assert emu.requests == []


@pytest.mark.parametrize(
    ("config", "path", "message"),
    [
        (
            {"max_tokens": "100"},
            "max_tokens",
            "['max_tokens'] must be an integer of at least 1, got '100' (a str)",
        ),
        (
            {"max_tokens": 1.5},
            "max_tokens",
            "['max_tokens'] must be an integer of at least 1, got 1.5 (a float)",
        ),
        (
            {"temperature": True},
            "temperature",
            "['temperature'] must be a number from 0 to 2, got True (a bool)",
        ),
        ({"stop": ["a", 7]}, "stop[1]", "['stop'][1] must be a string, got 7 (an int)"),
        (
            {"tools": [{"description": "no name"}]},
            "tools[0].name",
            "['tools'][0]['name'] is missing",
        ),
        (
            {"tool_choice": ["lookup", 3]},
            "tool_choice[1]",
            "['tool_choice'][1] must be a tool's name",
        ),
        (
            {"thinking_level": "extreme"},
            "thinking_level",
            "['thinking_level'] must be one of 'none'",
        ),
        ({"extra_body": "x"}, "extra_body", "['extra_body'] must be a dict"),
        ({"trace_id": 12}, "trace_id", "['trace_id'] must be a string"),
        (
            {"max_tokens": -5},
            "max_tokens",
            "['max_tokens'] must be an integer of at least 1, got -5 (an int)",
        ),
        (
            {"max_tokens": 0},
            "max_tokens",
            "['max_tokens'] must be an integer of at least 1, got 0 (an int)",
        ),
        (
            {"temperature": -0.5},
            "temperature",
            "['temperature'] must be a number from 0 to 2, got -0.5 (a float)",
        ),
        ({"top_p": 1.5}, "top_p", "['top_p'] must be a number from 0 to 1, got 1.5 (a float)"),
    ],
)
def test_a_config_value_of_the_wrong_type_is_a_400_naming_its_path(
    http: httpx.Client, emu: Emulator, config: dict[str, Any], path: str, message: str
) -> None:
    body = stream_body("chat", **config)
    error = refused(http.post("/v1/stream", json=body, headers=AUTH), "UnsupportedParameterError")

    assert error["path"] == f"config.{path}"
    assert error["message"].startswith(f"config{message}")
    assert emu.requests == []


def test_a_field_a_stream_request_does_not_have_is_a_400_naming_it(
    http: httpx.Client, emu: Emulator
) -> None:
    body = {**stream_body("chat"), "max_tokens": 100}  # a config key, sent at the top level

    error = refused(http.post("/v1/stream", json=body, headers=AUTH), "InvalidRequestError")

    assert error["path"] == "max_tokens"
    assert "'max_tokens' is not a field of a stream request" in error["message"]
    assert emu.requests == []


def test_well_shaped_values_of_every_kind_still_stream(http: httpx.Client, emu: Emulator) -> None:
    body = stream_body(
        "chat", max_tokens=50, temperature=1, stop="END", tool_choice="auto", trace_id=None
    )
    body["messages"] = [
        user("first"),
        {
            "role": "assistant",
            "content_items": [{"type": "text.done", "text": "ok"}],
            "usage_metadata": None,
            "finish_reason": "stop",
            "created_at": 1,
        },
        {
            "role": "user",
            "content_items": [
                {"type": "inline_data.done", "data": "aGVsbG8=", "mime_type": "image/png"},
                {"type": "text.done", "text": "and now?"},
            ],
        },
    ]

    stream = post_stream(http, body)

    assert stream.done and not stream.errors
    assert emu.requests[0].json["max_tokens"] == 50


@pytest.mark.parametrize("model", ["chat", "responses", "anthropic"])
def test_extra_body_cannot_replace_the_upstream_model(
    http: httpx.Client, emu: Emulator, model: str
) -> None:
    body = stream_body(model, extra_body={"model": "the-most-expensive-model"})

    error = refused(http.post("/v1/stream", json=body, headers=AUTH), "UnsupportedParameterError")

    assert error["parameter"] == "extra_body.model"
    assert "config.extra_body.model would replace a field the server writes" in error["message"]
    assert emu.requests == []


@pytest.mark.parametrize(
    ("model", "config", "owned"),
    [
        ("chat", {"extra_body": {"stream": None}}, "stream"),
        ("anthropic", {"extra_body": {"messages": []}}, "messages"),
        ("chat", {"max_tokens": 10, "extra_body": {"max_tokens": 100000}}, "max_tokens"),
        (
            "gemini",
            {"max_tokens": 10, "extra_body": {"generationConfig": {"maxOutputTokens": 99999}}},
            "generationConfig.maxOutputTokens",
        ),
    ],
)
def test_extra_body_cannot_replace_or_remove_any_field_the_encoder_wrote(
    http: httpx.Client, emu: Emulator, model: str, config: dict[str, Any], owned: str
) -> None:
    body = stream_body(model, **config)

    error = refused(http.post("/v1/stream", json=body, headers=AUTH), "UnsupportedParameterError")

    assert error["parameter"] == f"extra_body.{owned}"
    assert emu.requests == []


def test_extra_body_still_adds_fields_the_encoder_did_not_write(
    http: httpx.Client, emu: Emulator
) -> None:
    body = stream_body(
        "gemini",
        max_tokens=10,
        extra_body={"generationConfig": {"candidateCount": 1}, "labels": {"team": "a"}},
    )

    stream = post_stream(http, body)

    assert stream.done and not stream.errors
    sent = emu.requests[0].json
    assert sent["generationConfig"] == {"maxOutputTokens": 10, "candidateCount": 1}
    assert sent["labels"] == {"team": "a"}


def test_the_operator_can_forbid_extra_body_per_model(serve: Serve, emu: Emulator) -> None:
    models = config_for(emu)["models"]
    models[0]["allow_extra_body"] = False  # "chat"
    with httpx.Client(base_url=serve(models=models).url) as http:
        body = stream_body("chat", extra_body={"user": "someone"})
        error = refused(
            http.post("/v1/stream", json=body, headers=AUTH), "UnsupportedParameterError"
        )
        allowed = post_stream(http, stream_body("anthropic", extra_body={"metadata": {}}))

    assert error["parameter"] == "extra_body"
    assert "allow_extra_body = false" in error["message"]
    assert allowed.done and not allowed.errors
    assert [r.json["model"] for r in emu.requests] == ["claude-sonnet-4-5"]


def test_a_header_value_with_a_line_break_is_a_400_not_a_broken_stream(
    http: httpx.Client, emu: Emulator
) -> None:
    body = stream_body("anthropic", extra_body={"betas": "tools-2024\r\nx-injected: yes"})

    error = refused(http.post("/v1/stream", json=body, headers=AUTH), "UnsupportedParameterError")

    assert "'anthropic-beta'" in error["message"] and "line break" in error["message"]
    assert emu.requests == []


def test_allow_extra_body_must_be_true_or_false(emu: Emulator) -> None:
    models = config_for(emu)["models"]
    models[1]["allow_extra_body"] = "no"
    env = {UPSTREAM_KEY_ENV: "k", CLIENT_KEY_ENV: "c"}

    with pytest.raises(ServerConfigError, match="allow_extra_body must be true or false"):
        settings_from_mapping(config_for(emu, models=models), env)
