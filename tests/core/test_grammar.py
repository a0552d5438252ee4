"""GrammarChecker: valid streams pass, and each SPEC §2 rule violation is named by its rule."""

from __future__ import annotations

from typing import Any

import pytest

from modelstream import GrammarChecker, GrammarViolation, check_events

USAGE = {"cached_tokens": 0, "prompt_tokens": 10, "thoughts_tokens": None, "response_tokens": 5}


def delta(*items: Any, **overrides: Any) -> dict[str, Any]:
    event = {
        "role": "assistant",
        "event_type": "delta",
        "content_items": list(items),
        "usage_metadata": None,
        "finish_reason": None,
        "created_at": 1694502400000,
    }
    return {**event, **overrides}


def stop(finish_reason: Any = "stop", usage: Any = USAGE, **overrides: Any) -> dict[str, Any]:
    event = {
        "role": "assistant",
        "event_type": "stop",
        "content_items": [],
        "usage_metadata": usage,
        "finish_reason": finish_reason,
        "created_at": 1694502400100,
    }
    return {**event, **overrides}


def text(t: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text.delta", "text": t, **extra}


def text_done(t: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text.done", "text": t, **extra}


def call(arguments: str, tool_call_id: str = "", name: str = "", **extra: Any) -> dict[str, Any]:
    return {
        "type": "tool_call.delta",
        "tool_call_id": tool_call_id,
        "name": name,
        "arguments": arguments,
        **extra,
    }


def call_done(arguments: Any, tool_call_id: str = "c1", name: str = "f") -> dict[str, Any]:
    return {
        "type": "tool_call.done",
        "tool_call_id": tool_call_id,
        "name": name,
        "arguments": arguments,
    }


def violation(events: list[dict[str, Any]], *, end: bool = False) -> GrammarViolation:
    """The violation the checker raises for `events` (and `end()` when asked)."""
    checker = GrammarChecker()
    with pytest.raises(GrammarViolation) as caught:
        for event in events:
            checker.feed(event)
        if end:
            checker.end()
    return caught.value


HELLO = [delta(text("Hel")), delta(text("lo")), delta(text_done("Hello"))]


# --- valid streams ----------------------------------------------------------------------------


def test_the_spec_example_events_with_their_group_pass():
    check_events([*HELLO, stop()])


def test_a_text_then_tool_call_stream_with_fidelity_passes():
    events = [
        delta({"type": "thinking.delta", "thinking": "hmm"}),
        delta({"type": "thinking.delta", "thinking": "", "fidelity": {"signature": "sig"}}),
        delta({"type": "thinking.done", "thinking": "hmm", "fidelity": {"signature": "sig"}}),
        *HELLO,
        delta(call('{"city": ', "c1", "f")),
        delta(call('"Paris"}')),
        delta(call_done({"city": "Paris"})),
        stop("tool_call"),
    ]
    check_events(events)


def test_inline_data_and_embedding_groups_pass():
    events = [
        delta({"type": "inline_data.delta", "data": b"ab", "mime_type": "audio/wav"}),
        delta({"type": "inline_data.delta", "data": b"cd", "mime_type": "audio/wav"}),
        delta({"type": "inline_data.done", "data": b"abcd", "mime_type": "audio/wav"}),
        delta({"type": "embedding.delta", "embedding": [0.5, 1.0]}),
        delta({"type": "embedding.done", "embedding": [0.5, 1.0]}),
        stop(),
    ]
    check_events(events)


def test_empty_tool_arguments_join_to_an_empty_object():
    check_events([delta(call("", "c1", "f")), delta(call_done({})), stop("tool_call")])


def test_recovered_arguments_of_a_lenient_stream_may_be_any_object():
    events = [delta(call('{"a": 1,', "c1", "f")), delta(call_done({"a": 1})), stop("length")]
    check_events(events)


def test_arguments_that_are_json_but_not_an_object_may_be_recovered_as_an_object():
    # A lenient stream turns "[1, 2]" into {} (mode "invalid"); that is a valid .done.
    events = [delta(call("[1, 2]", "c1", "f")), delta(call_done({})), stop("tool_call")]
    check_events(events)


def test_all_null_usage_is_valid_usage():
    check_events([*HELLO, stop(usage=dict.fromkeys(USAGE))])


@pytest.mark.parametrize("reason", ["stop", "length", "tool_call", "unknown"])
def test_every_finish_reason_is_accepted(reason):
    check_events([*HELLO, stop(reason)])


# --- shape ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        delta(text("x"), role="user"),
        delta(text("x"), created_at="now"),
        delta(text("x"), created_at=True),
        delta(text("x"), content_items=None),
        delta(text("x"), event_type="start"),
        delta({"type": "audio.delta", "text": "x"}),
        delta({"type": "text.partial", "text": "x"}),
        delta({"type": "text.delta"}),
        delta({"text": "x"}),
    ],
    ids=[
        "role",
        "created_at-str",
        "created_at-bool",
        "content_items",
        "event_type",
        "unknown-kind",
        "unknown-phase",
        "missing-growing-field",
        "missing-type",
    ],
)
def test_a_malformed_event_breaks_the_shape_rule(event):
    assert violation([event]).rule == "shape"


