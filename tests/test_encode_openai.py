"""Request encoders of the OpenAI family (Chat, Responses, embeddings) and the embeddings decoder.

Expected replay values are read from the corpus capture files with the standard json module,
independently of the decoders; recorded request bodies come from the capture sidecars.
"""

from __future__ import annotations

import base64
import copy
import json
import struct
from typing import Any

import pytest

from message_builders import result
from modelstream import EmptyResponseError, ProviderError
from modelstream.errors import InvalidMessageError, UnsupportedParameterError
from modelstream.protocols import encode_request
from modelstream.protocols.common.encoding import MISSING_RESULT_TEXT
from modelstream.results import StreamMetadata
from support import decode_chunks, load_capture, require_corpus

CHAT = "openai-chat"
RESPONSES = "openai-responses"
EMBEDDING = "openai-embedding"
BOTH = [CHAT, RESPONSES]
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


def test_responses_posts_to_responses_and_streams():
    request = encode_request(RESPONSES, "gpt-4o", HELLO, {})
    assert (request.method, request.path) == ("POST", "/responses")
    assert request.json == {
        "model": "gpt-4o",
        "input": [{"role": "user", "content": "Hello"}],
        "stream": True,
    }


def test_embeddings_post_one_input_string_per_message_as_floats():
    request = encode_request(EMBEDDING, "text-embedding-3-small", [user("a", "b"), user("c")], {})
    assert (request.method, request.path) == ("POST", "/embeddings")
    assert request.json == {
        "model": "text-embedding-3-small",
        "input": ["a\nb", "c"],
        "encoding_format": "float",
    }


# --- every config key --------------------------------------------------------------------------


def test_system_prompt_is_the_first_chat_message_and_the_responses_instructions():
    assert encode(CHAT, {"system_prompt": "Be brief."})["messages"][0] == {
        "role": "system",
        "content": "Be brief.",
    }
    body = encode(RESPONSES, {"system_prompt": "Be brief."})
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user", "content": "Hello"}]


def test_max_tokens_is_max_completion_tokens_for_openai_models_and_max_tokens_elsewhere():
    assert encode(CHAT, {"max_tokens": 50}, model="o3")["max_completion_tokens"] == 50
    assert encode(CHAT, {"max_tokens": 50}, model="gpt-4o")["max_completion_tokens"] == 50
    deepseek = encode(CHAT, {"max_tokens": 50}, model="deepseek-chat")
    assert deepseek["max_tokens"] == 50
    assert "max_completion_tokens" not in deepseek
    assert encode(RESPONSES, {"max_tokens": 50})["max_output_tokens"] == 50


@pytest.mark.parametrize("client_type", BOTH)
@pytest.mark.parametrize("key,value", [("temperature", 0.2), ("top_p", 0.9)])
def test_sampling_parameters_go_out_under_their_own_name(client_type, key, value):
    assert encode(client_type, {key: value})[key] == value


def test_stop_and_seed_go_to_chat():
    body = encode(CHAT, {"stop": ["END", "STOP"], "seed": 7})
    assert body["stop"] == ["END", "STOP"]
    assert body["seed"] == 7


@pytest.mark.parametrize("key,value", [("stop", ["END"]), ("seed", 7)])
def test_responses_cannot_express_stop_or_seed_and_says_so(key, value):
    error = unsupported(RESPONSES, {key: value})
    assert (error.parameter, error.protocol) == (key, RESPONSES)
    assert key in str(error) and RESPONSES in str(error)


def test_tools_become_chat_function_tools_and_strict_only_when_asked():
    body = encode(CHAT, {"tools": [WEATHER, {**TIME, "strict": True}]})
    assert body["tools"] == [
        {"type": "function", "function": WEATHER},
        {"type": "function", "function": {**TIME, "strict": True}},
    ]


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


@pytest.mark.parametrize("client_type", BOTH)
@pytest.mark.parametrize("choice", ["auto", "required", "none"])
def test_tool_choice_keywords_go_out_as_they_are(client_type, choice):
    assert encode(client_type, {"tools": [WEATHER], "tool_choice": choice})["tool_choice"] == choice


