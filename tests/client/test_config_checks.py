"""A config is checked before anything is sent (issue 20 item 3): a key that does not exist or
a value no provider takes raises `InvalidConfigError` (an `UnsupportedParameterError`) from
`stream()` and `complete()`, in the dict or as keyword arguments, with the blocking and the
async client and in a conversation, and the loopback emulator receives no request."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from modelstream import AsyncClient, AsyncConversation, Client, Conversation
from modelstream.errors import InvalidConfigError, UnsupportedParameterError
from modelstream.testing import Emulator, Reply, Turn

MODEL = "gpt-5-mini"
PROTOCOL = "openai-chat"


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def refused_call(emu: Emulator, mode: str, config: Any = None, **keys: Any) -> str:
    """The sentence `complete("Hi", config, **keys)` raised, through the client of `mode`."""
    options: dict[str, Any] = {
        "client_type": PROTOCOL,
        "base_url": emu.base_url(PROTOCOL),
        "api_key": "k",
    }
    with pytest.raises(InvalidConfigError) as raised:
        if mode == "sync":
            with Client(MODEL, **options) as client:
                client.complete("Hi", config, **keys)
        else:

            async def call() -> None:
                async with AsyncClient(MODEL, **options) as client:
                    await client.complete("Hi", config, **keys)

            asyncio.run(call())
    return str(raised.value)


@pytest.mark.parametrize(
    ("config", "sentence"),
    [
        (
            {"temperature": "0.5"},
            "config['temperature'] must be a number from 0 to 2, got '0.5' (a str)",
        ),
        (
            {"max_tokens": -1},
            "config['max_tokens'] must be an integer of at least 1, got -1 (an int)",
        ),
        ({"top_p": 7}, "config['top_p'] must be a number from 0 to 1, got 7 (an int)"),
        ({"max_token": 5}, "unknown config key 'max_token': did you mean 'max_tokens'?"),
        ({"system": "Be brief."}, "unknown config key 'system': did you mean 'system_prompt'?"),
        (
            {"tools": get_weather},
            "config['tools'] must be a list of tools, got the function get_weather: "
            "pass [get_weather]",
        ),
    ],
)
def test_a_bad_config_dict_is_refused_before_any_request(
    emu: Emulator, mode: str, config: dict[str, Any], sentence: str
) -> None:
    assert refused_call(emu, mode, config) == sentence
    assert emu.requests == []


@pytest.mark.parametrize(
    ("keys", "sentence"),
    [
        (
            {"temperature": "0.5"},
            "config['temperature'] must be a number from 0 to 2, got '0.5' (a str)",
        ),
        ({"max_token": 5}, "unknown config key 'max_token': did you mean 'max_tokens'?"),
        (
            {"instructions": "Be brief."},
            "unknown config key 'instructions': did you mean 'system_prompt'?",
        ),
        ({"timout": 5}, "unknown config key 'timout': did you mean 'timeout'?"),
    ],
)
def test_a_bad_keyword_argument_is_refused_with_the_same_suggestion(
    emu: Emulator, mode: str, keys: dict[str, Any], sentence: str
) -> None:
    assert refused_call(emu, mode, **keys) == sentence
    assert emu.requests == []


def test_callers_that_catch_unsupported_parameter_error_still_catch_it(emu: Emulator) -> None:
    client = Client(MODEL, client_type=PROTOCOL, base_url=emu.base_url(PROTOCOL), api_key="k")
    with client, pytest.raises(UnsupportedParameterError) as raised:
        client.stream("Hi", {"stop": ["END", 7]})  # type: ignore[list-item]

    assert raised.value.parameter == "stop"
    assert str(raised.value) == "config['stop'][1] must be a string, got 7 (an int)"
    assert emu.requests == []


def test_good_values_at_the_edges_of_the_ranges_are_sent(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("ok")))
    with Client(MODEL, client_type=PROTOCOL, base_url=emu.base_url(PROTOCOL), api_key="k") as c:
        c.complete("Hi", temperature=2, top_p=0, max_tokens=1, stop="END", tools=[get_weather])

    sent = emu.requests[0].json
    assert (sent["temperature"], sent["top_p"], sent["stop"]) == (2, 0, ["END"])
    assert sent["tools"][0]["function"]["name"] == "get_weather"


def test_a_conversation_refuses_its_config_before_any_request(emu: Emulator, mode: str) -> None:
    options: dict[str, Any] = {
        "client_type": PROTOCOL,
        "base_url": emu.base_url(PROTOCOL),
        "api_key": "k",
    }
    config: Any = {"system_prompt": "Be brief.", "thinking_level": "hgih"}
    with pytest.raises(InvalidConfigError) as raised:
        if mode == "sync":
            with Client(MODEL, **options) as client:
                Conversation(client, config).send("Hi")
        else:

            async def send() -> None:
                async with AsyncClient(MODEL, **options) as client:
                    await AsyncConversation(client, config).send("Hi")

            asyncio.run(send())

    assert str(raised.value).endswith("got 'hgih': did you mean 'high'?")
    assert emu.requests == []


def test_a_function_where_a_list_of_tools_belongs_says_to_wrap_it(emu: Emulator) -> None:
    options: dict[str, Any] = {
        "client_type": PROTOCOL,
        "base_url": emu.base_url(PROTOCOL),
        "api_key": "k",
    }
    with Client(MODEL, **options) as client:
        with pytest.raises(InvalidConfigError) as in_config:
            Conversation(client, {"tools": get_weather})  # type: ignore[typeddict-item]
        with pytest.raises(TypeError) as in_run:
            Conversation(client).run("Weather?", tools=get_weather)  # type: ignore[arg-type]

    assert "got the function get_weather: pass [get_weather]" in str(in_config.value)
    assert "pass [get_weather]" in str(in_run.value)
    assert emu.requests == []
