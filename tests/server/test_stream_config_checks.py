"""The server refuses a config that breaks the config rules (issue 20 item 3) with a 400 whose
message is the sentence a Python caller reads, before anything reaches the upstream: typed
`UnsupportedParameterError` as every config refusal of the server, with the value's `path`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from modelstream.errors import InvalidConfigError
from modelstream.protocols.common.config_rules import check_config
from modelstream.testing import Emulator
from support.server import AUTH, Serve, post_stream, stream_body


@pytest.fixture
def http(serve: Serve) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=serve().url) as client:
        yield client


def refusal(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["type"] == "UnsupportedParameterError"
    return error


def python_sentence(config: dict[str, Any]) -> str:
    """What a Python caller reads for the same config."""
    with pytest.raises(InvalidConfigError) as raised:
        check_config(config)
    return str(raised.value)


@pytest.mark.parametrize(
    ("config", "path", "sentence"),
    [
        (
            {"temperature": "0.5"},
            "config.temperature",
            "config['temperature'] must be a number from 0 to 2, got '0.5' (a str)",
        ),
        (
            {"max_tokens": -1},
            "config.max_tokens",
            "config['max_tokens'] must be an integer of at least 1, got -1 (an int)",
        ),
        (
            {"top_p": 7},
            "config.top_p",
            "config['top_p'] must be a number from 0 to 1, got 7 (an int)",
        ),
        (
            {"max_token": 5},
            "config.max_token",
            "unknown config key 'max_token': did you mean 'max_tokens'?",
        ),
        (
            {"system": "Be brief."},
            "config.system",
            "unknown config key 'system': did you mean 'system_prompt'?",
        ),
        (
            {"tools": [{"description": "no name"}]},
            "config.tools[0].name",
            "config['tools'][0]['name'] is missing: every tool needs a name",
        ),
    ],
)
@pytest.mark.parametrize("model", ["chat", "anthropic"])
def test_a_bad_config_is_a_400_with_the_python_sentence_and_nothing_goes_upstream(
    http: httpx.Client,
    emu: Emulator,
    model: str,
    config: dict[str, Any],
    path: str,
    sentence: str,
) -> None:
    body = stream_body(model, **config)

    error = refusal(http.post("/v1/stream", json=body, headers=AUTH))

    assert error["message"] == sentence == python_sentence(config)
    assert (error["path"], error["parameter"]) == (path, path.split(".")[1].split("[")[0])
    assert emu.requests == []


def test_a_value_at_the_edge_of_its_range_still_streams(http: httpx.Client, emu: Emulator) -> None:
    body = stream_body("chat", temperature=2, top_p=1, max_tokens=1, stop="END")

    stream = post_stream(http, body)

    assert stream.done and not stream.errors
    sent = emu.requests[0].json
    assert (sent["temperature"], sent["top_p"], sent["stop"]) == (2, 1, ["END"])
