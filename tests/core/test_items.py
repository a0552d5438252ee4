"""The one table of item kinds (`modelstream.items`) and the readers that must agree with it.

For every stream kind, random fragments go through the assembler the way an adapter sends them;
the `.done` must hold the join SPEC §2 rule 3 names for the kind's `Join` (written out here, not
taken from the table), and the accumulator (open item and final message), the grammar checker,
the JSON wire round trip, the trace store and the terminal renderer must all read the result as
the table says.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any, get_args, get_type_hints

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from modelstream import (
    Accumulator,
    EmptyResponseError,
    GrammarChecker,
    ItemAssembler,
    StreamMetadata,
    jsonwire,
)
from modelstream.cli.render import _COLOURS, PrettyRenderer
from modelstream.items import BINARY_TYPES, BY_TYPE, KINDS, STREAM_KINDS, Join, Kind, kind_of
from modelstream.traces import TraceStore
from modelstream.types import ITEM_KINDS, DeltaItem, DoneItem, Message
from support import REPO
from support.traces import make_turn, user

USAGE = {"cached_tokens": 1, "prompt_tokens": 2, "thoughts_tokens": 0, "response_tokens": 4}


# --- the table against the types and the SPEC -------------------------------------------------


def _item_classes(union: Any) -> dict[str, dict[str, Any]]:
    """item type -> its TypedDict's field annotations, for every member of a `types` union."""
    out = {}
    for cls in get_args(union):
        hints = get_type_hints(cls)
        (item_type,) = get_args(hints["type"])
        out[item_type] = hints
    return out


def test_the_stream_kinds_are_the_spec_kinds_in_spec_order():
    assert (
        tuple(STREAM_KINDS)
        == ITEM_KINDS
        == (
            "text",
            "thinking",
            "tool_call",
            "inline_data",
            "inline_thinking",
            "embedding",
        )
    )
    assert set(KINDS) - set(STREAM_KINDS) == {"image_url", "tool_result"}  # user-only


def test_every_item_type_of_the_types_module_has_its_growing_field_and_fixed_fields():
    deltas, dones = _item_classes(DeltaItem), _item_classes(DoneItem)
    assert set(deltas) == {kind.delta_type for kind in STREAM_KINDS.values()}
    assert set(dones) == {kind.done_type for kind in KINDS.values()}
    for item_type, hints in {**deltas, **dones}.items():
        kind, _ = BY_TYPE[item_type]
        for name in (kind.growing, *kind.fixed) if kind.streams else ():
            assert name in hints, f"{item_type} lacks {name}"


def test_what_the_table_says_of_each_kind():
    # SPEC §2: growing fields and joins; §2 rule 3; §4 EmptyResponseError (thinking only).
    facts = {
        name: (kind.growing, kind.join, kind.binary, kind.content) for name, kind in KINDS.items()
    }
    assert facts == {
        "text": ("text", Join.CONCAT_STR, False, True),
        "thinking": ("thinking", Join.CONCAT_STR, False, False),
        "tool_call": ("arguments", Join.JSON_ARGUMENTS, False, True),
        "inline_data": ("data", Join.CONCAT_BYTES, True, True),
        "inline_thinking": ("data", Join.CONCAT_BYTES, True, False),
        "embedding": ("embedding", Join.WHOLE, False, True),
        "image_url": ("", None, False, True),
        "tool_result": ("", None, False, True),
    }
    assert {
        "inline_data.delta",
        "inline_data.done",
        "inline_thinking.delta",
        "inline_thinking.done",
    } == BINARY_TYPES
    # SPEC §3: audio chunks of one clip join, every image and inline thinking part stands alone
    assert KINDS["inline_data"].fragments_join("audio/L16;rate=24000")
    assert not KINDS["inline_data"].fragments_join("image/png")
    assert not KINDS["inline_thinking"].fragments_join("audio/wav")
    assert not KINDS["embedding"].fragments_join()
    assert KINDS["text"].fragments_join() and KINDS["tool_call"].fragments_join()
    assert kind_of("tool_result.done") is KINDS["tool_result"]
    assert kind_of("tool_result.delta") is None and kind_of("text") is None


# --- every reader joins as the table says -----------------------------------------------------


