"""The incremental JSON parser (modelstream.structured.partial_json): cut anywhere, every value it
shows is a prefix of the final one, and the final one is `json.loads`'s.

The property: random JSON values, serialized the ways models and `json.dumps` write them, cut into
random fragments. After each fragment the shown value is a prefix of the final value (numbers and
literals never half-shown), `feed` says True exactly when it changed, `open_path` is None exactly
when done, and over the whole run `completed()` names every value once, inner before outer, in
the order written. The unit tests pin the error offsets, the escapes cut in two and the limits.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream.structured import NOTHING, PartialJSON, PartialJSONError
from modelstream.structured.partial_json import MAX_DEPTH

Path = tuple[str | int, ...]

# --- helpers ---------------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (True is not 1, 1 is not 1.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def is_prefix(partial: Any, final: Any) -> bool:
    """`partial` is what a parser may show of `final` before it is complete: a container whose
    keys (elements) are a prefix of the final ones, each equal but the last, which is a prefix;
    a string the final one starts with; any other scalar equal, of the same type."""
    if type(partial) is not type(final):
        return False
    if isinstance(partial, dict):
        keys, final_keys = list(partial), list(final)
        if keys != final_keys[: len(keys)]:
            return False
        if not keys:
            return True
        *done, last = keys
        return all(same(partial[k], final[k]) for k in done) and is_prefix(
            partial[last], final[last]
        )
    if isinstance(partial, list):
        if len(partial) > len(final):
            return False
        if not partial:
            return True
        return all(same(x, y) for x, y in zip(partial[:-1], final, strict=False)) and is_prefix(
            partial[-1], final[len(partial) - 1]
        )
    if isinstance(partial, str):
        return final.startswith(partial)
    return same(partial, final)


def postorder(value: Any, path: Path = ()) -> Iterator[Path]:
    """Every path of `value`, each after its children: the order values complete in."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield from postorder(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from postorder(child, (*path, index))
    yield path


def fed(*fragments: str) -> PartialJSON:
    parser = PartialJSON()
    for fragment in fragments:
        parser.feed(fragment)
    return parser


def error_of(text: str, *, step: int | None = None, finish: bool = False) -> PartialJSONError:
    """The error the text raises, fed whole or `step` characters at a time."""
    parser = PartialJSON()
    pieces = [text] if step is None else [text[i : i + step] for i in range(0, len(text), step)]
    with pytest.raises(PartialJSONError) as caught:
        for piece in pieces:
            parser.feed(piece)
        if finish:
            parser.finish()
    return caught.value


# --- the property ----------------------------------------------------------------------------

ESCAPE_HEAVY = st.text(
    alphabet=st.sampled_from('"\\/\b\f\n\r\t\x00\x1f\x7f aé€🙂\u2028\U0010ffff') | st.characters(),
    max_size=12,
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | ESCAPE_HEAVY
)
VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(ESCAPE_HEAVY, children, max_size=5)
    ),
    max_leaves=25,
)
DUMPS = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 0, 2, "\t"]),
        "ensure_ascii": st.booleans(),
        "separators": st.sampled_from([None, (",", ":"), (" , ", " : ")]),
    }
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=VALUES,
    dumps=DUMPS,
    padding=st.sampled_from(["", " ", "\n\t "]),
    data=st.data(),
)
def test_every_shown_value_is_a_prefix_of_the_final_one(
    value: Any, dumps: dict[str, Any], padding: str, data: st.DataObject
) -> None:
    text = padding + json.dumps(value, **dumps) + padding
    final = json.loads(text)
    sizes = data.draw(st.lists(st.integers(1, 12), min_size=len(text), max_size=len(text)))
    parser = PartialJSON()
    previous: Any = NOTHING
    root: Any = NOTHING
    completions: list[Path] = []
    pos = 0
    for size in sizes:
        if pos >= len(text):
            break
        changed = parser.feed(text[pos : pos + size])
        pos += size
        shown = parser.value
        snapshot = copy.deepcopy(shown)
        if shown is not NOTHING:
            assert is_prefix(snapshot, final), (text[:pos], snapshot)
            if isinstance(shown, dict | list):
                if root is NOTHING:
                    root = shown
                assert shown is root  # grown in place, never replaced
        assert changed == (
            not same(snapshot, previous) if previous is not NOTHING else snapshot is not NOTHING
        ), (text[:pos], previous, snapshot)
        previous = snapshot
        assert (parser.open_path is None) == parser.done
        if parser.open_path is not None:
            assert not parser.is_complete(parser.open_path)
        for path in parser.completed():
            assert parser.is_complete(path), path
        completions += parser.completed()
        assert parser.feed("") is False
    assert same(parser.finish(), final)
    completions += parser.completed()
    assert completions == list(postorder(final))
    assert parser.done and parser.open_path is None and parser.is_complete(())


