"""Tool schemas keep what people write: `Annotated` descriptions and constraints (pydantic's
`Field`, annotated_types) become JSON Schema keywords and are enforced before the call, and
datetime, date, time, UUID, Decimal and Path parameters travel as strings and arrive as their
types (modelstream.tools). pydantic stays optional for modelstream; these tests need it."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

import pytest

from modelstream import (
    AsyncClient,
    AsyncConversation,
    Client,
    Conversation,
    ToolArgumentsError,
    ToolDefinitionError,
    tool,
)
from modelstream.testing import Emulator, Reply, Turn

pydantic = pytest.importorskip("pydantic")
annotated_types = pytest.importorskip("annotated_types")
Field = pydantic.Field
Ge, Gt, Interval, Len, MultipleOf, Predicate = (
    annotated_types.Ge,
    annotated_types.Gt,
    annotated_types.Interval,
    annotated_types.Len,
    annotated_types.MultipleOf,
    annotated_types.Predicate,
)

UTC = dt.UTC
OPENING = dt.datetime(2025, 1, 1, tzinfo=UTC)


def schedule(
    starts: dt.datetime,
    day: dt.date,
    at: dt.time,
    booking: uuid.UUID,
    price: Decimal,
    notes: Path,
) -> str:
    """Schedule a visit."""
    return "scheduled"


def test_values_json_writes_as_strings_are_described_with_their_format():
    assert tool(schedule).definition["parameters"] == {
        "type": "object",
        "properties": {
            "starts": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "time"},
            "booking": {"type": "string", "format": "uuid"},
            "price": {
                "anyOf": [{"type": "string", "pattern": r"^-?\d+(\.\d+)?$"}, {"type": "number"}]
            },
            "notes": {"type": "string", "description": "a file system path"},
        },
        "required": ["starts", "day", "at", "booking", "price", "notes"],
        "additionalProperties": False,
    }


def test_strings_arrive_as_datetimes_dates_times_uuids_decimals_and_paths():
    arguments = {
        "starts": "2025-01-31T09:30:00Z",
        "day": "2025-01-31",
        "at": "09:30:00",
        "booking": "123e4567-e89b-12d3-a456-426614174000",
        "price": "12.50",
        "notes": "notes/visit.md",
    }
    received = tool(schedule).validate(arguments)
    assert received == {
        "starts": dt.datetime(2025, 1, 31, 9, 30, tzinfo=UTC),
        "day": dt.date(2025, 1, 31),
        "at": dt.time(9, 30),
        "booking": uuid.UUID("123e4567-e89b-12d3-a456-426614174000"),
        "price": Decimal("12.50"),
        "notes": Path("notes/visit.md"),
    }
    assert str(received["price"]) == "12.50"  # every digit as written


@pytest.mark.parametrize(
    ("written", "arrives"),
    [
        ("2025-01-31T09:30:00Z", dt.datetime(2025, 1, 31, 9, 30, tzinfo=UTC)),
        ("2025-01-31T09:30:00z", dt.datetime(2025, 1, 31, 9, 30, tzinfo=UTC)),
        (
            "2025-01-31T09:30:00+02:00",
            dt.datetime(2025, 1, 31, 9, 30, tzinfo=dt.timezone(dt.timedelta(hours=2))),
        ),
        ("2025-01-31T09:30:00", dt.datetime(2025, 1, 31, 9, 30)),
    ],
)
def test_a_date_time_may_end_in_z_for_utc_or_give_an_offset_or_none(written, arrives):
    checked = tool(schedule).validate(
        {
            "starts": written,
            "day": "2025-01-31",
            "at": "10:00Z",
            "booking": "123e4567e89b12d3a456426614174000",
            "price": 3,
            "notes": "/tmp/x",
        }
    )
    assert checked["starts"] == arrives
    assert checked["starts"].tzinfo == arrives.tzinfo
    assert checked["at"] == dt.time(10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("written", "arrives"),
    [("0.10", Decimal("0.10")), (0.1, Decimal("0.1")), (7, Decimal(7)), ("-3", Decimal(-3))],
)
def test_a_decimal_arrives_exact_from_a_string_or_a_number(written, arrives):
    checked = tool(schedule).validate(
        {
            "starts": "2025-01-31",
            "day": "2025-01-31",
            "at": "10:00",
            "booking": "123e4567-e89b-12d3-a456-426614174000",
            "price": written,
            "notes": "x",
        }
    )
    assert checked["price"] == arrives
    assert str(checked["price"]) == str(arrives)


def test_a_string_that_is_not_its_format_is_refused_with_the_form_to_write():
    good = {
        "starts": "2025-01-31T09:30:00Z",
        "day": "2025-01-31",
        "at": "09:30",
        "booking": "123e4567-e89b-12d3-a456-426614174000",
        "price": "1",
        "notes": "x",
    }
    refusals = {
        "starts": (
            "tomorrow",
            '`starts`: "tomorrow" is not a date-time: write it like '
            '"2025-01-31T09:30:00Z" (ISO 8601)',
        ),
        "day": (
            "2025-01-31T09:30:00",
            '`day`: "2025-01-31T09:30:00" is not a date: write it like "2025-01-31" (ISO 8601)',
        ),
        "at": ("half past nine", '`at`: "half past nine" is not a time: write it like '),
        "booking": (
            "42",
            '`booking`: "42" is not a UUID: write it like "123e4567-e89b-12d3-a456-426614174000"',
        ),
        "price": ("1,50", '`price`: "1,50" does not match'),
    }
    for name, (written, problem) in refusals.items():
        with pytest.raises(ToolArgumentsError) as raised:
            tool(schedule).validate({**good, name: written})
        assert len(raised.value.problems) == 1
        assert raised.value.problems[0].startswith(problem), raised.value.problems


def count(
    guests: Annotated[int, Field(ge=1, le=12, description="How many people come.")],
    name: Annotated[str, Field(min_length=2, max_length=20, pattern="^[A-Z]", title="Name")],
    tags: Annotated[list[str], Field(max_length=3, examples=[["window"]])],
    share: Annotated[float, Interval(gt=0, lt=1), MultipleOf(0.05)] = 0.5,
    extras: Annotated[dict[str, int], Len(1, 2)] | None = None,
) -> str:
    """Count a booking.

    Args:
        guests: The docstring's words, which the Field's description replaces.
        name: Whose booking it is.
    """
    return f"{guests} {name} {tags} {share} {extras}"


def test_field_and_annotated_types_constraints_become_json_schema_keywords():
    assert tool(count).definition["parameters"] == {
        "type": "object",
        "properties": {
            "guests": {
                "type": "integer",
                "minimum": 1,
                "maximum": 12,
                "description": "How many people come.",
            },
            "name": {
                "type": "string",
                "minLength": 2,
                "maxLength": 20,
                "pattern": "^[A-Z]",
                "title": "Name",
                "description": "Whose booking it is.",
            },
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "maxItems": 3,
                "examples": [["window"]],
            },
            "share": {
                "type": "number",
                "exclusiveMinimum": 0,
                "exclusiveMaximum": 1,
                "multipleOf": 0.05,
                "default": 0.5,
            },
            "extras": {
                "anyOf": [
                    {
                        "type": "object",
                        "additionalProperties": {"type": "integer"},
                        "minProperties": 1,
                        "maxProperties": 2,
                    },
                    {"type": "null"},
                ],
                "default": None,
            },
        },
        "required": ["guests", "name", "tags"],
        "additionalProperties": False,
    }


def test_arguments_that_break_a_constraint_are_refused_naming_it():
    with pytest.raises(ToolArgumentsError) as raised:  # raised before the function runs
        tool(count).call(
            {
                "guests": 0,
                "name": "ann",
                "tags": ["a", "b", "c", "d"],
                "share": 0.33,
                "extras": {"a": 1, "b": 2, "c": 3},
            }
        )
    assert raised.value.problems == [
        "`guests`: must be at least 1, not 0",
        "`name`: \"ann\" does not match '^[A-Z]'",
        "`tags`: takes at most 3 items",
        "`share`: must be a multiple of 0.05, not 0.33",
        "`extras`: takes at most 2 entries",
    ]


def test_arguments_within_the_constraints_reach_the_function():
    assert (
        tool(count).call({"guests": 12, "name": "Ann", "tags": [], "share": 0.35})
        == "12 Ann [] 0.35 None"
    )


def test_an_annotated_description_wins_over_the_docstring_and_a_plain_string_counts_too():
    def note(
        text: Annotated[str, "What to write down."],
        title: Annotated[str, Field(description="A short heading.")] = "",
        author: str = "",
    ) -> None:
        """Keep a note.

        Args:
            text: Overruled by the Annotated text.
            title: Overruled by the Field's description.
            author: Who wrote it.
        """

    assert tool(note).definition["parameters"]["properties"] == {
        "text": {"type": "string", "description": "What to write down."},
        "title": {"type": "string", "description": "A short heading.", "default": ""},
        "author": {"type": "string", "description": "Who wrote it.", "default": ""},
    }


def test_a_constraint_on_an_optional_value_bounds_its_non_null_arm():
    def page(
        size: Annotated[int | None, Field(ge=1)] = None,
        offset: Annotated[int, Ge(0)] | None = None,
    ) -> str:
        return f"{size} {offset}"

    properties = tool(page).definition["parameters"]["properties"]
    assert properties["size"] == {
        "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
        "default": None,
    }
    assert properties["offset"] == properties["size"] | {
        "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]
    }
    assert tool(page).call({"size": None, "offset": 0}) == "None 0"
    with pytest.raises(ToolArgumentsError) as raised:
        tool(page).validate({"size": 0, "offset": -1})
    assert raised.value.problems == [
        "`size`: must be at least 1, not 0",
        "`offset`: must be at least 0, not -1",
    ]


def test_a_default_given_in_field_makes_the_argument_optional_and_is_passed_when_left_out():
    def repeat(
        word: str,
        *,
        times: Annotated[int, Field(default=2, ge=1)],
        separators: Annotated[list[str], Field(default_factory=lambda: [" "])],
    ) -> str:
        return separators[0].join([word] * times)

    parameters = tool(repeat).definition["parameters"]
    assert parameters["properties"]["times"] == {"type": "integer", "minimum": 1, "default": 2}
    assert parameters["required"] == ["word"]
    assert tool(repeat).call({"word": "ha"}) == "ha ha"
    assert tool(repeat).call({"word": "ha", "times": 3, "separators": ["-"]}) == "ha-ha-ha"


@dataclass
class Slot:
    """A time the room is free."""

    starts: Annotated[dt.datetime, Ge(OPENING)]
    price: Annotated[Decimal, Field(ge=0, max_digits=5, decimal_places=2)] = Decimal(0)


class Room(TypedDict):
    name: Annotated[str, Predicate(str.isupper)]
    slots: list[Slot]


def book(room: Room, when: dt.datetime | Literal["now"] = "now") -> str:
    """Book a room."""
    return f"{room['name']} {[(s.starts, s.price) for s in room['slots']]} {when}"


def test_bounds_json_schema_cannot_state_are_checked_after_conversion_with_their_path():
    with pytest.raises(ToolArgumentsError) as raised:
        tool(book).validate(
            {
                "room": {
                    "name": "A",
                    "slots": [{"starts": "2025-02-01T08:00Z"}, {"starts": "2024-12-31T08:00Z"}],
                }
            }
        )
    assert raised.value.problems == [
        "`room.slots[1].starts`: must be at least 2025-01-01T00:00:00+00:00, "
        "not 2024-12-31T08:00:00+00:00"
    ]
    starts = "2025-02-01T08:00Z"
    refusals = [
        ({"starts": starts, "price": "-0.5"}, "must be at least 0, not -0.5"),
        ({"starts": starts, "price": "10000.5"}, "must have at most 5 digits, not 10000.5"),
        ({"starts": starts, "price": 1.005}, "must have at most 2 decimal places, not 1.005"),
    ]
    for slot, problem in refusals:
        with pytest.raises(ToolArgumentsError) as raised:
            tool(book).validate({"room": {"name": "A", "slots": [slot]}})
        assert raised.value.problems == [f"`room.slots[0].price`: {problem}"]


def test_a_predicate_is_checked_and_a_value_in_range_arrives_converted():
    with pytest.raises(ToolArgumentsError) as raised:
        tool(book).validate({"room": {"name": "a", "slots": []}})
    assert raised.value.problems == ['`room.name`: "a" does not pass the check str.isupper']
    arguments = tool(book).validate(
        {"room": {"name": "A", "slots": [{"starts": "2025-01-01T00:00:00Z", "price": "99.90"}]}}
    )
    assert arguments["room"]["slots"] == [Slot(OPENING, Decimal("99.90"))]


def test_a_union_of_a_datetime_and_a_string_gives_a_string_that_is_no_date_to_the_string():
    assert tool(book).validate({"room": {"name": "A", "slots": []}, "when": "now"})["when"] == "now"
    assert tool(book).validate(
        {"room": {"name": "A", "slots": []}, "when": "2025-03-01T12:00:00Z"}
    )["when"] == dt.datetime(2025, 3, 1, 12, tzinfo=UTC)
    with pytest.raises(ToolArgumentsError) as raised:
        tool(book).validate({"room": {"name": "A", "slots": []}, "when": "later"})
    assert raised.value.problems == [
        '`when`: "later" is not a date-time: write it like "2025-01-31T09:30:00Z" (ISO 8601)'
    ]


def ge_on_a_string(x: Annotated[str, Field(ge=0)]) -> None: ...
def renamed(x: Annotated[int, Field(alias="count")]) -> None: ...
def validated(x: Annotated[int, pydantic.AfterValidator(abs)]) -> None: ...
def bounded_optional_date(x: Annotated[dt.date | None, Field(ge=dt.date(2025, 1, 1))]) -> None: ...
def number_bound_on_a_date(x: Annotated[dt.date, Field(ge=0)]) -> None: ...
def lowered(x: Annotated[str, pydantic.StringConstraints(to_lower=True)]) -> None: ...
def digits_of_an_int(x: Annotated[int, Field(max_digits=3)]) -> None: ...
def zoned(x: Annotated[dt.datetime, annotated_types.Timezone(...)]) -> None: ...


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (ge_on_a_string, "ge=0 bounds a number, a Decimal, a date or a time, not a string"),
        (renamed, r"Field\(alias=...\) would give the argument another name"),
        (validated, r"AfterValidator\(.*\) is not understood in a tool's Annotated hint"),
        (bounded_optional_date, "not null or a string; put the Annotated on the part it bounds"),
        (number_bound_on_a_date, "ge=0 cannot bound a date: give a date as the bound"),
        (lowered, "to_lower=True would change the value before the call"),
        (digits_of_an_int, "max_digits=3 counts the digits of a Decimal only"),
        (zoned, r"Timezone\(tz=Ellipsis\) is not understood"),
    ],
)
def test_an_annotation_that_could_not_be_enforced_is_refused_when_the_tool_is_made(
    function, message
):
    with pytest.raises(ToolDefinitionError, match=f"parameter 'x' of tool '{function.__name__}'"):
        tool(function)
    with pytest.raises(ToolDefinitionError, match=message):
        tool(function)


class Option:
    """Another library's marker (a command-line option, say)."""


