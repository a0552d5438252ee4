"""The calls a newcomer types first, from habits formed on the official SDKs (issue 20, items 1-3),
against the loopback emulator: no key, no network. Exits 0 when each one works as documented.

Run by scripts/newcomer.sh in a fresh clone's venv, and by tests/docs/test_newcomer.py.
"""

from __future__ import annotations

from typing import Any

from modelstream import Client, InvalidConfigError
from modelstream.testing import Emulator, Reply, Text, ToolCall, Turn
from modelstream.types import ToolSchema


def main() -> None:
    with Emulator() as emu:
        base_url = emu.base_url("openai-chat")  # an OpenAI-family base URL: it ends in /v1
        with Client(
            "gpt-5-mini", base_url=base_url, api_key="sk-emulated", timeout=30, max_retries=3
        ) as client:
            # 1. the SDKs' spellings: timeout=, max_retries= and config keys as keywords
            emu.queue(Reply.turn(Turn(items=[Text("Hi there!")])))
            message = client.complete("hi", max_tokens=5, temperature=0)
            assert message["content_items"][0]["text"] == "Hi there!", message
            sent = emu.requests[-1].json
            # gpt-5-mini routes to the Responses API, whose name for max_tokens is this one
            assert (sent["max_output_tokens"], sent["temperature"]) == (5, 0), sent

            # 2. OpenAI-style messages, a tool round trip included
            emu.queue(Reply.turn(Turn(items=[Text("It is 18 °C in Paris.")])))
            history: list[dict[str, Any]] = [
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "18 °C, clear"},
            ]
            message = client.complete(history)
            assert message["content_items"][0]["text"] == "It is 18 °C in Paris.", message
            sent = emu.requests[-1].json
            kinds = [entry.get("type", entry.get("role")) for entry in sent["input"]]
            assert kinds == ["user", "function_call", "function_call_output"], sent

            # 3. config checked before anything is sent, with suggestions
            before = len(emu.requests)
            for config, said in [
                ({"temperature": "0.5"}, "must be a number from 0 to 2"),
                ({"max_tokens": -1}, "max_tokens"),
                ({"top_p": 7}, "top_p"),
                ({"max_token": 5}, "did you mean 'max_tokens'?"),
                ({"system": "Be brief."}, "system_prompt"),
            ]:
                try:
                    client.complete("hi", **config)  # type: ignore[arg-type]
                except InvalidConfigError as error:
                    assert said in str(error), (config, str(error))
                else:
                    raise AssertionError(f"{config} was not refused")
            assert len(emu.requests) == before, "a refused config must send nothing"

        # a tool call the model answers, to show item 1's client works with tools too
        emu.queue(Reply.turn(Turn(items=[ToolCall("get_weather", {"city": "Paris"}, id="c1")])))
        with Client("gpt-5-mini", base_url=base_url, api_key="sk-emulated") as client:
            message = client.complete("Weather in Paris?", tools=[WEATHER])
            assert message["finish_reason"] == "tool_call", message
    print("newcomer calls: ok")


WEATHER: ToolSchema = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}

if __name__ == "__main__":
    main()