# --- values shown ----------------------------------------------------------------------------


def test_a_key_appears_once_its_value_starts() -> None:
    parser = PartialJSON()
    steps = ['{"na', 'me"', ": ", '"A', 'da"', ', "n": 1', "2", ", ", '"ok": tr', "ue}"]
    shown = []
    for step in steps:
        parser.feed(step)
        shown.append(copy.deepcopy(parser.value))
    assert shown == [
        {},
        {},
        {},
        {"name": "A"},
        {"name": "Ada"},
        {"name": "Ada"},
        {"name": "Ada"},
        {"name": "Ada", "n": 12},
        {"name": "Ada", "n": 12},
        {"name": "Ada", "n": 12, "ok": True},
    ]
    assert parser.done


@pytest.mark.parametrize("text", ["-", "1.", "1e", "1e+", "-0.5E-", "tru", "fals", "nul"])
def test_numbers_and_literals_are_never_shown_half_written(text: str) -> None:
    parser = fed("[", text)
    assert parser.value == []
    assert parser.open_path == ()


def test_a_top_level_number_completes_at_a_delimiter_or_at_finish() -> None:
    parser = fed("12")
    assert parser.value is NOTHING and not parser.done
    assert parser.feed("3") is False
    assert parser.finish() == 123 and type(parser.value) is int
    assert parser.completed() == [()]
    parser = fed("-1.5e3", " ")
    assert parser.done and parser.value == -1500.0 and type(parser.value) is float


def test_an_escape_cut_in_two_shows_nothing_broken() -> None:
    parser = PartialJSON()
    assert parser.feed('"caf\\u00') is True
    assert parser.value == "caf"
    assert parser.feed("e9!") is True
    assert parser.value == "café!"
    parser = fed('["a\\')
    assert parser.value == ["a"]
    parser.feed('n"]')
    assert parser.finish() == ["a\n"]


@pytest.mark.parametrize("cut", range(1, len('"a\\ud83d\\ude00b"')))
def test_a_surrogate_pair_cut_anywhere_shows_whole_characters(cut: int) -> None:
    text = '"a\\ud83d\\ude00b"'
    parser = fed(text[:cut])
    shown = parser.value
    if shown is not NOTHING:
        assert "a\U0001f600b".startswith(shown)
    parser.feed(text[cut:])
    assert parser.finish() == "a\U0001f600b"


def test_lone_surrogates_are_kept_as_json_loads_keeps_them() -> None:
    for text in ['"\\ud83d"', '"\\ud83dx"', '"\\ud83d\\n"', '"\\ude00"', '"\\ud83d\\ud83d"']:
        assert PartialJSON().feed(text) is True
        assert fed(*text).finish() == json.loads(text)


def test_a_string_is_replaced_not_mutated() -> None:
    parser = fed('{"text": "abc')
    held = parser.value["text"]
    parser.feed("def")
    assert held == "abc"
    assert parser.value == {"text": "abcdef"}


def test_a_long_string_grows_in_place_correctly() -> None:
    parser = fed('["')
    for _ in range(5000):
        parser.feed("xy")
    parser.feed('"]')
    assert parser.finish() == ["xy" * 5000]


def test_duplicate_keys_the_last_wins() -> None:
    assert fed('{"a": 1, "b": 2, "a": 3}').finish() == {"a": 3, "b": 2}


def test_whitespace_around_and_inside() -> None:
    text = ' \n\t{ "a" :\n[ 1 ,2\r\n] , "b":{ } }\n '
    assert fed(*text).finish() == json.loads(text)
    assert fed(text).finish() == json.loads(text)


