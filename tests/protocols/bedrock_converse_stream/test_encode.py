"""Bedrock ConverseStream request encoder.

Expected values come from the mapping tables in docs/requests-bedrock.md, from the
ConverseStream request shape of botocore's `bedrock-runtime` service model (every encoded body
is validated with botocore's ParamValidator), and from the requests the corpus sidecars
recorded (`../shared/corpus/bedrock-converse-stream/*.json`, read with plain `json`).
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from botocore.loaders import Loader
from botocore.model import ServiceModel
from botocore.validate import ParamValidator

from modelstream.errors import InvalidMessageError, UnsupportedParameterError
from modelstream.protocols import encode_request
from modelstream.protocols.common.encoding import MISSING_RESULT_TEXT
from modelstream.types import Config
from support import CORPUS, REPO, require_corpus
from support.messages import assistant, call, image, result, text, thinking, user

BEDROCK = "bedrock-converse-stream"
CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
NOVA = "us.amazon.nova-micro-v1:0"
CONFIG_KEYS = tuple(Config.__annotations__)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
CLOSED = {**SCHEMA, "additionalProperties": False}  # as Converse takes it
WEATHER = {"name": "get_weather", "description": "Weather for a city.", "parameters": SCHEMA}
PNG_BYTES = b"\x89PNG\r\n\x1a\n"
PNG = "data:image/png;base64," + base64.b64encode(PNG_BYTES).decode()


HELLO = [user(text("Hello"))]


def encode(messages: Any = None, config: Any = None, model: str = CLAUDE) -> Any:
    return encode_request(BEDROCK, model, HELLO if messages is None else messages, config or {})


def body(config: Any = None, messages: Any = None, model: str = CLAUDE) -> Any:
    return encode(messages, config, model).json


# --- the AWS service model's ConverseStream request shape --------------------------------------


SERVICE = ServiceModel(Loader().load_service_model("bedrock-runtime", "service-2"))
CONVERSE_STREAM = SERVICE.operation_model("ConverseStream")


def botocore_params(model: str, json_body: dict[str, Any]) -> dict[str, Any]:
    """Our JSON body as the parameters an AWS SDK call takes: the model id as a parameter and
    blobs (base64 in JSON) as bytes."""
    params = copy.deepcopy(json_body)
    for message in params.get("messages", []):
        for block in message["content"]:
            blocks = [block, *block.get("toolResult", {}).get("content", [])]
            for inner in blocks:
                for kind in ("image", "document"):
                    if kind in inner:
                        source = inner[kind]["source"]
                        source["bytes"] = base64.b64decode(source["bytes"])
            reasoning = block.get("reasoningContent", {})
            if "redactedContent" in reasoning:
                reasoning["redactedContent"] = base64.b64decode(reasoning["redactedContent"])
    return {"modelId": model, **params}


def assert_valid_converse_stream(model: str, json_body: dict[str, Any]) -> None:
    report = ParamValidator().validate(
        botocore_params(model, json_body), CONVERSE_STREAM.input_shape
    )
    assert not report.has_errors(), report.generate_report()


TOOL_ROUND = [
    user(text("Weather in Paris?"), image(PNG)),
    assistant(
        thinking("The user wants weather.", {"signature": "EqQBCkYIBxgCKkB"}),
        thinking("", {"redacted_content": base64.b64encode(b"EtkECkgI").decode()}),
        text("Checking."),
        call("tooluse_lAG_zP8QRHmSYOwZzzaCqA", "get_weather", {"city": "Paris"}),
        call("call:2.b", "get_weather", {"city": "Lyon"}),
    ),
    user(result("tooluse_lAG_zP8QRHmSYOwZzzaCqA", "30°C", images=[PNG])),
]
HISTORIES = {
    "hello": HELLO,
    "a tool round with reasoning, redacted reasoning, images and a missing result": TOOL_ROUND,
    "an image given as inline data": [
        user({"type": "inline_data.done", "data": PNG_BYTES, "mime_type": "image/png"})
    ],
}
CONFIGS: dict[str, dict[str, Any]] = {
    "none": {},
    "everything Claude takes": {
        "system_prompt": "Be brief.",
        "max_tokens": 4000,
        "temperature": 1,
        "top_p": 0.97,
        "stop": ["END"],
        "tools": [WEATHER, {"name": "no_parameters", "strict": True}],
        "tool_choice": "auto",
        "response_format": SCHEMA,
        "thinking_level": "medium",
        "thinking_summary": False,
        "prompt_caching": True,
    },
    "a forced tool": {"tools": [WEATHER], "tool_choice": ["get_weather"]},
    "any tool": {"tools": [WEATHER], "tool_choice": "required", "thinking_level": "none"},
    "a named json schema": {
        "response_format": {"type": "json_schema", "json_schema": {"name": "w", "schema": SCHEMA}}
    },
}
MODELS = [
    CLAUDE,
    "anthropic.claude-opus-4-7",
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/global.anthropic.claude-sonnet-4-6",
]


@pytest.mark.parametrize("config_name", list(CONFIGS))
@pytest.mark.parametrize("history_name", list(HISTORIES))
@pytest.mark.parametrize("model", MODELS)
def test_encoded_requests_fit_the_service_models_converse_stream_shape(
    model: str, history_name: str, config_name: str
) -> None:
    request = encode(HISTORIES[history_name], CONFIGS[config_name], model)
    assert_valid_converse_stream(model, request.json)


@pytest.mark.parametrize(
    ("model", "config"),
    [
        (NOVA, {"prompt_caching": True, "system_prompt": "S", "tools": [WEATHER]}),
        ("amazon.nova-2-lite-v1:0", {"thinking_level": "xhigh"}),
        ("openai.gpt-oss-120b-1:0", {"thinking_level": "low", "stop": "###"}),
        ("meta.llama3-70b-instruct-v1:0", {"thinking_level": "none", "temperature": 0.2}),
        ("mistral.mistral-large-2407-v1:0", {"tools": [WEATHER], "tool_choice": "auto"}),
    ],
)
def test_other_families_requests_fit_the_shape_too(model: str, config: dict[str, Any]) -> None:
    assert_valid_converse_stream(model, encode(TOOL_ROUND, config, model).json)


def test_a_body_that_breaks_the_shape_is_caught_by_the_validation() -> None:
    broken = body()
    broken["messages"][0]["content"] = [{"text": 5}]
    with pytest.raises(AssertionError, match="Invalid type"):
        assert_valid_converse_stream(CLAUDE, broken)


# --- path and basics ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "path"),
    [
        (CLAUDE, "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"),
        ("amazon.nova-lite-v1:0", "/model/amazon.nova-lite-v1%3A0/converse-stream"),
        (
            "arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-lite-v1:0",
            "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A%3Afoundation-model%2Famazon.nova-lite-v1"
            "%3A0/converse-stream",
        ),
    ],
)
def test_the_model_id_is_percent_encoded_into_the_path(model: str, path: str) -> None:
    request = encode(model=model)
    assert (request.method, request.path) == ("POST", path)
    assert request.headers == {"accept": "application/vnd.amazon.eventstream"}
    assert request.json == {"messages": [{"role": "user", "content": [{"text": "Hello"}]}]}


# --- every config key ------------------------------------------------------------------------

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
    "extra_body": {"performanceConfig": {"latency": "optimized"}},
    "trace_id": "trace-5f3a",
}
TOOL_SPEC = {
    "toolSpec": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "inputSchema": {"json": SCHEMA},
    }
}
KEY_CASES: dict[str, tuple[dict[str, Any], Any]] = {
    "system_prompt": ({}, {"system": [{"text": "Be brief."}]}),
    "max_tokens": ({}, {"inferenceConfig": {"maxTokens": 300}}),
    "temperature": ({}, {"inferenceConfig": {"temperature": 0.3}}),
    "top_p": ({}, {"inferenceConfig": {"topP": 0.9}}),
    "stop": ({}, {"inferenceConfig": {"stopSequences": ["END"]}}),
    "seed": ({}, RAISES),
    "tools": ({}, {"toolConfig": {"tools": [TOOL_SPEC]}}),
    "tool_choice": (
        {"tools": [WEATHER]},
        {"toolConfig": {"tools": [TOOL_SPEC], "toolChoice": {"any": {}}}},
    ),
    "parallel_tool_calls": ({}, RAISES),
    "response_format": (
        {},
        {
            "outputConfig": {
                "textFormat": {
                    "type": "json_schema",
                    "structure": {"jsonSchema": {"schema": json.dumps(CLOSED), "name": "response"}},
                }
            }
        },
    ),
    "thinking_level": (
        {},
        {"additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 16384}}},
    ),
    "thinking_summary": (
        {"thinking_level": "low", "thinking_summary": False},
        {
            "additionalModelRequestFields": {
                "thinking": {"type": "enabled", "budget_tokens": 1024, "display": "omitted"}
            }
        },
    ),
    "prompt_caching": (
        {"system_prompt": "S"},
        {
            "system": [{"text": "S"}, {"cachePoint": {"type": "default"}}],
            "messages": [
                {
                    "role": "user",
                    "content": [{"text": "Hello"}, {"cachePoint": {"type": "default"}}],
                }
            ],
        },
    ),
    "extra_body": ({}, {"performanceConfig": {"latency": "optimized"}}),
    "image_output": ({}, RAISES),
    "speech_output": ({}, RAISES),
    "trace_id": ({}, UNCHANGED),
}


def contains(expected: Any, actual: Any) -> bool:
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


@pytest.mark.parametrize("key", CONFIG_KEYS)
def test_every_config_key_is_encoded_or_refused_by_name(key: str) -> None:
    extra, expected = KEY_CASES[key]
    config = {key: EXAMPLES[key], **extra}
    if expected == RAISES:
        with pytest.raises(UnsupportedParameterError, match=key):
            encode(config=config)
    elif expected == UNCHANGED:
        assert encode(config=config) == encode(config=extra)
        assert str(EXAMPLES[key]) not in json.dumps(encode(config=config).json)
    else:
        assert contains(expected, body(config)), body(config)
        assert_valid_converse_stream(CLAUDE, body(config))


def test_a_key_that_is_not_in_config_is_refused_rather_than_ignored() -> None:
    with pytest.raises(UnsupportedParameterError, match="top_k"):
        encode(config={"top_k": 3})


def test_a_config_value_of_none_counts_as_unset() -> None:
    assert encode(config=dict.fromkeys(CONFIG_KEYS)) == encode()


# --- thinking per model family -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "level", "fields", "output_config"),
    [
        (CLAUDE, "low", {"thinking": {"type": "enabled", "budget_tokens": 1024}}, None),
        (CLAUDE, "max", {"thinking": {"type": "enabled", "budget_tokens": 28672}}, None),
        (CLAUDE, "none", {"thinking": {"type": "disabled"}}, None),
        (
            "global.anthropic.claude-sonnet-4-6",
            "xhigh",
            {"thinking": {"type": "adaptive"}},
            {"effort": "max"},
        ),
        (
            "anthropic.claude-opus-4-7",
            "xhigh",
            {"thinking": {"type": "adaptive"}},
            {"effort": "xhigh"},
        ),
        (
            "amazon.nova-2-lite-v1:0",
            "medium",
            {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "medium"}},
            None,
        ),
        (
            "us.amazon.nova-2-lite-v1:0",
            "max",
            {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "high"}},
            None,
        ),
        ("amazon.nova-2-lite-v1:0", "none", {"reasoningConfig": {"type": "disabled"}}, None),
        ("openai.gpt-oss-20b-1:0", "high", {"reasoning_effort": "high"}, None),
        ("openai.gpt-oss-120b-1:0", "xhigh", {"reasoning_effort": "high"}, None),
    ],
)
def test_thinking_goes_through_additional_model_request_fields_per_family(
    model: str, level: str, fields: dict[str, Any], output_config: dict[str, Any] | None
) -> None:
    sent = body({"thinking_level": level}, model=model)
    assert sent["additionalModelRequestFields"] == fields
    assert sent.get("outputConfig") == output_config


@pytest.mark.parametrize(
    ("model", "level"),
    [
        (NOVA, "low"),
        ("meta.llama3-70b-instruct-v1:0", "high"),
        ("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3", "low"),
        ("openai.gpt-oss-120b-1:0", "none"),
    ],
)
def test_a_family_without_that_thinking_control_refuses_the_level(model: str, level: str) -> None:
    with pytest.raises(UnsupportedParameterError, match="thinking_level"):
        encode(config={"thinking_level": level}, model=model)


def test_thinking_level_none_sends_nothing_for_a_family_without_thinking() -> None:
    assert encode(config={"thinking_level": "none"}, model=NOVA) == encode(model=NOVA)


def test_claude_thinking_budget_shrinks_below_a_smaller_max_tokens() -> None:
    sent = body({"thinking_level": "high", "max_tokens": 4000})
    assert sent["additionalModelRequestFields"]["thinking"]["budget_tokens"] == 2000
    assert sent["inferenceConfig"] == {"maxTokens": 4000}


@pytest.mark.parametrize(
    ("config", "parameter"),
    [
        ({"thinking_level": "low", "temperature": 0.5}, "temperature"),
        ({"thinking_level": "low", "top_p": 0.5}, "top_p"),
        ({"thinking_level": "low", "max_tokens": 1024}, "thinking_level"),
        ({"thinking_level": "low", "tools": [WEATHER], "tool_choice": "required"}, "tool_choice"),
        ({"thinking_summary": True}, "thinking_summary"),
    ],
)
def test_what_claude_or_the_family_rejects_is_refused_before_sending(
    config: dict[str, Any], parameter: str
) -> None:
    model = NOVA if parameter == "thinking_summary" else CLAUDE
    with pytest.raises(UnsupportedParameterError, match=parameter):
        encode(config=config, model=model)


# --- tools, caching, response format -----------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"auto": {}}),
        ("required", {"any": {}}),
        (["get_weather"], {"tool": {"name": "get_weather"}}),
    ],
)
def test_tool_choice_maps_to_converse_tool_choice(choice: Any, expected: Any) -> None:
    assert body({"tools": [WEATHER], "tool_choice": choice})["toolConfig"]["toolChoice"] == expected


@pytest.mark.parametrize("choice", ["none", ["get_weather", "other"], ["missing"]])
def test_a_tool_choice_converse_cannot_express_is_refused(choice: Any) -> None:
    tools = [WEATHER, {"name": "other"}]
    with pytest.raises(UnsupportedParameterError, match="tool_choice"):
        encode(config={"tools": tools, "tool_choice": choice})


@pytest.mark.parametrize("choice", ["auto", "none"])
def test_a_tool_choice_with_no_tools_to_choose_from_is_left_out(choice: str) -> None:
    assert encode(config={"tool_choice": choice}) == encode()


def test_a_tool_without_parameters_gets_an_empty_object_schema_and_strict_rides_along() -> None:
    sent = body({"tools": [{"name": "now", "strict": True}]})
    assert sent["toolConfig"]["tools"] == [
        {
            "toolSpec": {
                "name": "now",
                "inputSchema": {"json": {"type": "object", "properties": {}}},
                "strict": True,
            }
        }
    ]


def test_prompt_caching_puts_cache_points_after_tools_system_and_the_last_message() -> None:
    sent = body({"prompt_caching": True, "system_prompt": "S", "tools": [WEATHER]}, model=NOVA)
    assert sent["toolConfig"]["tools"] == [TOOL_SPEC, {"cachePoint": {"type": "default"}}]
    assert sent["system"][-1] == {"cachePoint": {"type": "default"}}
    assert sent["messages"][-1]["content"][-1] == {"cachePoint": {"type": "default"}}


@pytest.mark.parametrize("model", ["meta.llama3-70b-instruct-v1:0", "amazon.titan-text-express-v1"])
def test_prompt_caching_is_refused_for_a_model_bedrock_does_not_cache_for(model: str) -> None:
    with pytest.raises(UnsupportedParameterError, match="prompt_caching"):
        encode(config={"prompt_caching": True}, model=model)
    assert encode(config={"prompt_caching": False}, model=model) == encode(model=model)


def test_json_mode_without_a_schema_is_refused() -> None:
    with pytest.raises(UnsupportedParameterError, match="response_format"):
        encode(config={"response_format": {"type": "json_object"}})


def test_extra_body_merges_into_the_encoders_objects() -> None:
    sent = body(
        {
            "thinking_level": "low",
            "extra_body": {"additionalModelRequestFields": {"top_k": 5}, "inferenceConfig": None},
            "max_tokens": 3000,
        }
    )
    assert sent["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "top_k": 5,
    }
    assert "inferenceConfig" not in sent


# --- messages and replay -----------------------------------------------------------------------


def test_a_tool_round_replays_reasoning_calls_and_results_in_bedrock_blocks() -> None:
    sent = body(messages=TOOL_ROUND)
    png = base64.b64encode(PNG_BYTES).decode()
    assert sent["messages"] == [
        {
            "role": "user",
            "content": [
                {"text": "Weather in Paris?"},
                {"image": {"format": "png", "source": {"bytes": png}}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "reasoningContent": {
                        "reasoningText": {
                            "text": "The user wants weather.",
                            "signature": "EqQBCkYIBxgCKkB",
                        }
                    }
                },
                {"reasoningContent": {"redactedContent": base64.b64encode(b"EtkECkgI").decode()}},
                {"text": "Checking."},
                {
                    "toolUse": {
                        "toolUseId": "tooluse_lAG_zP8QRHmSYOwZzzaCqA",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    }
                },
                {
                    "toolUse": {
                        "toolUseId": "call:2.b",
                        "name": "get_weather",
                        "input": {"city": "Lyon"},
                    }
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "call:2.b",
                        "content": [{"text": MISSING_RESULT_TEXT}],
                        "status": "error",
                    }
                },
                {
                    "toolResult": {
                        "toolUseId": "tooluse_lAG_zP8QRHmSYOwZzzaCqA",
                        "content": [
                            {"text": "30°C"},
                            {"image": {"format": "png", "source": {"bytes": png}}},
                        ],
                    }
                },
            ],
        },
    ]


def test_unsigned_or_foreign_thinking_is_dropped_for_claude_and_kept_as_text_elsewhere() -> None:
    history = [
        user(text("q")),
        assistant(
            thinking("mine, unsigned"),
            thinking("", {"redacted_thinking": "Anthropic's"}),  # foreign, no text
            text("a"),
        ),
        user(text("q2")),
    ]
    assert body(messages=history)["messages"][1]["content"] == [{"text": "a"}]
    assert body(messages=history, model="openai.gpt-oss-120b-1:0")["messages"][1]["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "mine, unsigned"}}},
        {"text": "a"},
    ]


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        (image("https://example.com/cat.png"), "not URLs"),
        (image("data:image/bmp;base64,Qk0="), "not image/bmp"),
        (image("data:application/zip;base64,UEs="), "not application/zip"),
        (image("file:///etc/passwd"), "never read"),
    ],
)
def test_images_must_be_bytes_in_a_format_converse_takes(item: Any, reason: str) -> None:
    with pytest.raises(InvalidMessageError, match=reason):
        encode([user(text("look"), item)])


def test_documents_are_named_blocks_numbered_through_the_request() -> None:
    pdf = "data:application/pdf;base64,JVBERi0="
    history = [
        user(text("Summarize both."), image(pdf), image("data:text/plain,hello")),
        assistant(call("c1", "lookup", {})),
        user(result("c1", "", images=[pdf])),
    ]
    sent = body(messages=history)
    assert sent["messages"][0]["content"][1:] == [
        {"document": {"format": "pdf", "name": "document-1", "source": {"bytes": "JVBERi0="}}},
        {"document": {"format": "txt", "name": "document-2", "source": {"bytes": "aGVsbG8="}}},
    ]
    assert sent["messages"][2]["content"][0]["toolResult"]["content"] == [
        {"document": {"format": "pdf", "name": "document-3", "source": {"bytes": "JVBERi0="}}}
    ]
    assert_valid_converse_stream(CLAUDE, sent)


def test_tool_call_ids_are_normalized_the_same_way_for_call_and_result() -> None:
    call_id = "functions/get weather#1"
    sent = body(
        messages=[user(text("q")), assistant(call(call_id, "f", {})), user(result(call_id, "ok"))]
    )
    assert sent["messages"][1]["content"][0]["toolUse"]["toolUseId"] == "functions_get_weather_1"
    assert sent["messages"][2]["content"][0]["toolResult"]["toolUseId"] == "functions_get_weather_1"


def test_an_empty_history_is_refused_before_sending() -> None:
    with pytest.raises(InvalidMessageError, match="at least one message"):
        encode([])


# --- the corpus's recorded requests, expressed as messages + config ----------------------------


def recorded_request_names() -> list[str]:
    folder = CORPUS / BEDROCK
    if not folder.is_dir():
        return ["<corpus missing>"]
    return sorted(
        path.stem
        for path in folder.glob("*.json")
        if json.loads(path.read_text()).get("request") is not None
    )


def parameters(name: str, description: str) -> dict[str, Any]:
    return {
        "properties": {name: {"description": description, "title": name.title(), "type": "string"}},
        "required": [name],
        "type": "object",
        "additionalProperties": False,
    }


CITY_INFO = {
    "additionalProperties": False,
    "properties": {
        "city": {"type": "string"},
        "country": {"type": "string"},
        "population": {"type": "integer"},
    },
    "required": ["city", "country", "population"],
    "type": "object",
}

# capture -> the config that expresses its recorded request
SAME_REQUEST: dict[str, dict[str, Any]] = {
    "pydanticai-bedrock-claude-redacted-thinking": {"thinking_level": "low"},
    "pydanticai-bedrock-claude-structured-output": {
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "CityInfo",
                "schema": CITY_INFO,
                "description": "Information about a city.",
            },
        }
    },
    "pydanticai-bedrock-nova-extra-headers": {},
    "pydanticai-bedrock-nova-text": {
        "system_prompt": "You are a helpful chatbot.",
        "temperature": 0.0,
    },
    "pydanticai-bedrock-nova-tool-result-answer": {
        "system_prompt": "You are a helpful chatbot.",
        "top_p": 0.5,
        "tools": [
            {
                "name": "get_capital",
                "description": "Get the capital of a country.",
                "parameters": parameters("country", "The country name."),
            },
            {
                "name": "get_temperature",
                "description": "Get the temperature in a city.",
                "parameters": parameters("city", "The city name."),
            },
        ],
    },
}


def recorded_messages(request: dict[str, Any]) -> list[Any]:
    """The recorded conversation as messages: text, tool uses and tool results."""
    messages = []
    for message in request["messages"]:
        items = []
        for block in message["content"]:
            if "text" in block:
                items.append(text(block["text"]))
            elif "toolUse" in block:
                use = block["toolUse"]
                items.append(call(use["toolUseId"], use["name"], use["input"]))
            else:
                tool_result = block["toolResult"]
                (content,) = tool_result["content"]
                items.append(result(tool_result["toolUseId"], content["text"]))
        messages.append({"role": message["role"], "content_items": items})
    return messages


def converse_meaning(request: dict[str, Any]) -> dict[str, Any]:
    """A request with equivalent spellings made one: empty `system` / `inferenceConfig`, a tool
    result's default status `success`, and the JSON schema string parsed."""
    request = copy.deepcopy(request)
    for key in ("system", "inferenceConfig"):
        if request.get(key) in ([], {}):
            del request[key]
    for message in request["messages"]:
        for block in message["content"]:
            if block.get("toolResult", {}).get("status") == "success":
                del block["toolResult"]["status"]
    json_schema = (
        request.get("outputConfig", {}).get("textFormat", {}).get("structure", {}).get("jsonSchema")
    )
    if json_schema:
        json_schema["schema"] = json.loads(json_schema["schema"])
    return request


