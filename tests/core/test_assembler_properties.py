"""The item assembler: any sequence of adapter calls yields a grammar-valid stream (rules A–H).

The property drives `ItemAssembler` the way adapters do — fragments of several blocks,
interleaved, with fidelity in pieces and block ends in any order — and checks the result with
`GrammarChecker` and against a model computed from the calls alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream import (
    Accumulator,
    EmptyResponseError,
    GrammarChecker,
    IncompleteStreamError,
    ItemAssembler,
    ProviderError,
    StreamMetadata,
    StreamProtocolError,
    ToolCallArgumentParseError,
    check_events,
)
from support import Capture, decode_chunks, decode_over_http, load_capture

USAGE = {"cached_tokens": 1, "prompt_tokens": 2, "thoughts_tokens": 3, "response_tokens": 4}


def new_assembler(**options: Any) -> ItemAssembler:
    return ItemAssembler(StreamMetadata(protocol="test"), **options)


def done_items_of(events: list[Any]) -> list[dict[str, Any]]:
    """The `.done` items of an event list, in order."""
    return [i for e in events for i in e["content_items"] if i["type"].endswith(".done")]


# --- the property -----------------------------------------------------------------------------


@dataclass
class Block:
    """One provider block: its kind and the adapter calls that carry it."""

    key: tuple[str, int]
    kind: str
    fragments: list[str]
    fidelity: list[dict[str, str] | None]  # a fidelity piece (or none) per fragment
    tool_call_id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)


_piece = st.text(st.characters(blacklist_categories=("Cs",)), max_size=5)
_fidelity_piece = st.none() | st.dictionaries(
    st.sampled_from(["signature", "phase", "encrypted"]), st.text(max_size=4), min_size=1
)
_json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


def _cut(data: st.DataObject, text: str) -> list[str]:
    """`text` in pieces at random points; empty pieces included."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


@st.composite
def _blocks(draw: st.DrawFn) -> list[Block]:
    data = draw(st.data())
    kinds = draw(st.lists(st.sampled_from(["text", "thinking", "tool_call"]), max_size=5))
    blocks = []
    for n, kind in enumerate(kinds):
        if kind == "tool_call":
            arguments = draw(st.dictionaries(st.text(max_size=5), _json_value, max_size=3))
            fragments = _cut(data, json.dumps(arguments, ensure_ascii=False))
            block = Block(("call", n), kind, fragments, [], f"toolu_{n}", f"tool{n}", arguments)
        else:
            block = Block((kind, n), kind, draw(st.lists(_piece, min_size=1, max_size=5)), [])
        block.fidelity = [draw(_fidelity_piece) for _ in block.fragments]
        blocks.append(block)
    return blocks


