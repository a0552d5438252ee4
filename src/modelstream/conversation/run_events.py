"""What a conversation's `run_stream` yields besides the SPEC events of each round.

Both are shaped like the SPEC's events (`role`, `event_type`, `content_items`, `usage_metadata`,
`finish_reason`, `created_at`), so a loop that reads those keys reads every value `run_stream`
yields, and `event_type` tells the four kinds apart: `delta` and `stop` (a round's stream),
`tool_result` (a tool finished), `final` (the loop's answer, last).
"""

from __future__ import annotations

import copy
import time
from typing import Any, Literal, TypedDict

from ..results import AssistantMessage
from ..types import Event, EventItem, ToolCallDone, ToolResultDone


class ToolResultEvent(TypedDict):
    """One tool call's result, yielded as soon as the tool returns (or fails): its one item is
    what the next round sends the model; `tool_call` is the call it answers."""

    role: Literal["user"]  # a tool result is an item of a user message (SPEC §1)
    event_type: Literal["tool_result"]
    content_items: list[ToolResultDone]
    usage_metadata: None
    finish_reason: None
    created_at: int
    tool_call: ToolCallDone


class FinalMessageEvent(TypedDict):
    """The last value of `run_stream`: `message` is what `run` returns. Its `content_items` is
    empty: the message's items streamed in the last round's events."""

    role: Literal["assistant"]
    event_type: Literal["final"]
    content_items: list[EventItem]
    usage_metadata: None
    finish_reason: None
    created_at: int
    message: AssistantMessage


RunEvent = Event | ToolResultEvent | FinalMessageEvent
"""A value `run_stream` yields; `event_type` says which."""


def tool_result_event(call: dict[str, Any], result: ToolResultDone) -> ToolResultEvent:
    """The event of `result`, with copies: what the caller does to it changes nothing sent."""
    return {
        "role": "user",
        "event_type": "tool_result",
        "content_items": [copy.deepcopy(result)],
        "usage_metadata": None,
        "finish_reason": None,
        "created_at": _now_ms(),
        "tool_call": copy.deepcopy(call),  # type: ignore[typeddict-item] # a tool_call.done
    }


def final_message_event(message: AssistantMessage) -> FinalMessageEvent:
    return {
        "role": "assistant",
        "event_type": "final",
        "content_items": [],
        "usage_metadata": None,
        "finish_reason": None,
        "created_at": _now_ms(),
        "message": message,
    }


def _now_ms() -> int:
    return int(time.time() * 1000)
