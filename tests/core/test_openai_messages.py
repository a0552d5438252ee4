"""OpenAI-style chat messages become SPEC messages (`modelstream.openai_messages`): each shape
of the Chat Completions history maps to done items, SPEC messages pass through untouched, and
every message that cannot be converted is refused naming it and the accepted shapes."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from modelstream import InvalidMessageError, as_messages
from modelstream.openai_messages import MESSAGE_SHAPES, from_openai_style
from support.messages import assistant, call, image, result, text, user

WEATHER_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
}


@pytest.mark.parametrize(
    ("openai_style", "spec"),
    [
        ({"role": "user", "content": "hi"}, user(text("hi"))),
        ({"role": "assistant", "content": "hello"}, assistant(text("hello"))),
        ({"role": "user", "content": "hi", "name": "ana"}, user(text("hi"))),
        (
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            user(text("a"), text("b")),
        ),
        (
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                ],
            },
            user(text("what is this?"), image("https://example.com/a.png")),
        ),
        (
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}
                ],
            },
            user(image("data:image/png;base64,iVBO")),
        ),
        (
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": "https://e.com/b.jpg"}],
            },
            user(image("https://e.com/b.jpg")),
        ),
        (
            {"role": "assistant", "content": [{"type": "text", "text": "part"}]},
            assistant(text("part")),
        ),
        (
            {"role": "assistant", "content": None, "tool_calls": [WEATHER_CALL]},
            assistant(call("call_1", "get_weather", {"city": "Lisbon"})),
        ),
        (
            {"role": "assistant", "tool_calls": [WEATHER_CALL], "refusal": None, "audio": None},
            assistant(call("call_1", "get_weather", {"city": "Lisbon"})),
        ),
        (
            {"role": "assistant", "content": "Let me look.", "tool_calls": [WEATHER_CALL]},
            assistant(text("Let me look."), call("call_1", "get_weather", {"city": "Lisbon"})),
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "function": {"name": "now", "arguments": ""}}],
            },
            assistant(call("c", "now", {})),
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"x": 1}}}],
            },
            assistant(call("c", "f", {"x": 1})),
        ),
        (
            {"role": "tool", "tool_call_id": "call_1", "content": "21 °C"},
            user(result("call_1", "21 °C")),
        ),
        (
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": [{"type": "text", "text": "21 °C"}, {"type": "text", "text": "sunny"}],
            },
            user(result("call_1", "21 °C\nsunny")),
        ),
    ],
)
def test_each_openai_shape_becomes_its_spec_message(
    openai_style: dict[str, Any], spec: dict[str, Any]
) -> None:
    assert from_openai_style([openai_style]) == [spec]


def test_consecutive_tool_messages_become_one_user_message_of_tool_results() -> None:
    history = [
        {"role": "user", "content": "Weather in Lisbon and Porto?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                WEATHER_CALL,
                {
                    "id": "call_2",
                    "function": {"name": "get_weather", "arguments": '{"city": "Porto"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "21 °C"},
        {"role": "tool", "tool_call_id": "call_2", "content": "18 °C"},
        {"role": "assistant", "content": "21 °C and 18 °C."},
        {"role": "tool", "tool_call_id": "call_3", "content": "late"},
    ]

    assert from_openai_style(history) == [
        user(text("Weather in Lisbon and Porto?")),
        assistant(
            call("call_1", "get_weather", {"city": "Lisbon"}),
            call("call_2", "get_weather", {"city": "Porto"}),
        ),
        user(result("call_1", "21 °C"), result("call_2", "18 °C")),
        assistant(text("21 °C and 18 °C.")),
        user(result("call_3", "late")),
    ]


def test_spec_and_openai_style_messages_mix_and_each_is_converted_on_its_own() -> None:
    spec_turn = user(text("first"))
    spec_results = user(result("call_1", "from SPEC"))
    history = [
        spec_turn,
        {"role": "assistant", "content": None, "tool_calls": [WEATHER_CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21 °C"},
        spec_results,  # a SPEC message ends the run of tool messages
        {"role": "tool", "tool_call_id": "call_1", "content": "again"},
    ]

    converted = from_openai_style(history)

    assert converted[0] is spec_turn and converted[3] is spec_results  # kept, not copied
    assert converted[2] == user(result("call_1", "21 °C"))
    assert converted[4] == user(result("call_1", "again"))
    assert len(converted) == 5


def test_a_list_of_spec_messages_is_returned_as_it_is() -> None:
    history = [user(text("hi")), assistant(text("hello"))]

    assert from_openai_style(history) is history


def test_the_callers_messages_are_not_changed() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": None, "tool_calls": [WEATHER_CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21 °C"},
    ]
    before = copy.deepcopy(history)

    from_openai_style(history)

    assert history == before


def test_values_that_are_not_mappings_are_left_for_the_shape_checks() -> None:
    assert from_openai_style([3, "x", {"role": "user", "content": "hi"}]) == [
        3,
        "x",
        user(text("hi")),
    ]


def test_as_messages_converts_one_message_a_list_and_a_tuple() -> None:
    hi = {"role": "user", "content": "hi"}

    assert as_messages(hi) == [user(text("hi"))]
    assert as_messages([hi, {"role": "assistant", "content": "hello"}]) == [
        user(text("hi")),
        assistant(text("hello")),
    ]
    assert as_messages((hi,)) == [user(text("hi"))]
    assert as_messages({"role": "tool", "tool_call_id": "c", "content": "ok"}) == [
        user(result("c", "ok"))
    ]


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ({"role": "system", "content": "Be brief."}, "has role 'system': the system prompt"),
        ({"role": "developer", "content": "Be brief."}, "config['system_prompt']"),
        ({"role": "function", "name": "f", "content": "x"}, "has role 'function'; use 'user'"),
        ({"role": None, "content": "x"}, "has role None"),
        ({"role": "user"}, "has neither content_items nor content"),
        ({"role": "user", "content": None}, "content must be a str or a list of parts, got None"),
        ({"role": "user", "content": 5}, "got int"),
        ({"role": "user", "content": []}, "(user) is empty: it needs content or tool_calls"),
        ({"role": "assistant", "content": None}, "(assistant) is empty"),
        ({"role": "assistant", "content": None, "tool_calls": []}, "(assistant) is empty"),
        (
            {"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]},
            "content part 0 has type 'input_audio'; a user message's parts may be 'text' and "
            "'image_url'",
        ),
        (
            {"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
            "an assistant message's parts may be 'text'",
        ),
        ({"role": "user", "content": ["hi"]}, "content part 0 has type None"),
        ({"role": "user", "content": [{"type": "text"}]}, "needs 'text' as a str, got None"),
        (
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "ftp://x"}}]},
            "image_url part without an http(s) or data: URL",
        ),
        (
            {"role": "user", "content": [{"type": "image_url", "image_url": {}}]},
            "{'type': 'image_url', 'image_url': {'url': 'https://...'}}",
        ),
        (
            {"role": "user", "content": "hi", "tool_calls": [WEATHER_CALL]},
            "is a user message with tool_calls",
        ),
        ({"role": "assistant", "tool_calls": {"id": "c"}}, "tool_calls must be a list, got dict"),
        (
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]},
            "tool call 0 must be {'id': ..., 'type': 'function', 'function'",
        ),
        (
            {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
            "with a non-empty id and name",
        ),
        (
            {"role": "assistant", "tool_calls": [{"id": "c", "function": "f"}]},
            "tool call 0 must be",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{bad"}}],
            },
            "tool call 0 ('f') has arguments that are not a JSON object: '{bad'",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}],
            },
            "are not a JSON object: '[1]'",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": 7}}],
            },
            "are not a JSON object: 7",
        ),
        ({"role": "tool", "content": "21 °C"}, "(role 'tool') needs the tool_call_id"),
        ({"role": "tool", "tool_call_id": "", "content": "x"}, "needs the tool_call_id"),
        (
            {"role": "tool", "tool_call_id": "c", "content": None},
            "(role 'tool') content must be the result as a str, got None",
        ),
        (
            {
                "role": "tool",
                "tool_call_id": "c",
                "content": [{"type": "image_url", "image_url": "https://e.com/a.png"}],
            },
            "a tool message's parts may be 'text'",
        ),
    ],
)
def test_a_message_that_cannot_be_converted_is_named_with_the_accepted_shapes(
    message: dict[str, Any], words: str
) -> None:
    history = [{"role": "user", "content": "first"}, message]

    with pytest.raises(InvalidMessageError) as raised:
        from_openai_style(history)

    assert str(raised.value).startswith("message 1 ")
    assert words in str(raised.value)
    assert str(raised.value).endswith(MESSAGE_SHAPES)


def test_long_arguments_are_shortened_in_the_error() -> None:
    arguments = '{"text": "' + "x" * 500
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": arguments}}],
    }

    with pytest.raises(InvalidMessageError, match=r"not a JSON object: '\{\"text\": \"x+\.\.\.;"):
        from_openai_style([message])


def test_the_accepted_shapes_are_named_when_a_call_gets_no_message_at_all() -> None:
    with pytest.raises(TypeError, match=re.escape(MESSAGE_SHAPES)):
        as_messages([{"role": "user", "content": "hi"}, 42])  # type: ignore[list-item]
