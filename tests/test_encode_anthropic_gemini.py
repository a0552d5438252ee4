"""Request encoders for Anthropic Messages and Gemini (generateContent and embeddings).

Expected values come from the mapping tables in docs/requests-anthropic-gemini.md, from corpus
captures read with plain `json` (never through our decoders), and from the requests the corpus
sidecars recorded.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any
from urllib.parse import urlsplit

import pytest

from message_builders import assistant, call, image, result, text, thinking, user
from modelstream import FinalResponse, IncompleteStreamError, ProviderError, StreamDecoder
from modelstream.errors import InvalidMessageError, UnsupportedParameterError
from modelstream.protocols import ProviderRequest, encode_request
from modelstream.protocols.common.encoding import MISSING_RESULT_TEXT
from modelstream.types import Config
from support import CORPUS, REPO, Capture, decode_over_http, load_capture

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

ANTHROPIC_CACHED = {
    "system": [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Hello", "cache_control": {"type": "ephemeral"}}],
        }
    ],
}

# key -> (config, what the body holds)
KEY_CASES: dict[str, dict[str, tuple[dict[str, Any], Any]]] = {
    ANTHROPIC: {
        "system_prompt": ({}, {"system": "Be brief."}),
        "max_tokens": ({}, {"max_tokens": 300}),
        "temperature": ({}, {"temperature": 0.3}),
        "top_p": ({}, {"top_p": 0.9}),
        "stop": ({}, {"stop_sequences": ["END"]}),
        "seed": ({}, RAISES),
        "tools": (
            {},
            {
                "tools": [
                    {
                        "name": "get_weather",
                        "description": "Weather for a city.",
                        "input_schema": SCHEMA,
                    }
                ]
            },
        ),
        "tool_choice": ({"tools": [WEATHER]}, {"tool_choice": {"type": "any"}}),
        "parallel_tool_calls": (
            {"tools": [WEATHER]},
            {"tool_choice": {"type": "auto", "disable_parallel_tool_use": True}},
        ),
        "response_format": (
            {},
            {"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}},
        ),
        "thinking_level": (
            {},
            {"thinking": {"type": "enabled", "budget_tokens": 16384}, "max_tokens": 32000},
        ),
        "thinking_summary": (
            {"thinking_level": "low", "thinking_summary": False},
            {"thinking": {"type": "enabled", "budget_tokens": 1024, "display": "omitted"}},
        ),
        "prompt_caching": ({"system_prompt": "S"}, ANTHROPIC_CACHED),
        "image_output": ({}, RAISES),
        "speech_output": ({}, RAISES),
        "extra_body": ({}, {"top_k": 5, "metadata": {"user_id": "u-1"}}),
        "trace_id": ({}, UNCHANGED),
    },
    GEMINI: {
        "system_prompt": ({}, {"systemInstruction": {"parts": [{"text": "Be brief."}]}}),
        "max_tokens": ({}, {"generationConfig": {"maxOutputTokens": 300}}),
        "temperature": ({}, {"generationConfig": {"temperature": 0.3}}),
        "top_p": ({}, {"generationConfig": {"topP": 0.9}}),
        "stop": ({}, {"generationConfig": {"stopSequences": ["END"]}}),
        "seed": ({}, {"generationConfig": {"seed": 7}}),
        "tools": (
            {},
            {
                "tools": [
                    {
                        "functionDeclarations": [
                            {
                                "name": "get_weather",
                                "description": "Weather for a city.",
                                "parametersJsonSchema": SCHEMA,
                            }
                        ]
                    }
                ]
            },
        ),
        "tool_choice": (
            {"tools": [WEATHER]},
            {"toolConfig": {"functionCallingConfig": {"mode": "ANY"}}},
        ),
        "parallel_tool_calls": ({}, RAISES),
        "response_format": (
            {},
            {
                "generationConfig": {
                    "responseMimeType": "application/json",
                    "responseJsonSchema": SCHEMA,
                }
            },
        ),
        "thinking_level": ({}, {"generationConfig": {"thinkingConfig": {"thinkingBudget": 24576}}}),
        "thinking_summary": (
            {},
            {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}},
        ),
        "prompt_caching": ({}, UNCHANGED),
        "image_output": (
            {},
            {
                "generationConfig": {
                    "responseModalities": ["TEXT", "IMAGE"],
                    "imageConfig": {"aspectRatio": "1:1"},
                }
            },
        ),
        "speech_output": (
            {},
            {
                "generationConfig": {
                    "responseModalities": ["AUDIO"],
                    "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Kore"}}},
                }
            },
        ),
        "extra_body": ({}, {"top_k": 5, "metadata": {"user_id": "u-1"}}),
        "trace_id": ({}, UNCHANGED),
    },
    EMBEDDING: {
        **{key: ({}, RAISES) for key in CONFIG_KEYS},
        "extra_body": ({}, {"content": {"parts": [{"text": "Hello"}]}, "top_k": 5}),
        "trace_id": ({}, UNCHANGED),
    },
}


@pytest.mark.parametrize("key", CONFIG_KEYS)
@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI, EMBEDDING])
def test_every_config_key_is_encoded_or_refused_by_name(protocol, key):
    extra, expected = KEY_CASES[protocol][key]
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


@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI, EMBEDDING])
def test_a_key_that_is_not_in_config_is_refused_rather_than_ignored(protocol):
    with pytest.raises(UnsupportedParameterError, match=r"top_k.*extra_body"):
        encode(protocol, config={"top_k": 5})


@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI])
def test_a_config_value_of_none_counts_as_unset(protocol):
    assert encode(protocol, config={"seed": None, "temperature": None}) == encode(protocol)


# --- Anthropic Messages -----------------------------------------------------------------------


def test_anthropic_request_streams_from_v1_messages_with_the_api_version_header():
    request = encode(ANTHROPIC)
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers == {"anthropic-version": "2023-06-01"}
    assert request.json == {
        "model": "claude-sonnet-4-5",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
        "max_tokens": 8192,
        "stream": True,
    }


@pytest.mark.parametrize(
    ("model", "expected"),
    [("claude-sonnet-4-5", 8192), ("claude-3-haiku-20240307", 4096), ("glm-4.6", 8192)],
)
def test_anthropic_max_tokens_defaults_to_what_the_model_can_produce(model, expected):
    assert body(ANTHROPIC, model=model)["max_tokens"] == expected


@pytest.mark.parametrize(
    ("level", "budget"),
    [("low", 1024), ("medium", 4096), ("high", 16384), ("xhigh", 24576), ("max", 28672)],
)
def test_anthropic_thinking_levels_map_to_the_documented_budgets(level, budget):
    sent = body(ANTHROPIC, {"thinking_level": level}, model="claude-opus-4-1")
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert sent["max_tokens"] == 32000 > budget


def test_anthropic_thinking_level_none_turns_thinking_off_explicitly():
    sent = body(ANTHROPIC, {"thinking_level": "none"})
    assert sent["thinking"] == {"type": "disabled"}
    assert sent["max_tokens"] == 8192


@pytest.mark.parametrize(
    ("model", "level", "effort"),
    [
        ("claude-opus-4-7", "low", "low"),
        ("claude-opus-4-7", "xhigh", "xhigh"),
        ("claude-opus-4-7", "max", "max"),
        ("claude-sonnet-4-6", "medium", "medium"),
        ("claude-sonnet-4-6", "xhigh", "max"),  # 4.6 has no xhigh: the next level up
        ("claude-mythos-preview", "high", "high"),
    ],
)
def test_anthropic_adaptive_models_get_an_effort_instead_of_a_budget(model, level, effort):
    sent = body(ANTHROPIC, {"thinking_level": level}, model=model)
    assert sent["thinking"] == {"type": "adaptive"}
    assert sent["output_config"] == {"effort": effort}
    assert sent["max_tokens"] == 32000


def test_anthropic_budget_shrinks_to_half_of_a_smaller_max_tokens():
    sent = body(ANTHROPIC, {"thinking_level": "max", "max_tokens": 6000})
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 3000}
    assert sent["max_tokens"] == 6000


def test_anthropic_thinking_with_max_tokens_at_the_minimum_budget_is_refused():
    with pytest.raises(UnsupportedParameterError, match="max_tokens above 1024"):
        encode(ANTHROPIC, config={"thinking_level": "low", "max_tokens": 1024})


@pytest.mark.parametrize(
    ("config", "parameter"),
    [
        ({"temperature": 0.2}, "temperature"),
        ({"top_p": 0.5}, "top_p"),
        ({"tool_choice": "required", "tools": [WEATHER]}, "tool_choice"),
        ({"tool_choice": ["get_weather"], "tools": [WEATHER]}, "tool_choice"),
    ],
)
def test_anthropic_refuses_what_it_rejects_alongside_thinking(config, parameter):
    with pytest.raises(UnsupportedParameterError) as raised:
        encode(ANTHROPIC, config={"thinking_level": "low", **config})
    assert raised.value.parameter == parameter


def test_anthropic_thinking_accepts_temperature_one_and_a_high_top_p():
    sent = body(ANTHROPIC, {"thinking_level": "low", "temperature": 1, "top_p": 0.95})
    assert (sent["temperature"], sent["top_p"]) == (1, 0.95)


@pytest.mark.parametrize(
    ("model", "summary", "display"),
    [
        ("claude-opus-4-7", True, "summarized"),  # its default is omitted
        ("claude-sonnet-4-5", True, None),  # summarized is its default
        ("claude-sonnet-4-5", False, "omitted"),
        ("claude-opus-4-7", False, "omitted"),
    ],
)
def test_anthropic_thinking_summary_sets_display_only_where_it_changes_the_default(
    model, summary, display
):
    sent = body(ANTHROPIC, {"thinking_level": "high", "thinking_summary": summary}, model=model)
    assert sent["thinking"].get("display") == display


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        (["get_weather"], {"type": "tool", "name": "get_weather"}),
    ],
)
def test_anthropic_tool_choice_maps_to_its_types(choice, expected):
    assert body(ANTHROPIC, {"tools": [WEATHER], "tool_choice": choice})["tool_choice"] == expected


def test_anthropic_cannot_choose_among_several_named_tools():
    with pytest.raises(UnsupportedParameterError, match="one named tool") as raised:
        encode(ANTHROPIC, config={"tool_choice": ["a", "b"]})
    assert raised.value.parameter == "tool_choice"
    assert raised.value.protocol == ANTHROPIC


def test_anthropic_disabling_parallel_calls_rides_on_the_chosen_tool_choice():
    sent = body(
        ANTHROPIC, {"tools": [WEATHER], "tool_choice": "required", "parallel_tool_calls": False}
    )
    assert sent["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}


def test_anthropic_allowing_parallel_calls_sends_nothing_because_it_is_the_default():
    assert "tool_choice" not in body(ANTHROPIC, {"parallel_tool_calls": True})


@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI])
@pytest.mark.parametrize("choice", ["auto", "none"])
def test_a_tool_choice_with_no_tools_to_choose_from_is_left_out(protocol, choice):
    config = {"tool_choice": choice, "parallel_tool_calls": True}
    assert encode(protocol, config=config) == encode(protocol)


@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI])
@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"tool_choice": "required"}, "no"),
        ({"tool_choice": ["get_weather"]}, "no"),
        ({"tool_choice": ["get_time"], "tools": [WEATHER]}, "get_time"),
    ],
)
def test_a_forced_tool_choice_needs_the_tools_it_names(protocol, config, reason):
    with pytest.raises(UnsupportedParameterError, match=reason) as raised:
        encode(protocol, config=config)
    assert (raised.value.parameter, raised.value.protocol) == ("tool_choice", protocol)


def test_anthropic_server_tools_from_extra_body_count_as_tools_to_choose_from():
    server_tool = {"name": "web_search", "type": "web_search_20250305"}
    sent = body(ANTHROPIC, {"tool_choice": "auto", "extra_body": {"tools": [server_tool]}})
    assert (sent["tools"], sent["tool_choice"]) == ([server_tool], {"type": "auto"})


def test_anthropic_tool_without_parameters_gets_an_empty_object_schema():
    sent = body(ANTHROPIC, {"tools": [{"name": "now"}]})
    assert sent["tools"] == [{"name": "now", "input_schema": {"type": "object", "properties": {}}}]


@pytest.mark.parametrize(
    "response_format",
    [
        SCHEMA,
        {"type": "json_schema", "json_schema": {"name": "city", "schema": SCHEMA, "strict": True}},
        {"type": "json_schema", "name": "city", "schema": SCHEMA},
        {"name": "city", "schema": SCHEMA, "strict": True},
    ],
)
def test_anthropic_response_format_accepts_a_schema_or_openai_wrappers_of_one(response_format):
    sent = body(ANTHROPIC, {"response_format": response_format})
    assert sent["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}


@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI])
def test_a_json_schema_response_format_without_its_schema_is_refused(protocol):
    wrapper = {"type": "json_schema", "json_schema": {"name": "city"}}
    with pytest.raises(UnsupportedParameterError) as raised:
        encode(protocol, config={"response_format": wrapper})
    assert (raised.value.parameter, raised.value.protocol) == ("response_format", protocol)


def test_anthropic_compatible_gateways_get_budget_thinking():
    sent = body(ANTHROPIC, {"thinking_level": "medium"}, model="MiniMax-M2")
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 4096}


def test_anthropic_has_no_json_mode_without_a_schema():
    with pytest.raises(UnsupportedParameterError, match="without a schema"):
        encode(ANTHROPIC, config={"response_format": {"type": "json_object"}})


def test_anthropic_effort_and_schema_share_output_config():
    sent = body(
        ANTHROPIC, {"thinking_level": "low", "response_format": SCHEMA}, model="claude-opus-4-7"
    )
    assert sent["output_config"] == {
        "effort": "low",
        "format": {"type": "json_schema", "schema": SCHEMA},
    }


def test_anthropic_prompt_caching_marks_tools_system_and_the_last_cacheable_block():
    history = [
        user(text("Weather?")),
        assistant(thinking("hm", {"signature": "sig"}), call("toolu_1", "get_weather", {})),
        user(result("toolu_1", "18°C")),
        assistant(text("It is 18°C."), thinking("done", {"signature": "sig2"})),
    ]
    sent = body(
        ANTHROPIC, {"prompt_caching": True, "tools": [WEATHER], "system_prompt": "S"}, history
    )
    marked = [
        path
        for path, block in [
            ("tool", sent["tools"][-1]),
            ("system", sent["system"][0]),
            *[
                (f"m{i}b{j}", b)
                for i, m in enumerate(sent["messages"])
                for j, b in enumerate(m["content"])
            ],
        ]
        if block.get("cache_control") == {"type": "ephemeral"}
    ]
    assert marked == ["tool", "system", "m3b0"]  # thinking blocks cannot carry cache_control


def test_anthropic_extra_body_merges_into_objects_and_replaces_the_rest():
    sent = body(
        ANTHROPIC,
        {
            "thinking_level": "low",
            "stop": ["END"],
            "extra_body": {"thinking": {"budget_tokens": 2000}, "stop_sequences": ["X"]},
        },
    )
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert sent["stop_sequences"] == ["X"]


def test_extra_body_none_removes_the_key_the_encoder_wrote():
    config = {"temperature": 0.2, "seed": 1, "extra_body": {"generationConfig": {"seed": None}}}
    assert body(GEMINI, config)["generationConfig"] == {"temperature": 0.2}


@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI])
def test_a_single_stop_string_is_one_stop_sequence(protocol):
    assert contains(KEY_CASES[protocol]["stop"][1], body(protocol, {"stop": "END"}))


def test_anthropic_betas_in_extra_body_become_the_beta_header():
    request = encode(ANTHROPIC, config={"extra_body": {"betas": ["a-2025", "b-2026"]}})
    assert request.headers["anthropic-beta"] == "a-2025,b-2026"
    assert "betas" not in request.json


@pytest.mark.parametrize(
    ("url", "block"),
    [
        (
            "https://example.com/cat.jpg",
            {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
        ),
        (
            PNG,
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
            },
        ),
        (
            "https://example.com/paper.pdf",
            {"type": "document", "source": {"type": "url", "url": "https://example.com/paper.pdf"}},
        ),
        (
            "data:image/svg+xml,%3Csvg%2F%3E",
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/svg+xml", "data": "PHN2Zy8+"},
            },
        ),
    ],
)
def test_anthropic_images_pass_through_as_url_or_base64_sources(url, block):
    sent = body(ANTHROPIC, messages=[user(text("Look"), image(url))])
    assert sent["messages"][0]["content"][1] == block


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/a.png", "cat.png"])
@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI])
def test_an_image_url_that_is_neither_http_nor_data_is_refused(protocol, url):
    with pytest.raises(InvalidMessageError, match="http"):
        encode(protocol, [user(image(url))])


def test_anthropic_tool_results_come_first_in_their_turn_with_their_images():
    history = [
        user(text("Screenshot?")),
        assistant(call("toolu_1", "screenshot", {})),
        user(text("Here:"), result("toolu_1", "taken", images=[PNG])),
    ]
    last = body(ANTHROPIC, messages=history)["messages"][2]["content"]
    assert last == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [
                {"type": "text", "text": "taken"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
            ],
        },
        {"type": "text", "text": "Here:"},
    ]


def test_anthropic_tool_call_without_a_result_is_answered_with_an_error_result():
    history = [user(text("Go")), assistant(call("toolu_9", "run", {})), user(text("Well?"))]
    sent = body(ANTHROPIC, messages=history)["messages"][2]["content"]
    assert sent[0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_9",
        "content": MISSING_RESULT_TEXT,
        "is_error": True,
    }


def test_anthropic_tool_call_ids_are_normalized_the_same_way_for_call_and_result():
    long_id = "functions.get_weather:0/" + "x" * 80
    history = [
        user(text("Go")),
        assistant(call(long_id, "get_weather", {"city": "Paris"})),
        user(result(long_id, "18°C")),
    ]
    sent = body(ANTHROPIC, messages=history)["messages"]
    call_id = sent[1]["content"][0]["id"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", call_id)
    assert call_id.startswith("functions_get_weather_0_")
    assert sent[2]["content"][0]["tool_use_id"] == call_id


def test_anthropic_drops_unsigned_thinking_and_foreign_media_from_assistant_turns():
    history = [
        user(text("Draw")),
        assistant(
            thinking("plan", {"thought_signature": "gemini-sig"}),
            thinking("no fidelity at all"),
            {"type": "inline_data.done", "data": b"\x89PNG", "mime_type": "image/png"},
            text("Done.", {"thought_signature": "gemini-sig-2"}),
        ),
    ]
    assert body(ANTHROPIC, messages=history)["messages"][1]["content"] == [
        {"type": "text", "text": "Done."}
    ]


def test_anthropic_leaves_out_an_assistant_turn_with_nothing_it_accepts():
    history = [
        user(text("A")),
        assistant(thinking("x", {"reasoning_field": "reasoning"})),
        user(text("B")),
    ]
    assert [m["role"] for m in body(ANTHROPIC, messages=history)["messages"]] == ["user", "user"]


@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI, EMBEDDING])
def test_an_empty_history_is_refused_before_sending(protocol):
    with pytest.raises(InvalidMessageError):
        encode(protocol, [])


# --- Gemini generateContent -------------------------------------------------------------------


def test_gemini_request_streams_over_sse_from_the_model_path():
    request = encode(GEMINI)
    assert (request.method, request.path) == (
        "POST",
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    )
    assert request.headers == {}
    assert request.json == {"contents": [{"role": "user", "parts": [{"text": "Hello"}]}]}


def test_gemini_model_given_as_a_resource_name_is_kept():
    request = encode(GEMINI, model="tunedModels/my-model-7")
    assert request.path == "/v1beta/tunedModels/my-model-7:streamGenerateContent?alt=sse"


THINKING_TABLES = {
    # level: 2.5 Flash, 2.5 Pro, 3 Flash, 3 Pro (3.0), 3.1 Pro
    "none": (0, 128, "minimal", "low", "low"),
    "low": (1024, 1024, "low", "low", "low"),
    "medium": (8192, 8192, "medium", "high", "medium"),
    "high": (24576, 24576, "high", "high", "high"),
    "xhigh": (24576, 32768, "high", "high", "high"),
    "max": (24576, 32768, "high", "high", "high"),
}
THINKING_MODELS = (
    "gemini-2.5-flash",
    "gemini-2.5-pro",
    "gemini-3-flash-preview",
    "gemini-3-pro-preview",
    "gemini-3.1-pro-preview",
)


@pytest.mark.parametrize("level", list(THINKING_TABLES))
@pytest.mark.parametrize("column", range(len(THINKING_MODELS)))
def test_gemini_thinking_levels_map_to_the_documented_table(level, column):
    model = THINKING_MODELS[column]
    expected = THINKING_TABLES[level][column]
    field = "thinkingBudget" if isinstance(expected, int) else "thinkingLevel"
    sent = body(GEMINI, {"thinking_level": level}, model=model)
    assert sent["generationConfig"]["thinkingConfig"] == {field: expected}


def test_gemini_models_that_cannot_think_accept_none_and_refuse_thinking():
    assert "generationConfig" not in body(
        GEMINI, {"thinking_level": "none"}, model="gemini-2.0-flash"
    )
    with pytest.raises(UnsupportedParameterError, match="does not think") as raised:
        encode(GEMINI, config={"thinking_level": "low"}, model="gemini-2.0-flash")
    assert raised.value.parameter == "thinking_level"


def test_gemini_thinking_level_and_summary_share_the_thinking_config():
    sent = body(
        GEMINI, {"thinking_level": "low", "thinking_summary": False}, model="gemini-3-flash"
    )
    assert sent["generationConfig"]["thinkingConfig"] == {
        "thinkingLevel": "low",
        "includeThoughts": False,
    }


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"mode": "AUTO"}),
        ("required", {"mode": "ANY"}),
        ("none", {"mode": "NONE"}),
        (["a", "b"], {"mode": "ANY", "allowedFunctionNames": ["a", "b"]}),
    ],
)
def test_gemini_tool_choice_maps_to_function_calling_modes(choice, expected):
    sent = body(GEMINI, {"tools": [{"name": "a"}, {"name": "b"}], "tool_choice": choice})
    assert sent["toolConfig"] == {"functionCallingConfig": expected}


def test_gemini_allowing_parallel_calls_sends_nothing_because_it_is_the_only_behaviour():
    assert body(GEMINI, {"parallel_tool_calls": True}) == body(GEMINI)


def test_gemini_json_mode_without_a_schema_sets_only_the_mime_type():
    sent = body(GEMINI, {"response_format": {"type": "json_object"}})
    assert sent["generationConfig"] == {"responseMimeType": "application/json"}


@pytest.mark.parametrize(
    ("url", "part"),
    [
        (PNG, {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}),
        (
            "https://example.com/cat.jpg?size=2",
            {
                "fileData": {
                    "fileUri": "https://example.com/cat.jpg?size=2",
                    "mimeType": "image/jpeg",
                }
            },
        ),
        (
            "https://generativelanguage.googleapis.com/v1beta/files/abc123",
            {
                "fileData": {
                    "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/abc123"
                }
            },
        ),
    ],
)
def test_gemini_images_are_inline_data_or_file_uris_never_downloaded(url, part):
    sent = body(GEMINI, messages=[user(text("Look"), image(url))])
    assert sent["contents"][0]["parts"][1] == part


def test_gemini_tool_results_are_function_responses_named_after_their_calls():
    history = [
        user(text("Screens?")),
        assistant(call("call_1", "read_screen", {"id": "A"}), call("call_2", "read_theme", {})),
        user(text("Thanks"), result("call_2", "dark"), result("call_1", "ok", images=[PNG])),
    ]
    sent = body(GEMINI, messages=history)["contents"][2]
    assert sent == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "read_theme", "response": {"result": "dark"}}},
            {"functionResponse": {"name": "read_screen", "response": {"result": "ok"}}},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
            {"text": "Thanks"},
        ],
    }


def test_gemini_sends_back_a_call_id_only_when_gemini_gave_one():
    history = [
        user(text("Go")),
        assistant(call("fc-7d2e", "a", {}), call("call_2", "b", {})),
        user(result("fc-7d2e", "x"), result("call_2", "y")),
    ]
    contents = body(GEMINI, messages=history)["contents"]
    assert [p["functionCall"].get("id") for p in contents[1]["parts"]] == ["fc-7d2e", None]
    assert [p["functionResponse"].get("id") for p in contents[2]["parts"]] == ["fc-7d2e", None]


def test_gemini_refuses_a_tool_result_whose_call_is_not_in_the_history():
    with pytest.raises(InvalidMessageError, match="function name"):
        encode(GEMINI, [user(result("nowhere", "x"))])


def test_gemini_3_gets_the_placeholder_signature_on_calls_no_gemini_signed():
    history = [user(text("Go")), assistant(call("call_abc", "a", {}), call("call_def", "b", {}))]
    parts = body(GEMINI, messages=history, model="gemini-3-pro-preview")["contents"][1]["parts"]
    assert [p.get("thoughtSignature") for p in parts] == ["skip_thought_signature_validator", None]
    parts = body(GEMINI, messages=history, model="gemini-2.5-pro")["contents"][1]["parts"]
    assert [p.get("thoughtSignature") for p in parts] == [None, None]


def test_gemini_sends_generated_images_back_with_their_signatures():
    history = [
        user(text("Draw")),
        assistant(
            {
                "type": "inline_thinking.done",
                "data": b"\x01",
                "mime_type": "image/png",
                "fidelity": {"thought_signature": "s1"},
            },
            {
                "type": "inline_data.done",
                "data": b"\x02",
                "mime_type": "image/png",
                "fidelity": {"thought_signature": "s2"},
            },
        ),
    ]
    assert body(GEMINI, messages=history)["contents"][1]["parts"] == [
        {
            "inlineData": {"mimeType": "image/png", "data": "AQ=="},
            "thought": True,
            "thoughtSignature": "s1",
        },
        {"inlineData": {"mimeType": "image/png", "data": "Ag=="}, "thoughtSignature": "s2"},
    ]


# --- the documented tables are the ones in force -------------------------------------------

DOC = (REPO / "docs" / "requests-anthropic-gemini.md").read_text()


def doc_table(heading: str) -> dict[str, list[str]]:
    """level -> each cell of the table under `heading` in the docs, without its remark."""
    section = DOC.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| `")]
    return {
        row[0].strip(" `"): [cell.split(" (")[0].strip(" `") for cell in row[1:]] for row in rows
    }


def thinking_sent(protocol: str, model: str, level: str) -> str:
    sent = body(protocol, {"thinking_level": level}, model=model)
    if protocol == ANTHROPIC:
        if sent["thinking"]["type"] == "enabled":
            return str(sent["thinking"]["budget_tokens"])
        if sent["thinking"]["type"] == "disabled":
            return "thinking: {type: disabled}"
        return str(sent["output_config"]["effort"])
    (value,) = sent["generationConfig"]["thinkingConfig"].values()
    return str(value)


@pytest.mark.parametrize(
    ("heading", "protocol", "models"),
    [
        ("Anthropic: budget models", ANTHROPIC, ["claude-sonnet-4-5"]),
        ("Anthropic: adaptive models", ANTHROPIC, ["claude-opus-4-7", "claude-sonnet-4-6"]),
        (
            "Gemini 3 and later: thinkingLevel",
            GEMINI,
            ["gemini-3-flash-preview", "gemini-3.1-pro-preview", "gemini-3-pro-preview"],
        ),
        ("Gemini 2.5: thinkingBudget", GEMINI, ["gemini-2.5-flash", "gemini-2.5-pro"]),
    ],
)
def test_the_documented_thinking_tables_are_what_the_encoders_send(heading, protocol, models):
    table = doc_table(heading)
    assert list(table) == ["none", "low", "medium", "high", "xhigh", "max"]
    for level, cells in table.items():
        assert [thinking_sent(protocol, model, level) for model in models] == cells[: len(models)]


# --- Gemini embeddings ------------------------------------------------------------------------


def test_one_message_is_embedded_with_embed_content():
    request = encode(EMBEDDING, [user(text("cats"), text("and dogs"))])
    assert (request.method, request.path) == ("POST", "/v1beta/models/text-embed-1:embedContent")
    assert request.json == {"content": {"parts": [{"text": "cats"}, {"text": "and dogs"}]}}


def test_several_messages_are_one_batch_request_each_in_order_with_extra_body():
    request = encode(
        EMBEDDING,
        [user(text("one")), user(text("two"), image(PNG))],
        {"extra_body": {"taskType": "RETRIEVAL_DOCUMENT", "outputDimensionality": 256}},
    )
    assert request.path == "/v1beta/models/text-embed-1:batchEmbedContents"
    assert request.json == {
        "requests": [
            {
                "model": "models/text-embed-1",
                "content": {"parts": [{"text": "one"}]},
                "taskType": "RETRIEVAL_DOCUMENT",
                "outputDimensionality": 256,
            },
            {
                "model": "models/text-embed-1",
                "content": {
                    "parts": [
                        {"text": "two"},
                        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                    ]
                },
                "taskType": "RETRIEVAL_DOCUMENT",
                "outputDimensionality": 256,
            },
        ]
    }


@pytest.mark.parametrize(
    "message",
    [user(result("c", "x")), assistant(call("c", "f", {})), user(text(""))],
)
def test_an_embedding_input_must_hold_text_or_images(message):
    with pytest.raises(InvalidMessageError):
        encode(EMBEDDING, [message])


def embedding_body(payload: dict[str, Any]) -> Capture:
    return Capture(EMBEDDING, "body", json.dumps(payload).encode(), {})


def test_a_batch_response_is_one_embedding_item_per_input_in_order_then_stop(replay_server):
    payload = {
        "embeddings": [{"values": [0.25, -1.5, 3e-05]}, {"values": [0.5, 0.125]}],
        "usageMetadata": {"promptTokenCount": 9},
    }
    decoded = decode_over_http(replay_server, embedding_body(payload), slices=[7])
    items = [e["content_items"][0] for e in decoded.events if e["content_items"]]
    vectors = [entry["values"] for entry in payload["embeddings"]]
    assert items == [
        {"type": "embedding.delta", "embedding": vectors[0]},
        {"type": "embedding.done", "embedding": vectors[0]},
        {"type": "embedding.delta", "embedding": vectors[1]},
        {"type": "embedding.done", "embedding": vectors[1]},
    ]
    assert decoded.stop is not None
    assert decoded.stop["finish_reason"] == "stop"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 9,
        "thoughts_tokens": 0,
        "response_tokens": 0,
    }


def test_a_single_embedding_without_usage_finishes_with_unknown_usage(replay_server):
    decoded = decode_over_http(replay_server, embedding_body({"embedding": {"values": [1.0]}}))
    assert decoded.done_items == [{"type": "embedding.done", "embedding": [1.0]}]
    assert decoded.stop is not None
    assert set(decoded.stop["usage_metadata"].values()) == {None}
    assert isinstance(decoded.decoder.result, FinalResponse)


def test_an_embedding_error_body_is_a_provider_error(replay_server):
    payload = {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}
    decoded = decode_over_http(replay_server, embedding_body(payload))
    assert isinstance(decoded.error, ProviderError)
    assert decoded.error.provider_message == "Quota exceeded"
    assert (decoded.error.error_type, decoded.error.code) == ("RESOURCE_EXHAUSTED", 429)
    assert decoded.error.retryable
    assert decoded.events == []


def test_an_embedding_body_without_vectors_is_incomplete(replay_server):
    decoded = decode_over_http(replay_server, embedding_body({"unexpected": True}))
    assert isinstance(decoded.error, IncompleteStreamError)
    assert decoded.error.missing == "embedding"


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


FULL_CONFIG: dict[str, dict[str, Any]] = {
    ANTHROPIC: {
        "system_prompt": "S",
        "max_tokens": 4096,
        "top_p": 0.97,
        "stop": ["END"],
        "tools": [WEATHER],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "response_format": {"type": "json_schema", "json_schema": {"schema": SCHEMA}},
        "thinking_level": "low",
        "thinking_summary": True,
        "prompt_caching": True,
        "extra_body": {"metadata": {"user_id": "u"}, "betas": ["x"]},
        "trace_id": "t",
    },
    GEMINI: {
        "system_prompt": "S",
        "max_tokens": 4096,
        "temperature": 0.5,
        "top_p": 0.9,
        "stop": ["END"],
        "seed": 3,
        "tools": [WEATHER],
        "tool_choice": ["get_weather"],
        "parallel_tool_calls": True,
        "response_format": SCHEMA,
        "thinking_level": "medium",
        "thinking_summary": True,
        "prompt_caching": True,
        "extra_body": {"generationConfig": {"topK": 4}, "labels": {"team": "a"}},
        "trace_id": "t",
    },
    EMBEDDING: {"extra_body": {"taskType": "CLUSTERING", "nested": {"a": [1]}}, "trace_id": "t"},
}


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


@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI, EMBEDDING])
def test_encoding_never_changes_the_callers_messages_or_config(protocol):
    history = rich_history() if protocol != EMBEDDING else [user(text("a")), user(image(PNG))]
    config = copy.deepcopy(FULL_CONFIG[protocol])
    history_before, config_before = copy.deepcopy(history), copy.deepcopy(config)
    request = encode(protocol, history, config, model="gemini-3-pro" if protocol == GEMINI else "")
    assert (history, config) == (history_before, config_before)
    scribble(request.json)
    assert (history, config) == (history_before, config_before)


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


def anthropic_blocks(name: str) -> list[dict[str, Any]]:
    """The content blocks of a capture as Anthropic sent them: starts plus deltas joined."""
    blocks: dict[int, dict[str, Any]] = {}
    for event in sse_payloads(load_capture(ANTHROPIC, name).body):
        if event["type"] == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif event["type"] == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            for field, key in (
                ("text", "text"),
                ("thinking", "thinking"),
                ("signature", "signature"),
                ("partial_json", "partial_json"),
            ):
                if field in delta:
                    block[key] = block.get(key, "") + delta[field]
    return [blocks[index] for index in sorted(blocks)]


def test_anthropic_thinking_goes_back_with_its_signature_exactly():
    name = "pydanticai-anthropic-thinking"
    reply = final_message(ANTHROPIC, name)
    sent = next_turn(ANTHROPIC, "claude-sonnet-4-0", reply, user(text("And at night?")))
    captured = anthropic_blocks(name)
    assert [b["type"] for b in captured] == ["thinking", "text"]
    assert sent.json["messages"][1] == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": captured[0]["thinking"],
                "signature": captured[0]["signature"],
            },
            {"type": "text", "text": captured[1]["text"]},
        ],
    }


def test_anthropic_redacted_thinking_goes_back_as_redacted_blocks_with_their_data():
    name = "pydanticai-anthropic-redacted-thinking"
    reply = final_message(ANTHROPIC, name)
    sent = next_turn(ANTHROPIC, "claude-sonnet-4-5", reply, user(text("Hi")))
    captured = anthropic_blocks(name)
    expected = [
        {"type": "redacted_thinking", "data": b["data"]}
        for b in captured
        if b["type"] == "redacted_thinking"
    ]
    assert len(expected) == 2
    assert sent.json["messages"][1]["content"] == [
        *expected,
        {"type": "text", "text": captured[-1]["text"]},
    ]


def test_anthropic_tool_use_goes_back_with_its_id_name_and_input_and_pairs_with_the_result():
    name = "anthropicsdk-tool-use"
    reply = final_message(ANTHROPIC, name)
    captured = anthropic_blocks(name)
    tool_use = next(b for b in captured if b["type"] == "tool_use")
    answer = user(result(tool_use["id"], "18°C and sunny"))
    sent = next_turn(ANTHROPIC, "claude-sonnet-4-5", reply, answer).json["messages"]
    assert sent[1]["content"][-1] == {
        "type": "tool_use",
        "id": tool_use["id"],
        "name": tool_use["name"],
        "input": json.loads(tool_use["partial_json"]),
    }
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": tool_use["id"], "content": "18°C and sunny"}
    ]


def gemini_parts(name: str) -> list[dict[str, Any]]:
    """Every part of candidate 0 of a capture, in order, as Gemini sent it."""
    return [
        part
        for chunk in sse_payloads(load_capture(GEMINI, name).body)
        for candidate in chunk.get("candidates", [])
        if candidate.get("index", 0) == 0
        for part in (candidate.get("content") or {}).get("parts", [])
    ]


def test_gemini_thought_signatures_go_back_on_the_first_part_of_their_item():
    # SPEC §3: the signed first answer part and the parts after it are one item; replay sends
    # the item as one part that begins with the signed part's text and carries its signature.
    name = "pydanticai-google-thinking"
    reply = final_message(GEMINI, name)
    sent = next_turn(GEMINI, "gemini-2.5-pro", reply, user(text("Thanks"))).json["contents"][1]
    captured = gemini_parts(name)
    (signed,) = [p for p in captured if "thoughtSignature" in p]
    assert "thought" not in signed  # this capture signs its first answer text part
    assert sent["role"] == "model"
    thought, answer = sent["parts"]
    assert thought == {
        "text": "".join(p["text"] for p in captured if p.get("thought")),
        "thought": True,
    }
    assert answer == {
        "text": "".join(p["text"] for p in captured if not p.get("thought")),
        "thoughtSignature": signed["thoughtSignature"],
    }
    assert answer["text"].startswith(signed["text"])


def test_a_gemini_signature_sent_after_the_text_goes_back_on_the_texts_first_part():
    name = "vercel-google-text"
    captured = gemini_parts(name)
    assert [bool(p["text"]) for p in captured] == [True, True, False]
    sent = next_turn(GEMINI, "gemini-3-pro-preview", final_message(GEMINI, name), user(text("Ok")))
    assert sent.json["contents"][1]["parts"] == [
        {
            "text": "".join(p["text"] for p in captured),
            "thoughtSignature": captured[-1]["thoughtSignature"],
        }
    ]


def test_gemini_function_call_signature_goes_back_on_the_call_and_the_result_names_it():
    name = "pydanticai-google-tool-call-signature"
    reply = final_message(GEMINI, name)
    captured, *rest = gemini_parts(name)
    assert rest == [{"text": ""}]  # an empty part carrying nothing: there is nothing to send
    assert "id" not in captured["functionCall"]  # Gemini gave no id: ours is synthesized
    call_id = reply["content_items"][0]["tool_call_id"]
    answer = user(result(call_id, "France"))
    sent = next_turn(GEMINI, "gemini-3-pro-preview", reply, answer).json["contents"]
    assert sent[1]["parts"] == [captured]
    assert sent[2]["parts"] == [
        {
            "functionResponse": {
                "name": captured["functionCall"]["name"],
                "response": {"result": "France"},
            }
        }
    ]


def test_gemini_parallel_calls_keep_the_one_signature_on_the_first_call_and_send_no_ids():
    name = "vercel-vertex-stream-no-args-parallel"
    reply = final_message(GEMINI, name)
    captured = gemini_parts(name)
    names = [p["functionCall"]["name"] for p in captured if "name" in p.get("functionCall", {})]
    arguments: list[dict[str, Any]] = []  # Vertex streams each `id` value as string pieces
    for part in captured:
        function_call = part.get("functionCall", {})
        if "name" in function_call:
            arguments.append({})
        for piece in function_call.get("partialArgs", []):
            key = piece["jsonPath"].removeprefix("$.")
            arguments[-1][key] = arguments[-1].get(key, "") + piece["stringValue"]
    signatures = [p["thoughtSignature"] for p in captured if "thoughtSignature" in p]
    answers = user(
        *[
            result(item["tool_call_id"], f"result {i}")
            for i, item in enumerate(reply["content_items"])
            if item["type"] == "tool_call.done"
        ]
    )
    sent = next_turn(GEMINI, "gemini-3-flash-preview", reply, answers).json["contents"]
    calls = [p for p in sent[1]["parts"] if "functionCall" in p]
    assert [p["functionCall"] for p in calls] == [
        {"name": n, "args": a} for n, a in zip(names, arguments, strict=True)
    ]
    assert [p.get("thoughtSignature") for p in calls] == [signatures[0], None, None, None]
    assert sent[1]["parts"][0]["thought"] is True
    assert [p["functionResponse"]["name"] for p in sent[2]["parts"]] == names
    assert all("id" not in p["functionResponse"] for p in sent[2]["parts"])


@pytest.mark.parametrize(
    ("protocol", "name"),
    [
        ("openai-responses", "pydanticai-phase"),
        ("openai-chat", "pydanticai-openrouter-reasoning-signature"),
        ("openai-chat", "vercel-deepseek-tool-call"),
    ],
)
def test_history_from_openai_drops_its_fidelity_and_its_thinking(protocol, name):
    reply = final_message(protocol, name)
    calls = [i for i in reply["content_items"] if i["type"] == "tool_call.done"]
    texts = [i["text"] for i in reply["content_items"] if i["type"] == "text.done"]
    assert any(i.get("fidelity") for i in reply["content_items"])  # there is fidelity to drop
    follow_up = user(*[result(c["tool_call_id"], "ok") for c in calls], text("Go on"))

    anthropic = next_turn(ANTHROPIC, "claude-sonnet-4-5", reply, follow_up).json["messages"][1]
    assert anthropic["content"] == [
        *[{"type": "text", "text": t} for t in texts],
        *[
            {
                "type": "tool_use",
                "id": c["tool_call_id"],
                "name": c["name"],
                "input": c["arguments"],
            }
            for c in calls
        ],
    ]

    gemini = next_turn(GEMINI, "gemini-2.5-flash", reply, follow_up).json["contents"][1]
    assert gemini["parts"] == [
        *[{"text": t} for t in texts],
        *[
            {"functionCall": {"name": c["name"], "args": c["arguments"], "id": c["tool_call_id"]}}
            for c in calls
        ],
    ]


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


WEB_SEARCH_TOOL = {
    "allowed_domains": None,
    "blocked_domains": None,
    "max_uses": None,
    "name": "web_search",
    "type": "web_search_20250305",
    "user_location": None,
}
TEXT_ONLY = {"generationConfig": {"responseModalities": ["TEXT"]}}
SERVER_SIDE_TOOLS = {"toolConfig": {"includeServerSideToolInvocations": True}}
CITY_LOCATION = {
    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
    "required": ["city", "country"],
    "title": "CityLocation",
    "type": "object",
}


def string_parameter(name: str, description: str) -> dict[str, Any]:
    return {
        "properties": {name: {"description": description, "type": "string"}},
        "required": [name],
        "type": "object",
    }


# capture -> the config that expresses its recorded request; what has no Config key goes through
# extra_body (server tools, a thinking budget that is no level's, Gemini response modalities)
SAME_REQUEST: dict[str, dict[str, Any]] = {
    "anthropicsdk-structured-output": {
        "max_tokens": 1024,
        "response_format": {"type": "array", "items": {"type": "integer"}},
    },
    "pydanticai-anthropic-code-execution": {
        "max_tokens": 4096,
        "tool_choice": "auto",
        "extra_body": {
            "thinking": {"type": "enabled", "budget_tokens": 3000},
            "tools": [{"name": "code_execution", "type": "code_execution_20260120"}],
        },
    },
    "pydanticai-anthropic-pause-turn": {
        "max_tokens": 15000,
        "thinking_level": "medium",
        "extra_body": {"tools": [WEB_SEARCH_TOOL]},
    },
    "pydanticai-anthropic-redacted-thinking": {"max_tokens": 4096, "thinking_level": "low"},
    "pydanticai-anthropic-thinking": {"max_tokens": 4096, "thinking_level": "low"},
    "pydanticai-anthropic-web-fetch": {
        "max_tokens": 4096,
        "tool_choice": "auto",
        "extra_body": {
            "thinking": {"type": "enabled", "budget_tokens": 3000},
            "tools": [{"name": "web_fetch", "type": "web_fetch_20250910"}],
        },
    },
    "pydanticai-google-code-execution": {
        "system_prompt": "Be concise and always use Python to do calculations no matter how small.",
        "extra_body": {**TEXT_ONLY, "tools": [{"codeExecution": {}}]},
    },
    "pydanticai-google-file-search-gemini3": {
        "extra_body": {
            **TEXT_ONLY,
            **SERVER_SIDE_TOOLS,
            "tools": [
                {
                    "fileSearch": {
                        "file_search_store_names": [
                            "fileSearchStores/testfilesearchgroundingstre-p2hcv3cs2i69"
                        ]
                    }
                }
            ],
        },
    },
    "pydanticai-google-flash-tool-call": {
        "system_prompt": "You are a helpful chatbot.",
        "tools": [
            {
                "name": "get_capital",
                "description": "Get the capital of a country.",
                "parameters": string_parameter("country", "The country name."),
            },
            {
                "name": "get_temperature",
                "description": "Get the temperature in a city.",
                "parameters": string_parameter("city", "The city name."),
            },
        ],
    },
    "pydanticai-google-single-chunk": {"temperature": 0.0, "extra_body": TEXT_ONLY},
    "pydanticai-google-structured-output": {
        "response_format": CITY_LOCATION,
        "tools": [
            {
                "name": "get_user_country",
                "description": "",
                "parameters": {"additionalProperties": False, "properties": {}, "type": "object"},
            }
        ],
        "extra_body": TEXT_ONLY,
    },
    "pydanticai-google-structured-output-search": {
        "response_format": CITY_LOCATION,
        "extra_body": {**TEXT_ONLY, **SERVER_SIDE_TOOLS, "tools": [{"googleSearch": {}}]},
    },
    "pydanticai-google-text": {"system_prompt": "You are a helpful chatbot.", "temperature": 0.0},
    "pydanticai-google-url-context": {
        "system_prompt": "You are a helpful chatbot.",
        "extra_body": {**TEXT_ONLY, "tools": [{"urlContext": {}}]},
    },
    "pydanticai-google-thinking": {
        "system_prompt": "You are a helpful assistant.",
        "thinking_summary": True,
        "tools": [
            {"name": "dummy", "description": "", "parameters": {"type": "object", "properties": {}}}
        ],
    },
    "pydanticai-google-tool-call-signature": {
        "tools": [
            {
                "name": "get_country",
                "description": "",
                "parameters": {"additionalProperties": False, "properties": {}, "type": "object"},
            }
        ],
        "extra_body": TEXT_ONLY,
    },
    "pydanticai-google-web-search": {
        "system_prompt": "You are a helpful chatbot.",
        "extra_body": {"tools": [{"googleSearch": {}}]},
    },
    "pydanticai-vertex-flex": {"extra_body": TEXT_ONLY},
}


def recorded_messages(protocol: str, request: dict[str, Any]) -> list[Any]:
    """The recorded conversation as messages: text turns, and Gemini function calls (with
    their signature) and results."""
    if protocol == ANTHROPIC:
        turns = [
            (m["role"], [m["content"]] if isinstance(m["content"], str) else m["content"])
            for m in request["messages"]
        ]
    else:
        turns = [(c["role"], c["parts"]) for c in request["contents"]]
    messages = []
    for role, blocks in turns:
        items = [recorded_item(b) for b in blocks]
        messages.append({"role": "user" if role == "user" else "assistant", "content_items": items})
    return messages


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


def anthropic_meaning(request: dict[str, Any]) -> dict[str, Any]:
    """A request with Anthropic's shorthands spelled out: string content and system as blocks."""
    request = copy.deepcopy(request)
    for message in request["messages"]:
        if isinstance(message["content"], str):
            message["content"] = [{"type": "text", "text": message["content"]}]
    if isinstance(request.get("system"), str):
        request["system"] = [{"type": "text", "text": request["system"]}]
    return request