def test_a_tool_choice_of_one_name_forces_that_function():
    config = {"tools": [WEATHER, TIME], "tool_choice": ["get_time"]}
    assert encode(CHAT, config)["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_time"},
    }
    assert encode(RESPONSES, config)["tool_choice"] == {"type": "function", "name": "get_time"}


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
    assert encode(RESPONSES, config)["tool_choice"] == {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "function", "name": "get_time"}, {"type": "function", "name": "ping"}],
    }


@pytest.mark.parametrize("client_type", BOTH)
def test_a_tool_choice_naming_an_unknown_tool_is_refused(client_type):
    error = unsupported(client_type, {"tools": [WEATHER], "tool_choice": ["get_time"]})
    assert (error.parameter, error.protocol) == ("tool_choice", client_type)
    assert "get_time" in str(error)


@pytest.mark.parametrize("client_type", BOTH)
@pytest.mark.parametrize("choice", ["required", ["get_weather"]])
def test_a_tool_choice_that_needs_tools_is_refused_without_them(client_type, choice):
    error = unsupported(client_type, {"tool_choice": choice})
    assert (error.parameter, error.protocol) == ("tool_choice", client_type)


@pytest.mark.parametrize("client_type", BOTH)
def test_tool_settings_that_mean_nothing_without_tools_are_left_out(client_type):
    body = encode(client_type, {"tools": [], "tool_choice": "auto", "parallel_tool_calls": False})
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(body)


@pytest.mark.parametrize("client_type", BOTH)
@pytest.mark.parametrize("value", [True, False])
def test_parallel_tool_calls_go_out_with_tools(client_type, value):
    body = encode(client_type, {"tools": [WEATHER], "parallel_tool_calls": value})
    assert body["parallel_tool_calls"] is value


def test_a_json_schema_response_format_is_a_chat_json_schema_response_format():
    assert encode(CHAT, {"response_format": SCHEMA})["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "response", "schema": SCHEMA},
    }


def test_a_json_schema_response_format_is_the_responses_text_format():
    assert encode(RESPONSES, {"response_format": SCHEMA})["text"] == {
        "format": {"type": "json_schema", "name": "response", "schema": SCHEMA}
    }


@pytest.mark.parametrize("client_type", BOTH)
def test_a_named_strict_response_format_keeps_its_name_and_strictness(client_type):
    wrapper = {"name": "answer", "schema": SCHEMA, "strict": True, "description": "One answer."}
    body = encode(client_type, {"response_format": wrapper})
    expected = {"name": "answer", "schema": SCHEMA, "strict": True, "description": "One answer."}
    if client_type == CHAT:
        assert body["response_format"] == {"type": "json_schema", "json_schema": expected}
    else:
        assert body["text"] == {"format": {"type": "json_schema", **expected}}


@pytest.mark.parametrize("client_type", BOTH)
def test_chats_response_format_wrapper_is_read_like_the_bare_schema(client_type):
    wrapper = {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}
    flat = {"type": "json_schema", "name": "answer", "schema": SCHEMA}
    assert encode(client_type, {"response_format": wrapper}) == encode(
        client_type, {"response_format": flat}
    )
    assert "answer" in json.dumps(encode(client_type, {"response_format": wrapper}))


def test_json_mode_without_a_schema_is_json_object():
    json_mode = {"response_format": {"type": "json_object"}}
    assert encode(CHAT, json_mode)["response_format"] == {"type": "json_object"}
    assert encode(RESPONSES, json_mode)["text"] == {"format": {"type": "json_object"}}


@pytest.mark.parametrize("client_type", BOTH)
def test_a_plain_text_response_format_sends_nothing(client_type):
    assert encode(client_type, {"response_format": {"type": "text"}}) == encode(client_type)


@pytest.mark.parametrize("level", LEVELS)
def test_every_thinking_level_is_a_chat_reasoning_effort(level):
    assert encode(CHAT, {"thinking_level": level})["reasoning_effort"] == level


@pytest.mark.parametrize("level", LEVELS)
def test_every_thinking_level_is_a_responses_reasoning_effort(level):
    body = encode(RESPONSES, {"thinking_level": level})
    assert body["reasoning"] == {"effort": level}
    if level == "none":
        assert "include" not in body
    else:  # asked for reasoning: it comes back encrypted so the history can replay it
        assert body["include"] == ["reasoning.encrypted_content"]


@pytest.mark.parametrize("client_type", BOTH)
def test_an_unknown_thinking_level_is_refused(client_type):
    error = unsupported(client_type, {"thinking_level": "extreme"})
    assert (error.parameter, error.protocol) == ("thinking_level", client_type)


