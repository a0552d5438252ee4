"""Tool call arguments: strict parsing to a JSON object, and lenient recovery (seed `002_…`)."""

from __future__ import annotations

import pytest

from modelstream.tool_arguments import parse_strict, recover

# --- strict ----------------------------------------------------------------------------------


def test_an_empty_string_means_no_arguments():
    # Anthropic sends `partial_json: ""` for argument-less calls (vercel-anthropic-tool-no-args).
    assert parse_strict("") == ({}, "")


@pytest.mark.parametrize("raw", [" ", "\n", " \t\r\n "])
def test_whitespace_only_means_no_arguments(raw):
    assert parse_strict(raw) == ({}, "")


def test_a_json_object_is_accepted_as_is():
    raw = '{"location": "Paris", "days": [1, 2], "units": {"temp": "C"}, "strict": true}'
    assert parse_strict(raw) == (
        {"location": "Paris", "days": [1, 2], "units": {"temp": "C"}, "strict": True},
        "",
    )


def test_an_object_with_surrounding_whitespace_is_accepted():
    assert parse_strict('  {"a": 1}\n') == ({"a": 1}, "")


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("[1, 2]", "array"),
        ('"Paris"', "string"),
        ("42", "number"),
        ("4.2", "number"),
        ("true", "boolean"),
        ("null", "null"),
    ],
)
def test_json_that_is_not_an_object_is_rejected_with_its_type(raw, kind):
    value, reason = parse_strict(raw)
    assert value is None
    assert reason == f"a JSON {kind}, not an object"


@pytest.mark.parametrize("raw", ['{"a": ', '{"a": 1,}', "{a: 1}", "garbage", '{"a": 1}{"b": 2}'])
def test_malformed_json_is_rejected_as_invalid(raw):
    value, reason = parse_strict(raw)
    assert value is None
    assert reason.startswith("invalid JSON: ")


# --- lenient recovery ------------------------------------------------------------------------


def test_a_truncated_object_recovers_the_fields_so_far_as_partial():
    raw = '{"filename": "taxes.txt", "lines": ["# GUIDE", "line two'
    assert recover(raw) == ({"filename": "taxes.txt", "lines": ["# GUIDE", "line two"]}, "partial")


def test_a_truncated_object_cut_inside_a_key_keeps_the_complete_fields():
    assert recover('{"a": 1, "b') == ({"a": 1}, "partial")


def test_a_truncated_nested_object_recovers_the_nesting():
    raw = '{"a": {"b": [1, {"c": "d'
    assert recover(raw) == ({"a": {"b": [1, {"c": "d"}]}}, "partial")


def test_an_object_cut_right_after_its_brace_is_partial_and_empty():
    assert recover("{") == ({}, "partial")


def test_a_trailing_comma_is_repaired():
    assert recover('{"a": 1, "b": 2,}') == ({"a": 1, "b": 2}, "repaired")


def test_unquoted_keys_are_repaired():
    assert recover("{a: 1, b: 'two'}") == ({"a": 1, "b": "two"}, "repaired")


@pytest.mark.parametrize("raw", ["garbage", "not json at all", "[1, 2]", '"Paris"', "42", ""])
def test_nothing_usable_is_invalid_and_empty(raw):
    assert recover(raw) == ({}, "invalid")


def test_a_truncated_array_is_not_a_partial_object():
    assert recover('[{"a": 1}') == ({}, "invalid")


def test_two_concatenated_objects_are_not_a_truncation():
    arguments, mode = recover('{"a": 1}{"b": 2}')
    assert mode != "partial"
    assert isinstance(arguments, dict)


def test_whitespace_only_cut_text_does_not_crash_recovery():
    assert recover("   ") == ({}, "invalid")


def test_a_lone_surrogate_does_not_crash_recovery():
    arguments, mode = recover('{"a": "x\ud800')
    assert mode == "partial"
    assert set(arguments) == {"a"}