def _spec_join(join: Join, parts: list[Any]) -> Any:
    """SPEC §2 rule 3, written out: what a `.done`'s growing field holds for its fragments."""
    if join is Join.CONCAT_STR:
        return "".join(parts)
    if join is Join.CONCAT_BYTES:
        return b"".join(parts)
    if join is Join.JSON_ARGUMENTS:
        return json.loads("".join(parts))
    assert join is Join.WHOLE and len(parts) == 1
    return parts[0]


def _send(assembler: ItemAssembler, kind: Kind, key: Any, fragment: Any, mime: str) -> None:
    """One adapter call for a fragment of `kind` (the first of a tool call names it)."""
    if kind.name == "tool_call":
        first = not assembler.has_open(key)
        name, call_id = ("lookup", "call_7") if first else ("", "")
        assembler.tool_call(key, fragment, name=name, tool_call_id=call_id)
    elif kind.binary:
        getattr(assembler, kind.name)(key, fragment, mime)
    else:
        getattr(assembler, kind.name)(key, fragment)


def _cut(data: st.DataObject, whole: Any) -> list[Any]:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(whole)), max_size=6)))
    return [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True)]


_json_object = st.dictionaries(
    st.text(max_size=4),
    st.none() | st.booleans() | st.integers(-99, 99) | st.text(max_size=5),
    max_size=3,
)


def _fragments(data: st.DataObject, kind: Kind) -> tuple[list[Any], str]:
    """Fragments of one item of `kind` as a provider might cut them, and their mime type."""
    if kind.join is Join.WHOLE:
        vector = data.draw(st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=8))
        return [vector], ""
    if kind.binary:
        mime = data.draw(st.sampled_from(["audio/L16;rate=24000", "image/png", "audio/wav"]))
        return _cut(data, data.draw(st.binary(min_size=1, max_size=24))), mime
    if kind.parses_arguments:
        return _cut(data, json.dumps(data.draw(_json_object))), ""
    text = data.draw(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1))
    return _cut(data, text), ""


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(ITEM_KINDS), data=st.data())
def test_fragments_of_each_kind_join_as_the_table_says_in_every_reader(name, data):
    kind = STREAM_KINDS[name]
    parts, mime = _fragments(data, kind)
    # An adapter joins fragments into one item where the kind's fragments join, else each
    # fragment is its own item (every image, every inline thinking part, every vector).
    joins = kind.fragments_join(mime)
    groups = [parts] if joins else [[part] for part in parts if len(part)]
    expected = [_spec_join(kind.join, group) for group in groups]  # type: ignore[arg-type]

    assembler = ItemAssembler(StreamMetadata(protocol="test"))
    accumulator = Accumulator()
    checker = GrammarChecker()
    events: list[Any] = []

    def take() -> None:
        for event in assembler.drain():
            checker.feed(event)
            accumulator.apply(event)
            events.append(event)

    for n, group in enumerate(groups):
        for part in group:
            _send(assembler, kind, n, part, mime)
        take()
        if kind.join is not Join.WHOLE:  # the open item so far, as both sides show it
            raw = b"".join(group) if kind.binary else "".join(group)  # raw: JSON still text
            for open_item in (assembler.open_item(), accumulator.open_item()):
                assert open_item is not None and open_item[kind.growing] == raw  # type: ignore[literal-required]
            assembler.end_item(n)
            take()
    if not kind.content:  # a turn of thinking only is an EmptyResponseError: answer too
        assembler.text("answer", "ok")
    assembler.usage_update(USAGE)  # type: ignore[arg-type]
    assembler.finish("stop", "stop")
    assembler.terminal()
    take()
    checker.end()

    done = [i for e in events for i in e["content_items"] if i["type"] == kind.done_type]
    assert [item[kind.growing] for item in done] == expected
    if kind.binary:
        assert all(item["mime_type"] == mime for item in done)
    final = accumulator.final(StreamMetadata(protocol="test")).message
    assert [i for i in final["content_items"] if i["type"] == kind.done_type] == done

    # the JSON wire: binary growing fields travel as base64 strings and come back as bytes
    wire = [jsonwire.dumps(event) for event in events]
    for line, event in zip(wire, events, strict=True):
        (item,) = json.loads(line)["content_items"] or [None]
        if item is not None and item["type"] in BINARY_TYPES:
            assert isinstance(item[kind.growing], str)
        assert jsonwire.loads_event(line) == event
    messages = jsonwire.loads_messages(jsonwire.dumps([final]))
    assert messages == [final]