def test_a_thinking_summary_is_asked_for_with_reasoning_summary_auto():
    body = encode(RESPONSES, {"thinking_level": "high", "thinking_summary": True})
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert encode(RESPONSES, {"thinking_summary": True})["reasoning"] == {"summary": "auto"}
    assert "reasoning" not in encode(RESPONSES, {"thinking_summary": False})


def test_chat_cannot_give_a_thinking_summary_and_says_so():
    error = unsupported(CHAT, {"thinking_summary": True})
    assert (error.parameter, error.protocol) == ("thinking_summary", CHAT)
    assert "thinking_summary" not in str(encode(CHAT, {"thinking_summary": False}))


@pytest.mark.parametrize("client_type", BOTH)
@pytest.mark.parametrize("value", [True, False])
def test_prompt_caching_is_accepted_and_needs_no_field_because_openai_caches_by_itself(
    client_type, value
):
    assert encode(client_type, {"prompt_caching": value}) == encode(client_type)


@pytest.mark.parametrize("client_type", BOTH)
def test_trace_id_is_not_sent(client_type):
    body = encode(client_type, {"trace_id": "trace-123"})
    assert body == encode(client_type)
    assert "trace-123" not in json.dumps(body)


@pytest.mark.parametrize("client_type", BOTH)
def test_extra_body_is_merged_last_key_by_key_and_none_removes_a_key(client_type):
    config = {
        "thinking_level": "low",
        "extra_body": {
            "reasoning": {"summary": "detailed"},
            "stream": None,
            "user": "u-1",
            "model": "gpt-5-mini",
        },
    }
    body = encode(client_type, config)
    assert "stream" not in body
    assert body["user"] == "u-1"
    assert body["model"] == "gpt-5-mini"
    if client_type == RESPONSES:
        assert body["reasoning"] == {"effort": "low", "summary": "detailed"}
    else:
        assert body["reasoning"] == {"summary": "detailed"}
        assert body["reasoning_effort"] == "low"


def test_extra_body_can_remove_the_stream_options_a_server_rejects():
    body = encode(CHAT, {"extra_body": {"stream_options": None}})
    assert "stream_options" not in body
    assert body["stream"] is True


@pytest.mark.parametrize("client_type", [*BOTH, EMBEDDING])
def test_an_unknown_config_key_is_refused_and_points_to_extra_body(client_type):
    error = unsupported(client_type, {"presence_penalty": 0.5})
    assert (error.parameter, error.protocol) == ("presence_penalty", client_type)
    assert "extra_body" in str(error)


@pytest.mark.parametrize("client_type", BOTH)
def test_a_config_value_of_none_counts_as_unset(client_type):
    assert encode(client_type, {"temperature": None, "tools": None}) == encode(client_type)


# --- embeddings config -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key,value",
    [
        ("system_prompt", "x"),
        ("max_tokens", 5),
        ("temperature", 0.1),
        ("top_p", 0.5),
        ("stop", ["x"]),
        ("seed", 1),
        ("tools", [WEATHER]),
        ("tool_choice", "auto"),
        ("parallel_tool_calls", True),
        ("response_format", SCHEMA),
        ("thinking_level", "low"),
        ("thinking_summary", True),
        ("prompt_caching", True),
    ],
)
def test_embeddings_refuse_every_config_key_that_does_not_apply(key, value):
    error = unsupported(EMBEDDING, {key: value})
    assert (error.parameter, error.protocol) == (key, EMBEDDING)


def test_embeddings_take_extra_body_and_ignore_the_trace_id():
    body = encode(EMBEDDING, {"extra_body": {"dimensions": 256}, "trace_id": "trace-1"})
    assert body == {
        "model": "gpt-5",
        "input": ["Hello"],
        "encoding_format": "float",
        "dimensions": 256,
    }


def test_embeddings_refuse_anything_but_text():
    image = {"type": "image_url.done", "image_url": "https://example.com/a.png"}
    error = unsupported(EMBEDDING, {}, [user("a caption", image)])
    assert error.protocol == EMBEDDING
    assert "image_url.done" in str(error)