def _opens(block: Block) -> int | None:
    """Index of the call that opens the block (rule D), or None when nothing opens it."""
    if block.kind == "tool_call":
        return 0
    for i, (fragment, fidelity) in enumerate(zip(block.fragments, block.fidelity, strict=True)):
        if fragment or fidelity:
            return i
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=_blocks(),
    finish=st.sampled_from(["stop", "length", "unknown"]),
    data=st.data(),
)
def test_any_interleaving_of_adapter_calls_yields_a_valid_stream(blocks, finish, data):
    # One call per fragment, plus one end_item per block at a random later point (or never:
    # the finish closes what is left). Per-block order is kept; blocks interleave at random.
    queues: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for block in blocks:
        calls = [("fragment", i) for i in range(len(block.fragments))]
        if data.draw(st.booleans()):
            calls.append(("end", 0))
        queues[block.key] = calls
    by_key = {block.key: block for block in blocks}
    assembler = new_assembler()
    events: list[Any] = []
    opened: list[tuple[str, int]] = []  # keys in order of the call that opened them
    while any(queues.values()):
        key = data.draw(st.sampled_from([k for k, q in queues.items() if q]))
        what, i = queues[key].pop(0)
        block = by_key[key]
        if what == "end":
            assembler.end_item(key)
        else:
            if _opens(block) == i:
                opened.append(key)
            fragment, fidelity = block.fragments[i], block.fidelity[i]
            if block.kind == "tool_call":
                first = i == 0
                assembler.tool_call(
                    key,
                    fragment,
                    name=block.name if first else "",
                    tool_call_id=block.tool_call_id if first else "",
                    fidelity=fidelity,
                )
            else:
                getattr(assembler, block.kind)(key, fragment, fidelity)
        events += assembler.drain()
    if data.draw(st.booleans()):
        assembler.usage_update(USAGE)
    assembler.finish(finish, finish)
    events += assembler.drain()

    has_content = any(by_key[k].kind != "thinking" for k in opened)
    if not has_content:
        with pytest.raises(EmptyResponseError):
            assembler.terminal()
        events += assembler.drain()
        checker = GrammarChecker()
        for event in events:
            checker.feed(event)
        assert not any(e["event_type"] == "stop" for e in events)
        return
    assembler.terminal()
    events += assembler.drain()

    check_events(events)

    # Done items: one per opened block, in order of first appearance, each the join.
    expected = []
    for key in opened:
        block = by_key[key]
        merged: dict[str, str] = {}
        for piece in block.fidelity:
            merged.update(piece or {})
        if block.kind == "tool_call":
            item: dict[str, Any] = {
                "type": "tool_call.done",
                "tool_call_id": block.tool_call_id,
                "name": block.name,
                "arguments": block.arguments,
            }
        else:
            item = {"type": f"{block.kind}.done", block.kind: "".join(block.fragments)}
        if merged:
            item["fidelity"] = merged
        expected.append(item)
    assert done_items_of(events) == expected
    accumulator = Accumulator()
    for event in events:
        accumulator.apply(event)
    assert accumulator.final(assembler.metadata).message["content_items"] == expected

    # Fidelity rides on exactly one delta of its group, with the done's value.
    groups: list[list[dict[str, Any]]] = [[]]
    for event in events[:-1]:
        (item,) = event["content_items"]
        groups[-1].append(item)
        if item["type"].endswith(".done"):
            groups.append([])
    assert groups.pop() == []
    assert len(groups) == len(opened)
    for group, done in zip(groups, expected, strict=True):
        carriers = [i["fidelity"] for i in group[:-1] if "fidelity" in i]
        assert carriers == ([done["fidelity"]] if "fidelity" in done else [])

    stop = events[-1]
    has_call = any(by_key[k].kind == "tool_call" for k in opened)
    assert stop["finish_reason"] == ("tool_call" if finish == "stop" and has_call else finish)


# --- rule A: groups never interleave ----------------------------------------------------------


def test_a_later_blocks_fragments_are_held_until_the_earlier_block_is_done():
    assembler = new_assembler()
    assembler.tool_call(0, '{"a": ', name="f", tool_call_id="c0")
    assembler.tool_call(1, '{"b": 2}', name="g", tool_call_id="c1")
    assembler.tool_call(0, "1}")
    held = assembler.drain()
    assert [e["content_items"][0]["arguments"] for e in held] == ['{"a": ', "1}"]
    assembler.end_item(0)
    released = [e["content_items"][0] for e in assembler.drain()]
    assert [i["type"] for i in released] == ["tool_call.done", "tool_call.delta"]
    assert released[1]["tool_call_id"] == "c1"


# --- rule D: empty fragments open nothing -----------------------------------------------------


def test_empty_text_and_thinking_fragments_open_nothing():
    assembler = new_assembler()
    assembler.text("t", "")
    assembler.thinking("r", "")
    assembler.inline_data("d", b"", "audio/wav")
    assembler.inline_thinking("i", b"", "image/png")
    assert assembler.drain() == []
    assert not any(assembler.has_open(k) for k in ("t", "r", "d", "i"))


def test_an_empty_fragment_of_an_open_block_emits_nothing():
    assembler = new_assembler()
    assembler.text("t", "hi")
    assembler.drain()
    assembler.text("t", "")
    assert assembler.drain() == []


