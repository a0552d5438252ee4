"""Request encoder for Anthropic Messages.

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

from modelstream.errors import InvalidMessageError, UnsupportedParameterError
from modelstream.protocols.common.encoding import MISSING_RESULT_TEXT
from support import load_capture
from support.encoding import (
    ANTHROPIC,
    CONFIG_KEYS,
    PNG,
    RAISES,
    SCHEMA,
    UNCHANGED,
    WEATHER,
    body,
    check_config_key,
    contains,
    doc_table,
    encode,
    final_message,
    next_turn,
    recorded_item,
    recorded_request_names,
    rich_history,
    scribble,
    sse_payloads,
)
from support.messages import assistant, call, image, result, text, thinking, user

# --- every config key ---------------------------------------------------------------------

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
KEY_CASES: dict[str, tuple[dict[str, Any], Any]] = {
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
}


@pytest.mark.parametrize("key", CONFIG_KEYS)
def test_every_config_key_is_encoded_or_refused_by_name(key):
    check_config_key(ANTHROPIC, key, *KEY_CASES[key])


def test_a_key_that_is_not_in_config_is_refused_rather_than_ignored():
    with pytest.raises(UnsupportedParameterError, match=r"top_k.*extra_body"):
        encode(ANTHROPIC, config={"top_k": 5})


def test_a_config_value_of_none_counts_as_unset():
    assert encode(ANTHROPIC, config={"seed": None, "temperature": None}) == encode(ANTHROPIC)


# --- the request --------------------------------------------------------------------------


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


@pytest.mark.parametrize("choice", ["auto", "none"])
def test_a_tool_choice_with_no_tools_to_choose_from_is_left_out(choice):
    config = {"tool_choice": choice, "parallel_tool_calls": True}
    assert encode(ANTHROPIC, config=config) == encode(ANTHROPIC)


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"tool_choice": "required"}, "no"),
        ({"tool_choice": ["get_weather"]}, "no"),
        ({"tool_choice": ["get_time"], "tools": [WEATHER]}, "get_time"),
    ],
)
def test_a_forced_tool_choice_needs_the_tools_it_names(config, reason):
    with pytest.raises(UnsupportedParameterError, match=reason) as raised:
        encode(ANTHROPIC, config=config)
    assert (raised.value.parameter, raised.value.protocol) == ("tool_choice", ANTHROPIC)


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
    closed = {**SCHEMA, "additionalProperties": False}  # Anthropic takes closed objects only
    assert sent["output_config"] == {"format": {"type": "json_schema", "schema": closed}}


def test_a_json_schema_response_format_without_its_schema_is_refused():
    wrapper = {"type": "json_schema", "json_schema": {"name": "city"}}
    with pytest.raises(UnsupportedParameterError) as raised:
        encode(ANTHROPIC, config={"response_format": wrapper})
    assert (raised.value.parameter, raised.value.protocol) == ("response_format", ANTHROPIC)


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
        "format": {"type": "json_schema", "schema": {**SCHEMA, "additionalProperties": False}},
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


def test_a_single_stop_string_is_one_stop_sequence():
    assert contains(KEY_CASES["stop"][1], body(ANTHROPIC, {"stop": "END"}))


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
def test_an_image_url_that_is_neither_http_nor_data_is_refused(url):
    with pytest.raises(InvalidMessageError, match="http"):
        encode(ANTHROPIC, [user(image(url))])


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


def test_an_empty_history_is_refused_before_sending():
    with pytest.raises(InvalidMessageError):
        encode(ANTHROPIC, [])


# --- the documented tables are the ones in force -------------------------------------------


def thinking_sent(model: str, level: str) -> str:
    sent = body(ANTHROPIC, {"thinking_level": level}, model=model)
    if sent["thinking"]["type"] == "enabled":
        return str(sent["thinking"]["budget_tokens"])
    if sent["thinking"]["type"] == "disabled":
        return "thinking: {type: disabled}"
    return str(sent["output_config"]["effort"])


@pytest.mark.parametrize(
    ("heading", "models"),
    [
        ("Anthropic: budget models", ["claude-sonnet-4-5"]),
        ("Anthropic: adaptive models", ["claude-opus-4-7", "claude-sonnet-4-6"]),
    ],
)
def test_the_documented_thinking_tables_are_what_the_encoders_send(heading, models):
    table = doc_table(heading)
    assert list(table) == ["none", "low", "medium", "high", "xhigh", "max"]
    for level, cells in table.items():
        assert [thinking_sent(model, level) for model in models] == cells[: len(models)]


# --- the caller's objects are never changed ---------------------------------------------------

FULL_CONFIG: dict[str, Any] = {
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
}


def test_encoding_never_changes_the_callers_messages_or_config():
    history, config = rich_history(), copy.deepcopy(FULL_CONFIG)
    history_before, config_before = copy.deepcopy(history), copy.deepcopy(config)
    request = encode(ANTHROPIC, history, config)
    assert (history, config) == (history_before, config_before)
    scribble(request.json)
    assert (history, config) == (history_before, config_before)


# --- fidelity replay: the next turn carries what the provider sent --------------------------


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


# --- the corpus's recorded requests, expressed as messages + config -------------------------

WEB_SEARCH_TOOL = {
    "allowed_domains": None,
    "blocked_domains": None,
    "max_uses": None,
    "name": "web_search",
    "type": "web_search_20250305",
    "user_location": None,
}


# capture -> the config that expresses its recorded request; what has no Config key goes through
# extra_body (server tools, a thinking budget that is no level's)
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
}


def recorded_messages(request: dict[str, Any]) -> list[Any]:
    """The recorded conversation as messages of text turns."""
    turns = [
        (m["role"], [m["content"]] if isinstance(m["content"], str) else m["content"])
        for m in request["messages"]
    ]
    messages = []
    for role, blocks in turns:
        items = [recorded_item(b) for b in blocks]
        messages.append({"role": "user" if role == "user" else "assistant", "content_items": items})
    return messages


def anthropic_meaning(request: dict[str, Any]) -> dict[str, Any]:
    """A request with Anthropic's shorthands spelled out: string content and system as blocks."""
    request = copy.deepcopy(request)
    for message in request["messages"]:
        if isinstance(message["content"], str):
            message["content"] = [{"type": "text", "text": message["content"]}]
    if isinstance(request.get("system"), str):
        request["system"] = [{"type": "text", "text": request["system"]}]
    return request


def test_every_recorded_request_has_its_expression_here():
    names = recorded_request_names(ANTHROPIC)
    if names == ["<corpus missing>"]:
        load_capture(ANTHROPIC, names[0])  # skips, or fails under CI
    assert set(names) <= set(SAME_REQUEST)


@pytest.mark.parametrize("name", recorded_request_names(ANTHROPIC))
def test_the_encoded_request_means_what_the_recorded_one_did(name):
    capture = load_capture(ANTHROPIC, name)
    recorded = capture.sidecar["request"]
    request = encode(ANTHROPIC, recorded_messages(recorded), SAME_REQUEST[name], recorded["model"])
    uri = urlsplit(capture.sidecar["source"]["request_uri"])
    assert request.path == uri.path
    assert anthropic_meaning(request.json) == anthropic_meaning(recorded)
