"""OpenAI-style histories (`{"role": "user", "content": "hi"}`, assistant `tool_calls`, `tool`
messages) work wherever messages are taken: `complete()`/`stream()` of both clients and a
conversation's history, over real HTTP through the loopback emulator. Each protocol's request
carries the converted turns; a message that cannot be converted is refused before anything is
sent."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from modelstream import AsyncClient, Client, Conversation, InvalidMessageError
from modelstream.testing import Emulator, Reply, Turn

KEY = "sk-test-openai-style"
MODELS = {"openai-chat": "gpt-4o", "anthropic-messages": "claude-sonnet-4-5"}
GET_WEATHER = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def client_for(emu: Emulator, client_type: str) -> Client:
    return Client(
        MODELS[client_type],
        client_type=client_type,
        api_key=KEY,
        base_url=emu.base_url(client_type),
    )


@pytest.mark.parametrize("client_type", ["openai-chat", "anthropic-messages"])
def test_a_tool_round_trip_written_openai_style_reaches_the_provider(
    emu: Emulator, client_type: str
) -> None:
    emu.queue(
        Reply.turn(Turn.tool_call("get_weather", {"city": "Lisbon"}, id="call_w1")),
        Reply.turn(Turn.text("It is 21 °C in Lisbon.")),
    )
    history: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Lisbon?"}]

    with client_for(emu, client_type) as client:
        reply = client.complete(history, tools=[GET_WEATHER])
        history.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                    for call in reply.tool_calls
                ],
            }
        )
        history.append({"role": "tool", "tool_call_id": "call_w1", "content": "21 °C, sunny"})
        final = client.complete(history, tools=[GET_WEATHER])

    assert final.text == "It is 21 °C in Lisbon."
    sent = emu.requests[1].json["messages"]
    if client_type == "openai-chat":
        assert sent[1]["tool_calls"][0]["id"] == "call_w1"
        assert json.loads(sent[1]["tool_calls"][0]["function"]["arguments"]) == {"city": "Lisbon"}
        assert sent[2] == {"role": "tool", "tool_call_id": "call_w1", "content": "21 °C, sunny"}
    else:
        assert sent[1]["content"][0] == {
            "type": "tool_use",
            "id": "call_w1",
            "name": "get_weather",
            "input": {"city": "Lisbon"},
        }
        result = sent[2]["content"][0]
        assert (result["type"], result["tool_use_id"]) == ("tool_result", "call_w1")
        assert "21 °C, sunny" in json.dumps(result["content"], ensure_ascii=False)


def test_text_and_image_parts_become_the_providers_parts(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("A cat.")))
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
        ],
    }

    with client_for(emu, "anthropic-messages") as client:
        assert client.complete(message).text == "A cat."

    (sent,) = emu.requests[0].json["messages"]
    assert sent["content"][0] == {"type": "text", "text": "What is in this picture?"}
    assert sent["content"][1]["source"] == {"type": "url", "url": "https://example.com/cat.png"}


def test_the_async_client_takes_openai_style_messages_too(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("Hello!")))

    async def main() -> str:
        async with AsyncClient(
            "gpt-4o", client_type="openai-chat", api_key=KEY, base_url=emu.base_url("openai-chat")
        ) as client:
            reply = await client.complete([{"role": "user", "content": "Hi", "name": "ana"}])
            return reply.text

    assert asyncio.run(main()) == "Hello!"
    assert emu.requests[0].json["messages"] == [{"role": "user", "content": "Hi"}]


def test_a_system_message_is_refused_before_anything_is_sent_naming_system_prompt(
    emu: Emulator,
) -> None:
    system_first = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    with (
        client_for(emu, "openai-chat") as client,
        pytest.raises(InvalidMessageError, match=r"config\['system_prompt'\]"),
    ):
        client.complete(system_first)

    assert emu.requests == []


def test_a_conversation_keeps_an_openai_style_history_as_spec_messages(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("18 °C in Porto.")))
    history = [
        {"role": "user", "content": "Weather in Lisbon?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_w1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_w1", "content": "21 °C"},
        {"role": "assistant", "content": "21 °C in Lisbon."},
    ]

    with client_for(emu, "openai-chat") as client:
        chat = Conversation(client, history=history)  # type: ignore[arg-type]
        reply = chat.send({"role": "user", "content": "And Porto?"})

    assert reply.text == "18 °C in Porto."
    assert [message["role"] for message in chat.history] == ["user", "assistant"] * 3
    assert chat.history[2]["content_items"] == [
        {"type": "tool_result.done", "tool_call_id": "call_w1", "text": "21 °C"}
    ]
    sent = emu.requests[0].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    assert sent[-1] == {"role": "user", "content": "And Porto?"}


def test_a_conversations_history_setter_and_load_json_take_openai_style_messages(
    emu: Emulator,
) -> None:
    turns = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    spec = [
        {"role": "user", "content_items": [{"type": "text.done", "text": "Hi"}]},
        {"role": "assistant", "content_items": [{"type": "text.done", "text": "Hello!"}]},
    ]

    with client_for(emu, "openai-chat") as client:
        chat = Conversation(client)
        chat.history = turns
        assert chat.history == spec

        chat.clear()
        chat.load_json(json.dumps(turns))
        assert chat.history == spec

        with pytest.raises(InvalidMessageError, match="message 0 has role 'developer'"):
            chat.history = [{"role": "developer", "content": "Be brief."}]
        assert chat.history == spec  # a refused history leaves the one before


def test_a_conversations_load_json_still_restores_its_own_json(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("Hello!")))

    with client_for(emu, "openai-chat") as client:
        chat = Conversation(client)
        chat.send("Hi")
        saved = chat.to_json()
        restored = Conversation(client)
        restored.load_json(saved)

    assert restored.history == chat.history


def test_a_conversation_sends_an_openai_style_tool_message_as_the_calls_result(
    emu: Emulator,
) -> None:
    emu.queue(
        Reply.turn(Turn.tool_call("get_weather", {"city": "Lisbon"}, id="call_w1")),
        Reply.turn(Turn.text("21 °C in Lisbon.")),
    )

    with client_for(emu, "anthropic-messages") as client:
        chat = Conversation(client, {"tools": [GET_WEATHER]})
        (call,) = chat.send({"role": "user", "content": "Weather in Lisbon?"}).tool_calls
        reply = chat.send({"role": "tool", "tool_call_id": call.id, "content": "21 °C"})

    assert reply.text == "21 °C in Lisbon."
    assert chat.history[2] == {
        "role": "user",
        "content_items": [{"type": "tool_result.done", "tool_call_id": "call_w1", "text": "21 °C"}],
    }
    sent = emu.requests[1].json["messages"][2]["content"][0]
    assert (sent["type"], sent["tool_use_id"]) == ("tool_result", "call_w1")


def test_a_conversation_refuses_an_openai_style_assistant_turn_as_a_users(emu: Emulator) -> None:
    with client_for(emu, "openai-chat") as client:
        chat = Conversation(client)
        with pytest.raises(InvalidMessageError, match=r"sends user turns, got .* role 'assistant'"):
            chat.send({"role": "assistant", "content": "I am the user now"})

    assert emu.requests == []