def test_ending_a_block_that_opened_nothing_emits_nothing():
    assembler = new_assembler()
    assembler.text("t", "")
    assembler.end_item("t")
    assert assembler.drain() == []


def test_an_empty_fragment_with_fidelity_opens_the_block():
    assembler = new_assembler()
    assembler.thinking("r", "", {"redacted_thinking": "EqkE"})
    assembler.end_item("r")
    items = [e["content_items"][0] for e in assembler.drain()]
    assert items == [
        {"type": "thinking.delta", "thinking": "", "fidelity": {"redacted_thinking": "EqkE"}},
        {"type": "thinking.done", "thinking": "", "fidelity": {"redacted_thinking": "EqkE"}},
    ]


def test_a_tool_call_with_empty_arguments_opens_and_ends_as_an_empty_object():
    assembler = new_assembler()
    assembler.tool_call(0, "", name="now", tool_call_id="c1")
    assembler.end_item(0)
    assert done_items_of(assembler.drain()) == [
        {"type": "tool_call.done", "tool_call_id": "c1", "name": "now", "arguments": {}}
    ]


# --- rule F: stop only after a finish ----------------------------------------------------------


def test_a_terminal_event_without_a_finish_is_an_incomplete_stream():
    assembler = new_assembler()
    assembler.text("t", "hi")
    with pytest.raises(IncompleteStreamError, match="finish reason"):
        assembler.terminal()
    assert not assembler.stopped


def test_end_of_input_without_a_finish_is_an_incomplete_stream_and_leaves_the_block_open():
    assembler = new_assembler()
    assembler.text("t", "hi")
    with pytest.raises(IncompleteStreamError, match="the body ended first"):
        assembler.end_of_input()
    assert not any(
        i["type"].endswith(".done") for e in assembler.drain() for i in e["content_items"]
    )


def test_end_of_input_after_a_finish_emits_stop():
    assembler = new_assembler()
    assembler.text("t", "hi")
    assembler.usage_update(USAGE)
    assembler.finish("stop", "end_turn")
    assembler.end_of_input()
    stop = assembler.drain()[-1]
    assert stop["event_type"] == "stop"
    assert stop["usage_metadata"] == USAGE


def test_missing_usage_becomes_all_null_usage_with_a_diagnostic():
    assembler = new_assembler()
    assembler.text("t", "hi")
    assembler.finish("stop", "stop")
    assembler.terminal()
    stop = assembler.drain()[-1]
    assert stop["usage_metadata"] == {
        "cached_tokens": None,
        "prompt_tokens": None,
        "thoughts_tokens": None,
        "response_tokens": None,
    }
    assert {"type": "usage_missing"} in assembler.metadata.diagnostics


def test_the_latest_usage_report_wins():
    assembler = new_assembler()
    assembler.text("t", "hi")
    assembler.usage_update({**USAGE, "response_tokens": 1})
    assembler.usage_update(USAGE)
    assembler.finish("stop", "stop")
    assembler.terminal()
    assert assembler.drain()[-1]["usage_metadata"] == USAGE


def test_a_thinking_only_turn_is_an_empty_response():
    assembler = new_assembler()
    assembler.thinking("r", "pondering")
    assembler.finish("length", "max_tokens")
    with pytest.raises(EmptyResponseError) as caught:
        assembler.terminal()
    assert caught.value.thinking_only is True
    assert caught.value.finish_reason == "length"
    assert not any(e["event_type"] == "stop" for e in assembler.drain())


def test_a_turn_with_nothing_is_an_empty_response():
    assembler = new_assembler()
    assembler.finish("stop", "stop")
    with pytest.raises(EmptyResponseError) as caught:
        assembler.terminal()
    assert caught.value.thinking_only is False


def test_stop_with_a_tool_call_becomes_tool_call():
    assembler = new_assembler()
    assembler.tool_call(0, "{}", name="f", tool_call_id="c1")
    assembler.finish("stop", "stop")
    assembler.terminal()
    assert assembler.drain()[-1]["finish_reason"] == "tool_call"
    assert assembler.metadata.finish_reason == "tool_call"
    assert assembler.metadata.raw_finish_reason == "stop"


