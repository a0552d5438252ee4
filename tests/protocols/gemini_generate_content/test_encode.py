"""Request encoder for Gemini generateContent.

Expected values come from the mapping tables in docs/requests-anthropic-gemini.md, from corpus
captures read with plain `json` (never through our decoders), and from the requests the corpus
sidecars recorded.
"""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import urlsplit

import pytest

from modelstream.errors import InvalidMessageError, UnsupportedParameterError
from support import load_capture
from support.encoding import (
    CONFIG_KEYS,
    GEMINI,
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
from support.messages import assistant, call, image, result, text, user

# --- every config key ---------------------------------------------------------------------

# key -> (config, what the body holds)
KEY_CASES: dict[str, tuple[dict[str, Any], Any]] = {
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
}


@pytest.mark.parametrize("key", CONFIG_KEYS)
def test_every_config_key_is_encoded_or_refused_by_name(key):
    check_config_key(GEMINI, key, *KEY_CASES[key])


def test_a_key_that_is_not_in_config_is_refused_rather_than_ignored():
    with pytest.raises(UnsupportedParameterError, match=r"top_k.*extra_body"):
        encode(GEMINI, config={"top_k": 5})


def test_a_config_value_of_none_counts_as_unset():
    assert encode(GEMINI, config={"seed": None, "temperature": None}) == encode(GEMINI)


@pytest.mark.parametrize("choice", ["auto", "none"])
def test_a_tool_choice_with_no_tools_to_choose_from_is_left_out(choice):
    config = {"tool_choice": choice, "parallel_tool_calls": True}
    assert encode(GEMINI, config=config) == encode(GEMINI)


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
        encode(GEMINI, config=config)
    assert (raised.value.parameter, raised.value.protocol) == ("tool_choice", GEMINI)


def test_a_json_schema_response_format_without_its_schema_is_refused():
    wrapper = {"type": "json_schema", "json_schema": {"name": "city"}}
    with pytest.raises(UnsupportedParameterError) as raised:
        encode(GEMINI, config={"response_format": wrapper})
    assert (raised.value.parameter, raised.value.protocol) == ("response_format", GEMINI)


def test_extra_body_none_removes_the_key_the_encoder_wrote():
    config = {"temperature": 0.2, "seed": 1, "extra_body": {"generationConfig": {"seed": None}}}
    assert body(GEMINI, config)["generationConfig"] == {"temperature": 0.2}


def test_a_single_stop_string_is_one_stop_sequence():
    assert contains(KEY_CASES["stop"][1], body(GEMINI, {"stop": "END"}))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/a.png", "cat.png"])
def test_an_image_url_that_is_neither_http_nor_data_is_refused(url):
    with pytest.raises(InvalidMessageError, match="http"):
        encode(GEMINI, [user(image(url))])


def test_an_empty_history_is_refused_before_sending():
    with pytest.raises(InvalidMessageError):
        encode(GEMINI, [])


# --- the request --------------------------------------------------------------------------


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


def thinking_sent(model: str, level: str) -> str:
    sent = body(GEMINI, {"thinking_level": level}, model=model)
    (value,) = sent["generationConfig"]["thinkingConfig"].values()
    return str(value)


@pytest.mark.parametrize(
    ("heading", "models"),
    [
        (
            "Gemini 3 and later: thinkingLevel",
            ["gemini-3-flash-preview", "gemini-3.1-pro-preview", "gemini-3-pro-preview"],
        ),
        ("Gemini 2.5: thinkingBudget", ["gemini-2.5-flash", "gemini-2.5-pro"]),
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
}


def test_encoding_never_changes_the_callers_messages_or_config():
    history, config = rich_history(), copy.deepcopy(FULL_CONFIG)
    history_before, config_before = copy.deepcopy(history), copy.deepcopy(config)
    request = encode(GEMINI, history, config, model="gemini-3-pro")
    assert (history, config) == (history_before, config_before)
    scribble(request.json)
    assert (history, config) == (history_before, config_before)


# --- fidelity replay: the next turn carries what the provider sent --------------------------


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

    gemini = next_turn(GEMINI, "gemini-2.5-flash", reply, follow_up).json["contents"][1]
    assert gemini["parts"] == [
        *[{"text": t} for t in texts],
        *[
            {"functionCall": {"name": c["name"], "args": c["arguments"], "id": c["tool_call_id"]}}
            for c in calls
        ],
    ]


# --- the corpus's recorded requests, expressed as messages + config -------------------------

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
# extra_body (server tools, response modalities)
SAME_REQUEST: dict[str, dict[str, Any]] = {
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


def recorded_messages(request: dict[str, Any]) -> list[Any]:
    """The recorded conversation as messages: text turns, function calls (with their
    signature) and results."""
    messages = []
    for content in request["contents"]:
        items = [recorded_item(b) for b in content["parts"]]
        role = "user" if content["role"] == "user" else "assistant"
        messages.append({"role": role, "content_items": items})
    return messages


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


def test_every_recorded_request_has_its_expression_here():
    names = recorded_request_names(GEMINI)
    if names == ["<corpus missing>"]:
        load_capture(GEMINI, names[0])  # skips, or fails under CI
    assert set(names) <= set(SAME_REQUEST)


@pytest.mark.parametrize("name", recorded_request_names(GEMINI))
def test_the_encoded_request_means_what_the_recorded_one_did(name):
    capture = load_capture(GEMINI, name)
    recorded = capture.sidecar["request"]
    model = capture.sidecar["model"]
    request = encode(GEMINI, recorded_messages(recorded), SAME_REQUEST[name], model)
    uri = urlsplit(capture.sidecar["source"]["request_uri"])
    if capture.sidecar["provider"] == "google":  # Vertex AI has its own resource paths
        assert request.path == f"{uri.path}?{uri.query}"
    assert gemini_meaning(request.json) == gemini_meaning(recorded)
