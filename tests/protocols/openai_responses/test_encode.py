"""Request encoder of the OpenAI Responses API.

Expected replay values are read from the corpus capture files with the standard json module,
independently of the decoders; recorded request bodies come from the capture sidecars.
"""

from __future__ import annotations

import base64
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
    DATA_IMAGE,
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


def test_responses_posts_to_responses_and_streams():
    request = encode_request(RESPONSES, "gpt-4o", HELLO, {})
    assert (request.method, request.path) == ("POST", "/responses")
    assert request.json == {
        "model": "gpt-4o",
        "input": [{"role": "user", "content": "Hello"}],
        "stream": True,
    }


# --- every config key -------------------------------------------------------------------------


def test_system_prompt_is_the_responses_instructions():
    body = encode(RESPONSES, {"system_prompt": "Be brief."})
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user", "content": "Hello"}]


def test_max_tokens_is_max_output_tokens():
    assert encode(RESPONSES, {"max_tokens": 50})["max_output_tokens"] == 50


@pytest.mark.parametrize("key,value", [("temperature", 0.2), ("top_p", 0.9)])
def test_sampling_parameters_go_out_under_their_own_name(key, value):
    assert encode(RESPONSES, {key: value})[key] == value


@pytest.mark.parametrize("key,value", [("stop", ["END"]), ("seed", 7)])
def test_responses_cannot_express_stop_or_seed_and_says_so(key, value):
    error = unsupported(RESPONSES, {key: value})
    assert (error.parameter, error.protocol) == (key, RESPONSES)
    assert key in str(error) and RESPONSES in str(error)


def test_tools_become_flat_responses_tools_that_are_strict_only_when_asked():
    body = encode(RESPONSES, {"tools": [WEATHER, {"name": "ping"}, {**TIME, "strict": True}]})
    assert body["tools"] == [
        {"type": "function", **WEATHER, "strict": False},
        {
            "type": "function",
            "name": "ping",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        },
        {"type": "function", **TIME, "strict": True},
    ]


@pytest.mark.parametrize("choice", ["auto", "required", "none"])
def test_tool_choice_keywords_go_out_as_they_are(choice):
    assert encode(RESPONSES, {"tools": [WEATHER], "tool_choice": choice})["tool_choice"] == choice


def test_a_tool_choice_of_one_name_forces_that_function():
    config = {"tools": [WEATHER, TIME], "tool_choice": ["get_time"]}
    assert encode(RESPONSES, config)["tool_choice"] == {"type": "function", "name": "get_time"}


def test_a_tool_choice_of_several_names_requires_one_of_the_allowed_tools():
    config = {"tools": [WEATHER, TIME, {"name": "ping"}], "tool_choice": ["get_time", "ping"]}
    assert encode(RESPONSES, config)["tool_choice"] == {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "function", "name": "get_time"}, {"type": "function", "name": "ping"}],
    }


def test_a_tool_choice_naming_an_unknown_tool_is_refused():
    error = unsupported(RESPONSES, {"tools": [WEATHER], "tool_choice": ["get_time"]})
    assert (error.parameter, error.protocol) == ("tool_choice", RESPONSES)
    assert "get_time" in str(error)


@pytest.mark.parametrize("choice", ["required", ["get_weather"]])
def test_a_tool_choice_that_needs_tools_is_refused_without_them(choice):
    error = unsupported(RESPONSES, {"tool_choice": choice})
    assert (error.parameter, error.protocol) == ("tool_choice", RESPONSES)


def test_tool_settings_that_mean_nothing_without_tools_are_left_out():
    body = encode(RESPONSES, {"tools": [], "tool_choice": "auto", "parallel_tool_calls": False})
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(body)


@pytest.mark.parametrize("value", [True, False])
def test_parallel_tool_calls_go_out_with_tools(value):
    body = encode(RESPONSES, {"tools": [WEATHER], "parallel_tool_calls": value})
    assert body["parallel_tool_calls"] is value


def test_a_json_schema_response_format_is_the_responses_text_format():
    assert encode(RESPONSES, {"response_format": SCHEMA})["text"] == {
        "format": {"type": "json_schema", "name": "response", "schema": SCHEMA}
    }


def test_a_named_strict_response_format_keeps_its_name_and_strictness():
    wrapper = {"name": "answer", "schema": SCHEMA, "strict": True, "description": "One answer."}
    body = encode(RESPONSES, {"response_format": wrapper})
    strict = {**SCHEMA, "additionalProperties": False}  # strict mode's form of the schema
    expected = {"name": "answer", "schema": strict, "strict": True, "description": "One answer."}
    assert body["text"] == {"format": {"type": "json_schema", **expected}}