def test_length_with_a_tool_call_stays_length():
    assembler = new_assembler()
    assembler.tool_call(0, "{}", name="f", tool_call_id="c1")
    assembler.finish("length", "max_tokens")
    assembler.terminal()
    assert assembler.drain()[-1]["finish_reason"] == "length"


def test_the_finish_closes_every_open_block_in_order():
    assembler = new_assembler()
    assembler.text("a", "one")
    assembler.text("b", "two")
    assembler.finish("stop", "stop")
    assert done_items_of(assembler.drain()) == [
        {"type": "text.done", "text": "one"},
        {"type": "text.done", "text": "two"},
    ]


# --- rule E: tool call ids and arguments -------------------------------------------------------


def test_a_tool_call_without_an_id_gets_a_synthesized_one_and_a_diagnostic():
    assembler = new_assembler()
    assembler.tool_call(0, "{}", name="first", tool_call_id="c1")
    assembler.tool_call(1, "{}", name="second")
    assembler.finish("stop", "stop")
    calls = done_items_of(assembler.drain())
    assert calls[1]["tool_call_id"] == "call_2"
    assert assembler.metadata.diagnostics == [
        {"type": "tool_call_id_synthesized", "tool_call_id": "call_2", "name": "second"}
    ]


def test_strict_mode_raises_in_place_of_the_done_for_arguments_that_are_not_an_object():
    assembler = new_assembler()
    assembler.tool_call(0, '{"path": "a.txt"]', name="write", tool_call_id="c1")
    before = assembler.drain()
    with pytest.raises(ToolCallArgumentParseError) as caught:
        assembler.end_item(0)
    assert (caught.value.name, caught.value.tool_call_id) == ("write", "c1")
    assert caught.value.raw_length == len('{"path": "a.txt"]')
    assert caught.value.cut_off is False
    assert "lenient_tool_arguments=True" in str(caught.value)
    assert done_items_of(before + assembler.drain()) == []


CUT = '{"path": "a.txt", "lines": ["x'


def test_arguments_cut_by_the_output_limit_say_so_when_the_finish_comes_after_the_block():
    # Anthropic and Responses end the block first, then give the finish reason
    assembler = new_assembler()
    assembler.tool_call(0, CUT, name="write", tool_call_id="c1")
    assembler.end_item(0)  # waits: the arguments stop mid-object
    with pytest.raises(ToolCallArgumentParseError) as caught:
        assembler.finish("length", "max_tokens")
    error = caught.value
    assert error.cut_off is True
    assert "the output limit (max_tokens) was reached inside the tool call's arguments" in str(
        error
    )
    assert "raise max_tokens" in str(error)
    assert "lenient" not in str(error)
    assert error.fields()["cut_off"] is True
    assert done_items_of(assembler.drain()) == []


def test_arguments_cut_by_the_output_limit_say_so_when_the_finish_closes_the_block():
    assembler = new_assembler()  # Chat: the finish reason closes the open call
    assembler.tool_call(0, CUT, name="write", tool_call_id="c1")
    with pytest.raises(ToolCallArgumentParseError) as caught:
        assembler.finish("length", "length")
    assert caught.value.cut_off is True


def test_arguments_that_stop_early_under_another_finish_reason_are_not_blamed_on_the_limit():
    assembler = new_assembler()
    assembler.tool_call(0, CUT, name="write", tool_call_id="c1")
    assembler.end_item(0)
    with pytest.raises(ToolCallArgumentParseError) as caught:
        assembler.finish("stop", "end_turn")
    assert caught.value.cut_off is False
    assert "lenient_tool_arguments=True" in str(caught.value)


@pytest.mark.parametrize("ending", ["terminal", "end_of_input"])
def test_a_call_waiting_for_a_finish_that_never_comes_fails_as_malformed(ending: str):
    assembler = new_assembler()
    assembler.tool_call(0, CUT, name="write", tool_call_id="c1")
    assembler.end_item(0)
    with pytest.raises(ToolCallArgumentParseError) as caught:
        getattr(assembler, ending)()
    assert caught.value.cut_off is False


