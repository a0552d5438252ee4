"""Structured answers (docs/structured-output.md) over the emulator, for every streaming
protocol: `response_format` takes a pydantic model, a dataclass, a TypedDict or a JSON schema;
each protocol sends it in its native field, in the form its provider takes; the final answer is
`message.parsed`, and a text that is no JSON, a failed validator, a refusal (where a protocol
has one), a cut-off answer and one the provider stopped each raise their error with the raw
text; partial objects grow as prefixes of the final value, under any chunking of the wire."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
from collections.abc import Callable
from typing import Any, Literal, TypedDict

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, field_validator

from modelstream import (
    AsyncClient,
    Client,
    InvalidConfigError,
    StructuredOutputCutOffError,
    StructuredOutputError,
    StructuredOutputRefusedError,
    StructuredOutputStoppedError,
)
from modelstream.structured.output import output_type
from modelstream.structured.streaming import PartialReader
from modelstream.testing import Emulator, Reply, Turn
from support import require_corpus

PROTOCOLS = {
    "openai-chat": "gpt-5-mini",
    "openai-responses": "gpt-5-mini",
    "anthropic-messages": "claude-sonnet-4-5",
    "gemini-generate-content": "gemini-2.5-flash",
    "gemini-interactions": "gemini-2.5-flash",
    "bedrock-converse-stream": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
}


class Line(BaseModel):
    sku: str
    qty: int = Field(ge=1, description="how many")


class Order(BaseModel):
    """An order as the shop keeps it."""

    customer: str
    status: Literal["pending", "shipped"]
    lines: list[Line]
    note: str | None = None

    @field_validator("customer")
    @classmethod
    def named(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the customer needs a name")
        return value


ORDER = {
    "customer": "Ada Lovelace",
    "status": "pending",
    "lines": [{"sku": "A-1", "qty": 2}, {"sku": "B-7", "qty": 1}],
}


@dataclasses.dataclass
class Weather:
    city: str
    celsius: float
    windy: bool = False


class Place(TypedDict):
    name: str
    country: str


def client(emu: Emulator, protocol: str) -> Client:
    return Client(
        PROTOCOLS[protocol], base_url=emu.base_url(protocol), api_key="k", client_type=protocol
    )


def sent(emu: Emulator) -> dict[str, Any]:
    body: dict[str, Any] = orjson.loads(emu.requests[-1].body)
    return body


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_pydantic_answer_is_parsed_into_the_model(emu: Emulator, protocol: str) -> None:
    emu.queue(Reply.turn(Turn.text(json.dumps(ORDER)), fragment_size=4))
    with client(emu, protocol) as c:
        message = c.complete("the order?", response_format=Order)

    assert isinstance(message.parsed, Order)
    assert message.parsed == Order.model_validate(ORDER)
    assert message.text == json.dumps(ORDER)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_partial_objects_grow_as_prefixes_of_the_final_value(emu: Emulator, protocol: str) -> None:
    emu.queue(Reply.turn(Turn.text(json.dumps(ORDER)), fragment_size=3))
    with client(emu, protocol) as c, c.stream("the order?", response_format=Order) as stream:
        steps = [(copy.deepcopy(p.value), p.open_path) for p in stream.partial_objects]
        final = stream.get_final_message()

    assert len(steps) > 10
    assert all(is_prefix(value, ORDER) for value, _ in steps)
    assert {value.get("status") for value, _ in steps} <= {None, "pending"}  # never "pen"
    assert steps[-1] == (ORDER, None)
    assert final.parsed == Order.model_validate(ORDER)


def test_elements_yields_each_line_once_it_is_complete(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text(json.dumps(ORDER)), fragment_size=2))
    with client(emu, "openai-chat") as c, c.stream("the order?", response_format=Order) as stream:
        lines = list(stream.elements("lines"))

    assert lines == ORDER["lines"]


def test_a_partial_instance_of_a_pydantic_model_is_built_without_its_validators() -> None:
    reader = PartialReader(output_type(Order))  # type: ignore[arg-type]
    partial = reader.feed(delta('{"customer": "", "lines": [{"sku": "A-'))

    assert partial is not None
    instance = partial.instance
    assert isinstance(instance, Order) and instance.customer == ""  # the validator waits
    assert instance.lines[0].sku == "A-"
    assert not partial.is_complete(("lines", 0, "sku"))
    assert partial.is_complete(("customer",))


def test_a_dataclass_and_a_typeddict_are_answers_too(emu: Emulator) -> None:
    emu.queue(
        Reply.turn(Turn.text('{"city": "Lisbon", "celsius": 21.5}')),
        Reply.turn(Turn.text('{"name": "Porto", "country": "PT"}')),
    )
    with client(emu, "anthropic-messages") as c:
        weather = c.complete("weather?", response_format=Weather).parsed
        place = c.complete("where?", response_format=Place).parsed

    assert weather == Weather("Lisbon", 21.5)
    assert place == {"name": "Porto", "country": "PT"}


def test_a_json_schema_dict_answer_is_checked_and_kept_as_json(emu: Emulator) -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0}},
        "required": ["n"],
    }
    emu.queue(Reply.turn(Turn.text('{"n": 3}')), Reply.turn(Turn.text('{"n": -1}')))
    with client(emu, "gemini-generate-content") as c:
        assert c.complete("n?", response_format=schema).parsed == {"n": 3}
        with pytest.raises(StructuredOutputError) as raised:
            c.complete("n?", response_format=schema)

    assert raised.value.text == '{"n": -1}'
    assert raised.value.problems and "n" in raised.value.problems[0]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_text_that_is_no_json_raises_with_the_raw_text(emu: Emulator, protocol: str) -> None:
    emu.queue(Reply.turn(Turn.text("Sorry, here it is: {customer: Ada")))
    with client(emu, protocol) as c, pytest.raises(StructuredOutputError) as raised:
        c.complete("the order?", response_format=Order)

    assert type(raised.value) is StructuredOutputError
    assert raised.value.text == "Sorry, here it is: {customer: Ada"
    assert "not the JSON of a Order" in str(raised.value)
    assert raised.value.message is not None and raised.value.message.usage


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_failed_validator_raises_with_its_problem(emu: Emulator, protocol: str) -> None:
    answer = json.dumps({**ORDER, "customer": " "})
    emu.queue(Reply.turn(Turn.text(answer), fragment_size=5))
    with client(emu, protocol) as c, pytest.raises(StructuredOutputError) as raised:
        c.complete("the order?", response_format=Order)

    assert raised.value.problems == ["customer: Value error, the customer needs a name"]
    assert raised.value.text == answer


def test_a_bound_the_provider_could_not_enforce_is_enforced_at_the_end(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text(json.dumps({**ORDER, "lines": [{"sku": "A", "qty": 0}]}))))
    with client(emu, "anthropic-messages") as c, pytest.raises(StructuredOutputError) as raised:
        c.complete("the order?", response_format=Order)

    # Anthropic is sent no bounds; the answer is still checked against them
    assert "minimum" not in json.dumps(sent(emu)["output_config"])
    assert any("qty" in problem for problem in raised.value.problems)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_cut_off_answer_is_never_parsed(emu: Emulator, protocol: str) -> None:
    emu.queue(Reply.turn(Turn.text('{"customer": "Ada", "status": "pend', finish="length")))
    with client(emu, protocol) as c, pytest.raises(StructuredOutputCutOffError) as raised:
        c.complete("the order?", response_format=Order)

    assert "raise max_tokens" in str(raised.value)
    assert raised.value.text == '{"customer": "Ada", "status": "pend'


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_an_answer_the_provider_stopped_is_never_parsed_even_when_whole(
    emu: Emulator, protocol: str
) -> None:
    """A content filter, safety or a guardrail (`finish_reason` "unknown") may let through JSON
    that fits; it is still not the model's finished answer."""
    emu.queue(Reply.turn(Turn.text(json.dumps(ORDER), finish="unknown")))
    with client(emu, protocol) as c, pytest.raises(StructuredOutputStoppedError) as raised:
        c.complete("the order?", response_format=Order)

    assert raised.value.text == json.dumps(ORDER)
    assert raised.value.reason  # the provider's own word, as the stream result keeps it
    assert f"({raised.value.reason})" in str(raised.value)