def test_embeddings_need_a_message_with_text():
    with pytest.raises(InvalidMessageError):
        encode_request(EMBEDDING, "text-embedding-3-small", [], {})
    with pytest.raises(InvalidMessageError):
        encode(EMBEDDING, {}, [user("")])


# --- user content ------------------------------------------------------------------------------

IMAGE = "https://example.com/cat.png"
DATA_IMAGE = "data:image/png;base64,iVBORw0KGgo="


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


@pytest.mark.parametrize("client_type", BOTH)
def test_an_image_that_is_not_an_http_or_data_url_is_refused(client_type):
    messages = [user({"type": "image_url.done", "image_url": "file:///etc/passwd"})]
    with pytest.raises(InvalidMessageError):
        encode(client_type, {}, messages)


@pytest.mark.parametrize("client_type", BOTH)
def test_a_users_inline_image_goes_out_as_a_data_url(client_type):
    inline = {"type": "inline_data.done", "data": b"\x89PNG", "mime_type": "image/png"}
    body = json.dumps(encode(client_type, {}, [user(inline)]))
    assert "data:image/png;base64,iVBORw==" in body  # base64 of the four bytes


# --- tool calls and results --------------------------------------------------------------------

TOOL_TURN = [
    user("Weather in Paris?"),
    assistant("Let me look.", call("call_1", city="Paris")),
    user(result("call_1", "18°C"), "Thanks."),
]


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


@pytest.mark.parametrize("client_type", BOTH)
def test_a_tool_call_without_a_result_gets_a_synthetic_error_result(client_type):
    messages = [user("Weather?"), assistant(call("call_9", city="Oslo")), user("Never mind.")]
    body = json.dumps(encode(client_type, {}, messages))
    assert MISSING_RESULT_TEXT in body
    assert body.count("call_9") == 2  # the call and its synthetic result


def test_tool_call_ids_are_shortened_to_40_characters_for_chat_alike_in_call_and_result():
    long_id = "toolu_" + "x" * 50
    messages = [user("Hi"), assistant(call(long_id)), user(result(long_id, "ok"))]
    chat = encode(CHAT, {}, messages)["messages"]
    sent = chat[1]["tool_calls"][0]["id"]
    assert len(sent) <= 40
    assert chat[2]["tool_call_id"] == sent
    responses = encode(RESPONSES, {}, messages)["input"]
    assert responses[1]["call_id"] == responses[2]["call_id"] == long_id  # 56 ≤ 64


def test_tool_call_ids_are_shortened_to_64_characters_for_responses_alike_in_call_and_result():
    long_id = "codex_mcp__server__tool_exec-" + "0123456789" * 5
    messages = [user("Hi"), assistant(call(long_id)), user(result(long_id, "ok"))]
    responses = encode(RESPONSES, {}, messages)["input"]
    assert len(responses[1]["call_id"]) <= 64
    assert responses[1]["call_id"] == responses[2]["call_id"]
    assert responses[1]["call_id"] != long_id


@pytest.mark.parametrize("client_type", BOTH)
def test_tool_call_ids_with_whitespace_are_cleaned_alike_in_call_and_result(client_type):
    odd = "call 1\t"
    messages = [user("Hi"), assistant(call(odd)), user(result(odd, "ok"))]
    body = json.dumps(encode(client_type, {}, messages))
    assert "call_1_" in body and odd not in body


# --- never mutating the caller's objects --------------------------------------------------------

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


@pytest.mark.parametrize("client_type", BOTH)
def test_encoding_never_changes_the_callers_messages_or_config(client_type):
    messages, config = rich_history(), copy.deepcopy(RICH_CONFIG)
    before = copy.deepcopy((messages, config))
    encode(client_type, config, messages)
    assert (messages, config) == before


@pytest.mark.parametrize("client_type", BOTH)
def test_the_request_shares_no_object_with_the_callers_config(client_type):
    config = copy.deepcopy(RICH_CONFIG)
    before = copy.deepcopy(config)
    body = encode(client_type, config, rich_history())
    for tool in body["tools"]:
        (tool.get("function") or tool)["parameters"]["mutated"] = True
    body["metadata"]["mutated"] = True
    assert config == before


def test_embedding_encoding_never_changes_the_callers_messages_or_config():
    messages, config = [user("a", "b")], {"extra_body": {"dimensions": 8}}
    before = copy.deepcopy((messages, config))
    encode(EMBEDDING, config, messages)
    assert (messages, config) == before


