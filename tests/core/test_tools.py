"""Tools from plain functions: each schema is compared with one written by hand, and a call's
arguments are checked and converted before the function runs (modelstream.tools)."""

from __future__ import annotations

import asyncio
import enum
import functools
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelstream import FunctionTool, ToolArgumentsError, ToolDefinitionError, tool
from modelstream.tools import config_with_tool_definitions


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@dataclass
class Coordinates:
    latitude: float
    longitude: float


@dataclass
class Place:
    """A place to forecast.

    Attributes:
        name: What people call it.
        at: Where it is.
    """

    name: str
    at: Coordinates
    aliases: list[str] = field(default_factory=list)


class Window(TypedDict):
    """Hours of the day, both included."""

    start: int
    end: NotRequired[int]


def forecast(
    places: list[Place], unit: Unit, window: Window, ranges: dict[str, tuple[float, float]]
) -> str:
    """Forecast the weather.

    Args:
        places: The places, in order.
        unit: The temperature
            unit.
        window: The hours to cover.
        ranges: The expected (low, high) by place name.

    Returns:
        The forecast as text.
    """
    return f"{places} {unit} {window} {ranges}"


FORECAST_SCHEMA = {
    "name": "forecast",
    "description": "Forecast the weather.",
    "parameters": {
        "type": "object",
        "properties": {
            "places": {
                "type": "array",
                "items": {
                    "type": "object",
                    "description": "A place to forecast.",
                    "properties": {
                        "name": {"type": "string", "description": "What people call it."},
                        "at": {
                            "type": "object",
                            "properties": {
                                "latitude": {"type": "number"},
                                "longitude": {"type": "number"},
                            },
                            "required": ["latitude", "longitude"],
                            "additionalProperties": False,
                            "description": "Where it is.",
                        },
                        "aliases": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["name", "at"],
                    "additionalProperties": False,
                },
                "description": "The places, in order.",
            },
            "unit": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "description": "The temperature unit.",
            },
            "window": {
                "type": "object",
                "description": "The hours to cover.",
                "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
                "required": ["start"],
                "additionalProperties": False,
            },
            "ranges": {
                "type": "object",
                "additionalProperties": {
                    "type": "array",
                    "prefixItems": [{"type": "number"}, {"type": "number"}],
                    "minItems": 2,
                    "maxItems": 2,
                },
                "description": "The expected (low, high) by place name.",
            },
        },
        "required": ["places", "unit", "window", "ranges"],
        "additionalProperties": False,
    },
}


def search(
    query: str,
    limit: int = 10,
    language: Literal["en", "pt"] | None = None,
    tags: Optional[list[str]] = None,  # noqa: UP045 (the spelling under test)
    exact: bool = False,
) -> list[str]:
    """Search the archive.

    Only the newest version of each page is searched.

    :param query: What to look for.
    :param limit: How many results at most.
    :param language: Only pages in this language.
    """
    return [f"{query} {limit} {language} {tags} {exact}"]


SEARCH_SCHEMA = {
    "name": "search",
    "description": "Search the archive.\n\nOnly the newest version of each page is searched.",
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": "integer", "description": "How many results at most.", "default": 10},
            "language": {
                "anyOf": [{"type": "string", "enum": ["en", "pt"]}, {"type": "null"}],
                "description": "Only pages in this language.",
                "default": None,
            },
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
            "exact": {"type": "boolean", "default": False},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
}


async def fetch_page(url: str, timeout: float = 5.0) -> str:
    """Fetch a web page.

    Parameters
    ----------
    url : str
        The address to fetch.
    timeout : float
        Seconds to wait
        for an answer.
    """
    await asyncio.sleep(0)
    return f"<html>{url} in {timeout}s</html>"


