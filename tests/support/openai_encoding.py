"""What the request-encoder tests of the OpenAI family (Chat Completions, Responses and
embeddings) share: SPEC messages written the short way (a string is a text item), the request body
of a client type, the tools and schemas the tests send, a history and a config that use every
field, and captures read back (their final message, the next turn after it, their `data:`
payloads, their recorded requests and what a request means)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from modelstream.errors import UnsupportedParameterError
from modelstream.protocols import encode_request
from support import decode_chunks, load_capture
from support.messages import result

CHAT = "openai-chat"
RESPONSES = "openai-responses"
EMBEDDING = "openai-embedding"

LEVELS = ["none", "low", "medium", "high", "xhigh", "max"]

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}

TIME = {"name": "get_time", "parameters": {"type": "object", "properties": {}}}

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def text(value: str) -> dict[str, Any]:
    return {"type": "text.done", "text": value}


def user(*items: Any) -> dict[str, Any]:
    return {"role": "user", "content_items": [text(i) if isinstance(i, str) else i for i in items]}


def assistant(*items: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content_items": [text(i) if isinstance(i, str) else i for i in items],
    }


def call(call_id: str, name: str = "get_weather", **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call.done", "tool_call_id": call_id, "name": name, "arguments": arguments}


HELLO = [user("Hello")]


def encode(client_type, config=None, messages=None, model="gpt-5") -> dict[str, Any]:
    return encode_request(client_type, model, messages or HELLO, config or {}).json


def unsupported(client_type, config, messages=None) -> UnsupportedParameterError:
    with pytest.raises(UnsupportedParameterError) as caught:
        encode(client_type, config, messages)
    return caught.value


def history(body: dict[str, Any]) -> list[Any]:
    return body["messages"] if "messages" in body else body["input"]


IMAGE = "https://example.com/cat.png"

DATA_IMAGE = "data:image/png;base64,iVBORw0KGgo="

TOOL_TURN = [
    user("Weather in Paris?"),
    assistant("Let me look.", call("call_1", city="Paris")),
    user(result("call_1", "18°C"), "Thanks."),
]

RICH_CONFIG = {
    "system_prompt": "Be brief.",
    "max_tokens": 100,
    "temperature": 0.3,
    "tools": [WEATHER, TIME],
    "tool_choice": ["get_weather", "get_time"],
    "parallel_tool_calls": True,
    "response_format": {"name": "answer", "schema": SCHEMA},
    "thinking_level": "high",
    "extra_body": {"metadata": {"a": "b"}, "reasoning": {"summary": "detailed"}},
}


def rich_history() -> list[Any]:
    return [
        user("Hi", {"type": "image_url.done", "image_url": IMAGE}),
        assistant(
            {"type": "thinking.done", "thinking": "t", "fidelity": {"id": "rs_1"}},
            {"type": "text.done", "text": "a", "fidelity": {"id": "msg_1", "phase": "x"}},
            {**call("c" * 70, city="Oslo"), "fidelity": {"id": "fc_1"}},
        ),
        user(result("c" * 70, "ok", [IMAGE])),
    ]


# --- fidelity replay from the corpus ----------------------------------------------------------


def final_message(protocol: str, name: str) -> dict[str, Any]:
    decoded = decode_chunks(protocol, [load_capture(protocol, name).body])
    assert decoded.error is None
    return decoded.decoder.result.message


def next_turn(client_type: str, message: dict[str, Any], config=None) -> list[Any]:
    """The history items the assistant message became in the next request."""
    body = encode(client_type, config, [user("Question"), message, user("Go on.")])
    items = history(body)
    assert items[0] == {"role": "user", "content": "Question"}
    assert items[-1] == {"role": "user", "content": "Go on."}
    return items[1:-1]


def capture_events(protocol: str, name: str) -> list[dict[str, Any]]:
    body = load_capture(protocol, name).body.decode()
    return [
        json.loads(line[5:])
        for line in body.splitlines()
        if line.startswith("data:") and line[5:].strip() != "[DONE]"
    ]


AUDIO_ANSWER = assistant(
    {"type": "text.done", "text": "Hello there!", "fidelity": {"audio_id": "audio_abc123"}},
    {
        "type": "inline_data.done",
        "data": b"\x00\x01",
        "mime_type": "audio/pcm;rate=24000",
        "fidelity": {"audio_id": "audio_abc123", "expires_at": 1729234747},
    },
)


# --- recorded requests from the corpus --------------------------------------------------------


def recorded(protocol: str, name: str) -> dict[str, Any]:
    request = load_capture(protocol, name).sidecar["request"]
    assert request is not None
    return request


def recorded_tools(protocol: str, name: str) -> list[dict[str, Any]]:
    """The recorded tool definitions as tool schemas (name, description, parameters, strict)."""
    tools = []
    for tool in recorded(protocol, name)["tools"]:
        function = tool.get("function") or tool
        schema = {"name": function["name"], "parameters": function["parameters"]}
        if function.get("description"):
            schema["description"] = function["description"]
        if function.get("strict") is not None:
            schema["strict"] = function["strict"]
        tools.append(schema)
    return tools


def meaning(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    """A request with the differences that do not change its meaning smoothed out.

    A lone text part is the same as a plain string; an empty description or instructions is the
    same as none; `max_tokens` and `max_completion_tokens` both cap the output (OpenRouter takes
    either)."""
    body = copy.deepcopy(body)
    for key in ("max_tokens", "max_completion_tokens"):
        if key in body:
            body["output_cap"] = body.pop(key)
    if not body.get("instructions"):
        body.pop("instructions", None)
    for message in history(body):
        content = message.get("content")
        if (
            isinstance(content, list)
            and len(content) == 1
            and content[0]["type"] in ("text", "input_text")
        ):
            message["content"] = content[0]["text"]
    for tool in body.get("tools") or []:
        function = tool.get("function") or tool
        if not function.get("description"):
            function.pop("description", None)
    return body
