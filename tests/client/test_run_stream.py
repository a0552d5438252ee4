"""`run_stream`: the tool loop, watched, over real HTTP through the loopback emulator. It yields
each round's events as they arrive, each tool's result as the tool returns, then the final
message, and records the history `run` records. Each test runs with `Conversation` and
`AsyncConversation` (the `mode` fixture)."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from modelstream import (
    AsyncClient,
    AsyncConversation,
    Client,
    Conversation,
    FinalResponse,
    IncompleteStreamError,
    ModelstreamError,
    RunEvent,
    ToolLoopLimitError,
)
from modelstream.testing import Emulator, Reply, ToolCall, Turn

MODEL = "claude-sonnet-4-5"
QUESTION = "Is it sunny in Lisbon, Porto and Faro?"
ANSWER = "Sunny in all three."


def two_tool_rounds() -> list[Reply]:
    """One call, then two calls in one turn, then the answer."""
    return [
        Reply.turn(Turn.tool_call("get_weather", {"city": "Lisbon"}, id="call_1")),
        Reply.turn(
            Turn(
                items=[
                    ToolCall("get_weather", {"city": "Porto"}, id="call_2"),
                    ToolCall("get_weather", {"city": "Faro"}, id="call_3"),
                ]
            )
        ),
        Reply.turn(Turn.text(ANSWER)),
    ]


@dataclass
class Watched:
    """What a caller of `run_stream` saw, and what the conversation kept."""

    events: list[RunEvent]
    error: ModelstreamError | None
    history: list[dict[str, Any]]
    last_result: Any


def watch(
    mode: str,
    emu: Emulator,
    tools: Any,
    *,
    leave_after: Callable[[RunEvent], bool] = lambda event: False,
    max_rounds: int = 8,
) -> Watched:
    """`run_stream` with the blocking or the async API; leaves the block after the first
    event `leave_after` is true of."""
    options = {"api_key": "sk-test-run-stream", "base_url": emu.base_url("anthropic-messages")}
    events: list[RunEvent] = []
    if mode == "sync":
        with Client(MODEL, **options) as client:
            chat = Conversation(client)
            try:
                with chat.run_stream(QUESTION, tools, max_rounds=max_rounds) as stream:
                    for event in stream:
                        events.append(event)
                        if leave_after(event):
                            break
            except ModelstreamError as error:
                return Watched(events, error, chat.history, chat.last_result)
            return Watched(events, None, chat.history, chat.last_result)

    async def main() -> Watched:
        async with AsyncClient(MODEL, **options) as client:
            chat = AsyncConversation(client)
            try:
                async with chat.run_stream(QUESTION, tools, max_rounds=max_rounds) as stream:
                    async for event in stream:
                        events.append(event)
                        if leave_after(event):
                            break
            except ModelstreamError as error:
                return Watched(events, error, chat.history, chat.last_result)
            return Watched(events, None, chat.history, chat.last_result)

    return asyncio.run(main())


@dataclass
class Ran:
    """What `run` returned or raised, and what the conversation kept."""

    message: dict[str, Any] | None
    error: ModelstreamError | None
    history: list[dict[str, Any]]


def run(mode: str, emu: Emulator, tools: Any) -> Ran:
    """`run` with the blocking or the async API, for comparison."""
    options = {"api_key": "sk-test-run-stream", "base_url": emu.base_url("anthropic-messages")}
    if mode == "sync":
        with Client(MODEL, **options) as client:
            chat = Conversation(client)
            try:
                return Ran(chat.run(QUESTION, tools), None, chat.history)
            except ModelstreamError as error:
                return Ran(None, error, chat.history)

    async def main() -> Ran:
        async with AsyncClient(MODEL, **options) as client:
            chat = AsyncConversation(client)
            try:
                return Ran(await chat.run(QUESTION, tools), None, chat.history)
            except ModelstreamError as error:
                return Ran(None, error, chat.history)

    return asyncio.run(main())


def kinds(events: list[RunEvent]) -> list[str]:
    """Each event as its item type (`event_type` when it has no item), a run of deltas as one."""
    labels = [
        event["content_items"][0]["type"] if event["event_type"] == "delta" else event["event_type"]
        for event in events
    ]
    return [
        label
        for i, label in enumerate(labels)
        if i == 0 or labels[i - 1] != label or not label.endswith(".delta")
    ]


def without_times(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages less their `created_at`, which says when, not what."""
    copied = copy.deepcopy(messages)
    for message in copied:
        message.pop("created_at", None)
    return copied


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def test_it_yields_each_rounds_events_then_each_tool_result_then_the_final_message(mode, emu):
    emu.queue(*two_tool_rounds())
    watched = watch(mode, emu, [get_weather])
    assert watched.error is None
    assert kinds(watched.events) == [
        *["tool_call.delta", "tool_call.done", "stop", "tool_result"],
        *["tool_call.delta", "tool_call.done", "tool_call.delta", "tool_call.done", "stop"],
        *["tool_result", "tool_result"],
        *["text.delta", "text.done", "stop", "final"],
    ]
    assert len(emu.requests) == 3


def test_a_tool_result_event_carries_the_result_item_and_the_call_it_answers(mode, emu):
    emu.queue(*two_tool_rounds())
    watched = watch(mode, emu, [get_weather])
    results = [event for event in watched.events if event["event_type"] == "tool_result"]
    assert [event["role"] for event in results] == ["user"] * 3
    assert [event["content_items"] for event in results] == [
        [{"type": "tool_result.done", "tool_call_id": f"call_{n}", "text": f"sunny in {city}"}]
        for n, city in [(1, "Lisbon"), (2, "Porto"), (3, "Faro")]
    ]
    assert [(e["tool_call"]["name"], e["tool_call"]["arguments"]) for e in results] == [
        ("get_weather", {"city": "Lisbon"}),
        ("get_weather", {"city": "Porto"}),
        ("get_weather", {"city": "Faro"}),
    ]
    # what the model read in the next request is what the events said
    sent = emu.requests[2].json["messages"][-1]["content"]
    assert [block["tool_use_id"] for block in sent] == ["call_2", "call_3"]