FETCH_PAGE_SCHEMA = {
    "name": "fetch_page",
    "description": "Fetch a web page.",
    "parameters": {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The address to fetch."},
            "timeout": {
                "type": "number",
                "description": "Seconds to wait for an answer.",
                "default": 5.0,
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    },
}


def test_nested_dataclasses_typeddicts_enums_and_tuples_give_the_schema_written_by_hand():
    assert tool(forecast).definition == FORECAST_SCHEMA


def test_arguments_with_defaults_or_none_are_optional_and_say_their_default():
    assert tool(search).definition == SEARCH_SCHEMA


def test_an_async_function_gets_the_schema_written_by_hand_and_is_awaited():
    fetch = tool(fetch_page)
    assert fetch.definition == FETCH_PAGE_SCHEMA
    result = asyncio.run(fetch.acall({"url": "https://example.org"}))
    assert result == "<html>https://example.org in 5.0s</html>"


def test_checked_arguments_become_the_hinted_types():
    arguments = tool(forecast).validate(
        {
            "places": [{"name": "Lisbon", "at": {"latitude": 38.7, "longitude": -9}}],
            "unit": "celsius",
            "window": {"start": 6},
            "ranges": {"Lisbon": [12, 21.5]},
        }
    )
    assert arguments == {
        "places": [Place("Lisbon", Coordinates(38.7, -9.0))],
        "unit": Unit.CELSIUS,
        "window": {"start": 6},
        "ranges": {"Lisbon": (12.0, 21.5)},
    }
    assert isinstance(arguments["places"][0].at.longitude, float)


def test_arguments_that_do_not_fit_are_refused_with_every_problem_named():
    with pytest.raises(ToolArgumentsError) as raised:
        tool(forecast).validate(
            {
                "places": [{"name": 7, "at": {"latitude": 1}}],
                "unit": "kelvin",
                "window": {"start": 6, "end": "noon"},
                "ranges": {"Lisbon": [12]},
                "extra": True,
            }
        )
    assert raised.value.problems == [
        "`places[0].name`: expected a string, got integer 7",
        "`places[0].at.longitude`: missing (it is required)",
        '`unit`: "kelvin" is not one of "celsius", "fahrenheit"',
        '`window.end`: expected an integer, got string "noon"',
        "`ranges.Lisbon`: needs at least 2 items",
        "`extra`: unexpected (the known names are: places, unit, window, ranges)",
    ]
    assert str(raised.value).startswith("the arguments of tool 'forecast' do not fit")


def test_json_booleans_are_not_numbers_and_whole_floats_are_integers():
    checked = tool(search)
    with pytest.raises(ToolArgumentsError) as raised:
        checked.validate({"query": "x", "limit": True})
    assert raised.value.problems == ["`limit`: expected an integer, got boolean true"]
    assert checked.validate({"query": "x", "limit": 3.0}) == {"query": "x", "limit": 3}


def test_left_out_arguments_take_the_function_defaults():
    assert tool(search).call({"query": "stream"}) == ["stream 10 None None False"]


def test_a_decorated_function_still_calls_like_the_function():
    @tool(name="add_numbers", description="Add two numbers.")
    def add(a: int, b: int = 1, /) -> int:
        return a + b

    assert isinstance(add, FunctionTool)
    assert add(2, 3) == 5
    assert add.call({"a": 2}) == 3  # positional-only parameters are passed by position
    assert add.definition == {
        "name": "add_numbers",
        "description": "Add two numbers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 1}},
            "required": ["a"],
            "additionalProperties": False,
        },
    }


def test_annotated_text_describes_a_parameter_and_a_missing_hint_accepts_anything():
    def note(text: Annotated[str, "The note's text."], extra=None) -> None:  # type: ignore[no-untyped-def]
        """Keep a note."""

    assert tool(note).definition["parameters"]["properties"] == {
        "text": {"type": "string", "description": "The note's text."},
        "extra": {"default": None},
    }


def test_a_blocking_call_runs_an_async_function_to_its_end():
    assert tool(fetch_page).call({"url": "u", "timeout": 1}) == "<html>u in 1.0s</html>"