def chat_refusal() -> str:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5-mini"}
    frames = [
        {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "refusal": ""}}]},
        {**chunk, "choices": [{"index": 0, "delta": {"refusal": "I can't help with that."}}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    return "".join(f"data: {json.dumps(frame)}\n\n" for frame in frames) + "data: [DONE]\n\n"


def responses_refusal() -> str:
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress"}
    part = {"type": "refusal", "refusal": "I can't help with that."}
    response = {"id": "resp_1", "object": "response", "model": "gpt-5-mini", "output": []}
    usage = {"input_tokens": 5, "output_tokens": 6, "total_tokens": 11}
    events = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {
            "type": "response.content_part.added",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "refusal", "refusal": ""},
        },
        *(
            {
                "type": "response.refusal.delta",
                "item_id": "msg_1",
                "output_index": 0,
                "content_index": 0,
                "delta": piece,
            }
            for piece in ("I can't ", "help with that.")
        ),
        {
            "type": "response.refusal.done",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "refusal": part["refusal"],
        },
        {
            "type": "response.content_part.done",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "part": part,
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**item, "status": "completed", "content": [part]},
        },
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "usage": usage},
        },
    ]
    return "".join(
        f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': n})}\n\n"
        for n, event in enumerate(events)
    )


def anthropic_refusal() -> str:
    """A recorded-shape refusal: the `refusal` stop reason after an empty text block."""
    capture = require_corpus() / "anthropic-messages" / "anthropicsdk-refusal-handwritten.sse"
    return capture.read_text()


