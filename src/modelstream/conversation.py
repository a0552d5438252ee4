"""Stateful conversations over a client, and the tool loop.

A turn joins the history only when its stream ended with `stop`: a failed or cancelled turn
leaves the history as it was, and its partial stays readable as `last_result`. One turn at a
time: a second send while one is running raises `ConversationBusyError` instead of interleaving
two turns into one history.

`AsyncConversation` is the source of `Conversation`, generated at the end of this module by
`python scripts/generate_sync.py` (client/async_client.py says why): edit the async class
and regenerate; tests/test_unasync.py fails while the blocking twin is stale.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, Literal

from .errors import ConversationBusyError, InvalidMessageError, ToolLoopLimitError
from .messages import tool_result
from .results import AssistantMessage, FinalResponse, PartialResponse
from .tools import (
    FunctionTool,
    ToolArgumentsError,
    ToolFunctions,
    config_offering,
    runnable_tools,
)
from .types import Config, DoneItem, Message, ToolResultDone

if TYPE_CHECKING:
    from .client import AsyncClient, AsyncEventStream, Client, EventStream

UserContent = str | list[DoneItem] | Message
ToolErrors = Literal["message", "type"]
"""What of a tool's exception the model reads: its type and message, or its type alone."""


def user_message(content: UserContent) -> Message:
    """A user message from text, a list of done items, or a message (copied)."""
    if isinstance(content, str):
        return {"role": "user", "content_items": [{"type": "text.done", "text": content}]}
    if isinstance(content, list):
        return {"role": "user", "content_items": copy.deepcopy(content)}
    if isinstance(content, dict) and content.get("role") == "user":
        return copy.deepcopy(content)
    if isinstance(content, dict):
        raise InvalidMessageError(
            f"a conversation sends user turns, got a message with role {content.get('role')!r}"
        )
    raise TypeError(
        "send a str, a list of done items, or a user message (modelstream.user('...')), "
        f"got {type(content).__name__}"
    )


def tool_calls_of(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of a final assistant message, in order."""
    return [dict(item) for item in message["content_items"] if item["type"] == "tool_call.done"]


class _NoSuchTool(LookupError):
    """A call of a tool the loop was not given."""


def _tool_to_call(
    tools: Mapping[str, FunctionTool[..., Any]], call: dict[str, Any]
) -> FunctionTool[..., Any]:
    tool = tools.get(call["name"])
    if tool is None:
        raise _NoSuchTool(f"no tool named {call['name']!r} was given")
    return tool


def _checked_tool_errors(tool_errors: object) -> ToolErrors:
    if tool_errors not in ("message", "type"):
        raise ValueError(f"tool_errors must be 'message' or 'type', got {tool_errors!r}")
    return "type" if tool_errors == "type" else "message"


def _tool_error(
    call: dict[str, Any], error: Exception, tool_errors: ToolErrors, redact: Callable[[str], str]
) -> ToolResultDone:
    """The error result the model reads (it may call again). The loop's own messages go in
    full; a tool's exception as its type and message, or its type alone. Its text may hold a
    credential of the client (a key in a URL, a token in a traceback): `redact` masks them."""
    if isinstance(error, ToolArgumentsError | _NoSuchTool):  # written for the model
        text = str(error)
    elif tool_errors == "type":
        text = f"tool {call['name']!r} failed: {type(error).__name__}"
    else:
        text = f"tool {call['name']!r} failed: {type(error).__name__}: {error}"
    return tool_result(call["tool_call_id"], redact(text), is_error=True)


def _copied_config(config: Config) -> Config:
    """A deep copy, except for tool functions: a method's object (a database handle, a
    session) must stay the caller's own."""
    functions = [entry for entry in config.get("tools") or () if callable(entry)]
    return copy.deepcopy(config, {id(function): function for function in functions})


class _History:
    """The history and its JSON form, shared by the sync and async conversations."""

    def __init__(self, history: list[Message] | None) -> None:
        self._messages: list[Message] = copy.deepcopy(history or [])
        self.last_result: FinalResponse | PartialResponse | None = None

    @property
    def history(self) -> list[Message]:
        """A copy of the recorded turns; changing it changes nothing here."""
        return copy.deepcopy(self._messages)

    @history.setter
    def history(self, messages: list[Message]) -> None:
        self._messages = copy.deepcopy(messages)

    def clear(self) -> None:
        self._messages = []
        self.last_result = None

    def to_json(self) -> bytes:
        """The history as JSON (bytes as base64), for `load_json` to restore."""
        from .jsonwire import dumps

        return dumps(self._messages)

    def load_json(self, data: bytes | str) -> None:
        from .jsonwire import loads_messages

        self._messages = loads_messages(data)

    def _record(self, user: Message, result: Any) -> None:
        self.last_result = result
        if isinstance(result, FinalResponse):
            self._messages += [user, result.message]  # type: ignore[list-item] # a dict


class AsyncConversation(_History):
    """A conversation driven by `AsyncClient`."""

    def __init__(
        self,
        client: AsyncClient,
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

    @asynccontextmanager
    async def stream(self, content: UserContent) -> AsyncIterator[AsyncEventStream]:
        """Stream one turn; it is recorded only if it ends with `stop`."""
        async with self._stream(content, self.config) as events:
            yield events

    @asynccontextmanager
    async def _stream(
        self, content: UserContent, config: Config
    ) -> AsyncIterator[AsyncEventStream]:
        if not self._busy.acquire(blocking=False):
            raise ConversationBusyError()
        try:
            user = user_message(content)
            stream = self.client.stream([*self._messages, user], config, model=self.model)
            try:
                async with stream:
                    yield stream
            finally:
                self._record(user, stream.result)
        finally:
            self._busy.release()

    async def send(self, content: UserContent) -> AssistantMessage:
        """One turn to its end; returns the final assistant message or raises."""
        return await self._send(content, self.config)

    async def _send(self, content: UserContent, config: Config) -> AssistantMessage:
        async with self._stream(content, config) as events:
            async for _ in events:
                pass
        assert isinstance(self.last_result, FinalResponse)
        return self.last_result.message

    async def run(
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
        message = await self._send(content, config)
        for _ in range(max_rounds):
            calls = tool_calls_of(message)
            if not calls:
                return message
            results = [await self._call(runnable, call, tool_errors) for call in calls]
            message = await self._send(results, config)
        if tool_calls_of(message):
            raise ToolLoopLimitError(max_rounds)
        return message

    async def _call(
        self,
        tools: Mapping[str, FunctionTool[..., Any]],
        call: dict[str, Any],
        tool_errors: ToolErrors,
    ) -> DoneItem:
        try:
            value = await _tool_to_call(tools, call).acall(call["arguments"])
        except Exception as exc:
            return _tool_error(call, exc, tool_errors, self.client.redact)
        return tool_result(call["tool_call_id"], value)


# --- GENERATED from AsyncConversation by `python scripts/generate_sync.py` ---


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