def test_other_libraries_markers_in_annotated_are_left_alone():
    def greet(name: Annotated[str, Option(), "Who to greet."]) -> str:
        return f"hello {name}"

    assert tool(greet).definition["parameters"]["properties"] == {
        "name": {"type": "string", "description": "Who to greet."}
    }


reservations: list[tuple[dt.datetime, int]] = []  # what `reserve` was called with


def reserve(
    starts: Annotated[dt.datetime, Field(description="When the table is needed.")],
    guests: Annotated[int, Field(ge=1, le=8)],
) -> str:
    """Reserve a table."""
    reservations.append((starts, guests))
    return f"table for {guests} at {starts.isoformat()}"


def run_reservation(mode: str, emu: Emulator) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    options: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "api_key": "sk-test-tools",
        "base_url": emu.base_url("anthropic-messages"),
    }
    if mode == "sync":
        with Client(**options) as client:
            chat = Conversation(client)
            return chat.run("A table for 2 at 19:30?", [reserve]), chat.history  # type: ignore[return-value]

    async def main() -> Any:
        async with AsyncClient(**options) as client:
            chat = AsyncConversation(client)
            return await chat.run("A table for 2 at 19:30?", [reserve]), chat.history

    return asyncio.run(main())  # type: ignore[no-any-return]


