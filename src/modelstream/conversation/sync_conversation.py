"""`Conversation`: the conversation of a `Client`, twin of `AsyncConversation`.

GENERATED from async_conversation.py by `python scripts/generate_sync.py`; do not edit: edit the
async conversation and regenerate (tests/client/test_unasync.py fails while this file is stale).
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..client.settings import check_call_config
from ..errors import ConversationBusyError, ToolLoopLimitError
from ..messages import tool_result
from ..results import AssistantMessage, FinalResponse
from ..tools import (
    FunctionTool,
    ToolFunctions,
    config_offering,
    runnable_tools,
)
from ..types import Config, DoneItem, ToolResultDone
from .history import (
    HistoryInput,
    ToolErrors,
    UserContent,
    _checked_tool_errors,
    _copied_config,
    _History,
    _tool_error,
    _tool_to_call,
    tool_calls_of,
    user_message,
)
from .run_events import RunEvent, final_message_event, tool_result_event

if TYPE_CHECKING:
    from ..client import Client, EventStream


class Conversation(_History):
    """A conversation driven by `Client`."""

    def __init__(
        self,
        client: Client,
        config: Config | None = None,
        *,
        model: str | None = None,
        history: HistoryInput | None = None,
    ) -> None:
        super().__init__(history)
        self.client = client
        check_call_config(config or {})  # a bad key or value is refused here, not mid-loop
        self.config: Config = _copied_config(config or {})
        self.model = model
        self._busy = threading.Lock()  # taken without waiting, by a task or a thread

    @contextmanager
    def stream(self, content: UserContent) -> Iterator[EventStream]:
        """Stream one turn; it is recorded only if it ends with `stop`."""
        with self._stream(content, self.config) as events:
            yield events

    @contextmanager
    def _stream(self, content: UserContent, config: Config) -> Iterator[EventStream]:
        if not self._busy.acquire(blocking=False):
            raise ConversationBusyError()
        try:
            user = user_message(content)
            stream = self.client.stream([*self._messages, user], config, model=self.model)
            try:
                with stream:
                    yield stream
            finally:
                self._record(user, stream.result)
        finally:
            self._busy.release()

    def send(self, content: UserContent) -> AssistantMessage:
        """One turn to its end; returns the final assistant message or raises."""
        return self._send(content, self.config)

    def _send(self, content: UserContent, config: Config) -> AssistantMessage:
        # the stream's own final message: with a `response_format`, its answer is read into
        # `message.parsed` (or raises); the turn is in the history either way, as it was said
        with self._stream(content, config) as events:
            return events.get_final_message()

    def run(
        self,
        content: UserContent,
        tools: ToolFunctions | None = None,
        *,
        max_rounds: int = 8,
        tool_errors: ToolErrors = "message",
    ) -> AssistantMessage:
        """Send, run the tool calls of each final turn, send their results, repeat.

        The tools are functions (sync or async) or a mapping from name to function, plus any
        function in `config["tools"]`; every request of the loop offers them to the model
        (docs/tools.md). Arguments that do not fit a tool's schema, and exceptions a tool
        raises, go back to the model as error results, with the client's credentials masked;
        `tool_errors="type"` sends an exception's type without its message."""
        # the loop of `run_stream`, unwatched: one loop, so the two record the same history
        with self.run_stream(
            content, tools, max_rounds=max_rounds, tool_errors=tool_errors
        ) as events:
            for event in events:
                if event["event_type"] == "final":
                    return event["message"]
        raise AssertionError("the tool loop ended without its final message")

    @contextmanager
    def run_stream(
        self,
        content: UserContent,
        tools: ToolFunctions | None = None,
        *,
        max_rounds: int = 8,
        tool_errors: ToolErrors = "message",
    ) -> Iterator[Iterator[RunEvent]]:
        """`run`, watched: each round's events as they arrive, a `tool_result` event as each
        tool finishes, then a `final` event holding what `run` returns (docs/tools.md).

        A round that does not end with `stop` raises its error after its events; leaving the
        block closes the round's stream, and runs no more tools."""
        tool_errors = _checked_tool_errors(tool_errors)
        runnable = runnable_tools(self.config.get("tools"), tools)
        config = config_offering(self.config, runnable)
        events = self._run_events(content, runnable, config, max_rounds, tool_errors)
        try:
            yield events
        finally:
            events.close()

    def _run_events(
        self,
        content: UserContent,
        tools: Mapping[str, FunctionTool[..., Any]],
        config: Config,
        max_rounds: int,
        tool_errors: ToolErrors,
    ) -> Generator[RunEvent]:
        event: RunEvent  # a round's events, then each result of its tools
        turn = content
        for round_number in range(max_rounds + 1):  # the first request, then a round each
            with self._stream(turn, config) as stream:
                for event in stream:
                    yield event
                assert isinstance(stream.result, FinalResponse)  # else the stream raised
                message = stream.result.message
                calls = tool_calls_of(message)
                if not calls:  # the answer: read into its `response_format`, as `send` does
                    message = stream.get_final_message()
            if not calls:
                yield final_message_event(message)
                return
            if round_number == max_rounds:
                raise ToolLoopLimitError(max_rounds)
            results: list[DoneItem] = []
            for call in calls:  # one after another, each result out as its tool returns
                result = self._call(tools, call, tool_errors)
                results.append(result)
                event = tool_result_event(call, result)
                yield event
            turn = results

    def _call(
        self,
        tools: Mapping[str, FunctionTool[..., Any]],
        call: dict[str, Any],
        tool_errors: ToolErrors,
    ) -> ToolResultDone:
        try:
            value = _tool_to_call(tools, call).call(call["arguments"])
        except Exception as exc:
            return _tool_error(call, exc, tool_errors, self.client.redact)
        return tool_result(call["tool_call_id"], value)