def test_chats_response_format_wrapper_is_read_like_the_bare_schema():
    wrapper = {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}
    flat = {"type": "json_schema", "name": "answer", "schema": SCHEMA}
    assert encode(RESPONSES, {"response_format": wrapper}) == encode(
        RESPONSES, {"response_format": flat}
    )
    assert "answer" in json.dumps(encode(RESPONSES, {"response_format": wrapper}))


def test_json_mode_without_a_schema_is_json_object():
    json_mode = {"response_format": {"type": "json_object"}}
    assert encode(RESPONSES, json_mode)["text"] == {"format": {"type": "json_object"}}


def test_a_plain_text_response_format_sends_nothing():
    assert encode(RESPONSES, {"response_format": {"type": "text"}}) == encode(RESPONSES)


@pytest.mark.parametrize("level", LEVELS)
def test_every_thinking_level_is_a_responses_reasoning_effort(level):
    body = encode(RESPONSES, {"thinking_level": level})
    assert body["reasoning"] == {"effort": level}
    if level == "none":
        assert "include" not in body
    else:  # asked for reasoning: it comes back encrypted so the history can replay it
        assert body["include"] == ["reasoning.encrypted_content"]


def test_an_unknown_thinking_level_is_refused():
    error = unsupported(RESPONSES, {"thinking_level": "extreme"})
    assert (error.parameter, error.protocol) == ("thinking_level", RESPONSES)


def test_a_thinking_summary_is_asked_for_with_reasoning_summary_auto():
    body = encode(RESPONSES, {"thinking_level": "high", "thinking_summary": True})
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert encode(RESPONSES, {"thinking_summary": True})["reasoning"] == {"summary": "auto"}
    assert "reasoning" not in encode(RESPONSES, {"thinking_summary": False})


@pytest.mark.parametrize("value", [True, False])
def test_prompt_caching_is_accepted_and_needs_no_field_because_openai_caches_by_itself(value):
    assert encode(RESPONSES, {"prompt_caching": value}) == encode(RESPONSES)


def test_trace_id_is_not_sent():
    body = encode(RESPONSES, {"trace_id": "trace-123"})
    assert body == encode(RESPONSES)
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
    body = encode(RESPONSES, config)
    assert "stream" not in body
    assert body["user"] == "u-1"
    assert body["model"] == "gpt-5-mini"
    assert body["reasoning"] == {"effort": "low", "summary": "detailed"}


def test_an_unknown_config_key_is_refused_and_points_to_extra_body():
    error = unsupported(RESPONSES, {"presence_penalty": 0.5})
    assert (error.parameter, error.protocol) == ("presence_penalty", RESPONSES)
    assert "extra_body" in str(error)


def test_a_config_value_of_none_counts_as_unset():
    assert encode(RESPONSES, {"temperature": None, "tools": None}) == encode(RESPONSES)


# --- user content -----------------------------------------------------------------------------


def test_images_go_to_responses_as_input_images_unchanged():
    messages = [user({"type": "image_url.done", "image_url": DATA_IMAGE}, "And this?")]
    assert encode(RESPONSES, {}, messages)["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_image", "image_url": DATA_IMAGE, "detail": "auto"},
                {"type": "input_text", "text": "And this?"},
            ],
        }
    ]


def test_an_image_that_is_not_an_http_or_data_url_is_refused():
    messages = [user({"type": "image_url.done", "image_url": "file:///etc/passwd"})]
    with pytest.raises(InvalidMessageError):
        encode(RESPONSES, {}, messages)


def test_a_users_inline_image_goes_out_as_a_data_url():
    inline = {"type": "inline_data.done", "data": b"\x89PNG", "mime_type": "image/png"}
    body = json.dumps(encode(RESPONSES, {}, [user(inline)]))
    assert "data:image/png;base64,iVBORw==" in body  # base64 of the four bytes


# --- tool calls and results -------------------------------------------------------------------


def test_responses_sends_tool_calls_and_their_results_as_function_call_items():
    assert encode(RESPONSES, {}, TOOL_TURN)["input"][1:] == [
        {"role": "assistant", "content": "Let me look."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "18°C"},
        {"role": "user", "content": "Thanks."},
    ]