def test_a_blocking_call_from_inside_an_event_loop_runs_an_async_function_on_a_loop_of_its_own():
    async def main() -> str:
        return tool(fetch_page).call({"url": "u"})  # type: ignore[no-any-return]

    assert asyncio.run(main()) == "<html>u in 5.0s</html>"


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (lambda x: x, "'<lambda>' is not a name a model can call"),
        (functools.partial(search, "q"), "None is not a name a model can call"),
    ],
)
def test_a_function_without_a_usable_name_is_refused(function, message):
    with pytest.raises(ToolDefinitionError, match=message):
        tool(function)


def test_types_with_no_json_schema_are_refused_naming_the_parameter():
    def upload(data: bytes) -> None: ...

    def spread(*names: str) -> None: ...

    with pytest.raises(ToolDefinitionError, match=r"parameter 'data' of tool 'upload' has type"):
        tool(upload)
    with pytest.raises(ToolDefinitionError, match=r"\*names and \*\*names cannot be described"):
        tool(spread)


@dataclass
class Folder:
    name: str
    children: list[Folder]


def test_a_recursive_type_is_refused():
    def make(root: Folder) -> None: ...

    with pytest.raises(ToolDefinitionError, match="Folder refers to itself"):
        tool(make)


def test_a_config_of_definitions_is_passed_on_untouched_and_functions_are_described():
    plain = {"tools": [{"name": "ping"}]}
    assert config_with_tool_definitions(plain) is plain  # type: ignore[arg-type]
    mixed = config_with_tool_definitions({"tools": [{"name": "ping"}, search]})
    assert mixed == {"tools": [{"name": "ping"}, SEARCH_SCHEMA]}


def test_tools_need_neither_pydantic_nor_the_docstring_parser_at_import():
    script = textwrap.dedent(
        """
        import sys
        sys.modules["pydantic"] = None  # as if it were not installed
        import modelstream
        assert "docstring_parser" not in sys.modules
        from dataclasses import dataclass

        @dataclass
        class Point:
            x: int

        def move(to: Point) -> None:
            '''Move.

            Args:
                to: Where.
            '''

        print(modelstream.tool(move).definition["parameters"]["properties"]["to"]["description"])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Where."


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["name", "at", "start", "end", "Lisbon"]), inner, max_size=3
        )
    ),
    max_leaves=12,
)
NUMBER = st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)


def mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually a valid value, sometimes any JSON at all."""
    return st.one_of(valid, valid, valid, valid, JSON)


PLACE = st.fixed_dictionaries(
    {
        "name": mostly(st.text(max_size=5)),
        "at": mostly(st.fixed_dictionaries({"latitude": mostly(NUMBER), "longitude": NUMBER})),
    },
    optional={"aliases": mostly(st.lists(st.text(max_size=3), max_size=2))},
)
FIELDS = {
    "places": mostly(st.lists(mostly(PLACE), max_size=2)),
    "unit": mostly(st.sampled_from(["celsius", "fahrenheit"])),
    "window": mostly(st.fixed_dictionaries({"start": NUMBER}, optional={"end": mostly(NUMBER)})),
    "ranges": mostly(
        st.dictionaries(st.text(max_size=3), mostly(st.tuples(NUMBER, NUMBER).map(list)))
    ),
}
ARGUMENTS = mostly(st.fixed_dictionaries(FIELDS)) | st.fixed_dictionaries({}, optional=FIELDS)


@settings(max_examples=300, deadline=None)
@given(ARGUMENTS)
def test_any_json_arguments_are_refused_or_arrive_as_the_hinted_types(arguments):
    try:
        checked = tool(forecast).validate(arguments)
    except ToolArgumentsError as refused:
        assert refused.problems
        return
    assert all(isinstance(place, Place) for place in checked["places"])
    assert all(isinstance(place.at.latitude, float) for place in checked["places"])
    assert isinstance(checked["unit"], Unit)
    assert all(isinstance(pair, tuple) for pair in checked["ranges"].values())