def test_a_call_waiting_for_the_finish_holds_back_the_blocks_after_it():
    assembler = new_assembler()
    assembler.tool_call(0, CUT, name="write", tool_call_id="c1")
    assembler.end_item(0)
    assembler.text(1, "after")
    assembler.end_item(1)
    events = assembler.drain()
    assert not any(e["content_items"][0]["type"].startswith("text") for e in events)
    with pytest.raises(ToolCallArgumentParseError):
        assembler.finish("length", "max_tokens")


def test_lenient_mode_recovers_cut_off_arguments_without_waiting():
    assembler = new_assembler(lenient_tool_arguments=True)
    assembler.tool_call(0, CUT, name="write", tool_call_id="c1")
    assembler.end_item(0)
    (call,) = done_items_of(assembler.drain())
    assert call["arguments"] == {"path": "a.txt", "lines": ["x"]}


def test_strict_mode_rejects_a_json_array():
    assembler = new_assembler()
    assembler.tool_call(0, "[1, 2]", name="f", tool_call_id="c1")
    with pytest.raises(ToolCallArgumentParseError, match="array"):
        assembler.finish("tool_call", "tool_calls")


@pytest.mark.parametrize(
    ("raw", "mode", "arguments"),
    [
        ('{"path": "a.txt", "n": 1', "partial", {"path": "a.txt", "n": 1}),
        ('{"path": "a.txt",}', "repaired", {"path": "a.txt"}),
        ("no json here", "invalid", {}),
    ],
)
def test_lenient_mode_recovers_arguments_and_says_how(raw, mode, arguments):
    assembler = new_assembler(lenient_tool_arguments=True)
    assembler.tool_call(0, raw, name="f", tool_call_id="c1")
    assembler.finish("length", "max_tokens")
    assembler.terminal()
    events = assembler.drain()
    check_events(events)
    assert done_items_of(events)[0]["arguments"] == arguments
    recovered = [d for d in assembler.metadata.diagnostics if d["type"] != "usage_missing"]
    assert recovered == [
        {
            "type": "tool_arguments_recovered",
            "mode": mode,
            "tool_call_id": "c1",
            "name": "f",
            "raw_length": len(raw),
        }
    ]


# --- rule G: after stop -----------------------------------------------------------------------


def stopped_assembler() -> ItemAssembler:
    assembler = new_assembler()
    assembler.text("t", "hi")
    assembler.finish("stop", "stop")
    assembler.terminal()
    assembler.drain()
    return assembler


def test_a_finish_after_stop_is_counted_and_changes_nothing():
    assembler = stopped_assembler()
    assembler.finish("length", "max_tokens")
    assert assembler.metadata.skipped == {"after_stop": 1}
    assert assembler.metadata.finish_reason == "stop"
    assert assembler.drain() == []


def test_terminal_and_end_of_input_after_stop_emit_nothing():
    assembler = stopped_assembler()
    assembler.terminal()
    assembler.end_of_input()
    assert assembler.drain() == []


@pytest.mark.parametrize("call", ["text", "thinking", "tool_call", "inline_data", "embedding"])
def test_a_fragment_after_stop_is_counted_and_emits_nothing(call):
    assembler = stopped_assembler()
    fragments = {
        "text": lambda: assembler.text("late", "x"),
        "thinking": lambda: assembler.thinking("late", "x"),
        "tool_call": lambda: assembler.tool_call("late", "{}", name="f", tool_call_id="c9"),
        "inline_data": lambda: assembler.inline_data("late", b"x", "audio/wav"),
        "embedding": lambda: assembler.embedding("late", [1.0]),
    }
    fragments[call]()
    assert assembler.metadata.skipped == {"after_stop": 1}
    assert assembler.drain() == []


def test_a_provider_error_after_stop_is_counted_not_raised():
    # A stream ends with its stop or an exception, never both (SPEC §2 rule 5).
    assembler = stopped_assembler()
    assembler.provider_error(ProviderError("Overloaded", error_type="overloaded_error"))
    assert assembler.metadata.skipped == {"after_stop": 1}