def lowercase_types(schema: Any) -> Any:
    """An OpenAPI-subset schema (`type: OBJECT`) as the JSON Schema it means."""
    if isinstance(schema, dict):
        return {
            key: value.lower()
            if key == "type" and isinstance(value, str)
            else lowercase_types(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [lowercase_types(value) for value in schema]
    return schema


def gemini_meaning(request: dict[str, Any]) -> dict[str, Any]:
    """A request with equivalent spellings made one: the system instruction's ignored role,
    an empty generationConfig or description, the three ways to give a function's
    parameters, and the name of a function result's one free-form field (pydantic-ai's
    `return_value`, our `result`)."""
    request = copy.deepcopy(request)
    request.get("systemInstruction", {}).pop("role", None)
    for content in request["contents"]:
        for part in content["parts"]:
            response = part.get("functionResponse", {}).get("response")
            if response is not None and set(response) == {"return_value"}:
                response["result"] = response.pop("return_value")
    if request.get("generationConfig") == {}:
        del request["generationConfig"]
    for tool in request.get("tools", []):
        for declaration in tool.get("functionDeclarations", []):
            if declaration.get("description") == "":
                del declaration["description"]
            if "parameters_json_schema" in declaration:
                declaration["parametersJsonSchema"] = declaration.pop("parameters_json_schema")
            if "parameters" in declaration:
                declaration["parametersJsonSchema"] = lowercase_types(declaration.pop("parameters"))
    return request


@pytest.mark.parametrize("protocol", [ANTHROPIC, GEMINI])
def test_every_recorded_request_has_its_expression_here(protocol):
    names = recorded_request_names(protocol)
    if names == ["<corpus missing>"]:
        load_capture(protocol, names[0])  # skips, or fails under CI
    assert set(names) <= set(SAME_REQUEST)


@pytest.mark.parametrize(
    ("protocol", "name"),
    [(p, n) for p in (ANTHROPIC, GEMINI) for n in recorded_request_names(p)],
)
def test_the_encoded_request_means_what_the_recorded_one_did(protocol, name):
    capture = load_capture(protocol, name)
    recorded = capture.sidecar["request"]
    model = recorded["model"] if protocol == ANTHROPIC else capture.sidecar["model"]
    request = encode(protocol, recorded_messages(protocol, recorded), SAME_REQUEST[name], model)
    uri = urlsplit(capture.sidecar["source"]["request_uri"])
    if protocol == ANTHROPIC:
        assert request.path == uri.path
        assert anthropic_meaning(request.json) == anthropic_meaning(recorded)
    else:
        if capture.sidecar["provider"] == "google":  # Vertex AI has its own resource paths
            assert request.path == f"{uri.path}?{uri.query}"
        assert gemini_meaning(request.json) == gemini_meaning(recorded)
