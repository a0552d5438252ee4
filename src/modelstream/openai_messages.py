"""OpenAI-style chat messages (`{"role": "user", "content": "hi"}`) as SPEC messages.

Histories written for OpenAI's Chat Completions are everywhere, so every entry point (the
client's `as_messages`, a conversation's history, the server's `/v1/stream`) takes them and
converts each one here, before the SPEC shape checks. A message with `content_items` is already
a SPEC message and is kept as it is, so a list may mix both.

What maps to what:

    content "hi" / [{"type": "text", ...}]       text.done
    [{"type": "image_url", "image_url": {url}}]   image_url.done (http(s) or data: URL, kept as is)
    assistant "tool_calls" [{id, function}]       tool_call.done (arguments parsed from JSON)
    role "tool" {tool_call_id, content}           tool_result.done; consecutive ones share ONE
                                                  user message (the SPEC has no tool role)
    role "system" / "developer"                   an error: the SPEC's system prompt is
                                                  config["system_prompt"]

`name` and the fields an OpenAI reply carries besides (`refusal`, `annotations`, ...) are not
read. Sans-IO and pure: the caller's dicts are never changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from .errors import InvalidMessageError
from .types import DoneItem, Message, ToolCallDone, ToolResultDone

MESSAGE_SHAPES = (
    "a message is {'role': 'user'|'assistant', 'content_items': [...]} or OpenAI-style "
    "{'role': 'user'|'assistant'|'tool', 'content': ...}"
)
"""The accepted shapes in one sentence, for every error about a message."""

_SYSTEM_ROLES = ("system", "developer")
_CHAT_ROLES = ("user", "assistant")
_A_ROLE = {"user": "a user", "assistant": "an assistant", "tool": "a tool"}


def is_openai_style(message: Any) -> bool:
    """Whether `message` is a mapping without `content_items`: one this module converts."""
    return isinstance(message, Mapping) and "content_items" not in message


def from_openai_style(messages: Sequence[Any]) -> list[Any]:
    """`messages` with each OpenAI-style message converted to a SPEC message; SPEC messages and
    values that are not mappings are kept as they are (the shape checks name what is wrong).

    Raises `InvalidMessageError` naming the message (by its index in `messages`) that cannot be
    converted. Returns `messages` itself when there is nothing to convert."""
    if all(type(m) is dict and "content_items" in m for m in messages):  # the common case
        return messages if isinstance(messages, list) else list(messages)
    out: list[Any] = []
    results: list[DoneItem] | None = None  # the tool results of the current run of tool messages
    for index, message in enumerate(messages):
        if not is_openai_style(message):
            out.append(message)
            results = None
        elif message.get("role") == "tool":
            if results is None:
                results = []
                out.append({"role": "user", "content_items": results})
            results.append(_tool_result(message, index))
        else:
            out.append(_converted(message, index))
            results = None
    return out


def _converted(message: Mapping[str, Any], index: int) -> Message:
    role = message.get("role")
    if role in _SYSTEM_ROLES:
        raise _invalid(
            index,
            f"has role {role!r}: the system prompt is not a message here; pass it as "
            "config['system_prompt'] (or the system_prompt= keyword)",
        )
    if role not in _CHAT_ROLES:
        raise _invalid(
            index, f"has role {role!r}; use 'user', 'assistant' or (OpenAI-style) 'tool'"
        )
    if "content" not in message and "tool_calls" not in message:
        raise _invalid(index, "has neither content_items nor content")
    items = _content(message.get("content"), role, index)
    if role == "assistant":
        items += _tool_calls(message.get("tool_calls"), index)
    elif message.get("tool_calls"):
        raise _invalid(index, "is a user message with tool_calls; only an assistant calls tools")
    if not items:
        raise _invalid(index, f"({role}) is empty: it needs content or tool_calls")
    return {"role": role, "content_items": items}


def _content(content: Any, role: str, index: int) -> list[DoneItem]:
    if isinstance(content, str):
        return [{"type": "text.done", "text": content}]
    if content is None and role == "assistant":  # a reply that only calls tools
        return []
    if not isinstance(content, list):
        raise _invalid(index, f"content must be a str or a list of parts, got {_name(content)}")
    return [_part(part, role, index, position) for position, part in enumerate(content)]


def _part(part: Any, role: str, index: int, position: int) -> DoneItem:
    kind = part.get("type") if isinstance(part, Mapping) else None
    where = f"content part {position}"
    if kind == "text":
        text = part.get("text")
        if not isinstance(text, str):
            raise _invalid(index, f"{where} needs 'text' as a str, got {_name(text)}")
        return {"type": "text.done", "text": text}
    if kind == "image_url" and role == "user":
        return {"type": "image_url.done", "image_url": _image_url(part.get("image_url"), index)}
    accepted = "'text' and 'image_url'" if role == "user" else "'text'"
    raise _invalid(
        index,
        f"{where} has type {kind!r}; {_A_ROLE[role]} message's parts may be {accepted}",
    )


def _image_url(value: Any, index: int) -> str:
    url = value.get("url") if isinstance(value, Mapping) else value
    if isinstance(url, str) and url[:8].lower().startswith(("http://", "https://", "data:")):
        return url
    raise _invalid(
        index,
        "has an image_url part without an http(s) or data: URL; write it as "
        "{'type': 'image_url', 'image_url': {'url': 'https://...'}}",
    )


def _tool_calls(calls: Any, index: int) -> list[DoneItem]:
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise _invalid(index, f"tool_calls must be a list, got {_name(calls)}")
    return [_tool_call(call, index, position) for position, call in enumerate(calls)]


def _tool_call(call: Any, index: int, position: int) -> ToolCallDone:
    function = call.get("function") if isinstance(call, Mapping) else None
    if isinstance(function, Mapping):
        call_id, name = call.get("id"), function.get("name")
        if isinstance(call_id, str) and call_id and isinstance(name, str) and name:
            return {
                "type": "tool_call.done",
                "tool_call_id": call_id,
                "name": name,
                "arguments": _arguments(function.get("arguments"), name, index, position),
            }
    raise _invalid(
        index,
        f"tool call {position} must be {{'id': ..., 'type': 'function', 'function': "
        "{'name': ..., 'arguments': '<JSON object>'}} with a non-empty id and name",
    )


def _arguments(arguments: Any, name: str, index: int, position: int) -> dict[str, Any]:
    """A call's arguments: OpenAI sends a JSON object's text ("" for none); a dict is taken too."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if arguments is None or arguments == "":
        return {}
    parsed: Any = None
    if isinstance(arguments, str):
        try:
            parsed = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            parsed = None
    if isinstance(parsed, dict):
        return parsed
    preview = repr(arguments) if len(repr(arguments)) <= 60 else repr(arguments)[:57] + "..."
    raise _invalid(
        index,
        f"tool call {position} ({name!r}) has arguments that are not a JSON object: "
        f'{preview}; send the object\'s JSON text, e.g. \'{{"city": "Paris"}}\'',
    )


def _tool_result(message: Mapping[str, Any], index: int) -> ToolResultDone:
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise _invalid(
            index, "(role 'tool') needs the tool_call_id of the call it answers, a non-empty str"
        )
    content = message.get("content")
    if isinstance(content, list):  # tool messages may hold text parts only
        content = "\n".join(
            _text_of_part(part, index, position) for position, part in enumerate(content)
        )
    if not isinstance(content, str):
        raise _invalid(
            index, f"(role 'tool') content must be the result as a str, got {_name(content)}"
        )
    return {"type": "tool_result.done", "tool_call_id": call_id, "text": content}


def _text_of_part(part: Any, index: int, position: int) -> str:
    item = _part(part, "tool", index, position)
    assert item["type"] == "text.done"
    return item["text"]


def _invalid(index: int, problem: str) -> InvalidMessageError:
    return InvalidMessageError(f"message {index} {problem}; {MESSAGE_SHAPES}")


def _name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


__all__ = ["MESSAGE_SHAPES", "from_openai_style", "is_openai_style"]