def test_each_tool_result_is_yielded_as_its_tool_returns_before_the_next_tool_runs(mode, emu):
    emu.queue(*two_tool_rounds())
    seen: list[str] = []

    def weather(city: str) -> str:
        """The weather in a city."""
        seen.append(f"ran {city}")
        return f"sunny in {city}"

    def note(event: RunEvent) -> bool:
        if event["event_type"] == "tool_result":
            seen.append(f"yielded {event['tool_call']['arguments']['city']}")
        return False

    watch(mode, emu, {"get_weather": weather}, leave_after=note)
    assert seen == [
        *["ran Lisbon", "yielded Lisbon"],
        *["ran Porto", "yielded Porto", "ran Faro", "yielded Faro"],
    ]


def test_changing_a_tool_result_event_changes_nothing_the_model_reads_or_the_history_keeps(
    mode, emu
):
    emu.queue(*two_tool_rounds())

    def tamper(event: RunEvent) -> bool:
        if event["event_type"] == "tool_result":
            event["content_items"][0]["text"] = "tampered"
        return False

    watched = watch(mode, emu, [get_weather], leave_after=tamper)
    sent = [block["content"] for block in emu.requests[2].json["messages"][-1]["content"]]
    assert sent == ["sunny in Porto", "sunny in Faro"]
    kept = [item["text"] for item in watched.history[4]["content_items"]]
    assert kept == ["sunny in Porto", "sunny in Faro"]


def test_it_ends_with_the_final_message_that_run_returns_and_records_the_same_history(mode, emu):
    emu.queue(*two_tool_rounds(), *two_tool_rounds())
    watched = watch(mode, emu, [get_weather])
    ran = run(mode, emu, [get_weather])
    final = watched.events[-1]
    assert final["event_type"] == "final"
    assert final["message"].text == ANSWER
    assert final["message"] == watched.history[-1]
    assert ran.message is not None
    assert without_times([final["message"]]) == without_times([ran.message])
    assert len(watched.history) == 6  # three rounds: the user's turn (or results), the answer
    assert without_times(watched.history) == without_times(ran.history)
    assert isinstance(watched.last_result, FinalResponse)


def test_a_round_cut_off_raises_runs_error_after_the_events_that_arrived(mode, emu):
    cut = Reply.turn(Turn.text("word " * 300), fragment_size=4, disconnect_after_bytes=1500)
    first = Reply.turn(Turn.tool_call("get_weather", {"city": "Lisbon"}, id="call_1"))
    emu.queue(first, cut, first, cut)
    watched = watch(mode, emu, [get_weather])
    ran = run(mode, emu, [get_weather])
    assert isinstance(watched.error, IncompleteStreamError)
    assert type(watched.error) is type(ran.error)
    assert kinds(watched.events) == [
        *["tool_call.delta", "tool_call.done", "stop", "tool_result", "text.delta"]
    ]
    arrived = "".join(
        item["text"]
        for event in watched.events
        for item in event["content_items"]
        if item["type"] == "text.delta"
    )
    assert arrived and watched.last_result.text == arrived
    assert watched.last_result.status == "incomplete"
    assert len(watched.history) == 2  # the first round only: the cut one is not recorded
    assert without_times(watched.history) == without_times(ran.history)


def test_leaving_mid_round_closes_the_rounds_stream_and_records_nothing_of_it(mode, emu):
    emu.queue(Reply.turn(Turn.text("word " * 400), fragment_size=4, delay=0.02))
    watched = watch(
        mode, emu, [get_weather], leave_after=lambda event: event["event_type"] == "delta"
    )
    assert watched.error is None
    assert kinds(watched.events) == ["text.delta"]
    (request,) = emu.wait_for_requests(1, finished=True)
    assert request.client_closed_early
    assert watched.last_result.status == "cancelled"
    assert watched.history == []


def test_leaving_after_a_tool_result_runs_no_more_tools_and_sends_nothing_more(mode, emu):
    emu.queue(*two_tool_rounds()[1:])  # two calls in the first turn
    ran: list[str] = []

    def weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return f"sunny in {city}"

    watched = watch(
        mode,
        emu,
        {"get_weather": weather},
        leave_after=lambda event: event["event_type"] == "tool_result",
    )
    assert watched.events[-1]["event_type"] == "tool_result"
    assert ran == ["Porto"]
    assert len(emu.requests) == 1
    assert len(watched.history) == 2  # the turn that asked for the tools, no results


def test_the_round_limit_raises_after_yielding_the_last_rounds_events(mode, emu):
    emu.queue(*two_tool_rounds())
    watched = watch(mode, emu, [get_weather], max_rounds=1)
    assert isinstance(watched.error, ToolLoopLimitError)
    assert kinds(watched.events)[-3:] == ["tool_call.delta", "tool_call.done", "stop"]
    assert [e["event_type"] for e in watched.events].count("tool_result") == 1
    assert len(emu.requests) == 2


@pytest.mark.parametrize("tool_errors", ["maybe", None])
def test_a_wrong_tool_errors_value_raises_on_entering_the_block(emu, tool_errors):
    with (
        Client(MODEL, api_key="sk-test", base_url=emu.base_url("anthropic-messages")) as client,
        pytest.raises(ValueError, match="tool_errors must be 'message' or 'type'"),
        Conversation(client).run_stream(QUESTION, [get_weather], tool_errors=tool_errors),
    ):
        pass
    assert emu.requests == []