def test_an_event_that_is_not_an_object_breaks_the_shape_rule():
    assert violation([["not", "an", "event"]]).rule == "shape"


# --- rule 1 -----------------------------------------------------------------------------------


def test_two_items_in_one_delta_break_rule_1():
    assert violation([delta(text("a"), text("b"))]).rule == "1"


def test_a_delta_with_no_item_breaks_rule_1():
    assert violation([delta()]).rule == "1"


def test_usage_on_a_delta_breaks_rule_1():
    assert violation([delta(text("a"), usage_metadata=USAGE)]).rule == "1"


def test_a_finish_reason_on_a_delta_breaks_rule_1():
    assert violation([delta(text("a"), finish_reason="stop")]).rule == "1"


# --- rule 2 -----------------------------------------------------------------------------------


def test_interleaved_groups_break_rule_2():
    events = [delta(text("a")), delta({"type": "thinking.delta", "thinking": "b"})]
    error = violation(events)
    assert error.rule == "2"
    assert error.index == 1


def test_a_done_without_a_delta_breaks_rule_2():
    assert violation([delta(text_done("a"))]).rule == "2"


def test_a_done_of_another_kind_breaks_rule_2():
    events = [delta(text("a")), delta({"type": "thinking.done", "thinking": "a"})]
    assert violation(events).rule == "2"


def test_a_first_tool_call_fragment_without_an_id_breaks_rule_2():
    assert violation([delta(call("{}", "", "f"))]).rule == "2"


def test_a_name_repeated_on_a_later_tool_call_fragment_breaks_rule_2():
    events = [delta(call("{", "c1", "f")), delta(call("}", "", "f"))]
    assert violation(events).rule == "2"


def test_an_id_repeated_on_a_later_tool_call_fragment_breaks_rule_2():
    events = [delta(call("{", "c1", "f")), delta(call("}", "c1", ""))]
    assert violation(events).rule == "2"


def test_stop_while_a_group_is_open_breaks_rule_2():
    assert violation([delta(text("a")), stop()]).rule == "2"


# --- rule 3 -----------------------------------------------------------------------------------


def test_done_text_that_is_not_the_join_breaks_rule_3():
    events = [delta(text("Hel")), delta(text("lo")), delta(text_done("Help"))]
    error = violation(events)
    assert error.rule == "3"
    assert error.index == 2


def test_tool_call_done_arguments_that_are_not_the_parsed_join_break_rule_3():
    events = [delta(call('{"a": ', "c1", "f")), delta(call("1}")), delta(call_done({"a": 2}))]
    assert violation(events).rule == "3"


def test_tool_call_done_arguments_kept_as_a_string_break_rule_3():
    events = [delta(call('{"a": 1}', "c1", "f")), delta(call_done('{"a": 1}'))]
    assert violation(events).rule == "3"


def test_recovered_arguments_that_are_not_an_object_break_rule_3():
    events = [delta(call('{"a": ', "c1", "f")), delta(call_done([1]))]
    assert violation(events).rule == "3"


def test_a_tool_call_done_with_another_id_breaks_rule_3():
    events = [delta(call("{}", "c1", "f")), delta(call_done({}, tool_call_id="c2"))]
    assert violation(events).rule == "3"