# --- fidelity replay from the corpus ------------------------------------------------------------


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


def test_a_generated_image_is_left_out_of_stateless_responses_and_out_of_chat():
    message = final_message(RESPONSES, "vercel-openai-image-generation")
    assert any(i["type"] == "inline_data.done" for i in message["content_items"])
    stateless = next_turn(RESPONSES, message, {"extra_body": {"store": False}})
    assert not any(item.get("type") == "image_generation_call" for item in stateless)
    assert "image" not in json.dumps(next_turn(CHAT, message))


AUDIO_ANSWER = assistant(
    {"type": "text.done", "text": "Hello there!", "fidelity": {"audio_id": "audio_abc123"}},
    {
        "type": "inline_data.done",
        "data": b"\x00\x01",
        "mime_type": "audio/pcm;rate=24000",
        "fidelity": {"audio_id": "audio_abc123", "expires_at": 1729234747},
    },
)


def test_a_chat_audio_answer_goes_back_by_its_id_in_place_of_its_transcript():
    assert next_turn(CHAT, AUDIO_ANSWER) == [
        {"role": "assistant", "content": None, "audio": {"id": "audio_abc123"}}
    ]


def test_a_transcript_without_its_clip_goes_back_as_text():
    transcript_only = assistant(AUDIO_ANSWER["content_items"][0])
    assert next_turn(CHAT, transcript_only) == [{"role": "assistant", "content": "Hello there!"}]
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


# --- handoff: history from another provider ----------------------------------------------------


@pytest.mark.parametrize("client_type", BOTH)
def test_anthropic_thinking_and_its_signature_are_dropped_and_the_text_kept(client_type):
    message = final_message("anthropic-messages", "pydanticai-anthropic-thinking")
    thinking, answer = message["content_items"]
    sent = next_turn(client_type, message)
    body = json.dumps(sent)
    assert thinking["fidelity"]["signature"][:40] not in body
    assert thinking["thinking"][:40] not in body
    assert sent == [{"role": "assistant", "content": answer["text"]}]


@pytest.mark.parametrize("client_type", BOTH)
def test_redacted_thinking_from_anthropic_is_dropped(client_type):
    message = final_message("anthropic-messages", "pydanticai-anthropic-redacted-thinking")
    *redacted, answer = message["content_items"]
    sent = next_turn(client_type, message)
    for item in redacted:
        assert item["fidelity"]["redacted_thinking"][:40] not in json.dumps(sent)
    assert sent == [{"role": "assistant", "content": answer["text"]}]


@pytest.mark.parametrize("client_type", BOTH)
def test_a_gemini_tool_call_goes_out_without_its_thought_signature(client_type):
    message = final_message("gemini-generate-content", "pydanticai-google-tool-call-signature")
    (tool_call,) = message["content_items"]
    body = encode(client_type, {}, [user("Where?"), message, user(result("call_1", "France"))])
    dumped = json.dumps(body)
    assert tool_call["fidelity"]["thought_signature"][:40] not in dumped
    if client_type == CHAT:
        assert body["messages"][1]["tool_calls"][0]["function"]["name"] == "get_country"
    else:
        assert body["input"][1] == {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_country",
            "arguments": "{}",
        }


def test_chat_thinking_is_foreign_to_responses_and_responses_thinking_to_chat():
    chat_message = final_message(CHAT, "pydanticai-deepseek-reasoning")
    assert [item["role"] for item in next_turn(RESPONSES, chat_message)] == ["assistant"]
    assert "reasoning" not in json.dumps(next_turn(RESPONSES, chat_message))
    responses_message = final_message(RESPONSES, "pydanticai-reasoning-summary")
    (sent,) = next_turn(CHAT, responses_message)
    assert set(sent) == {"role", "content"}


# --- recorded requests from the corpus ----------------------------------------------------------


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


CHAT_RECORDED = (
    "pydanticai-deepseek-reasoning",
    "pydanticai-groq-tool-use-failed",
    "pydanticai-mistral-thinking",
    "pydanticai-openai-moderation",
    "pydanticai-openai-parallel-empty-args",
    "pydanticai-openrouter-reasoning-signature",
    "pydanticai-openrouter-stream-error",
)
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