def test_the_tool_loop_passes_a_datetime_and_a_constrained_int_converted(mode, emu):
    reservations.clear()
    emu.queue(
        Reply.turn(Turn.tool_call("reserve", {"starts": "2025-06-01T19:30:00Z", "guests": 9})),
        Reply.turn(Turn.tool_call("reserve", {"starts": "2025-06-01T19:30:00Z", "guests": 2})),
        Reply.turn(Turn.text("Booked.")),
    )
    final, history = run_reservation(mode, emu)
    assert [item["text"] for item in final["content_items"] if item["type"] == "text.done"] == [
        "Booked."
    ]
    assert reservations == [(dt.datetime(2025, 6, 1, 19, 30, tzinfo=UTC), 2)]  # the 9 never ran
    results = [
        item["text"]
        for message in history
        for item in message["content_items"]
        if item["type"] == "tool_result.done"
    ]
    assert results == [
        "error: the arguments of tool 'reserve' do not fit its parameters: "
        "`guests`: must be at most 8, not 9. Call it again with arguments that fit.",
        "table for 2 at 2025-06-01T19:30:00+00:00",
    ]
    offered = emu.requests[0].json["tools"][0]["input_schema"]["properties"]
    assert offered == {
        "starts": {
            "type": "string",
            "format": "date-time",
            "description": "When the table is needed.",
        },
        "guests": {"type": "integer", "minimum": 1, "maximum": 8},
    }