def test_an_inline_data_done_with_another_mime_type_breaks_rule_3():
    events = [
        delta({"type": "inline_data.delta", "data": b"ab", "mime_type": "audio/wav"}),
        delta({"type": "inline_data.done", "data": b"ab", "mime_type": "audio/mp3"}),
    ]
    assert violation(events).rule == "3"


# --- rule 4 -----------------------------------------------------------------------------------


def test_stop_twice_breaks_rule_4():
    assert violation([*HELLO, stop(), stop()]).rule == "4"


def test_an_event_after_stop_breaks_rule_4():
    assert violation([*HELLO, stop(), delta(text("late"))]).rule == "4"


def test_stop_with_items_breaks_rule_4():
    assert violation([*HELLO, stop(content_items=[text_done("x")])]).rule == "4"


def test_stop_without_usage_breaks_rule_4():
    assert violation([*HELLO, stop(usage=None)]).rule == "4"


def test_stop_without_a_finish_reason_breaks_rule_4():
    assert violation([*HELLO, stop(finish_reason=None)]).rule == "4"


@pytest.mark.parametrize("reason", ["end_turn", "tool_use", "STOP", "content_filter"])
def test_a_finish_reason_outside_the_four_breaks_rule_4(reason):
    assert violation([*HELLO, stop(reason)]).rule == "4"


def test_usage_with_a_float_breaks_rule_4():
    assert violation([*HELLO, stop(usage={**USAGE, "prompt_tokens": 10.0})]).rule == "4"


def test_usage_with_a_bool_breaks_rule_4():
    assert violation([*HELLO, stop(usage={**USAGE, "cached_tokens": False})]).rule == "4"


def test_usage_missing_a_key_breaks_rule_4():
    usage = {k: v for k, v in USAGE.items() if k != "thoughts_tokens"}
    assert violation([*HELLO, stop(usage=usage)]).rule == "4"


def test_usage_with_an_extra_key_breaks_rule_4():
    assert violation([*HELLO, stop(usage={**USAGE, "total_tokens": 15})]).rule == "4"


def test_a_stream_ending_without_stop_breaks_rule_4_at_end():
    error = violation(HELLO, end=True)
    assert error.rule == "4"
    assert "without a stop" in str(error)


def test_an_empty_stream_ending_breaks_rule_4_at_end():
    assert violation([], end=True).rule == "4"


# --- rule 6 -----------------------------------------------------------------------------------


def test_fidelity_on_two_fragments_breaks_rule_6():
    events = [delta(text("a", fidelity={"x": 1})), delta(text("b", fidelity={"x": 1}))]
    assert violation(events).rule == "6"


def test_a_done_whose_fidelity_differs_breaks_rule_6():
    events = [delta(text("a", fidelity={"x": 1})), delta(text_done("a", fidelity={"x": 2}))]
    assert violation(events).rule == "6"


def test_a_done_that_drops_the_fidelity_breaks_rule_6():
    events = [delta(text("a", fidelity={"x": 1})), delta(text_done("a"))]
    assert violation(events).rule == "6"


def test_a_done_that_invents_fidelity_breaks_rule_6():
    events = [delta(text("a")), delta(text_done("a", fidelity={"x": 1}))]
    assert violation(events).rule == "6"


def test_internal_underscore_keys_in_fidelity_break_rule_6():
    events = [delta(text("a", fidelity={"signature": "s", "_block_index": 0}))]
    error = violation(events)
    assert error.rule == "6"
    assert "_block_index" in str(error)


def test_fidelity_under_the_key_mmsp_reserves_breaks_rule_6():
    error = violation([delta(text("a", fidelity={"item_id": "msg_1"}))])
    assert error.rule == "6"
    assert "item_id" in str(error)


def test_fidelity_that_is_not_an_object_breaks_rule_6():
    assert violation([delta(text("a", fidelity="sig"))]).rule == "6"


def test_a_violation_names_the_event_index_rule_and_detail():
    error = violation([*HELLO, stop(), stop()])
    assert error.index == 4
    assert error.fields() == {"rule": "4", "detail": "an event came after stop", "index": 4}