@pytest.mark.parametrize(
    ("protocol", "body", "text"),
    [
        ("openai-chat", chat_refusal, "I can't help with that."),
        ("openai-responses", responses_refusal, "I can't help with that."),
        ("anthropic-messages", anthropic_refusal, ""),
    ],
)
def test_a_refusal_is_its_own_error(
    emu: Emulator, protocol: str, body: Callable[[], str], text: str
) -> None:
    """Each protocol that has a refusal (the others' model has no word for it: a provider that
    stops an answer is the stopped error above)."""
    emu.queue(Reply.body(body(), content_type="text/event-stream"))
    with client(emu, protocol) as c, pytest.raises(StructuredOutputRefusedError) as raised:
        c.complete("the order?", response_format=Order)

    assert raised.value.text == text
    assert "refused to answer as a Order" in str(raised.value)


def test_an_answer_in_a_markdown_fence_is_read(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("```json\n" + json.dumps(ORDER) + "\n```"), fragment_size=5))
    with client(emu, "openai-chat") as c, c.stream("the order?", response_format=Order) as stream:
        last = [copy.deepcopy(p.value) for p in stream.partial_objects][-1]

    assert last == ORDER
    assert stream.get_final_message().parsed == Order.model_validate(ORDER)


def test_the_async_stream_reads_partials_and_the_parsed_answer(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text(json.dumps(ORDER)), fragment_size=6))

    async def run() -> tuple[int, Any]:
        async with AsyncClient(
            "claude-sonnet-4-5", base_url=emu.base_url("anthropic-messages"), api_key="k"
        ) as c:
            stream = c.stream("the order?", response_format=Order)
            async with stream:
                count = 0
                async for _ in stream.partial_objects:
                    count += 1
                return count, (await stream.get_final_message()).parsed

    count, parsed = asyncio.run(run())
    assert count > 5 and parsed == Order.model_validate(ORDER)


def test_partial_objects_without_a_response_format_say_what_they_need(emu: Emulator) -> None:
    with (
        client(emu, "openai-chat") as c,
        c.stream("hi") as stream,
        pytest.raises(TypeError, match="response_format"),
    ):
        list(stream.partial_objects)


