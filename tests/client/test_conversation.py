"""Conversations and the tool loop, over real HTTP through the loopback emulator.

Every test runs twice: with `Conversation` over `Client`, and with `AsyncConversation` over
`AsyncClient`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from modelstream import (
    AsyncClient,
    AsyncConversation,
    Client,
    Conversation,
    ConversationBusyError,
    IncompleteStreamError,
    StructuredOutputError,
    ToolLoopLimitError,
)
from modelstream.protocols import REGISTRY
from modelstream.testing import Emulator, Reply, Turn, render
from modelstream.testing.render import STREAM_PROTOCOLS

API_KEY = "sk-test-conversation"
# a model for each protocol (the runner passes `client_type=` too)
MODELS = {name: REGISTRY[name].example_model or "emulated-model" for name in STREAM_PROTOCOLS}


class Runner:
    """Runs a function of a conversation with the sync or the async API."""

    def __init__(self, mode: str, emu: Emulator, client_type: str) -> None:
        self.mode, self.emu, self.client_type = mode, emu, client_type

    def run(self, body: Callable[[Any], Any], **conversation: Any) -> Any:
        options = {
            "model": MODELS[self.client_type],
            "client_type": self.client_type,
            "api_key": API_KEY,
            "base_url": self.emu.base_url(self.client_type),
        }
        if self.mode == "sync":
            with Client(**options) as client:
                return body(SyncFacade(Conversation(client, **conversation)))

        async def main() -> Any:
            async with AsyncClient(**options) as client:
                return await body(AsyncFacade(AsyncConversation(client, **conversation)))

        return asyncio.run(main())


class SyncFacade:
    """The same awaitable surface over a sync conversation, so one test body serves both."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.conversation, name)
        if name in ("send", "run"):

            async def call(*args: Any, **kwargs: Any) -> Any:
                return attribute(*args, **kwargs)

            return call
        return attribute


class AsyncFacade:
    def __init__(self, conversation: AsyncConversation) -> None:
        self.conversation = conversation

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conversation, name)


def run_body(runner: Runner, body: Callable[[Any], Any], **conversation: Any) -> Any:
    if runner.mode == "sync":

        def sync_body(facade: Any) -> Any:
            return asyncio.run(body(facade))

        return runner.run(sync_body, **conversation)
    return runner.run(body, **conversation)


