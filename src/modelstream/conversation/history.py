"""What both conversations share: the history and its JSON, a user turn's message, the tool
loop's lookups and error texts. `AsyncConversation` (async_conversation.py) and its generated
blocking twin `Conversation` (sync_conversation.py) build on `_History`. A history may be
given OpenAI-style (`{"role": "user", "content": "hi"}`): it is kept as SPEC messages."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, cast

import orjson

from ..errors import InvalidMessageError
from ..messages import tool_result
from ..openai_messages import from_openai_style, is_openai_style
from ..results import FinalResponse, PartialResponse
from ..tools import FunctionTool, ToolArgumentsError
from ..types import Config, DoneItem, Message, ToolResultDone

UserContent = str | list[DoneItem] | Message | Mapping[str, Any]
"""A user turn: its text, its done items, or a user message (SPEC or OpenAI-style)."""
HistoryInput = Sequence[Mapping[str, Any]]
"""A history as given: SPEC messages, OpenAI-style ones (`openai_messages`), or both."""
ToolErrors = Literal["message", "type"]
"""What of a tool's exception the model reads: its type and message, or its type alone."""


def user_message(content: UserContent) -> Message:
    """A user message from text, a list of done items, or a message (copied; an OpenAI-style
    one converted, a `tool` one to a user message of its result)."""
    if isinstance(content, str):
        return {"role": "user", "content_items": [{"type": "text.done", "text": content}]}
    if isinstance(content, list):
        return {"role": "user", "content_items": copy.deepcopy(content)}
    if isinstance(content, Mapping):
        (message,) = from_openai_style([content])  # a SPEC message comes back as it is
        if message.get("role") == "user":
            return cast(Message, copy.deepcopy(dict(message)))
        raise InvalidMessageError(
            f"a conversation sends user turns, got a message with role {message.get('role')!r}"
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


def _spec_history(messages: HistoryInput) -> list[Message]:
    """A copy of `messages` with its OpenAI-style messages converted (`openai_messages`)."""
    if not isinstance(messages, list | tuple):
        raise TypeError(f"a history is a list of messages, got {type(messages).__name__}")
    return copy.deepcopy(from_openai_style(messages))


def _copied_config(config: Config) -> Config:
    """A deep copy, except for tool functions: a method's object (a database handle, a
    session) must stay the caller's own."""
    functions = [entry for entry in config.get("tools") or () if callable(entry)]
    return copy.deepcopy(config, {id(function): function for function in functions})


class _History:
    """The history and its JSON form, shared by the sync and async conversations."""

    def __init__(self, history: HistoryInput | None) -> None:
        self._messages: list[Message] = _spec_history(history or [])
        self.last_result: FinalResponse | PartialResponse | None = None

    @property
    def history(self) -> list[Message]:
        """A copy of the recorded turns; changing it changes nothing here."""
        return copy.deepcopy(self._messages)

    @history.setter
    def history(self, messages: HistoryInput) -> None:
        self._messages = _spec_history(messages)

    def clear(self) -> None:
        self._messages = []
        self.last_result = None

    def to_json(self) -> bytes:
        """The history as JSON (bytes as base64), for `load_json` to restore."""
        from ..jsonwire import dumps

        return dumps(self._messages)

    def load_json(self, data: bytes | str) -> None:
        """Restore a history from `to_json`'s JSON, or from an OpenAI-style message list."""
        from ..jsonwire import loads_messages

        messages = orjson.loads(data)
        if isinstance(messages, list) and any(map(is_openai_style, messages)):
            data = orjson.dumps(from_openai_style(messages))  # SPEC messages: base64 decoded next
        self._messages = loads_messages(data)

    def _record(self, user: Message, result: Any) -> None:
        self.last_result = result
        if isinstance(result, FinalResponse):
            self._messages += [user, result.message]  # type: ignore[list-item] # a dict