def test_a_class_that_is_no_answer_type_is_refused_before_sending(emu: Emulator) -> None:
    class Plain:
        pass

    with client(emu, "openai-chat") as c, pytest.raises(InvalidConfigError, match="Plain"):
        c.complete("hi", response_format=Plain)
    assert emu.requests == []


# --- each protocol's request ---------------------------------------------------------------


def test_openai_gets_the_strict_form_of_the_schema(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text(json.dumps(ORDER))), Reply.turn(Turn.text(json.dumps(ORDER))))
    with client(emu, "openai-chat") as c:
        c.complete("the order?", response_format=Order)
    chat = sent(emu)["response_format"]
    with client(emu, "openai-responses") as c:
        c.complete("the order?", response_format=Order)
    responses = sent(emu)["text"]["format"]

    assert chat["type"] == "json_schema" and chat["json_schema"]["strict"] is True
    assert responses["strict"] is True and responses["name"] == "Order"
    for schema in (chat["json_schema"]["schema"], responses["schema"]):
        assert schema["required"] == ["customer", "status", "lines", "note"]  # all of them
        assert schema["additionalProperties"] is False
        assert schema["$defs"]["Line"]["additionalProperties"] is False
        assert "default" not in json.dumps(schema)  # strict mode takes no defaults
        assert schema["properties"]["note"]["anyOf"][-1] == {"type": "null"}


def test_an_optional_field_a_strict_provider_wrote_as_null_is_left_out(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text('{"city": "Oslo", "celsius": -3, "windy": null}')))
    with client(emu, "openai-chat") as c:
        assert c.complete("weather?", response_format=Weather).parsed == Weather("Oslo", -3)


def test_anthropic_gets_closed_objects_without_bounds(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text(json.dumps(ORDER))))
    with client(emu, "anthropic-messages") as c:
        c.complete("the order?", response_format=Order)

    schema = sent(emu)["output_config"]["format"]["schema"]
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["Line"]["additionalProperties"] is False
    assert "minimum" not in schema["$defs"]["Line"]["properties"]["qty"]


def test_gemini_gets_the_json_schema_and_the_json_mime_type(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text(json.dumps(ORDER))))
    with client(emu, "gemini-generate-content") as c:
        c.complete("the order?", response_format=Order)

    generation = sent(emu)["generationConfig"]
    assert generation["responseMimeType"] == "application/json"
    assert generation["responseJsonSchema"]["properties"]["status"]["enum"] == [
        "pending",
        "shipped",
    ]


def test_interactions_gets_the_schema_in_its_json_text_format(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text(json.dumps(ORDER))))
    with client(emu, "gemini-interactions") as c:
        c.complete("the order?", response_format=Order)

    text_format = sent(emu)["response_format"]
    assert text_format["type"] == "text" and text_format["mime_type"] == "application/json"
    assert text_format["schema"]["properties"]["status"]["enum"] == ["pending", "shipped"]
    assert set(text_format["schema"]["required"]) == {"customer", "status", "lines"}


def test_bedrock_gets_a_closed_schema_as_json_text_in_its_output_config(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text(json.dumps(ORDER))))
    with client(emu, "bedrock-converse-stream") as c:
        c.complete("the order?", response_format=Order)

    text_format = sent(emu)["outputConfig"]["textFormat"]
    assert text_format["type"] == "json_schema"
    structure = text_format["structure"]["jsonSchema"]
    assert structure["name"] == "Order"
    schema = json.loads(structure["schema"])  # Converse takes the schema as a JSON string
    assert schema["additionalProperties"] is False
    assert schema["properties"]["status"]["enum"] == ["pending", "shipped"]


# --- partial objects under any chunking -------------------------------------------------------

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def delta(text: str) -> Any:
    return {
        "role": "assistant",
        "event_type": "delta",
        "content_items": [{"type": "text.delta", "text": text}],
        "usage_metadata": None,
        "finish_reason": None,
        "created_at": 0,
    }