@pytest.fixture(params=list(MODELS))
def client_type(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def texts(message: dict[str, Any]) -> list[str]:
    return [i["text"] for i in message["content_items"] if i["type"] == "text.done"]


def test_a_finished_turn_is_recorded_with_its_user_message(mode, emu, client_type):
    emu.queue(Reply.turn(Turn.text("Hi there!")))

    async def body(conversation):
        reply = await conversation.send("hello")
        return reply, conversation.history

    reply, history = run_body(Runner(mode, emu, client_type), body)
    assert texts(reply) == ["Hi there!"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert texts(history[0]) == ["hello"]
    assert history[1]["finish_reason"] == "stop"


def test_the_next_request_carries_the_recorded_history_and_the_system_prompt(mode, emu):
    emu.queue(Reply.turn(Turn.text("First answer.")), Reply.turn(Turn.text("Second answer.")))

    async def body(conversation):
        await conversation.send("first question")
        await conversation.send("second question")
        return conversation.history

    history = run_body(
        Runner(mode, emu, "anthropic-messages"), body, config={"system_prompt": "Be brief."}
    )
    assert len(history) == 4
    second = emu.requests[-1].json
    assert second["system"] == "Be brief."
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert second["messages"][1]["content"][0]["text"] == "First answer."


def test_a_broken_turn_leaves_the_history_unchanged_and_keeps_its_partial(mode, emu):
    cut_off = Turn.text("This answer will be cut off before it ends. " * 20)
    body_size = len(render("openai-responses", cut_off, model=MODELS["openai-responses"]))
    emu.queue(Reply.turn(Turn.text("Fine.")))
    # cut well after the first text delta, so the transport may not retry it
    emu.queue(Reply.turn(cut_off, disconnect_after_bytes=body_size * 3 // 4))

    async def body(conversation):
        await conversation.send("one")
        before = conversation.history
        with pytest.raises(IncompleteStreamError):
            await conversation.send("two")
        return before, conversation.history, conversation.last_result

    before, after, partial = run_body(Runner(mode, emu, "openai-responses"), body)
    assert after == before and len(after) == 2
    assert partial.status == "incomplete"


def test_history_round_trips_through_json(mode, emu):
    emu.queue(Reply.turn(Turn.tool_call("get_time", {"zone": "UTC"}, id="call_7")))

    async def body(conversation):
        await conversation.send("what time is it?")
        data = conversation.to_json()
        conversation.clear()
        cleared = conversation.history
        conversation.load_json(data)
        return data, cleared, conversation.history

    data, cleared, restored = run_body(Runner(mode, emu, "openai-chat"), body)
    assert cleared == []
    assert isinstance(data, bytes)
    call = restored[1]["content_items"][-1]
    assert call["type"] == "tool_call.done"
    assert call["name"] == "get_time" and call["arguments"] == {"zone": "UTC"}


def test_changing_the_returned_history_changes_nothing_inside(mode, emu):
    emu.queue(Reply.turn(Turn.text("ok")))

    async def body(conversation):
        await conversation.send("hi")
        copy = conversation.history
        copy.clear()
        return conversation.history

    assert len(run_body(Runner(mode, emu, "gemini-generate-content"), body)) == 2


def test_a_second_send_while_a_turn_runs_is_refused(mode, emu):
    emu.queue(Reply.turn(Turn.text("slow answer"), delay=0.01, chunk_size=16))

    async def body(facade):
        conversation = facade.conversation
        if isinstance(conversation, AsyncConversation):
            async with conversation.stream("first") as events:
                async for _ in events:
                    with pytest.raises(ConversationBusyError):
                        await conversation.send("second")
                    break
        else:
            with conversation.stream("first") as events:
                for _ in events:
                    with pytest.raises(ConversationBusyError):
                        conversation.send("second")
                    break
        return conversation.history, conversation.last_result

    history, result = run_body(Runner(mode, emu, "anthropic-messages"), body)
    assert history == []  # the first turn was cancelled by leaving the block early
    assert result.status == "cancelled"


def test_the_tool_loop_runs_calls_and_sends_their_results_until_an_answer(mode, emu, client_type):
    emu.queue(
        Reply.turn(Turn.tool_call("get_weather", {"city": "Lisbon"}, id="call_w1")),
        Reply.turn(Turn.text("It is 21 °C and sunny in Lisbon.")),
    )
    seen: list[dict[str, Any]] = []

    def get_weather(city: str) -> dict[str, Any]:
        seen.append({"city": city})
        return {"city": city, "temperature_c": 21, "sky": "sunny"}

    async def body(conversation):
        final = await conversation.run("Weather in Lisbon?", {"get_weather": get_weather})
        return final, conversation.history

    final, history = run_body(Runner(mode, emu, client_type), body)
    assert seen == [{"city": "Lisbon"}]
    assert texts(final) == ["It is 21 °C and sunny in Lisbon."]
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    (result,) = history[2]["content_items"]
    assert result["type"] == "tool_result.done"
    assert result["tool_call_id"] == history[1]["content_items"][-1]["tool_call_id"]
    assert '"temperature_c":21' in result["text"]
    assert "21" in emu.requests[-1].body.decode()


def test_a_failing_tool_becomes_an_error_result_the_model_can_read(mode, emu):
    emu.queue(
        Reply.turn(Turn.tool_call("divide", {"a": 1, "b": 0}, id="call_d")),
        Reply.turn(Turn.text("Division by zero is undefined.")),
    )

    def divide(a: int, b: int) -> float:
        return a / b

    async def body(conversation):
        await conversation.run("1/0?", {"divide": divide})
        return conversation.history

    history = run_body(Runner(mode, emu, "anthropic-messages"), body)
    result = history[2]["content_items"][0]
    assert result["text"].startswith("error: tool 'divide' failed: ZeroDivisionError")


def test_the_tool_loop_stops_at_its_round_limit(mode, emu):
    emu.queue(*[Reply.turn(Turn.tool_call("again", {}, id=f"call_{n}")) for n in range(3)])

    async def body(conversation):
        with pytest.raises(ToolLoopLimitError):
            await conversation.run("loop", {"again": lambda: "more"}, max_rounds=2)
        return conversation.history

    history = run_body(Runner(mode, emu, "openai-chat"), body)
    assert len(history) == 6  # every round is recorded, so the caller can inspect them


class Forecast(BaseModel):
    city: str
    celsius: int


def test_a_structured_answer_is_parsed_by_send_and_by_the_tool_loop(mode, emu):
    """`response_format` in the conversation's config: each answer's `message.parsed`, after a
    tool round too; one that does not fit raises and is still in the history, as it was said."""
    answer = '{"city": "Lisbon", "celsius": 21}'
    emu.queue(
        Reply.turn(Turn.text(answer)),
        Reply.turn(Turn.tool_call("get_weather", {"city": "Lisbon"}, id="call_w1")),
        Reply.turn(Turn.text(answer)),
        Reply.turn(Turn.text("It is warm.")),
    )

    async def body(conversation):
        sent = await conversation.send("Lisbon?")
        ran = await conversation.run("Again?", {"get_weather": lambda city: {"celsius": 21}})
        with pytest.raises(StructuredOutputError) as raised:
            await conversation.send("And now?")
        return sent.parsed, ran.parsed, raised.value, conversation.history

    sent, ran, error, history = run_body(
        Runner(mode, emu, "openai-chat"), body, config={"response_format": Forecast}
    )
    assert sent == ran == Forecast(city="Lisbon", celsius=21)
    assert error.text == "It is warm."
    assert len(history) == 8 and texts(history[-1]) == ["It is warm."]
