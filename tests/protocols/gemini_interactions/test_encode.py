"""Request encoder for the Gemini Interactions API (`client_type="gemini-interactions"`).

Expected values come from the mapping table in docs/requests-anthropic-gemini.md and from the
corpus captures read with plain `json` (never through our decoders). No Interactions capture
recorded its request (every sidecar's `request` is null), so the history tests re-express a
captured turn as our messages and check that the next request sends back, field by field, what
the capture's payloads hold: the thought signature, the text, the function call.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from modelstream import FinalResponse
from modelstream.errors import InvalidMessageError, UnsupportedParameterError
from modelstream.protocols import encode_request
from modelstream.protocols.common.encoding import MISSING_RESULT_TEXT
from modelstream.types import Config
from support import REPO, decode_over_http, load_capture
from support.messages import assistant, call, result, text, thinking, user

PROTOCOL = "gemini-interactions"
MODEL = "gemini-2.5-flash"
CONFIG_KEYS = tuple(Config.__annotations__)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {"name": "get_weather", "description": "Weather for a city.", "parameters": SCHEMA}
PNG = "data:image/png;base64,iVBORw0KGgo="


HELLO = [user(text("Hello"))]
HELLO_STEPS = [{"type": "user_input", "content": [{"type": "text", "text": "Hello"}]}]


def encode(messages: Any = None, config: Any = None, model: str = MODEL) -> Any:
    return encode_request(PROTOCOL, model, HELLO if messages is None else messages, config or {})


def body(config: Any = None, messages: Any = None, model: str = MODEL) -> Any:
    return encode(messages, config, model).json


def payloads_of(name: str) -> list[dict]:
    capture = load_capture(PROTOCOL, name)
    blocks = [block for block in capture.body.split(b"\n\n") if block.strip()]
    return [json.loads(block.split(b"\ndata: ", 1)[1]) for block in blocks]


# --- the request --------------------------------------------------------------------------------


def test_a_request_is_a_stateless_stream_post_to_interactions():
    request = encode()
    assert (request.method, request.path) == ("POST", "/v1beta/interactions")
    assert request.json == {"model": MODEL, "input": HELLO_STEPS, "stream": True, "store": False}
    assert "previous_interaction_id" not in request.json
    assert request.headers == {}  # no secret, no protocol header


# --- every config key ---------------------------------------------------------------------------

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
    "extra_body": {"top_k": 5, "generation_config": {"candidate_count": 1}},
    "trace_id": "trace-5f3a",
}

# key -> (other config, the keys the body gains)
KEY_CASES: dict[str, tuple[dict[str, Any], Any]] = {
    "system_prompt": ({}, {"system_instruction": "Be brief."}),
    "max_tokens": ({}, {"generation_config": {"max_output_tokens": 300}}),
    "temperature": ({}, {"generation_config": {"temperature": 0.3}}),
    "top_p": ({}, {"generation_config": {"top_p": 0.9}}),
    "stop": ({}, {"generation_config": {"stop_sequences": ["END"]}}),
    "seed": ({}, {"generation_config": {"seed": 7}}),
    "tools": (
        {},
        {
            "tools": [
                {
                    "type": "function",
                    "name": "get_weather",
                    "description": "Weather for a city.",
                    "parameters": SCHEMA,
                }
            ]
        },
    ),
    "tool_choice": (
        {"tools": [WEATHER]},
        {
            "tools": [
                {
                    "type": "function",
                    "name": "get_weather",
                    "description": "Weather for a city.",
                    "parameters": SCHEMA,
                }
            ],
            "generation_config": {"tool_choice": "any"},
        },
    ),
    "parallel_tool_calls": ({}, RAISES),
    "response_format": (
        {},
        {"response_format": {"type": "text", "mime_type": "application/json", "schema": SCHEMA}},
    ),
    "thinking_level": ({}, {"generation_config": {"thinking_level": "high"}}),
    "thinking_summary": ({}, {"generation_config": {"thinking_summaries": "auto"}}),
    "prompt_caching": ({}, UNCHANGED),
    "extra_body": ({}, {"top_k": 5, "generation_config": {"candidate_count": 1}}),
    "image_output": ({}, RAISES),
    "speech_output": ({}, RAISES),
    "trace_id": ({}, UNCHANGED),
}


def test_every_config_key_has_a_case():
    assert set(KEY_CASES) == set(CONFIG_KEYS) == set(EXAMPLES)


@pytest.mark.parametrize("key", CONFIG_KEYS)
def test_every_config_key_is_encoded_or_refused_by_name(key):
    extra, expected = KEY_CASES[key]
    config = {key: EXAMPLES[key], **extra}
    if expected == RAISES:
        with pytest.raises(UnsupportedParameterError) as raised:
            encode(config=config)
        assert (raised.value.parameter, raised.value.protocol) == (key, PROTOCOL)
        return
    got = body(config)
    if expected == UNCHANGED:
        assert got == body(extra)
        assert str(EXAMPLES[key]) not in json.dumps(got)
        return
    base = {"model": MODEL, "input": HELLO_STEPS, "stream": True, "store": False}
    assert got == base | expected


def test_a_key_that_is_not_in_config_is_refused_rather_than_ignored():
    with pytest.raises(UnsupportedParameterError) as raised:
        encode(config={"max_output_tokens": 5})
    assert raised.value.parameter == "max_output_tokens"


def test_a_prompt_caching_value_that_is_not_a_bool_is_refused():
    with pytest.raises(UnsupportedParameterError):
        encode(config={"prompt_caching": "yes"})


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "any"),
        (["get_weather"], {"allowed_tools": {"mode": "any", "tools": ["get_weather"]}}),
    ],
)
def test_tool_choice_values(choice, expected):
    got = body({"tools": [WEATHER], "tool_choice": choice})
    assert got["generation_config"] == {"tool_choice": expected}


def test_tool_choice_without_tools_leaves_auto_out_and_refuses_what_it_cannot_honour():
    assert body({"tool_choice": "auto"}) == body()
    for choice in ("required", ["get_weather"]):
        with pytest.raises(UnsupportedParameterError):
            encode(config={"tool_choice": choice})
    with pytest.raises(UnsupportedParameterError):
        encode(config={"tools": [WEATHER], "tool_choice": ["other"]})


def test_functions_given_in_extra_body_count_for_tool_choice():
    extra = {"tools": [{"type": "function", "name": "lookup"}]}
    got = body({"tool_choice": ["lookup"], "extra_body": extra})
    assert got["generation_config"] == {
        "tool_choice": {"allowed_tools": {"mode": "any", "tools": ["lookup"]}}
    }


def test_json_mode_without_a_schema_sends_only_the_mime_type():
    got = body({"response_format": {"type": "json_object"}})
    assert got["response_format"] == {"type": "text", "mime_type": "application/json"}


def test_thinking_summary_false_asks_for_no_summaries():
    assert body({"thinking_summary": False})["generation_config"] == {"thinking_summaries": "none"}


@pytest.mark.parametrize(
    ("model", "level", "expected"),
    [
        ("gemini-3-flash-preview", "none", "minimal"),
        ("gemini-3-flash-preview", "medium", "medium"),
        ("gemini-3.1-pro-preview", "none", "low"),  # Pro cannot turn thinking off
        ("gemini-3-pro-preview", "medium", "high"),  # Gemini 3 Pro has no medium
        ("gemini-2.5-flash", "xhigh", "high"),
        ("gemini-2.5-pro", "none", "low"),
    ],
)
def test_thinking_level_by_model(model, level, expected):
    got = body({"thinking_level": level}, model=model)
    assert got["generation_config"] == {"thinking_level": expected}


def test_a_model_that_does_not_think_accepts_only_none():
    assert body({"thinking_level": "none"}, model="gemini-2.0-flash") == body(
        model="gemini-2.0-flash"
    )
    with pytest.raises(UnsupportedParameterError):
        encode(config={"thinking_level": "low"}, model="gemini-2.0-flash")


def test_extra_body_can_store_the_interaction_when_the_caller_asks():
    assert body({"extra_body": {"store": True}})["store"] is True
    assert "stream" not in body({"extra_body": {"stream": None}})


def test_the_callers_messages_and_config_are_not_modified():
    messages = [user(text("Hi")), assistant(call("c1", "f", {"a": [1]})), user(result("c1", "ok"))]
    config: Config = {"tools": [WEATHER], "extra_body": {"generation_config": {"x": {"y": 1}}}}
    before = copy.deepcopy((messages, config))
    request = encode(messages, config)
    request.json["input"][1]["arguments"]["a"].append(2)
    request.json["generation_config"]["x"]["y"] = 2
    assert (messages, config) == before


# --- history ------------------------------------------------------------------------------------


def test_a_conversation_becomes_steps_in_order():
    messages = [
        user(text("Weather in Paris?")),
        assistant(
            thinking("Look it up.", {"thought_signature": "sig-1"}),
            text("Let me check."),
            call("c1", "get_weather", {"city": "Paris"}, thought_signature="sig-2"),
        ),
        user(result("c1", "18C"), text("And tomorrow?")),
    ]
    assert body(messages=messages)["input"] == [
        {"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {
            "type": "thought",
            "signature": "sig-1",
            "summary": [{"type": "text", "text": "Look it up."}],
        },
        {"type": "model_output", "content": [{"type": "text", "text": "Let me check."}]},
        {
            "type": "function_call",
            "id": "c1",
            "name": "get_weather",
            "arguments": {"city": "Paris"},
            "signature": "sig-2",
        },
        {"type": "function_result", "call_id": "c1", "name": "get_weather", "result": "18C"},
        {"type": "user_input", "content": [{"type": "text", "text": "And tomorrow?"}]},
    ]


def test_a_captured_turn_goes_back_with_its_signature_and_text(replay_server):
    name = "vercel-interactions-stateless-turn1"
    payloads = payloads_of(name)
    signature = payloads[3]["delta"]["signature"]
    answer = payloads[6]["delta"]["text"]
    decoded = decode_over_http(replay_server, load_capture(PROTOCOL, name))
    final = decoded.decoder.result
    assert isinstance(final, FinalResponse)
    history = [
        user(text("What are the three largest cities in Spain?")),
        final.message,
        user(text("What is the most famous landmark in the second one?")),
    ]
    assert body(messages=history)["input"] == [
        {
            "type": "user_input",
            "content": [{"type": "text", "text": "What are the three largest cities in Spain?"}],
        },
        {"type": "thought", "signature": signature},
        {"type": "model_output", "content": [{"type": "text", "text": answer}]},
        {
            "type": "user_input",
            "content": [
                {"type": "text", "text": "What is the most famous landmark in the second one?"}
            ],
        },
    ]


def test_a_captured_function_call_goes_back_with_its_result(replay_server):
    name = "vercel-interactions-tool-call"
    payloads = payloads_of(name)
    step = payloads[5]["step"]
    arguments = json.loads(payloads[6]["delta"]["arguments"])
    decoded = decode_over_http(replay_server, load_capture(PROTOCOL, name))
    final = decoded.decoder.result
    assert isinstance(final, FinalResponse)
    history = [
        user(text("What is the weather in San Francisco?")),
        final.message,
        user(result(step["id"], '{"weather":"sunny","temperature":16}')),
    ]
    steps = body({"tools": [WEATHER]}, messages=history)["input"]
    assert steps[1:] == [
        {"type": "thought", "signature": payloads[3]["delta"]["signature"]},
        {
            "type": "function_call",
            "id": step["id"],
            "name": step["name"],
            "arguments": arguments,
        },  # the step's empty signature was no signature
        {
            "type": "function_result",
            "call_id": "61nzpsv4",
            "name": "getWeather",
            "result": '{"weather":"sunny","temperature":16}',
        },
    ]


def test_a_call_without_a_result_gets_the_missing_result_text():
    messages = [user(text("Go")), assistant(call("c1", "f", {}))]
    steps = body(messages=messages)["input"]
    assert steps[-1] == {
        "type": "function_result",
        "call_id": "c1",
        "name": "f",
        "result": MISSING_RESULT_TEXT,
    }


def test_unsigned_and_foreign_thinking_is_left_out():
    messages = [
        user(text("Q")),
        assistant(
            thinking("unsigned notes"),
            thinking("claude's", {"signature": "anthropic-sig"}),
            text("A"),
        ),
        user(text("Q2")),
    ]
    assert [s["type"] for s in body(messages=messages)["input"]] == [
        "user_input",
        "model_output",
        "user_input",
    ]


def test_images_go_as_image_content_with_data_or_uri():
    messages = [
        user(
            text("What is this?"),
            {"type": "image_url.done", "image_url": PNG},
            {"type": "image_url.done", "image_url": "https://example.com/cat.jpg"},
        )
    ]
    assert body(messages=messages)["input"] == [
        {
            "type": "user_input",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "data": "iVBORw0KGgo=", "mime_type": "image/png"},
                {"type": "image", "uri": "https://example.com/cat.jpg", "mime_type": "image/jpeg"},
            ],
        }
    ]


def test_a_tool_result_with_images_sends_a_list_of_content():
    messages = [
        user(text("Draw")),
        assistant(call("c1", "render", {})),
        user(result("c1", "done", [PNG])),
    ]
    assert body(messages=messages)["input"][-1] == {
        "type": "function_result",
        "call_id": "c1",
        "name": "render",
        "result": [
            {"type": "text", "text": "done"},
            {"type": "image", "data": "iVBORw0KGgo=", "mime_type": "image/png"},
        ],
    }


def test_output_media_goes_back_in_the_model_output_step():
    image = {"type": "inline_data.done", "data": b"\x89PNG", "mime_type": "image/png"}
    messages = [user(text("Draw")), assistant(text("Here:"), image), user(text("Nice"))]
    assert body(messages=messages)["input"][1] == {
        "type": "model_output",
        "content": [
            {"type": "text", "text": "Here:"},
            {"type": "image", "data": "iVBORw==", "mime_type": "image/png"},
        ],
    }


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ([], InvalidMessageError),
        ([user(result("nope", "x"))], InvalidMessageError),
        ([{"role": "system", "content_items": []}], InvalidMessageError),
    ],
)
def test_malformed_history_is_refused_before_sending(messages, error):
    with pytest.raises(error):
        encode(messages)


# --- the documented table is the one in force ---------------------------------------------------


def test_the_documented_thinking_table_is_what_the_encoder_sends():
    doc = (REPO / "docs" / "requests-anthropic-gemini.md").read_text()
    section = doc.split("### Interactions: thinking_level\n", 1)[1].split("\n#", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| `")]
    table = {row[0].strip(" `"): [cell.strip(" `") for cell in row[1:]] for row in rows}
    assert list(table) == ["none", "low", "medium", "high", "xhigh", "max"]
    columns = [
        ["gemini-3-flash-preview", "gemini-2.5-flash"],
        ["gemini-3.1-pro-preview", "gemini-2.5-pro"],
        ["gemini-3-pro-preview"],
    ]
    for level, cells in table.items():
        for models, cell in zip(columns, cells, strict=True):
            for model in models:
                sent = body({"thinking_level": level}, model=model)["generation_config"]
                assert sent == {"thinking_level": cell}, (model, level)


def test_the_documented_example_is_what_the_encoder_sends():
    request = encode_request(
        PROTOCOL,
        "gemini-2.5-flash",
        [{"role": "user", "content_items": [{"type": "text.done", "text": "Hello"}]}],
        {"system_prompt": "Be brief.", "thinking_level": "low"},
    )
    assert (request.method, request.path) == ("POST", "/v1beta/interactions")
    assert request.json == {
        "model": "gemini-2.5-flash",
        "input": [{"type": "user_input", "content": [{"type": "text", "text": "Hello"}]}],
        "stream": True,
        "store": False,
        "system_instruction": "Be brief.",
        "generation_config": {"thinking_level": "low"},
    }