@pytest.mark.parametrize("protocol", BOTH)
def test_every_recorded_request_in_the_corpus_has_an_equivalent_here(protocol):
    folder = require_corpus() / protocol
    with_request = sorted(
        path.stem for path in folder.glob("*.json") if json.loads(path.read_text())["request"]
    )
    specs = chat_specs() if protocol == CHAT else responses_specs()
    listed = CHAT_RECORDED if protocol == CHAT else RESPONSES_RECORDED
    assert sorted(specs) == sorted(listed) == with_request


RECORDED = [
    *((CHAT, name) for name in CHAT_RECORDED),
    *((RESPONSES, name) for name in RESPONSES_RECORDED),
]


@pytest.mark.parametrize("protocol,name", RECORDED)
def test_the_encoded_request_means_the_same_as_the_recorded_one(protocol, name):
    want = recorded(protocol, name)
    messages, config = (chat_specs() if protocol == CHAT else responses_specs())[name]
    got = encode_request(protocol, want["model"], messages, config).json
    assert meaning(protocol, got) == meaning(protocol, want)


# --- the embeddings decoder ----------------------------------------------------------------------


def decode_embeddings(body: dict[str, Any]) -> tuple[list[Any], StreamMetadata]:
    """Decode a JSON body through StreamDecoder, fed in two pieces like a network read."""
    raw = json.dumps(body).encode()
    decoded = decode_chunks(EMBEDDING, [raw[:7], raw[7:]])
    if decoded.error is not None:
        raise decoded.error
    assert decoded.decoder is not None
    return decoded.events, decoded.decoder.metadata


EMBEDDINGS_BODY = {
    "object": "list",
    "data": [
        {"object": "embedding", "index": 1, "embedding": [0.5, -1.0]},
        {"object": "embedding", "index": 0, "embedding": [0.25, 2]},
    ],
    "model": "text-embedding-3-small",
    "usage": {"prompt_tokens": 8, "total_tokens": 8},
}


def test_embeddings_decode_to_one_delta_and_done_per_input_in_index_order_then_stop():
    events, metadata = decode_embeddings(EMBEDDINGS_BODY)
    items = [event["content_items"][0] for event in events[:-1]]
    assert items == [
        {"type": "embedding.delta", "embedding": [0.25, 2.0]},
        {"type": "embedding.done", "embedding": [0.25, 2.0]},
        {"type": "embedding.delta", "embedding": [0.5, -1.0]},
        {"type": "embedding.done", "embedding": [0.5, -1.0]},
    ]
    stop = events[-1]
    assert stop["event_type"] == "stop"
    assert stop["finish_reason"] == "stop"
    assert metadata.model == "text-embedding-3-small"


def test_embeddings_usage_counts_the_input_and_no_output():
    events, _ = decode_embeddings(EMBEDDINGS_BODY)
    assert events[-1]["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 8,
        "thoughts_tokens": 0,
        "response_tokens": 0,
    }


def test_embeddings_without_usage_have_unknown_usage_and_say_so():
    body = {key: value for key, value in EMBEDDINGS_BODY.items() if key != "usage"}
    events, metadata = decode_embeddings(body)
    assert set(events[-1]["usage_metadata"].values()) == {None}
    assert {"type": "usage_missing"} in metadata.diagnostics


def test_base64_embeddings_decode_to_the_same_floats():
    packed = base64.b64encode(struct.pack("<3f", 0.5, -2.0, 0.125)).decode()
    body = {**EMBEDDINGS_BODY, "data": [{"index": 0, "embedding": packed}]}
    events, _ = decode_embeddings(body)
    assert events[1]["content_items"][0] == {
        "type": "embedding.done",
        "embedding": [0.5, -2.0, 0.125],
    }


def test_an_embeddings_error_body_is_a_provider_error():
    body = {
        "error": {
            "message": "This model's maximum context length is 8192 tokens.",
            "type": "invalid_request_error",
            "param": None,
            "code": "context_length_exceeded",
        }
    }
    with pytest.raises(ProviderError) as caught:
        decode_embeddings(body)
    assert caught.value.error_type == "invalid_request_error"
    assert caught.value.code == "context_length_exceeded"
    assert "8192" in caught.value.provider_message
    assert caught.value.retryable is False


def test_an_embeddings_body_with_no_vectors_is_an_empty_response():
    with pytest.raises(EmptyResponseError):
        decode_embeddings({**EMBEDDINGS_BODY, "data": []})
