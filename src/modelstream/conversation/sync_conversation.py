"""`Conversation`: the conversation of a `Client`, twin of `AsyncConversation`.

GENERATED from async_conversation.py by `python scripts/generate_sync.py`; do not edit: edit the
async conversation and regenerate (tests/client/test_unasync.py fails while this file is stale).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import ConversationBusyError, ToolLoopLimitError
from ..messages import tool_result
from ..results import AssistantMessage, FinalResponse
from ..tools import (
    FunctionTool,
    ToolFunctions,
    config_offering,
    runnable_tools,
)
from ..types import Config, DoneItem, Message
from .history import (
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
        history: list[Message] | None = None,
    ) -> None:
        super().__init__(history)
        self.client = client
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
        with self._stream(content, config) as events:
            for _ in events:
                pass
        assert isinstance(self.last_result, FinalResponse)
        return self.last_result.message

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
        tool_errors = _checked_tool_errors(tool_errors)
        runnable = runnable_tools(self.config.get("tools"), tools)
        config = config_offering(self.config, runnable)
        message = self._send(content, config)
        for _ in range(max_rounds):
            calls = tool_calls_of(message)
            if not calls:
                return message
            results = [self._call(runnable, call, tool_errors) for call in calls]
            message = self._send(results, config)
        if tool_calls_of(message):
            raise ToolLoopLimitError(max_rounds)
        return message

    def _call(
        self,
        tools: Mapping[str, FunctionTool[..., Any]],
        call: dict[str, Any],
        tool_errors: ToolErrors,
    ) -> DoneItem:
        try:
            value = _tool_to_call(tools, call).call(call["arguments"])
        except Exception as exc:
            return _tool_error(call, exc, tool_errors, self.client.redact)
        return tool_result(call["tool_call_id"], value)