def test_every_recorded_request_has_its_expression_here() -> None:
    names = recorded_request_names()
    if names == ["<corpus missing>"]:
        require_corpus()
    assert set(names) == set(SAME_REQUEST)


@pytest.mark.parametrize("name", recorded_request_names())
def test_the_encoded_request_means_what_the_recorded_one_did(name: str) -> None:
    folder = require_corpus() / BEDROCK
    sidecar = json.loads((folder / f"{name}.json").read_text())
    recorded = sidecar["request"]
    request = encode(recorded_messages(recorded), SAME_REQUEST[name], sidecar["model"])
    assert request.path == urlsplit(sidecar["source"]["request_uri"]).path
    assert converse_meaning(request.json) == converse_meaning(recorded)
    assert_valid_converse_stream(sidecar["model"], request.json)


# --- the documented tables are the ones in force -------------------------------------------

DOC = REPO / "docs" / "requests-bedrock.md"


def test_the_documented_thinking_table_is_what_the_encoder_sends() -> None:
    section = DOC.read_text().split("### Thinking per model family\n", 1)[1].split("\n#", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| `")]
    models = [
        "us.anthropic.claude-sonnet-4-20250514-v1:0",
        "amazon.nova-2-lite-v1:0",
        "openai.gpt-oss-120b-1:0",
    ]
    assert [row[0].strip(" `") for row in rows] == ["none", "low", "medium", "high", "xhigh", "max"]
    for row in rows:
        level = row[0].strip(" `")
        for model, cell in zip(models, row[1:], strict=False):
            expected = cell.strip().strip("`")
            try:
                sent = body({"thinking_level": level}, model=model)["additionalModelRequestFields"]
            except UnsupportedParameterError:
                assert expected == "refused"
                continue
            assert json.dumps(sent, separators=(", ", ": ")) == expected
