"""What the request-encoder tests of Anthropic Messages, Gemini generateContent and Gemini
embeddings share: a protocol's request for a model of it, `contains`, an example value of every
config key and the check that an encoder writes each key or refuses it by name, a history that
holds every kind of item, the documented tables, and captures read back (their SSE payloads,
their final message, the next turn after it, their recorded requests)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from modelstream import FinalResponse, StreamDecoder
from modelstream.errors import UnsupportedParameterError
from modelstream.protocols import ProviderRequest, encode_request
from modelstream.types import Config
from support import CORPUS, REPO, load_capture
from support.messages import assistant, call, image, result, text, thinking, user

ANTHROPIC = "anthropic-messages"
GEMINI = "gemini-generate-content"
EMBEDDING = "gemini-embedding"
MODELS = {ANTHROPIC: "claude-sonnet-4-5", GEMINI: "gemini-2.5-flash", EMBEDDING: "text-embed-1"}
CONFIG_KEYS = tuple(Config.__annotations__)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {"name": "get_weather", "description": "Weather for a city.", "parameters": SCHEMA}
PNG = "data:image/png;base64,iVBORw0KGgo="


# --- building messages ----------------------------------------------------------------------


HELLO = [user(text("Hello"))]


def encode(protocol: str, messages: Any = None, config: Any = None, model: str = "") -> Any:
    return encode_request(
        protocol, model or MODELS[protocol], HELLO if messages is None else messages, config or {}
    )


def body(protocol: str, config: Any = None, messages: Any = None, model: str = "") -> Any:
    return encode(protocol, messages, config, model).json


def contains(expected: Any, actual: Any) -> bool:
    """Every key of `expected` is in `actual` with a value it contains; other values are equal."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and contains(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(contains(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return bool(expected == actual) and type(expected) is type(actual)


# --- every config key, against each encoder -------------------------------------------------

RAISES = "raises UnsupportedParameterError"
UNCHANGED = "the request is the same as without the key"

EXAMPLES: dict[str, Any] = {
    "system_prompt": "Be brief.",
    "max_tokens": 300,
    "temperature": 0.3,
    "top_p": 0.9,
    "stop": ["END"],
    "seed": 7,
    "tools": [WEATHER],
    "tool_choice": "required",
    "parallel_tool_calls": False,
    "response_format": SCHEMA,
    "thinking_level": "high",
    "thinking_summary": True,
    "prompt_caching": True,
    "image_output": {"aspect_ratio": "1:1"},
    "speech_output": {"voice": "Kore"},
    "extra_body": {"top_k": 5, "metadata": {"user_id": "u-1"}},
    "trace_id": "trace-5f3a",
}


def check_config_key(protocol: str, key: str, extra: dict[str, Any], expected: Any) -> None:
    """`key` (its example value, with `extra` config) is refused by name, leaves the request as
    it was, or puts `expected` in the body."""
    config = {key: EXAMPLES[key], **extra}
    if expected == RAISES:
        with pytest.raises(UnsupportedParameterError) as raised:
            encode(protocol, config=config)
        assert (raised.value.parameter, raised.value.protocol) == (key, protocol)
        assert key in str(raised.value) and protocol in str(raised.value)
    elif expected == UNCHANGED:
        request = encode(protocol, config=config)
        assert request == encode(protocol, config=extra)
        assert str(EXAMPLES[key]) not in json.dumps(request.json) + str(request.headers)
    else:
        assert contains(expected, body(protocol, config))


# --- the caller's objects are never changed ---------------------------------------------------


def rich_history() -> list[Any]:
    return [
        user(text("Weather in Paris and Rome?"), image("https://example.com/map.png")),
        assistant(
            thinking("Two cities.", {"signature": "sig-a"}),
            thinking("", {"redacted_thinking": "opaque"}),
            thinking("Gemini thought", {"thought_signature": "sig-g"}),
            text("Checking.", {"thought_signature": "sig-t"}),
            call("call_1", "get_weather", {"city": "Paris", "units": ["c"]}),
            call("toolu_2", "get_weather", {"city": "Rome"}, thought_signature="sig-c"),
        ),
        user(result("call_1", "18°C", images=[PNG])),  # toolu_2 is left unanswered
        assistant(text("Paris is 18°C.")),
        user(text("Thanks"), image(PNG)),
    ]


def scribble(value: Any) -> None:
    """Change every object and list inside `value`, to expose any the request shares."""
    if isinstance(value, dict):
        for inner in list(value.values()):
            scribble(inner)
        value["scribbled"] = True
    elif isinstance(value, list):
        for inner in value:
            scribble(inner)
        value.append("scribbled")


# --- the documented tables are the ones in force -------------------------------------------

DOC = (REPO / "docs" / "requests-anthropic-gemini.md").read_text()


def doc_table(heading: str) -> dict[str, list[str]]:
    """level -> each cell of the table under `heading` in the docs, without its remark."""
    section = DOC.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| `")]
    return {
        row[0].strip(" `"): [cell.split(" (")[0].strip(" `") for cell in row[1:]] for row in rows
    }


# --- fidelity replay: the next turn carries what the provider sent --------------------------


def sse_payloads(body_bytes: bytes) -> list[dict[str, Any]]:
    """The JSON data of every SSE event of a capture, read with plain `json`."""
    payloads, data = [], []
    for line in [*re.split(r"\r\n|\r|\n", body_bytes.decode("utf-8")), ""]:
        if line == "":
            if data:
                payloads.append(json.loads("\n".join(data)))
            data = []
        elif line.startswith("data:"):
            data.append(line[len("data:") :].removeprefix(" "))
    return payloads


def final_message(protocol: str, name: str) -> dict[str, Any]:
    decoder = StreamDecoder(protocol)
    decoder.feed(load_capture(protocol, name).body)
    decoder.end()
    final = decoder.result
    assert isinstance(final, FinalResponse)
    return dict(final.message)


def next_turn(protocol: str, model: str, reply: dict[str, Any], follow_up: Any) -> ProviderRequest:
    return encode(protocol, [user(text("First question")), reply, follow_up], model=model)


# --- the corpus's recorded requests, expressed as messages + config -------------------------


def recorded_request_names(protocol: str) -> list[str]:
    folder = CORPUS / protocol
    if not folder.is_dir():
        return ["<corpus missing>"]
    return sorted(
        path.stem
        for path in folder.glob("*.json")
        if json.loads(path.read_text()).get("request") is not None
    )


def recorded_item(block: Any) -> dict[str, Any]:
    if isinstance(block, str):
        return text(block)
    if "functionCall" in block:
        assert set(block) <= {"functionCall", "thoughtSignature"}
        function_call = block["functionCall"]
        signature = {"thought_signature": block["thoughtSignature"]}
        return call(function_call["id"], function_call["name"], function_call["args"], **signature)
    if "functionResponse" in block:
        (value,) = block["functionResponse"]["response"].values()
        return result(block["functionResponse"]["id"], value)
    assert set(block) <= {"type", "text"}
    return text(block["text"])
