"""Results: the final message has `.text`, `.thinking`, `.tool_calls` and `.usage` while staying
the SPEC JSON dict; a stream has `text_stream` and `get_final_message()`, which raises the
stream's typed error on a partial. Over real HTTP, through `Client` and `AsyncClient`."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import orjson
import pytest

from modelstream import (
    Accumulator,
    AssistantMessage,
    AsyncClient,
    Client,
    Conversation,
    IncompleteStreamError,
    PartialResponse,
    ProviderError,
    StreamMetadata,
    ToolCall,
    decode_body,
)
from modelstream.jsonwire import dumps, loads_messages
from modelstream.testing import Emulator, Reply, Turn, render
from modelstream.testing.turns import Text, Thinking
from modelstream.testing.turns import ToolCall as ScriptedCall

KEY = "sk-test-0123456789"
MODEL = "claude-sonnet-4-5"
TURN = Turn(
    items=[
        Thinking("Lisbon is in Portugal.", signature="sig-1"),
        Text("Let me look that up. "),
        Text("One moment."),
        ScriptedCall("get_weather", {"city": "Lisbon", "days": [1, 2]}, id="toolu_01"),
    ],
    usage={"cached_tokens": 5, "prompt_tokens": 40, "thoughts_tokens": None, "response_tokens": 17},
)
LONG = "word " * 400


class SyncFacade:
    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def texts(self) -> list[str]:
        return list(self.stream.text_stream)

    def final(self) -> AssistantMessage:
        return self.stream.get_final_message()  # type: ignore[no-any-return]


class AsyncFacade:
    """The async stream driven from inside the running loop, for the same test bodies."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def texts(self) -> Any:
        async def collect() -> list[str]:
            return [piece async for piece in self.stream.text_stream]

        return _Await(collect())

    def final(self) -> Any:
        return _Await(self.stream.get_final_message())


class _Await:
    def __init__(self, coroutine: Any) -> None:
        self.coroutine = coroutine


async def resolve(value: Any) -> Any:
    return await value.coroutine if isinstance(value, _Await) else value


def run_steps(emu: Emulator, mode: str, *steps: str, prompt: Any = "Hi") -> list[Any]:
    """Call the named facade methods in order on one stream; returns what each gave or raised."""
    options: dict[str, Any] = {"api_key": KEY, "base_url": emu.base_url("anthropic-messages")}
    outcomes: list[Any] = []
    if mode == "sync":
        with Client(MODEL, **options) as client, client.stream(prompt) as stream:
            facade = SyncFacade(stream)
            for step in steps:
                try:
                    outcomes.append(getattr(facade, step)())
                except Exception as exc:
                    outcomes.append(exc)
        outcomes.append(stream)
        return outcomes

    async def main() -> None:
        async with AsyncClient(MODEL, **options) as client:
            async with client.stream(prompt) as stream:
                facade = AsyncFacade(stream)
                for step in steps:
                    try:
                        outcomes.append(await resolve(getattr(facade, step)()))
                    except Exception as exc:
                        outcomes.append(exc)
            outcomes.append(stream)

    asyncio.run(main())
    return outcomes


# --- the final message ------------------------------------------------------------------------


def test_the_final_message_offers_text_thinking_tool_calls_and_usage(emu: Emulator) -> None:
    emu.queue(Reply.turn(TURN, fragment_size=4))
    with Client(MODEL, api_key=KEY, base_url=emu.base_url("anthropic-messages")) as client:
        message = client.complete("What's the weather in Lisbon?")
    assert isinstance(message, AssistantMessage) and isinstance(message, dict)
    assert message.text == "Let me look that up. One moment."
    assert message.thinking == "Lisbon is in Portugal."
    assert message.tool_calls == [
        ToolCall(id="toolu_01", name="get_weather", arguments={"city": "Lisbon", "days": [1, 2]})
    ]
    assert message.usage == message["usage_metadata"] == TURN.usage
    assert message.finish_reason == "tool_call"


def test_the_final_message_is_still_the_spec_json_dict(emu: Emulator) -> None:
    emu.queue(Reply.turn(TURN))
    with Client(MODEL, api_key=KEY, base_url=emu.base_url("anthropic-messages")) as client:
        message = client.complete("Hi")
    plain = dict(message)
    assert message == plain and plain == message
    assert orjson.dumps(message) == orjson.dumps(plain)  # the wire and storage form
    assert dumps([message]) == dumps([plain])
    assert loads_messages(dumps([message])) == [plain]
    assert repr(message) == repr(plain)
    assert message["content_items"][1] == {"type": "text.done", "text": "Let me look that up. "}
    copied = copy.deepcopy(message)
    assert type(copied) is AssistantMessage and copied.text == message.text