def test_responses_puts_the_images_of_a_tool_result_in_its_output():
    messages = [
        user("Show me."),
        assistant(call("call_1", name="screenshot")),
        user(result("call_1", "one screenshot", [IMAGE, DATA_IMAGE])),
    ]
    assert encode(RESPONSES, {}, messages)["input"][2] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [
            {"type": "input_text", "text": "one screenshot"},
            {"type": "input_image", "image_url": IMAGE, "detail": "auto"},
            {"type": "input_image", "image_url": DATA_IMAGE, "detail": "auto"},
        ],
    }


def test_a_tool_call_without_a_result_gets_a_synthetic_error_result():
    messages = [user("Weather?"), assistant(call("call_9", city="Oslo")), user("Never mind.")]
    body = json.dumps(encode(RESPONSES, {}, messages))
    assert MISSING_RESULT_TEXT in body
    assert body.count("call_9") == 2  # the call and its synthetic result


def test_tool_call_ids_of_up_to_64_characters_go_out_as_they_are_in_call_and_result():
    long_id = "toolu_" + "x" * 50
    messages = [user("Hi"), assistant(call(long_id)), user(result(long_id, "ok"))]
    responses = encode(RESPONSES, {}, messages)["input"]
    assert responses[1]["call_id"] == responses[2]["call_id"] == long_id  # 56 ≤ 64


def test_tool_call_ids_are_shortened_to_64_characters_for_responses_alike_in_call_and_result():
    long_id = "codex_mcp__server__tool_exec-" + "0123456789" * 5
    messages = [user("Hi"), assistant(call(long_id)), user(result(long_id, "ok"))]
    responses = encode(RESPONSES, {}, messages)["input"]
    assert len(responses[1]["call_id"]) <= 64
    assert responses[1]["call_id"] == responses[2]["call_id"]
    assert responses[1]["call_id"] != long_id


def test_tool_call_ids_with_whitespace_are_cleaned_alike_in_call_and_result():
    odd = "call 1\t"
    messages = [user("Hi"), assistant(call(odd)), user(result(odd, "ok"))]
    body = json.dumps(encode(RESPONSES, {}, messages))
    assert "call_1_" in body and odd not in body


# --- never mutating the caller's objects ------------------------------------------------------


def test_encoding_never_changes_the_callers_messages_or_config():
    messages, config = rich_history(), copy.deepcopy(RICH_CONFIG)
    before = copy.deepcopy((messages, config))
    encode(RESPONSES, config, messages)
    assert (messages, config) == before


def test_the_request_shares_no_object_with_the_callers_config():
    config = copy.deepcopy(RICH_CONFIG)
    before = copy.deepcopy(config)
    body = encode(RESPONSES, config, rich_history())
    for tool in body["tools"]:
        (tool.get("function") or tool)["parameters"]["mutated"] = True
    body["metadata"]["mutated"] = True
    assert config == before


# --- fidelity replay from the corpus ----------------------------------------------------------


def output_items(name: str) -> list[dict[str, Any]]:
    """The capture's finished output items, in output order."""
    done = [e for e in capture_events(RESPONSES, name) if e["type"] == "response.output_item.done"]
    return [e["item"] for e in sorted(done, key=lambda e: e["output_index"])]


def replay_view(item: dict[str, Any]) -> dict[str, Any]:
    """What replay must preserve of a Responses item (output or input form alike)."""
    kind = item.get("type")
    if kind == "reasoning":
        return {
            "type": kind,
            "id": item["id"],
            "summary": [part["text"] for part in item.get("summary") or []],
            "content": [part["text"] for part in item.get("content") or []],
            "encrypted_content": item.get("encrypted_content"),
        }
    if kind == "image_generation_call":  # the image's bytes, however its base64 is spelled
        return {"type": kind, "id": item["id"], "image": base64.b64decode(item["result"])}
    if kind == "message":
        return {
            "type": kind,
            "id": item["id"],
            "phase": item.get("phase"),
            "content": [
                (part["type"], part.get("text") or part.get("refusal")) for part in item["content"]
            ],
        }
    return {
        "type": kind,
        "id": item.get("id"),
        "call_id": item["call_id"],
        "name": item["name"],
        "arguments": json.loads(item["arguments"]),
    }


