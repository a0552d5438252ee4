"""Request encoder of OpenAI Chat Completions (and the servers compatible with it).

Expected replay values are read from the corpus capture files with the standard json module,
independently of the decoders; recorded request bodies come from the capture sidecars.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from modelstream.errors import InvalidMessageError
from modelstream.protocols import encode_request
from modelstream.protocols.common.encoding import MISSING_RESULT_TEXT
from support import require_corpus
from support.messages import result
from support.openai_encoding import (
    AUDIO_ANSWER,
    CHAT,
    HELLO,
    IMAGE,
    LEVELS,
    RESPONSES,
    RICH_CONFIG,
    SCHEMA,
    TIME,
    TOOL_TURN,
    WEATHER,
    assistant,
    call,
    capture_events,
    encode,
    final_message,
    meaning,
    next_turn,
    recorded,
    recorded_tools,
    rich_history,
    unsupported,
    user,
)

# --- the request and its stream options -------------------------------------------------------


def test_chat_posts_to_chat_completions_and_asks_for_usage_in_the_stream():
    request = encode_request(CHAT, "gpt-4o", HELLO, {})
    assert (request.method, request.path) == ("POST", "/chat/completions")
    assert request.json == {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "Hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert request.headers == {}


# --- every config key -------------------------------------------------------------------------


def test_system_prompt_is_the_first_chat_message():
    assert encode(CHAT, {"system_prompt": "Be brief."})["messages"][0] == {
        "role": "system",
        "content": "Be brief.",
    }


def test_max_tokens_is_max_completion_tokens_for_openai_models_and_max_tokens_elsewhere():
    assert encode(CHAT, {"max_tokens": 50}, model="o3")["max_completion_tokens"] == 50
    assert encode(CHAT, {"max_tokens": 50}, model="gpt-4o")["max_completion_tokens"] == 50
    deepseek = encode(CHAT, {"max_tokens": 50}, model="deepseek-chat")
    assert deepseek["max_tokens"] == 50
    assert "max_completion_tokens" not in deepseek


@pytest.mark.parametrize("key,value", [("temperature", 0.2), ("top_p", 0.9)])
def test_sampling_parameters_go_out_under_their_own_name(key, value):
    assert encode(CHAT, {key: value})[key] == value


def test_stop_and_seed_go_to_chat():
    body = encode(CHAT, {"stop": ["END", "STOP"], "seed": 7})
    assert body["stop"] == ["END", "STOP"]
    assert body["seed"] == 7


def test_tools_become_chat_function_tools_and_strict_only_when_asked():
    body = encode(CHAT, {"tools": [WEATHER, {**TIME, "strict": True}]})
    assert body["tools"] == [
        {"type": "function", "function": WEATHER},
        {"type": "function", "function": {**TIME, "strict": True}},
    ]


@pytest.mark.parametrize("choice", ["auto", "required", "none"])
def test_tool_choice_keywords_go_out_as_they_are(choice):
    assert encode(CHAT, {"tools": [WEATHER], "tool_choice": choice})["tool_choice"] == choice


def test_a_tool_choice_of_one_name_forces_that_function():
    config = {"tools": [WEATHER, TIME], "tool_choice": ["get_time"]}
    assert encode(CHAT, config)["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_time"},
    }


def test_a_tool_choice_of_several_names_requires_one_of_the_allowed_tools():
    config = {"tools": [WEATHER, TIME, {"name": "ping"}], "tool_choice": ["get_time", "ping"]}
    assert encode(CHAT, config)["tool_choice"] == {
        "type": "allowed_tools",
        "allowed_tools": {
            "mode": "required",
            "tools": [
                {"type": "function", "function": {"name": "get_time"}},
                {"type": "function", "function": {"name": "ping"}},
            ],
        },
    }


def test_a_tool_choice_naming_an_unknown_tool_is_refused():
    error = unsupported(CHAT, {"tools": [WEATHER], "tool_choice": ["get_time"]})
    assert (error.parameter, error.protocol) == ("tool_choice", CHAT)
    assert "get_time" in str(error)


@pytest.mark.parametrize("choice", ["required", ["get_weather"]])
def test_a_tool_choice_that_needs_tools_is_refused_without_them(choice):
    error = unsupported(CHAT, {"tool_choice": choice})
    assert (error.parameter, error.protocol) == ("tool_choice", CHAT)


def test_tool_settings_that_mean_nothing_without_tools_are_left_out():
    body = encode(CHAT, {"tools": [], "tool_choice": "auto", "parallel_tool_calls": False})
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(body)


@pytest.mark.parametrize("value", [True, False])
def test_parallel_tool_calls_go_out_with_tools(value):
    body = encode(CHAT, {"tools": [WEATHER], "parallel_tool_calls": value})
    assert body["parallel_tool_calls"] is value


def test_a_json_schema_response_format_is_a_chat_json_schema_response_format():
    assert encode(CHAT, {"response_format": SCHEMA})["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "response", "schema": SCHEMA},
    }


def test_a_named_strict_response_format_keeps_its_name_and_strictness():
    wrapper = {"name": "answer", "schema": SCHEMA, "strict": True, "description": "One answer."}
    body = encode(CHAT, {"response_format": wrapper})
    strict = {**SCHEMA, "additionalProperties": False}  # strict mode's form of the schema
    expected = {"name": "answer", "schema": strict, "strict": True, "description": "One answer."}
    assert body["response_format"] == {"type": "json_schema", "json_schema": expected}


def test_chats_response_format_wrapper_is_read_like_the_bare_schema():
    wrapper = {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}
    flat = {"type": "json_schema", "name": "answer", "schema": SCHEMA}
    assert encode(CHAT, {"response_format": wrapper}) == encode(CHAT, {"response_format": flat})
    assert "answer" in json.dumps(encode(CHAT, {"response_format": wrapper}))


def test_json_mode_without_a_schema_is_json_object():
    json_mode = {"response_format": {"type": "json_object"}}
    assert encode(CHAT, json_mode)["response_format"] == {"type": "json_object"}


def test_a_plain_text_response_format_sends_nothing():
    assert encode(CHAT, {"response_format": {"type": "text"}}) == encode(CHAT)


@pytest.mark.parametrize("level", LEVELS)
def test_every_thinking_level_is_a_chat_reasoning_effort(level):
    assert encode(CHAT, {"thinking_level": level})["reasoning_effort"] == level


def test_an_unknown_thinking_level_is_refused():
    error = unsupported(CHAT, {"thinking_level": "extreme"})
    assert (error.parameter, error.protocol) == ("thinking_level", CHAT)


def test_chat_cannot_give_a_thinking_summary_and_says_so():
    error = unsupported(CHAT, {"thinking_summary": True})
    assert (error.parameter, error.protocol) == ("thinking_summary", CHAT)
    assert "thinking_summary" not in str(encode(CHAT, {"thinking_summary": False}))


@pytest.mark.parametrize("value", [True, False])
def test_prompt_caching_is_accepted_and_needs_no_field_because_openai_caches_by_itself(value):
    assert encode(CHAT, {"prompt_caching": value}) == encode(CHAT)


def test_trace_id_is_not_sent():
    body = encode(CHAT, {"trace_id": "trace-123"})
    assert body == encode(CHAT)
    assert "trace-123" not in json.dumps(body)


def test_extra_body_is_merged_last_key_by_key_and_none_removes_a_key():
    config = {
        "thinking_level": "low",
        "extra_body": {
            "reasoning": {"summary": "detailed"},
            "stream": None,
            "user": "u-1",
            "model": "gpt-5-mini",
        },
    }
    body = encode(CHAT, config)
    assert "stream" not in body
    assert body["user"] == "u-1"
    assert body["model"] == "gpt-5-mini"
    assert body["reasoning"] == {"summary": "detailed"}
    assert body["reasoning_effort"] == "low"


def test_extra_body_can_remove_the_stream_options_a_server_rejects():
    body = encode(CHAT, {"extra_body": {"stream_options": None}})
    assert "stream_options" not in body
    assert body["stream"] is True


def test_an_unknown_config_key_is_refused_and_points_to_extra_body():
    error = unsupported(CHAT, {"presence_penalty": 0.5})
    assert (error.parameter, error.protocol) == ("presence_penalty", CHAT)
    assert "extra_body" in str(error)


def test_a_config_value_of_none_counts_as_unset():
    assert encode(CHAT, {"temperature": None, "tools": None}) == encode(CHAT)


# --- user content -----------------------------------------------------------------------------


def test_images_go_to_chat_as_image_url_parts_unchanged():
    messages = [user("What is this?", {"type": "image_url.done", "image_url": IMAGE})]
    assert encode(CHAT, {}, messages)["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": IMAGE}},
            ],
        }
    ]


def test_an_image_that_is_not_an_http_or_data_url_is_refused():
    messages = [user({"type": "image_url.done", "image_url": "file:///etc/passwd"})]
    with pytest.raises(InvalidMessageError):
        encode(CHAT, {}, messages)


def test_a_users_inline_image_goes_out_as_a_data_url():
    inline = {"type": "inline_data.done", "data": b"\x89PNG", "mime_type": "image/png"}
    body = json.dumps(encode(CHAT, {}, [user(inline)]))
    assert "data:image/png;base64,iVBORw==" in body  # base64 of the four bytes


# --- tool calls and results -------------------------------------------------------------------


def test_chat_sends_tool_calls_and_their_results_as_tool_messages():
    assert encode(CHAT, {}, TOOL_TURN)["messages"][1:] == [
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
        {"role": "user", "content": "Thanks."},
    ]


def test_chat_puts_the_images_of_a_tool_result_in_a_user_message_after_the_tool_messages():
    messages = [
        user("Show me."),
        assistant(call("call_1", name="screenshot")),
        user(result("call_1", "one screenshot", [IMAGE])),
    ]
    assert encode(CHAT, {}, messages)["messages"][2:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "one screenshot"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Images returned by tool call call_1:"},
                {"type": "image_url", "image_url": {"url": IMAGE}},
            ],
        },
    ]


def test_a_tool_call_without_a_result_gets_a_synthetic_error_result():
    messages = [user("Weather?"), assistant(call("call_9", city="Oslo")), user("Never mind.")]
    body = json.dumps(encode(CHAT, {}, messages))
    assert MISSING_RESULT_TEXT in body
    assert body.count("call_9") == 2  # the call and its synthetic result


def test_tool_call_ids_are_shortened_to_40_characters_for_chat_alike_in_call_and_result():
    long_id = "toolu_" + "x" * 50
    messages = [user("Hi"), assistant(call(long_id)), user(result(long_id, "ok"))]
    chat = encode(CHAT, {}, messages)["messages"]
    sent = chat[1]["tool_calls"][0]["id"]
    assert len(sent) <= 40
    assert chat[2]["tool_call_id"] == sent


def test_tool_call_ids_with_whitespace_are_cleaned_alike_in_call_and_result():
    odd = "call 1\t"
    messages = [user("Hi"), assistant(call(odd)), user(result(odd, "ok"))]
    body = json.dumps(encode(CHAT, {}, messages))
    assert "call_1_" in body and odd not in body


# --- never mutating the caller's objects ------------------------------------------------------


def test_encoding_never_changes_the_callers_messages_or_config():
    messages, config = rich_history(), copy.deepcopy(RICH_CONFIG)
    before = copy.deepcopy((messages, config))
    encode(CHAT, config, messages)
    assert (messages, config) == before


def test_the_request_shares_no_object_with_the_callers_config():
    config = copy.deepcopy(RICH_CONFIG)
    before = copy.deepcopy(config)
    body = encode(CHAT, config, rich_history())
    for tool in body["tools"]:
        (tool.get("function") or tool)["parameters"]["mutated"] = True
    body["metadata"]["mutated"] = True
    assert config == before


# --- fidelity replay from the corpus ----------------------------------------------------------


def test_a_generated_image_is_left_out_of_chat():
    message = final_message(RESPONSES, "vercel-openai-image-generation")
    assert any(i["type"] == "inline_data.done" for i in message["content_items"])
    assert "image" not in json.dumps(next_turn(CHAT, message))


def test_a_chat_audio_answer_goes_back_by_its_id_in_place_of_its_transcript():
    assert next_turn(CHAT, AUDIO_ANSWER) == [
        {"role": "assistant", "content": None, "audio": {"id": "audio_abc123"}}
    ]


def test_a_transcript_without_its_clip_goes_back_as_text():
    transcript_only = assistant(AUDIO_ANSWER["content_items"][0])
    assert next_turn(CHAT, transcript_only) == [{"role": "assistant", "content": "Hello there!"}]


def test_openrouter_reasoning_goes_back_with_its_signature_and_format():
    name = "pydanticai-openrouter-reasoning-signature"
    details = [
        detail
        for event in capture_events(CHAT, name)
        for choice in event.get("choices") or []
        for detail in choice["delta"].get("reasoning_details") or []
    ]
    signature = next(d["signature"] for d in details if d.get("signature"))
    reasoning = "".join(d.get("text") or "" for d in details)
    (sent,) = next_turn(CHAT, final_message(CHAT, name))
    assert sent["reasoning"] == reasoning
    assert sent["reasoning_details"] == [
        {
            "type": "reasoning.text",
            "text": reasoning,
            "signature": signature,
            "format": "anthropic-claude-v1",
            "index": 0,
        }
    ]


def test_deepseek_reasoning_goes_back_in_reasoning_content():
    name = "pydanticai-deepseek-reasoning"
    deltas = [c["delta"] for e in capture_events(CHAT, name) for c in e.get("choices") or []]
    (sent,) = next_turn(CHAT, final_message(CHAT, name))
    assert sent == {
        "role": "assistant",
        "content": "".join(d.get("content") or "" for d in deltas),
        "reasoning_content": "".join(d.get("reasoning_content") or "" for d in deltas),
    }


def test_groq_style_reasoning_goes_back_in_reasoning():
    thinking = {
        "type": "thinking.done",
        "thinking": "hm",
        "fidelity": {"reasoning_field": "reasoning"},
    }
    (sent,) = next_turn(CHAT, assistant(thinking, "4"))
    assert sent == {"role": "assistant", "content": "4", "reasoning": "hm"}


def test_mistral_thinking_goes_back_as_a_thinking_content_chunk():
    (sent,) = next_turn(CHAT, final_message(CHAT, "pydanticai-mistral-thinking"))
    thinking, answer = sent["content"]
    assert thinking["type"] == "thinking"
    assert thinking["thinking"][0]["text"].startswith("Okay, the user is asking how to cross")
    assert answer["type"] == "text" and answer["text"].startswith("To cross the street safely")


def test_a_chat_refusal_goes_back_in_the_refusal_field():
    name = "openaipy-refusal"
    deltas = [c["delta"] for e in capture_events(CHAT, name) for c in e.get("choices") or []]
    (sent,) = next_turn(CHAT, final_message(CHAT, name))
    assert sent == {
        "role": "assistant",
        "content": None,
        "refusal": "".join(d.get("refusal") or "" for d in deltas),
    }


# --- handoff: history from another provider ---------------------------------------------------


def test_anthropic_thinking_and_its_signature_are_dropped_and_the_text_kept():
    message = final_message("anthropic-messages", "pydanticai-anthropic-thinking")
    thinking, answer = message["content_items"]
    sent = next_turn(CHAT, message)
    body = json.dumps(sent)
    assert thinking["fidelity"]["signature"][:40] not in body
    assert thinking["thinking"][:40] not in body
    assert sent == [{"role": "assistant", "content": answer["text"]}]


def test_redacted_thinking_from_anthropic_is_dropped():
    message = final_message("anthropic-messages", "pydanticai-anthropic-redacted-thinking")
    *redacted, answer = message["content_items"]
    sent = next_turn(CHAT, message)
    for item in redacted:
        assert item["fidelity"]["redacted_thinking"][:40] not in json.dumps(sent)
    assert sent == [{"role": "assistant", "content": answer["text"]}]


def test_a_gemini_tool_call_goes_out_without_its_thought_signature():
    message = final_message("gemini-generate-content", "pydanticai-google-tool-call-signature")
    (tool_call,) = message["content_items"]
    body = encode(CHAT, {}, [user("Where?"), message, user(result("call_1", "France"))])
    dumped = json.dumps(body)
    assert tool_call["fidelity"]["thought_signature"][:40] not in dumped
    assert body["messages"][1]["tool_calls"][0]["function"]["name"] == "get_country"


def test_responses_thinking_is_foreign_to_chat():
    responses_message = final_message(RESPONSES, "pydanticai-reasoning-summary")
    (sent,) = next_turn(CHAT, responses_message)
    assert set(sent) == {"role", "content"}


# --- recorded requests from the corpus --------------------------------------------------------


CHAT_RECORDED = (
    "pydanticai-deepseek-reasoning",
    "pydanticai-groq-tool-use-failed",
    "pydanticai-mistral-thinking",
    "pydanticai-openai-moderation",
    "pydanticai-openai-parallel-empty-args",
    "pydanticai-openrouter-reasoning-signature",
    "pydanticai-openrouter-stream-error",
)


def chat_specs() -> dict[str, tuple[list[Any], dict[str, Any]]]:
    groq_prompt = (
        'Please call the "get_something_by_name" tool with non-existent parameters to test '
        "error handling; on the second try you can use valid args"
    )
    return {
        "pydanticai-deepseek-reasoning": ([user("Hello")], {}),
        "pydanticai-groq-tool-use-failed": (
            [user(groq_prompt)],
            {
                "system_prompt": "Be concise. Never use pretty double quotes, just regular ones.",
                "tools": recorded_tools(CHAT, "pydanticai-groq-tool-use-failed"),
                "tool_choice": "auto",
                "extra_body": {"n": 1, "stream_options": None},
            },
        ),
        "pydanticai-mistral-thinking": (
            [user("How do I cross the street?")],
            {"extra_body": {"stream_options": None}},
        ),
        "pydanticai-openai-moderation": (
            [user("What is the capital of France?")],
            {"extra_body": {"moderation": {"model": "omni-moderation-latest"}}},
        ),
        "pydanticai-openai-parallel-empty-args": (
            [user("Tell me: the capital of the country; the weather there; the product name")],
            {
                "tools": recorded_tools(CHAT, "pydanticai-openai-parallel-empty-args"),
                "tool_choice": "required",
            },
        ),
        "pydanticai-openrouter-reasoning-signature": (
            [user("What is 2+2?")],
            {"extra_body": {"reasoning": {"enabled": True}}},
        ),
        "pydanticai-openrouter-stream-error": ([user("Hello there")], {"max_tokens": 10}),
    }


def test_every_recorded_request_in_the_corpus_has_an_equivalent_here():
    folder = require_corpus() / CHAT
    with_request = sorted(
        path.stem for path in folder.glob("*.json") if json.loads(path.read_text())["request"]
    )
    assert sorted(chat_specs()) == sorted(CHAT_RECORDED) == with_request


@pytest.mark.parametrize("name", CHAT_RECORDED)
def test_the_encoded_request_means_the_same_as_the_recorded_one(name):
    want = recorded(CHAT, name)
    messages, config = chat_specs()[name]
    got = encode_request(CHAT, want["model"], messages, config).json
    assert meaning(CHAT, got) == meaning(CHAT, want)