def test_a_provider_error_before_stop_is_raised():
    assembler = new_assembler()
    assembler.text("t", "hi")
    with pytest.raises(ProviderError, match="Overloaded"):
        assembler.provider_error(ProviderError("Overloaded"))


@pytest.mark.parametrize(
    "late_frame",
    [
        b'event: error\ndata: {"type":"error","error":'
        b'{"type":"overloaded_error","message":"Overloaded"}}\n\n',
        b'event: content_block_start\ndata: {"type":"content_block_start","index":5,'
        b'"content_block":{"type":"text","text":"late"}}\n\n',
    ],
    ids=["error-event", "new-block"],
)
def test_frames_after_the_stop_of_a_decoded_stream_never_raise(late_frame):
    # SPEC §2 rule 5: a stream that delivered its stop must not also end in an exception.
    decoded = decode_chunks(
        "anthropic-messages",
        [load_capture("anthropic-messages", "vercel-anthropic-text").body, late_frame],
    )
    assert decoded.error is None
    assert decoded.stop is not None
    assert decoded.decoder.metadata.skipped["after_stop"] == 1


# --- rule H: a block keeps its kind -------------------------------------------------------------

# One non-empty fragment of each stream kind, as an adapter sends it.
_ONE_FRAGMENT: dict[str, Any] = {
    "text": lambda a, key: a.text(key, "hello"),
    "thinking": lambda a, key: a.thinking(key, "hmm"),
    "tool_call": lambda a, key: a.tool_call(key, '{"q": 1}', name="f", tool_call_id="c1"),
    "inline_data": lambda a, key: a.inline_data(key, b"\x00\x01", "audio/L16"),
    "inline_thinking": lambda a, key: a.inline_thinking(key, b"\x02", "image/png"),
    "embedding": lambda a, key: a.embedding(key, [0.5, -1.0]),
}
_KIND_PAIRS = [(a, b) for a in _ONE_FRAGMENT for b in _ONE_FRAGMENT if a != b]


@pytest.mark.parametrize(("first", "then"), _KIND_PAIRS, ids=[f"{a}-{b}" for a, b in _KIND_PAIRS])
def test_a_fragment_of_another_kind_on_a_used_key_is_a_protocol_error(first, then):
    # An embedding is done at once, so its key is already closed; the others are still open.
    assembler = new_assembler()
    _ONE_FRAGMENT[first](assembler, ("block", 0))
    events = assembler.drain()
    with pytest.raises(StreamProtocolError) as caught:
        _ONE_FRAGMENT[then](assembler, ("block", 0))
    error = caught.value
    assert error.rule == "H"
    assert "('block', 0)" in str(error)
    assert f"from {first} to {then}" in str(error)
    # nothing of the new kind was emitted: what came before is still a valid prefix
    checker = GrammarChecker()
    for event in [*events, *assembler.drain()]:
        checker.feed(event)


def test_text_then_thinking_on_one_anthropic_block_index_is_a_protocol_error(replay_server):
    # A text block at index 0 that then gets a thinking_delta: before rule H the public stream
    # carried a thinking.delta inside the text group (an invalid stream).
    body = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1",'
        b'"model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":0}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"Hi"}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"thinking_delta","thinking":"wait"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
        b'"usage":{"output_tokens":2}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    capture = Capture("anthropic-messages", "kind-change", body, {})
    decoded = decode_over_http(replay_server, capture, slices=[7, 40])
    assert isinstance(decoded.error, StreamProtocolError)
    assert decoded.error.rule == "H"
    assert "block 0 changed kind from text to thinking" in str(decoded.error)
    assert [i for e in decoded.events for i in e["content_items"]] == [
        {"type": "text.delta", "text": "Hi"}
    ]
    partial = decoded.error.partial
    assert partial is not None and partial.status != "final"
    assert partial.open_item == {"type": "text.delta", "text": "Hi"}