def test_feed_of_nothing_is_a_no_op() -> None:
    parser = PartialJSON()
    assert parser.feed("") is False
    parser.feed("[1,")
    assert parser.feed("") is False
    assert parser.value == [1]


# --- where the text is -----------------------------------------------------------------------


def test_open_path_and_is_complete() -> None:
    parser = PartialJSON()
    assert parser.open_path == () and not parser.done
    parser.feed('{"a": [1, "x')
    assert parser.open_path == ("a", 1)
    assert parser.is_complete(("a", 0))
    assert not parser.is_complete(("a", 1)) and not parser.is_complete(("a",))
    assert not parser.is_complete(("b",)) and not parser.is_complete(("a", 2))
    parser.feed('"], "b": {')
    assert parser.open_path == ("b",)
    assert parser.is_complete(("a",)) and parser.is_complete(("a", 1))
    parser.feed('"c": 2')
    assert parser.open_path == ("b",)  # the 2 may go on: not shown, the object is the leaf
    parser.feed("}}")
    assert parser.open_path is None and parser.done and parser.is_complete(())
    assert fed('"ab').open_path == ()


def test_completed_names_what_the_last_feed_finished() -> None:
    parser = PartialJSON()
    parser.feed('[1, {"k": "v"}, [3')
    assert parser.completed() == [(0,), (1, "k"), (1,)]
    parser.feed("]")
    assert parser.completed() == [(2, 0), (2,)]
    parser.feed(" ")
    assert parser.completed() == []
    parser.feed("]")
    assert parser.completed() == [()]


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "offset", "reason"),
    [
        ('{"a" 1}', 5, "expected ':'"),
        ("[1,]", 3, "expected a value"),
        ("{,}", 1, "expected a key or '}'"),
        ('{"a": 1,}', 8, "expected a key"),
        ("tru e", 3, "invalid literal (true?)"),
        ("[nul]", 4, "invalid literal (null?)"),
        ('"\x01"', 1, "control character in string"),
        ('"a\\q"', 3, "invalid escape"),
        ('"\\u12G4"', 5, "invalid \\u escape"),
        ("[1 2]", 3, "expected ',' or ']'"),
        ('{"a": 1 "b": 2}', 8, "expected ',' or '}'"),
        ("[01]", 2, "invalid number"),
        ("[1.e5]", 3, "incomplete number"),
        ("[-]", 2, "incomplete number"),
        ("[1x]", 2, "invalid number"),
        ("[1] x", 4, "data after the value"),
        ("[1]]", 3, "data after the value"),
        ("1 2", 2, "data after the value"),
        ("}", 0, "expected a value"),
        ("[}", 1, "expected a value"),
    ],
)
def test_invalid_text_raises_at_its_first_bad_character(
    text: str, offset: int, reason: str
) -> None:
    for step in (None, 1, 2):
        error = error_of(text, step=step)
        assert (error.offset, error.reason) == (offset, reason), step
        assert isinstance(error, ValueError)
        assert str(offset) in str(error)


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("", 0),
        ("  ", 2),
        ("[1, 2", 5),
        ('{"a": "b', 8),
        ('{"a"', 4),
        ("-", 1),
        ("1.", 2),
        ("tr", 2),
    ],
)
def test_an_incomplete_value_raises_at_finish(text: str, offset: int) -> None:
    error = error_of(text, finish=True)
    assert (error.offset, error.reason) == (offset, "unexpected end of input")


def test_trailing_whitespace_is_fine_and_garbage_is_not() -> None:
    assert fed("[1] \n", "\t ").finish() == [1]
    parser = fed("[1]")
    with pytest.raises(PartialJSONError) as caught:
        parser.feed("  ,")
    assert caught.value.offset == 5
    with pytest.raises(PartialJSONError):  # and every later call says so again
        parser.finish()


def test_the_depth_limit() -> None:
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert fed(deep).finish() == json.loads(deep)
    error = error_of('{"a":' * MAX_DEPTH + "[")
    assert (error.offset, error.reason) == (5 * MAX_DEPTH, "nested too deep")


def test_an_error_stays() -> None:
    parser = PartialJSON()
    with pytest.raises(PartialJSONError):
        parser.feed("[1,]")
    with pytest.raises(PartialJSONError):
        parser.feed("2]")
    assert parser.value == [1]