@pytest.mark.parametrize(
    "name",
    [
        "pydanticai-reasoning-summary",
        "pydanticai-phase",
        "vercel-openai-reasoning-encrypted-content",
        "vercel-azure-reasoning-encrypted-content",
        "pydanticai-openrouter-raw-reasoning",
        "pydanticai-deepseek-function-call",
        "vercel-openai-image-generation",
    ],
)
def test_responses_output_items_come_back_as_the_next_requests_input_items(name):
    sent = next_turn(RESPONSES, final_message(RESPONSES, name))
    sent = [item for item in sent if item.get("type") != "function_call_output"]
    expected = [replay_view(item) for item in output_items(name)]
    assert [replay_view(item) for item in sent] == expected


def test_responses_replay_keeps_the_encrypted_reasoning_and_summary_parts_exactly():
    sent = next_turn(RESPONSES, final_message(RESPONSES, "pydanticai-reasoning-summary"))
    reasoning = output_items("pydanticai-reasoning-summary")[0]
    assert sent[0]["encrypted_content"] == reasoning["encrypted_content"]
    assert sent[0]["summary"] == [
        {"type": "summary_text", "text": part["text"]} for part in reasoning["summary"]
    ]
    assert len(sent[0]["summary"]) == 4


def test_responses_replay_keeps_the_phase_and_the_function_call_item_id():
    sent = next_turn(RESPONSES, final_message(RESPONSES, "pydanticai-phase"))
    message = next(item for item in sent if item.get("type") == "message")
    call_item = next(item for item in sent if item.get("type") == "function_call")
    captured = {item["type"]: item for item in output_items("pydanticai-phase")}
    assert message["phase"] == captured["message"]["phase"] == "commentary"
    assert message["id"] == captured["message"]["id"]
    assert call_item["id"] == captured["function_call"]["id"]
    assert call_item["call_id"] == captured["function_call"]["call_id"]


def test_a_responses_refusal_goes_back_as_a_refusal_part():
    refusal = {
        "type": "text.done",
        "text": "I can't.",
        "fidelity": {"id": "msg_1", "refusal": True},
    }
    sent = next_turn(RESPONSES, assistant(refusal))
    assert sent == [
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [{"type": "refusal", "refusal": "I can't."}],
        }
    ]


def test_a_generated_image_goes_back_to_responses_as_its_image_generation_call():
    sent = next_turn(RESPONSES, final_message(RESPONSES, "vercel-openai-image-generation"))
    (image,) = [item for item in sent if item.get("type") == "image_generation_call"]
    (captured,) = [i for i in output_items("vercel-openai-image-generation") if "result" in i]
    assert image == {
        "type": "image_generation_call",
        "id": captured["id"],
        "status": "completed",
        "result": image["result"],
    }
    assert base64.b64decode(image["result"]) == base64.b64decode(captured["result"])


def test_a_generated_image_is_left_out_of_stateless_responses():
    message = final_message(RESPONSES, "vercel-openai-image-generation")
    assert any(i["type"] == "inline_data.done" for i in message["content_items"])
    stateless = next_turn(RESPONSES, message, {"extra_body": {"store": False}})
    assert not any(item.get("type") == "image_generation_call" for item in stateless)


def test_an_audio_answer_goes_back_as_its_transcript():
    assert next_turn(RESPONSES, AUDIO_ANSWER) == [{"role": "assistant", "content": "Hello there!"}]


def test_stateless_responses_replay_drops_what_the_server_cannot_look_up():
    message = final_message(RESPONSES, "pydanticai-phase")
    bare = {
        "type": "thinking.done",
        "thinking": "x",
        "fidelity": {"id": "rs_x", "part": "summary_text"},
    }
    message = {**message, "content_items": [bare, *message["content_items"]]}
    sent = next_turn(RESPONSES, message, {"extra_body": {"store": False}})
    reasoning = [item for item in sent if item.get("type") == "reasoning"]
    assert [item["id"] for item in reasoning] == [output_items("pydanticai-phase")[0]["id"]]
    assert reasoning[0]["encrypted_content"]
    assert {"role": "assistant", "content": sent[1]["content"], "phase": "commentary"} == sent[1]
    assert "id" not in next(item for item in sent if item.get("type") == "function_call")


# --- handoff: history from another provider ---------------------------------------------------


def test_anthropic_thinking_and_its_signature_are_dropped_and_the_text_kept():
    message = final_message("anthropic-messages", "pydanticai-anthropic-thinking")
    thinking, answer = message["content_items"]
    sent = next_turn(RESPONSES, message)
    body = json.dumps(sent)
    assert thinking["fidelity"]["signature"][:40] not in body
    assert thinking["thinking"][:40] not in body
    assert sent == [{"role": "assistant", "content": answer["text"]}]


