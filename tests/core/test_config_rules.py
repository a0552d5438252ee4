"""The value rules of every config key (issue 20 item 3): one rule per `Config` key, a sentence
that names the value, says what it must be and shows what it was, and a "did you mean" for a
key that does not exist. The table is `modelstream.protocols.common.config_rules`."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import modelstream
from modelstream.errors import InvalidConfigError, UnsupportedParameterError
from modelstream.protocols import encode_request
from modelstream.protocols.common.config_rules import CONFIG_KEYS, RULES, check_config
from modelstream.types import Config
from support.encoding import EXAMPLES, SCHEMA, WEATHER


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def refusal(config: Any, *, functions: bool = False) -> InvalidConfigError:
    with pytest.raises(InvalidConfigError) as raised:
        check_config(config, functions=functions)
    return raised.value


# --- one rule per key -------------------------------------------------------------------------


def test_every_config_key_has_one_rule_and_every_rule_a_config_key() -> None:
    assert tuple(RULES) == CONFIG_KEYS == tuple(Config.__annotations__)


ACCEPTED: dict[str, list[Any]] = {
    "system_prompt": ["Be brief.", ""],
    "max_tokens": [1, 300, 128_000],
    "temperature": [0, 0.0, 0.7, 1, 2, 2.0],
    "top_p": [0, 0.95, 1, 1.0],
    "stop": ["END", ["END"], ["a", "b"], []],
    "seed": [7, 0, -1, 2**40],
    "tools": [
        [],
        [WEATHER],
        [{"name": "f"}],
        [{"name": "f", "description": "", "parameters": SCHEMA, "strict": True}],
        [{"name": "f", "description": None, "parameters": None, "strict": None}],
    ],
    "tool_choice": ["auto", "required", "none", ["get_weather"], ["a", "b"]],
    "parallel_tool_calls": [True, False],
    "response_format": [
        SCHEMA,
        {"type": "json_object"},
        {"type": "text"},
        {"type": "json_schema", "json_schema": {"name": "r", "schema": SCHEMA}},
        {"type": "json_schema", "name": "r", "schema": SCHEMA, "strict": True},
    ],
    "thinking_level": ["none", "low", "medium", "high", "xhigh", "max"],
    "thinking_summary": [True, False],
    "prompt_caching": [True, False],
    "image_output": [True, False, {}, {"aspect_ratio": "16:9", "size": "2K"}],
    "speech_output": [
        True,
        False,
        {"voice": "Kore", "language": "en-US", "format": "pcm16"},
        {"speakers": {"Joe": "Kore", "Jane": "Puck"}},
    ],
    "extra_body": [{}, {"top_k": 5, "metadata": {"user_id": "u-1"}}],
    "trace_id": ["trace-5f3a", ""],
}


def test_the_accepted_examples_cover_every_key() -> None:
    assert set(ACCEPTED) == set(CONFIG_KEYS)


@pytest.mark.parametrize(
    ("key", "value"), [(key, value) for key, values in ACCEPTED.items() for value in values]
)
def test_a_value_every_provider_takes_passes(key: str, value: Any) -> None:
    check_config({key: value})


def test_the_encoder_tests_example_of_every_key_passes() -> None:
    check_config(EXAMPLES)


@pytest.mark.parametrize("key", CONFIG_KEYS)
def test_none_is_unset_for_every_key(key: str) -> None:
    check_config({key: None})


# (config, the whole sentence)
REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"system_prompt": ["Be brief."]}, "config['system_prompt'] must be a string, got"),
    (
        {"max_tokens": -1},
        "config['max_tokens'] must be an integer of at least 1, got -1 (an int)",
    ),
    ({"max_tokens": 0}, "config['max_tokens'] must be an integer of at least 1, got 0 (an int)"),
    (
        {"max_tokens": True},
        "config['max_tokens'] must be an integer of at least 1, got True (a bool)",
    ),
    (
        {"max_tokens": 100.0},
        "config['max_tokens'] must be an integer of at least 1, got 100.0 (a float)",
    ),
    (
        {"max_tokens": "100"},
        "config['max_tokens'] must be an integer of at least 1, got '100' (a str)",
    ),
    (
        {"temperature": "0.5"},
        "config['temperature'] must be a number from 0 to 2, got '0.5' (a str)",
    ),
    (
        {"temperature": 2.5},
        "config['temperature'] must be a number from 0 to 2, got 2.5 (a float)",
    ),
    (
        {"temperature": -0.1},
        "config['temperature'] must be a number from 0 to 2, got -0.1 (a float)",
    ),
    (
        {"temperature": False},
        "config['temperature'] must be a number from 0 to 2, got False (a bool)",
    ),
    ({"top_p": 7}, "config['top_p'] must be a number from 0 to 1, got 7 (an int)"),
    ({"stop": 5}, "config['stop'] must be a string or a list of strings, got 5 (an int)"),
    ({"stop": ["a", 7]}, "config['stop'][1] must be a string, got 7 (an int)"),
    ({"seed": "7"}, "config['seed'] must be an integer, got '7' (a str)"),
    ({"seed": 7.5}, "config['seed'] must be an integer, got 7.5 (a float)"),
    (
        {"tools": [{"description": "no name"}]},
        "config['tools'][0]['name'] is missing: every tool needs a name",
    ),
    (
        {"tools": [WEATHER, {"name": ""}]},
        "config['tools'][1]['name'] must be a non-empty string, got '' (a str)",
    ),
    (
        {"tools": [{"name": "f", "parameters": "{}"}]},
        "config['tools'][0]['parameters'] must be a JSON schema (a dict), got '{}' (a str)",
    ),
    (
        {"tools": [{"name": "f", "strict": "yes"}]},
        "config['tools'][0]['strict'] must be True or False, got 'yes' (a str)",
    ),
    (
        {"tools": ["get_weather"]},
        "config['tools'][0] must be a tool schema (a dict with a 'name'), got 'get_weather' "
        "(a str)",
    ),
    (
        {"tools": {"name": "f"}},
        "config['tools'] must be a list of tools, got {'name': 'f'} (a dict): put the tool in a "
        "list",
    ),
    (
        {"tools": [{"type": "function", "function": WEATHER}]},
        "config['tools'][0] is an OpenAI Chat tool ({'type': 'function', 'function': {...}}): "
        "give the function's own dict, {'name': ..., 'description': ..., 'parameters': {...}}",
    ),
    (
        {"tools": [{"name": "f", "input_schema": SCHEMA}]},
        "config['tools'][0]['input_schema'] is Anthropic's name: the JSON schema goes in "
        "'parameters'",
    ),
    (
        {"tool_choice": "any"},
        "config['tool_choice'] must be 'auto', 'required', 'none' or a list of tool names, "
        "got 'any': did you mean 'required'?",
    ),
    (
        {"tool_choice": "get_weather"},
        "config['tool_choice'] must be 'auto', 'required', 'none' or a list of tool names, "
        "got 'get_weather': to make the model call that tool, pass ['get_weather']",
    ),
    (
        {"tool_choice": []},
        "config['tool_choice'] is an empty list, which allows no tool: use 'none'",
    ),
    (
        {"tool_choice": ["lookup", 3]},
        "config['tool_choice'][1] must be a tool's name (a non-empty string), got 3 (an int)",
    ),
    (
        {"parallel_tool_calls": 1},
        "config['parallel_tool_calls'] must be True or False, got 1 (an int)",
    ),
    (
        {"response_format": "json"},
        "config['response_format'] must be a pydantic model, a dataclass or a TypedDict (the "
        "class), a JSON schema (a dict), or OpenAI's response_format wrapper of one, got 'json' "
        "(a str)",
    ),
    (
        {"response_format": {"type": "json_schema", "json_schema": {"name": "r"}}},
        "config['response_format'] of type 'json_schema' needs its schema: {'type': "
        "'json_schema', 'json_schema': {'name': ..., 'schema': {...}}}, or give the JSON schema "
        "itself",
    ),
    (
        {"thinking_level": "hgih"},
        "config['thinking_level'] must be one of 'none', 'low', 'medium', 'high', 'xhigh', "
        "'max', got 'hgih': did you mean 'high'?",
    ),
    (
        {"thinking_level": 2048},
        "config['thinking_level'] must be one of 'none', 'low', 'medium', 'high', 'xhigh', "
        "'max', got 2048 (an int): a level, not a token budget (each protocol turns the level "
        "into its own setting)",
    ),
    (
        {"thinking_level": "minimal"},
        "config['thinking_level'] must be one of 'none', 'low', 'medium', 'high', 'xhigh', "
        "'max', got 'minimal': send OpenAI's own effort through extra_body, e.g. "
        "{'reasoning_effort': 'minimal'} on Chat",
    ),
    (
        {"thinking_summary": "auto"},
        "config['thinking_summary'] must be True or False, got 'auto' (a str)",
    ),
    ({"prompt_caching": 0}, "config['prompt_caching'] must be True or False, got 0 (an int)"),
    (
        {"image_output": "yes"},
        "config['image_output'] must be True or a dict of settings (aspect_ratio, size), got "
        "'yes' (a str)",
    ),
    (
        {"image_output": {"aspect": "1:1"}},
        "config['image_output'] has unknown setting(s) aspect; known: aspect_ratio, size "
        "(did you mean 'aspect_ratio'?)",
    ),
    (
        {"image_output": {"size": ""}},
        "config['image_output']['size'] must be a non-empty string, got '' (a str)",
    ),
    (
        {"speech_output": {"speakers": {"Joe": 1}}},
        "config['speech_output']['speakers'] must map each speaker's name to a voice, e.g. "
        "{'Joe': 'Kore'}, got {'Joe': 1} (a dict)",
    ),
    (
        {"extra_body": "x"},
        "config['extra_body'] must be a dict of provider fields, got 'x' (a str)",
    ),
    ({"trace_id": 12}, "config['trace_id'] must be a string, got 12 (an int)"),
]


def test_the_refused_examples_cover_every_key() -> None:
    assert {key for config, _ in REFUSED for key in config} == set(CONFIG_KEYS)


@pytest.mark.parametrize(("config", "sentence"), REFUSED)
def test_a_value_no_provider_takes_is_refused_by_a_sentence_naming_it(
    config: dict[str, Any], sentence: str
) -> None:
    error = refusal(config)

    assert str(error).startswith(sentence)
    assert error.parameter == next(iter(config))


def test_the_refusal_names_the_value_as_json_does_in_its_path() -> None:
    assert refusal({"stop": ["a", 7]}).fields() == {
        "parameter": "stop",
        "protocol": "",
        "path": "config.stop[1]",
    }
    assert refusal({"tools": [{"description": "x"}]}).path == "config.tools[0].name"
    assert refusal({"temperature": 9}).path == "config.temperature"


def test_the_refusal_is_an_unsupported_parameter_error_as_callers_catch_it() -> None:
    assert issubclass(InvalidConfigError, UnsupportedParameterError)
    assert modelstream.UnsupportedParameterError is UnsupportedParameterError


def test_the_first_bad_key_in_order_is_the_one_named() -> None:
    error = refusal({"temperature": 0.5, "top_p": 3, "max_tokens": -1})

    assert error.parameter == "top_p"


def test_a_config_that_is_not_a_dict_is_refused() -> None:
    assert (
        str(refusal("be brief")) == "config must be a dict of config keys, got 'be brief' (a str)"
    )
    assert str(refusal([("temperature", 1)])).startswith("config must be a dict of config keys")
    check_config(None)


def test_a_long_value_is_shown_cut() -> None:
    message = str(refusal({"system_prompt": ["word"] * 100}))

    assert len(message) < 140
    assert "(a list)" in message


# --- unknown keys -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "meant"),
    [
        ("max_token", "max_tokens"),
        ("max_tokenz", "max_tokens"),
        ("temprature", "temperature"),
        ("temp", "temperature"),
        ("system", "system_prompt"),
        ("system_message", "system_prompt"),
        ("instructions", "system_prompt"),
        ("system_instruction", "system_prompt"),
        ("max_completion_tokens", "max_tokens"),
        ("max_output_tokens", "max_tokens"),
        ("stop_sequences", "stop"),
        ("reasoning_effort", "thinking_level"),
        ("tool", "tools"),
        ("functions", "tools"),
        ("response_schema", "response_format"),
        ("traceid", "trace_id"),
    ],
)
def test_an_unknown_key_says_which_key_it_most_likely_meant(key: str, meant: str) -> None:
    error = refusal({key: 1})

    assert str(error) == f"unknown config key {key!r}: did you mean {meant!r}?"
    assert (error.parameter, error.path) == (key, f"config.{key}")


def test_a_provider_field_with_no_config_key_is_sent_through_extra_body() -> None:
    error = refusal({"top_k": 40})

    assert str(error) == (
        "unknown config key 'top_k': it is a provider's own field, so send it through "
        "extra_body, e.g. {'extra_body': {'top_k': ...}}"
    )  # and not top_p, which difflib would offer


def test_an_unknown_key_like_none_lists_the_config_keys() -> None:
    message = str(refusal({"zebra": 1}))

    assert message.startswith("unknown config key 'zebra': the config keys are system_prompt, ")
    assert all(key in message for key in CONFIG_KEYS)
    assert message.endswith("send it through extra_body, e.g. {'extra_body': {'zebra': ...}}")


def test_a_key_that_is_not_a_string_is_refused() -> None:
    assert str(refusal({1: "x"})) == "config keys are strings, got 1 (an int)"


# --- functions where tool schemas go ----------------------------------------------------------


def test_a_function_where_the_list_of_tools_goes_says_to_put_it_in_a_list() -> None:
    error = refusal({"tools": get_weather}, functions=True)

    assert str(error) == (
        "config['tools'] must be a list of tools, got the function get_weather: pass [get_weather]"
    )


def test_a_function_in_the_tools_of_a_bare_request_names_the_helper_that_describes_it() -> None:
    error = refusal({"tools": [WEATHER, get_weather]})

    assert str(error) == (
        "config['tools'][1] is the function get_weather, but a request sends tool schemas: "
        "pass [modelstream.tool(get_weather).definition] (a Client or Conversation takes the "
        "function itself and describes it)"
    )
    check_config({"tools": [WEATHER, modelstream.tool(get_weather).definition]})  # as it says


def test_a_function_as_the_tools_of_a_bare_request_names_the_helper_too() -> None:
    message = str(refusal({"tools": modelstream.tool(get_weather)}))

    assert message.startswith("config['tools'] must be a list of tools, got the function ")
    assert "pass [modelstream.tool(get_weather).definition]" in message


def test_functions_and_described_tools_pass_where_the_caller_describes_them() -> None:
    check_config({"tools": [get_weather, modelstream.tool(get_weather), WEATHER]}, functions=True)


# --- every encoder applies them -------------------------------------------------------------


@pytest.mark.parametrize(
    "protocol",
    ["openai-chat", "openai-responses", "anthropic-messages", "gemini-generate-content"],
)
def test_every_encoder_refuses_by_the_same_sentence_naming_its_protocol(protocol: str) -> None:
    hello = [{"role": "user", "content_items": [{"type": "text.done", "text": "hi"}]}]
    with pytest.raises(InvalidConfigError) as raised:
        encode_request(protocol, "a-model", hello, {"temperature": "0.5"})  # type: ignore[typeddict-item]

    assert (
        str(raised.value) == "config['temperature'] must be a number from 0 to 2, got '0.5' (a str)"
    )
    assert raised.value.protocol == protocol


# --- properties -------------------------------------------------------------------------------

numbers = st.one_of(st.integers(-(10**6), 10**6), st.floats(allow_nan=True, allow_infinity=True))


@given(numbers)
def test_a_temperature_passes_exactly_when_it_is_a_number_from_0_to_2(value: float) -> None:
    inside = not math.isnan(value) and 0 <= value <= 2
    if inside:
        check_config({"temperature": value})
    else:
        assert "must be a number from 0 to 2" in str(refusal({"temperature": value}))


@given(numbers)
def test_a_top_p_passes_exactly_when_it_is_a_number_from_0_to_1(value: float) -> None:
    if not math.isnan(value) and 0 <= value <= 1:
        check_config({"top_p": value})
    else:
        assert "must be a number from 0 to 1" in str(refusal({"top_p": value}))


@given(st.integers())
def test_a_max_tokens_passes_exactly_when_it_is_at_least_1(value: int) -> None:
    if value >= 1:
        check_config({"max_tokens": value})
    else:
        assert str(refusal({"max_tokens": value})).startswith("config['max_tokens'] must be")


@pytest.mark.parametrize("key", ["max_tokens", "temperature", "top_p", "seed"])
@given(flag=st.booleans())
def test_a_bool_is_no_number_for_any_numeric_key(key: str, flag: bool) -> None:
    assert f"got {flag} (a bool)" in str(refusal({key: flag}))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(st.sampled_from(CONFIG_KEYS), json_values)
def test_any_json_value_is_taken_or_refused_by_name_never_crashes(key: str, value: Any) -> None:
    try:
        check_config({key: value})
    except InvalidConfigError as error:
        assert error.parameter == key
        assert str(error).startswith(f"config[{key!r}]")
        assert error.path.startswith(f"config.{key}")


@given(st.text(min_size=1).filter(lambda key: key not in CONFIG_KEYS))
def test_any_other_key_is_refused_naming_it(key: str) -> None:
    message = str(refusal({key: 1}))

    assert message.startswith(f"unknown config key {key!r}: ")
