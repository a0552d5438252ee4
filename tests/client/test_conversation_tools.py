"""The tool loop with plain functions, over real HTTP through the loopback emulator: every
request offers the tools' definitions, arguments are checked before a call, and what goes
wrong goes back to the model. Each loop test runs with `Conversation` and `AsyncConversation`."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any, Literal

import pytest

from modelstream import (
    AsyncClient,
    AsyncConversation,
    Client,
    Conversation,
    ToolDefinitionError,
    tool,
)
from modelstream.protocols import REGISTRY
from modelstream.testing import Emulator, Reply, ToolCall, Turn
from modelstream.testing.render import STREAM_PROTOCOLS

MODELS = {name: REGISTRY[name].example_model or "emulated-model" for name in STREAM_PROTOCOLS}


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """The current weather in a city.

    Args:
        city: The city's name, e.g. "Lisbon".
        unit: The temperature unit.
    """
    return {"city": city, "temperature": 21 if unit == "celsius" else 70, "sky": "sunny"}


GET_WEATHER = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": 'The city\'s name, e.g. "Lisbon".'},
            "unit": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "description": "The temperature unit.",
                "default": "celsius",
            },
        },
        "required": ["city"],
        "additionalProperties": False,
    },
}


def run_loop(
    mode: str,
    emu: Emulator,
    client_type: str,
    content: str,
    tools: Any = None,
    config: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`run` with the blocking or the async API; the final message and the history."""
    options = {
        "model": MODELS[client_type],
        "client_type": client_type,
        "api_key": "sk-test-tools",
        "base_url": emu.base_url(client_type),
    }
    if mode == "sync":
        with Client(**options) as client:
            chat = Conversation(client, config)  # type: ignore[arg-type]
            return chat.run(content, tools), chat.history  # type: ignore[return-value]

    async def main() -> Any:
        async with AsyncClient(**options) as client:
            chat = AsyncConversation(client, config)  # type: ignore[arg-type]
            return await chat.run(content, tools), chat.history

    return asyncio.run(main())  # type: ignore[no-any-return]