def test_redacted_thinking_from_anthropic_is_dropped():
    message = final_message("anthropic-messages", "pydanticai-anthropic-redacted-thinking")
    *redacted, answer = message["content_items"]
    sent = next_turn(RESPONSES, message)
    for item in redacted:
        assert item["fidelity"]["redacted_thinking"][:40] not in json.dumps(sent)
    assert sent == [{"role": "assistant", "content": answer["text"]}]


def test_a_gemini_tool_call_goes_out_without_its_thought_signature():
    message = final_message("gemini-generate-content", "pydanticai-google-tool-call-signature")
    (tool_call,) = message["content_items"]
    body = encode(RESPONSES, {}, [user("Where?"), message, user(result("call_1", "France"))])
    dumped = json.dumps(body)
    assert tool_call["fidelity"]["thought_signature"][:40] not in dumped
    assert body["input"][1] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_country",
        "arguments": "{}",
    }


def test_chat_thinking_is_foreign_to_responses():
    chat_message = final_message(CHAT, "pydanticai-deepseek-reasoning")
    assert [item["role"] for item in next_turn(RESPONSES, chat_message)] == ["assistant"]
    assert "reasoning" not in json.dumps(next_turn(RESPONSES, chat_message))


# --- recorded requests from the corpus --------------------------------------------------------


RESPONSES_RECORDED = (
    "pydanticai-background-stream",
    "pydanticai-deepseek-function-call",
    "pydanticai-function-call",
    "pydanticai-moderation",
    "pydanticai-openrouter-raw-reasoning",
    "pydanticai-phase",
    "pydanticai-reasoning-summary",
    "pydanticai-text",
)


def responses_specs() -> dict[str, tuple[list[Any], dict[str, Any]]]:
    include = ["reasoning.encrypted_content"]
    capital = "What is the capital of France?"
    return {
        "pydanticai-background-stream": (
            [user("What is 2 + 2?")],
            {"extra_body": {"background": True}},
        ),
        "pydanticai-deepseek-function-call": (
            [user("What is the temperature in Tokyo?")],
            {
                "tools": recorded_tools(RESPONSES, "pydanticai-deepseek-function-call"),
                "tool_choice": "auto",
            },
        ),
        "pydanticai-function-call": (
            [user(capital)],
            {
                "system_prompt": "",
                "tools": recorded_tools(RESPONSES, "pydanticai-function-call"),
                "tool_choice": "auto",
            },
        ),
        "pydanticai-moderation": (
            [user(capital)],
            {"extra_body": {"include": include, "moderation": {"model": "omni-moderation-latest"}}},
        ),
        "pydanticai-openrouter-raw-reasoning": ([user("What is 2+2?")], {}),
        "pydanticai-phase": (
            [user("What is the capital of PotatoLand?")],
            {
                "system_prompt": (
                    "Briefly narrate what you are about to do before calling each tool."
                ),
                "tools": recorded_tools(RESPONSES, "pydanticai-phase"),
                "tool_choice": "auto",
                "extra_body": {"include": include},
            },
        ),
        "pydanticai-reasoning-summary": (
            [user("How do I cross the street?")],
            {
                "thinking_level": "high",
                "thinking_summary": True,
                "extra_body": {"reasoning": {"summary": "detailed"}},
            },
        ),
        "pydanticai-text": (
            [
                user(capital),
                assistant(
                    call(
                        "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2",
                        "get_capital",
                        country="France",
                    )
                ),
                user(result("fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2", "Paris")),
            ],
            {
                "system_prompt": "",
                "tools": recorded_tools(RESPONSES, "pydanticai-text"),
                "tool_choice": "auto",
            },
        ),
    }


def test_every_recorded_request_in_the_corpus_has_an_equivalent_here():
    folder = require_corpus() / RESPONSES
    with_request = sorted(
        path.stem for path in folder.glob("*.json") if json.loads(path.read_text())["request"]
    )
    assert sorted(responses_specs()) == sorted(RESPONSES_RECORDED) == with_request


@pytest.mark.parametrize("name", RESPONSES_RECORDED)
def test_the_encoded_request_means_the_same_as_the_recorded_one(name):
    want = recorded(RESPONSES, name)
    messages, config = responses_specs()[name]
    got = encode_request(RESPONSES, want["model"], messages, config).json
    assert meaning(RESPONSES, got) == meaning(RESPONSES, want)