@pytest.mark.parametrize("name", ITEM_KINDS)
def test_a_turn_of_each_kind_ends_in_stop_only_if_the_kind_counts_as_content(name):
    kind = STREAM_KINDS[name]
    assembler = ItemAssembler(StreamMetadata(protocol="test"))
    fragment: Any = {
        Join.CONCAT_STR: "x",
        Join.CONCAT_BYTES: b"x",
        Join.JSON_ARGUMENTS: "{}",
        Join.WHOLE: [0.25],
    }[kind.join]  # type: ignore[index]
    _send(assembler, kind, 0, fragment, "audio/wav")
    assembler.finish("stop", "stop")
    if kind.content:
        assembler.terminal()
        assert assembler.drain()[-1]["event_type"] == "stop"
    else:
        with pytest.raises(EmptyResponseError) as caught:
            assembler.terminal()
        assert caught.value.thinking_only is True


# --- the trace store and the renderer ----------------------------------------------------------


def _done_item(kind: Kind, word: str) -> dict[str, Any]:
    """A `.done` of `kind` that holds `word` wherever the kind has words."""
    by_kind: dict[str, dict[str, Any]] = {
        "text": {"text": word},
        "thinking": {"thinking": word},
        "tool_call": {"tool_call_id": "c1", "name": "f", "arguments": {"q": word}},
        "inline_data": {"data": word.encode(), "mime_type": "audio/wav"},
        "inline_thinking": {"data": word.encode(), "mime_type": "image/png"},
        "embedding": {"embedding": [0.5]},
        "image_url": {"image_url": f"https://example.com/{word}.png"},
        "tool_result": {"tool_call_id": "c1", "text": word},
    }
    return {"type": kind.done_type, **by_kind[kind.name]}


@pytest.mark.parametrize("name", list(KINDS))
def test_the_trace_store_keeps_bytes_and_finds_words_as_the_table_says(
    name: str, store: TraceStore
) -> None:
    kind = KINDS[name]
    word = f"zebra{name.replace('_', '')}"
    item = _done_item(kind, word)
    role = "assistant" if "assistant" in kind.roles else "user"
    message: Message = {"role": role, "content_items": [item]}  # type: ignore[typeddict-item,list-item]
    store.append(make_turn("t-" + name, [user("hi"), message]))
    (turn,) = store.get_trace("t-" + name)
    assert turn.messages[1] == message  # bytes come back as bytes
    found = [t.trace_id for t in store.list_traces(text=word)]
    assert found == (["t-" + name] if kind.search else [])


def test_the_renderer_shows_each_kind_as_the_table_says() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None, highlight=False, markup=False)
    renderer = PrettyRenderer(console, "test", "test")
    assembler = ItemAssembler(StreamMetadata(protocol="test"))
    assembler.thinking(0, "pondering")
    assembler.text(1, "hello")
    assembler.tool_call(2, '{"q": 1}', name="lookup", tool_call_id="c1")
    assembler.inline_data(3, b"abc", "audio/wav")
    assembler.inline_thinking(4, b"abcd", "image/png")
    assembler.embedding(5, [0.5, 0.25])
    assembler.usage_update(USAGE)  # type: ignore[arg-type]
    assembler.finish("stop", "stop")
    assembler.terminal()
    metadata = StreamMetadata(protocol="test")
    renderer.events(assembler.drain(), metadata)
    shown = out.getvalue()
    assert set(_COLOURS) == set(STREAM_KINDS)  # every kind has its colour
    for line in (
        "thinking",
        "pondering",
        "text",
        "hello",
        "tool call lookup  id c1",
        '{"q": 1}',
        "inline data audio/wav",
        "3 bytes of audio/wav",
        "inline thinking image/png",
        "4 bytes of image/png",
        "2 dimensions: [0.5000, 0.2500]",
    ):
        assert line in shown, line


def test_the_item_kinds_example_in_the_protocol_docs_runs(capsys: pytest.CaptureFixture[str]):
    docs = (REPO / "docs" / "protocol.md").read_text()
    section = docs.split("## Item kinds", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    exec(compile(code, "docs/protocol.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(KINDS)
    assert "inline_data data concatenate bytes binary content" in lines
