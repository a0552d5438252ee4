"""The request a `useChat` front-end sends (`DefaultChatTransport`'s POST body), as the SPEC
request.

    {"id": "<chat id>", "messages": [UIMessage, ...], "trigger": "submit-message",
     "messageId": ..., "model": "<served model>", "config": {...}}

`model` and `config` are this server's: the front-end sends them in the transport's `body`
option (`new DefaultChatTransport({api, body: {model: "claude"}})`); `config` is the SPEC
config, as `/v1/stream` takes it. `id` names the chat: a later `GET <api>/<id>/stream` (the
transport's reconnect) finds the chat's last stream by it. Any other field, such as one the
page adds to `body` for its own back end, is ignored and logged.

A UIMessage is `{id, role, parts}`; its parts become:

    system  text parts          the system prompt (`config.system_prompt`, joined in order)
    text                        text
    file    an image            an image by URL (`data:` or http(s) URLs, kept as they are)
    tool-<name> / dynamic-tool  with an output (`output-available`, `output-error`): the
                                assistant's tool call and, in the next user message, its result;
                                the result of an error is its `errorText`
    step-start                  where an assistant message's next step begins: its calls'
                                results go between the two steps

Parts a model is not sent are ignored (`reasoning`, a tool call without an output yet,
`source-*`, `data-*`, a file that is not an image): the turn is what the page would show.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import InvalidMessageError
from ...jsonwire import loads_messages
from ...openai_messages import from_openai_style
from ...shapes import ShapeError, check_config, check_messages
from ...types import Config
from ..common.fidelity_seal import FidelitySeal
from ..common.gateway import InboundCall, InboundRequest, InboundRequestError

_TRANSPORT_FIELDS = frozenset({"id", "messages", "trigger", "messageId", "model", "config"})
_RESULT_STATES = frozenset({"output-available", "output-error"})
_ROLES = frozenset({"system", "user", "assistant"})


def decode_request(body: Any, call: InboundCall, seal: FidelitySeal) -> InboundRequest:
    """The transport's POST body as the SPEC request (module docstring)."""
    del call, seal  # the route says nothing more; nothing sealed comes back from a UI
    if not isinstance(body, dict):
        raise InboundRequestError("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise InboundRequestError(
            "'model' must name a served model: give it in the transport's body option, "
            "new DefaultChatTransport({api, body: {model: '...'}})",
            param="model",
        )
    chat = body.get("id")
    if chat is not None and (not isinstance(chat, str) or not chat):
        raise InboundRequestError("'id' (the chat's id) must be a non-empty string", param="id")
    ui_messages = body.get("messages")
    if not isinstance(ui_messages, list) or not ui_messages:
        raise InboundRequestError(
            "'messages' must be a non-empty list of UI messages", param="messages"
        )
    config: Config = body.get("config") or {}
    try:
        check_config(config)
    except ShapeError as exc:
        raise InboundRequestError(str(exc), param=exc.path) from None
    system, chat_messages = _chat_messages(ui_messages)
    if system:
        prompt = config.get("system_prompt")
        config = {**config, "system_prompt": "\n\n".join([*system, *([prompt] if prompt else [])])}
    try:
        converted = from_openai_style(chat_messages)
        check_messages(converted, binary="base64")
    except InvalidMessageError as exc:
        raise InboundRequestError(str(exc), param="messages") from None
    except ShapeError as exc:
        raise InboundRequestError(str(exc), param=exc.path) from None
    format_ = config.get("response_format")
    # a JSON schema's answer is also shown as its value (writer.py); kept for a replay too
    options = {"response_format": format_} if isinstance(format_, dict) else {}
    return InboundRequest(
        model=model,
        messages=loads_messages(orjson.dumps(converted)),
        config=config,
        stream=True,
        options=options,
        ignored=tuple(sorted(key for key in body if key not in _TRANSPORT_FIELDS)),
        conversation=chat,
    )


def _chat_messages(ui_messages: list[Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """The system texts, and the others as OpenAI-style messages (`from_openai_style` makes
    them SPEC messages)."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for index, message in enumerate(ui_messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise InboundRequestError(
                f"{where} must be a UI message {{id, role: system|user|assistant, parts}}",
                param=where,
            )
        parts = message.get("parts")
        if not isinstance(parts, list):
            raise InboundRequestError(f"{where}.parts must be a list", param=f"{where}.parts")
        role = message["role"]
        if role == "system":
            system += [p["text"] for p in parts if _is_text(p)]
        elif role == "user":
            content = [c for p in parts if (c := _user_part(p)) is not None]
            if content:
                out.append({"role": "user", "content": content})
        else:
            out += _assistant_steps(parts)
    return system, out


def _is_text(part: Any) -> bool:
    return (
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    )


def _user_part(part: Any) -> dict[str, Any] | None:
    if _is_text(part):
        return {"type": "text", "text": part["text"]}
    if (
        isinstance(part, dict)
        and part.get("type") == "file"
        and str(part.get("mediaType", "")).startswith("image/")
        and isinstance(part.get("url"), str)
    ):
        return {"type": "image_url", "image_url": {"url": part["url"]}}
    return None


def _assistant_steps(parts: list[Any]) -> list[dict[str, Any]]:
    """An assistant UI message as its steps: each an assistant message (its text and calls),
    then a tool message per call result."""
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []

    def end_step() -> None:
        if texts or calls:
            step: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
            if calls:
                step["tool_calls"] = list(calls)
            out.append(step)
            out.extend(results)
        texts.clear()
        calls.clear()
        results.clear()

    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = str(part.get("type", ""))
        if kind == "step-start":
            end_step()
        elif _is_text(part):
            if calls:  # text after a step's calls is the next step's
                end_step()
            texts.append(part["text"])
        elif (kind.startswith("tool-") or kind == "dynamic-tool") and part.get(
            "state"
        ) in _RESULT_STATES:
            name = part.get("toolName") if kind == "dynamic-tool" else kind.removeprefix("tool-")
            call_id = part.get("toolCallId")
            if not isinstance(name, str) or not isinstance(call_id, str):
                continue
            arguments = orjson.dumps(part.get("input") or {}).decode()
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            )
            if part["state"] == "output-error":
                result = str(part.get("errorText") or "error")
            else:
                output = part.get("output")
                result = output if isinstance(output, str) else orjson.dumps(output).decode()
            results.append({"role": "tool", "tool_call_id": call_id, "content": result})
    end_step()
    return out