def dicts_in(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object inside a request body, at any depth."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from dicts_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from dicts_in(item)


def tool_results(history: list[dict[str, Any]]) -> list[str]:
    return [
        item["text"]
        for message in history
        for item in message["content_items"]
        if item["type"] == "tool_result.done"
    ]


def texts(message: dict[str, Any]) -> list[str]:
    return [item["text"] for item in message["content_items"] if item["type"] == "text.done"]


@pytest.mark.parametrize("client_type", STREAM_PROTOCOLS)
def test_every_protocol_sends_a_function_tool_definition_in_each_request_of_the_loop(
    mode, emu, client_type
):
    emu.queue(
        Reply.turn(Turn.tool_call("get_weather", {"city": "Lisbon"}, id="call_w1")),
        Reply.turn(Turn.text("It is 21 °C and sunny in Lisbon.")),
    )
    final, history = run_loop(mode, emu, client_type, "Weather in Lisbon?", [get_weather])
    assert texts(final) == ["It is 21 °C and sunny in Lisbon."]
    assert tool_results(history) == ['{"city":"Lisbon","temperature":21,"sky":"sunny"}']
    assert len(emu.requests) == 2
    for request in emu.requests:
        # the encoder may wrap the definition, but sends the name and the schema unchanged
        sent = list(dicts_in(request.json))
        assert GET_WEATHER["parameters"] in sent, client_type
        assert any(d.get("name") == "get_weather" for d in sent), client_type
        assert any(GET_WEATHER["description"] in d.values() for d in sent), (
            f"{client_type} dropped the description"
        )


def test_arguments_that_do_not_fit_go_back_to_the_model_and_the_loop_goes_on(mode, emu):
    emu.queue(
        Reply.turn(Turn.tool_call("get_weather", {"town": "Lisbon", "unit": "K"}, id="call_1")),
        Reply.turn(Turn.tool_call("get_weather", {"city": "Lisbon"}, id="call_2")),
        Reply.turn(Turn.text("21 °C.")),
    )
    calls: list[str] = []

    def weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
        calls.append(city)
        return f"21 °C in {city}"

    final, history = run_loop(mode, emu, "anthropic-messages", "Weather?", {"get_weather": weather})
    assert texts(final) == ["21 °C."]
    assert calls == ["Lisbon"]  # the call that did not fit never reached the function
    assert tool_results(history) == [
        "error: the arguments of tool 'get_weather' do not fit its parameters: "
        "`city`: missing (it is required); "
        "`town`: unexpected (the known names are: city, unit); "
        '`unit`: "K" is not one of "celsius", "fahrenheit". '
        "Call it again with arguments that fit.",
        "21 °C in Lisbon",
    ]
    # the model read the error in the second request, as a tool result of its call
    second = emu.requests[1].json["messages"][-1]["content"][0]
    assert second["type"] == "tool_result" and second["tool_use_id"] == "call_1"
    assert "`city`: missing" in str(second["content"])


def test_an_async_tool_is_awaited_and_a_blocking_conversation_runs_it_too(mode, emu):
    emu.queue(
        Reply.turn(Turn.tool_call("lookup", {"key": "a", "keys": ["b", "c"]}, id="call_l")),
        Reply.turn(Turn.text("Found them.")),
    )

    async def lookup(key: str, keys: list[str] | None = None) -> list[str]:
        """Look keys up.

        Args:
            key: The first key.
            keys: More keys.
        """
        await asyncio.sleep(0)
        return [key, *(keys or [])]

    assert tool(lookup).definition == {
        "name": "lookup",
        "description": "Look keys up.",
        "parameters": {
            "type": "object",
            "properties": {
                "key": {"type": "string", "description": "The first key."},
                "keys": {
                    "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                    "description": "More keys.",
                    "default": None,
                },
            },
            "required": ["key"],
            "additionalProperties": False,
        },
    }
    final, history = run_loop(mode, emu, "openai-chat", "Look up a, b, c", [lookup])
    assert texts(final) == ["Found them."]
    assert tool_results(history) == ['["a","b","c"]']


def test_an_async_conversation_runs_a_sync_tool_in_a_worker_thread(emu):
    emu.queue(
        Reply.turn(Turn.tool_call("where_am_i", {}, id="call_t")),
        Reply.turn(Turn.text("Done.")),
    )
    threads: list[int] = []

    def where_am_i() -> str:
        threads.append(threading.get_ident())
        return "here"

    run_loop("async", emu, "openai-responses", "Where?", [where_am_i])
    assert threads and threads[0] != threading.get_ident()  # asyncio.run's loop ran here


def test_an_exception_from_a_tool_goes_back_to_the_model(mode, emu):
    emu.queue(
        Reply.turn(Turn.tool_call("divide", {"a": 1, "b": 0}, id="call_d")),
        Reply.turn(Turn.text("Division by zero is undefined.")),
    )

    def divide(a: float, b: float) -> float:
        return a / b

    final, history = run_loop(mode, emu, "gemini-generate-content", "1/0?", [divide])
    assert texts(final) == ["Division by zero is undefined."]
    assert tool_results(history) == [
        "error: tool 'divide' failed: ZeroDivisionError: float division by zero"
    ]


def test_functions_in_the_config_are_offered_and_run_by_the_loop(mode, emu):
    emu.queue(
        Reply.turn(
            Turn(
                items=[
                    ToolCall("get_weather", {"city": "Porto"}, id="call_a"),
                    ToolCall("get_time", {}, id="call_b"),
                ]
            )
        ),
        Reply.turn(Turn.text("Sunny, noon.")),
    )
    config = {"tools": [get_weather, {"name": "get_time", "description": "hand-written"}]}
    final, history = run_loop(
        mode, emu, "openai-chat", "Weather and time?", {"get_time": lambda: "12:00"}, config
    )
    assert texts(final) == ["Sunny, noon."]
    assert tool_results(history) == ['{"city":"Porto","temperature":21,"sky":"sunny"}', "12:00"]
    sent = emu.requests[0].json["tools"]
    assert [entry["function"]["name"] for entry in sent] == ["get_time", "get_weather"]
    # a definition written in the config wins over the function's own
    assert sent[0]["function"]["description"] == "hand-written"
    assert sent[1]["function"]["parameters"] == GET_WEATHER["parameters"]


def test_a_request_config_takes_a_function_as_a_tool(emu):
    emu.queue(Reply.turn(Turn.text("ok")))
    hello = [{"role": "user", "content_items": [{"type": "text.done", "text": "hi"}]}]
    with Client(
        "claude-sonnet-4-5", api_key="sk-test", base_url=emu.base_url("anthropic-messages")
    ) as client:
        client.complete(hello, {"tools": [tool(get_weather, name="weather")]})  # type: ignore[arg-type]
    (sent,) = emu.requests[0].json["tools"]
    assert sent == {
        "name": "weather",
        "description": GET_WEATHER["description"],
        "input_schema": GET_WEATHER["parameters"],
    }


def test_two_functions_under_one_name_are_refused_before_anything_is_sent(emu):
    def get_weather_again(city: str) -> str:
        return city

    with Client("gpt-4o", api_key="sk-test", base_url=emu.base_url("openai-chat")) as client:
        chat = Conversation(client, {"tools": [get_weather]})
        with pytest.raises(ToolDefinitionError, match="'get_weather'"):
            chat.run("hi", {"get_weather": get_weather_again})
    assert emu.requests == []


def test_a_tool_method_keeps_its_object_when_the_conversation_copies_its_config(emu):
    emu.queue(
        Reply.turn(Turn.tool_call("add", {"amount": 2}, id="call_c")),
        Reply.turn(Turn.text("Added.")),
    )

    class Counter:
        def __init__(self) -> None:
            self.total = 0

        def add(self, amount: int) -> int:
            """Add to the total."""
            self.total += amount
            return self.total

    counter = Counter()
    run_loop("sync", emu, "openai-chat", "Add 2", config={"tools": [counter.add]})
    assert counter.total == 2