@settings(max_examples=150, deadline=None)
@given(value=st.dictionaries(st.text(max_size=6), _json, max_size=5), data=st.data())
def test_every_partial_is_a_prefix_of_the_final_value_under_any_chunking(
    value: dict[str, Any], data: st.DataObject
) -> None:
    text = json.dumps(value)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=30)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    reader = PartialReader(output_type({"type": "object"}))  # type: ignore[arg-type]

    for piece in pieces:
        partial = reader.feed(delta(piece))
        if partial is not None:
            assert is_prefix(copy.deepcopy(partial.value), value)

    assert reader.parser.done and reader.parser.value == value


NUMBERS = {
    "customer": "Grace Hopper",
    "status": "shipped",
    "lines": [{"sku": "C-12", "qty": 1234}, {"sku": "D-3", "qty": 56}],
    "note": "leave at the door",
}


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(fragment=st.integers(1, 9), chunk=st.integers(1, 97))
def test_partials_over_the_wire_are_prefixes_under_any_chunking(
    emu: Emulator, protocol: str, fragment: int, chunk: int
) -> None:
    """Each protocol's stream, its text in fragments of any size and its bytes in chunks of any
    size: every partial is a prefix of the final value, a number or an enum value shows only
    once it is whole, and the end is the validated answer."""
    text = json.dumps(NUMBERS)
    emu.queue(Reply.turn(Turn.text(text), fragment_size=fragment, chunk_size=chunk))
    with client(emu, protocol) as c, c.stream("the order?", response_format=Order) as stream:
        steps = [copy.deepcopy(p.value) for p in stream.partial_objects]
        final = stream.get_final_message()

    assert steps and steps[-1] == NUMBERS
    assert all(is_prefix(value, NUMBERS) for value in steps)
    assert {value.get("status") for value in steps} <= {None, "shipped"}
    quantities = {line.get("qty") for value in steps for line in value.get("lines", [])}
    assert quantities <= {None, 1234, 56}
    assert final.parsed == Order.model_validate(NUMBERS)


def is_prefix(partial: Any, final: Any) -> bool:
    """Whether `partial` is what a prefix of `final`'s JSON shows (containers: a prefix of the
    keys or elements, each complete but the last; strings: a prefix; scalars: equal)."""
    if isinstance(final, dict):
        keys = list(partial) if isinstance(partial, dict) else None
        if keys is None or keys != list(final)[: len(keys)]:
            return False
        return all(partial[k] == final[k] for k in keys[:-1]) and (
            not keys or is_prefix(partial[keys[-1]], final[keys[-1]])
        )
    if isinstance(final, list):
        if not isinstance(partial, list) or len(partial) > len(final):
            return False
        return all(a == b for a, b in zip(partial[:-1], final, strict=False)) and (
            not partial or is_prefix(partial[-1], final[len(partial) - 1])
        )
    if isinstance(final, str):
        return isinstance(partial, str) and final.startswith(partial)
    return type(partial) is type(final) and partial == final


# --- strict tools ------------------------------------------------------------------------------


def forecast(city: str, days: int = 3) -> str:
    """The forecast for a city."""
    return f"{city}: {days} days"


def test_a_strict_tool_is_sent_in_strict_form_and_its_nulls_mean_left_out(emu: Emulator) -> None:
    from modelstream import tool

    strict = tool(forecast, strict=True)
    emu.queue(Reply.turn(Turn.text("ok")), Reply.turn(Turn.text("ok")))
    with client(emu, "openai-chat") as c:
        c.complete("weather?", tools=[strict])
    chat = sent(emu)["tools"][0]["function"]
    with client(emu, "anthropic-messages") as c:
        c.complete("weather?", tools=[strict])
    anthropic = sent(emu)["tools"][0]

    assert chat["strict"] is True
    assert chat["parameters"]["required"] == ["city", "days"]
    assert chat["parameters"]["properties"]["days"]["anyOf"][-1] == {"type": "null"}
    assert anthropic["strict"] is True
    assert anthropic["input_schema"]["additionalProperties"] is False
    # the model's null for `days` is the parameter left out: its default is used
    assert strict.call({"city": "Oslo", "days": None}) == "Oslo: 3 days"