def test_a_conversation_returns_and_keeps_the_same_message(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("Hello!")))
    with Client(MODEL, api_key=KEY, base_url=emu.base_url("anthropic-messages")) as client:
        chat = Conversation(client)
        reply = chat.send("Hi")
    assert reply.text == "Hello!"
    assert chat.history[1] == reply
    restored = Conversation(client)
    restored.load_json(chat.to_json())
    assert restored.history == chat.history


def test_the_sans_io_decoder_and_the_accumulator_give_the_same_message() -> None:
    body = render("anthropic-messages", TURN, model=MODEL)
    events = list(decode_body("anthropic-messages", [body]))
    accumulator = Accumulator()
    for event in events:
        accumulator.apply(event)
    final = accumulator.final(StreamMetadata(protocol="anthropic-messages"))
    assert isinstance(final.message, AssistantMessage)
    assert final.text == final.message.text == "Let me look that up. One moment."
    assert final.tool_calls[0].name == "get_weather"
    assert final.usage == final.message["usage_metadata"]


# --- the stream -------------------------------------------------------------------------------


def test_text_stream_yields_only_the_text_as_it_arrives(emu: Emulator, mode: str) -> None:
    emu.queue(Reply.turn(TURN, fragment_size=3))
    pieces, final, stream = run_steps(emu, mode, "texts", "final")
    assert len(pieces) > 5 and all(isinstance(piece, str) and piece for piece in pieces)
    assert "".join(pieces) == "Let me look that up. One moment."  # no thinking, no arguments
    assert final is stream.result.message and final.text == "".join(pieces)


def test_get_final_message_reads_the_stream_to_its_end(emu: Emulator, mode: str) -> None:
    emu.queue(Reply.turn(Turn.text("All done."), fragment_size=2))
    final, stream = run_steps(emu, mode, "final")
    assert final.text == "All done."
    assert stream.result.status == "final" and stream.error is None


def test_get_final_message_raises_the_typed_error_of_a_cut_stream(emu: Emulator, mode: str) -> None:
    emu.queue(Reply.turn(Turn.text(LONG), fragment_size=20, disconnect_after_bytes=1500))
    error, again, stream = run_steps(emu, mode, "final", "final")
    assert isinstance(error, IncompleteStreamError)
    assert again is error  # asked twice, the same error: never a partial message
    partial = error.partial
    assert isinstance(partial, PartialResponse) and partial is stream.result
    assert partial.status == "incomplete"
    assert 0 < len(partial.text) < len(LONG) and LONG.startswith(partial.text)
    assert stream.error is error


def test_get_final_message_raises_the_provider_error(emu: Emulator, mode: str) -> None:
    emu.queue(Reply.status(400))
    error, stream = run_steps(emu, mode, "final")
    assert isinstance(error, ProviderError) and error.status == 400
    assert stream.result.status == "failed"


def test_a_stream_closed_before_its_end_has_no_final_message(emu: Emulator, mode: str) -> None:
    emu.queue(Reply.turn(Turn.text(LONG), fragment_size=10, delay=0.01))
    options: dict[str, Any] = {"api_key": KEY, "base_url": emu.base_url("anthropic-messages")}
    if mode == "sync":
        with Client(MODEL, **options) as client:
            stream = client.stream("Hi")
            with stream:
                for piece in stream.text_stream:
                    assert piece
                    break
            with pytest.raises(IncompleteStreamError, match="closed early") as caught:
                stream.get_final_message()
    else:

        async def main() -> Any:
            async with AsyncClient(MODEL, **options) as client:
                stream = client.stream("Hi")
                async with stream:
                    async for piece in stream.text_stream:
                        assert piece
                        break
                with pytest.raises(IncompleteStreamError, match="closed early") as caught:
                    await stream.get_final_message()
                return caught

        caught = asyncio.run(main())
    partial = caught.value.partial
    assert isinstance(partial, PartialResponse) and partial.status == "cancelled"
    assert partial.text and LONG.startswith(partial.text)
