"""Output items finished out of order keep the provider's output order (issue 18 item 13).

A Responses stream may finish an item after the one that follows it (OpenRouter finishes its
reasoning item after the message: corpus `pydanticai-openrouter-raw-reasoning`). The events stay
grammar-valid, and the final message lists the items in output order (`output_index`), so it
replays as a valid request: the Responses API rejects a reasoning item that is not followed by
its item ("Item 'rs_…' of type 'reasoning' was provided without its required following item").

The streams are synthetic, in the corpus's framing (`event: <type>` + `data: <json>`), decoded
over loopback HTTP or, for the re-chunking property, in process at random cut points.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream import FinalResponse
from modelstream.protocols import encode_request
from support import Capture, Decoded, decode_chunks, decode_over_http, pieces

PROTOCOL = "openai-responses"


def frames(*payloads: dict[str, Any]) -> bytes:
    return b"".join(
        b"event: " + p["type"].encode() + b"\ndata: " + json.dumps(p).encode() + b"\n\n"
        for p in payloads
    )


def response(*payloads: dict[str, Any]) -> bytes:
    return frames(
        {"type": "response.created", "response": {"id": "resp_1", "model": "gpt-5"}},
        *payloads,
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}},
    )


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def reasoning(item_id: str, encrypted: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning", "id": item_id, "summary": []}
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def message(item_id: str, text: str = "") -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}] if text else []
    return {"type": "message", "id": item_id, "role": "assistant", "content": content}


def text_events(index: int, item_id: str, *pieces: str) -> list[dict[str, Any]]:
    """A message's one output_text part, streamed in pieces."""
    where = {"item_id": item_id, "output_index": index, "content_index": 0}
    part = {"type": "output_text", "text": "", "annotations": []}
    whole = {**part, "text": "".join(pieces)}
    return [
        {"type": "response.content_part.added", **where, "part": part},
        *({"type": "response.output_text.delta", **where, "delta": p} for p in pieces),
        {"type": "response.output_text.done", **where, "text": whole["text"]},
        {"type": "response.content_part.done", **where, "part": whole},
    ]


def summary_events(index: int, item_id: str, part: int, *pieces: str) -> list[dict[str, Any]]:
    where = {"item_id": item_id, "output_index": index, "summary_index": part}
    empty = {"type": "summary_text", "text": ""}
    return [
        {"type": "response.reasoning_summary_part.added", **where, "part": empty},
        *({"type": "response.reasoning_summary_text.delta", **where, "delta": p} for p in pieces),
        {"type": "response.reasoning_summary_part.done", **where, "part": empty},
    ]


def call_events(index: int, item_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    item = {"type": "function_call", "id": item_id, "call_id": f"call_{item_id}", "name": name}
    return [
        added(index, {**item, "arguments": ""}),
        {
            "type": "response.function_call_arguments.delta",
            "item_id": item_id,
            "output_index": index,
            "delta": arguments,
        },
        done(index, {**item, "arguments": arguments}),
    ]


def serve(server: Any, body: bytes) -> Decoded:
    decoded = decode_over_http(server, Capture(PROTOCOL, "out-of-order", body, {}), slices=[5])
    assert decoded.error is None, decoded.error
    return decoded


def final_items(decoded: Decoded) -> list[dict[str, Any]]:
    assert decoded.decoder is not None
    result = decoded.decoder.result
    assert isinstance(result, FinalResponse)
    assert list(result.message["content_items"]) == decoded.done_items
    return decoded.done_items


def replayed(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The assistant's input items when the turn is sent back to the Responses API."""
    history = [
        {"role": "user", "content_items": [{"type": "text.done", "text": "Hi"}]},
        {"role": "assistant", "content_items": items},
    ]
    body = encode_request(PROTOCOL, "gpt-5", history, {}).json
    return [item for item in body["input"][1:] if item.get("type") != "function_call_output"]


def assert_replays_as_a_valid_request(items: list[dict[str, Any]]) -> None:
    """Each reasoning item is followed by the item it belongs to, and no item repeats."""
    replay = replayed(items)
    ids = [item.get("id") for item in replay]
    assert len(ids) == len(set(ids)), ids
    for at, item in enumerate(replay):
        if item["type"] == "reasoning":
            assert at + 1 < len(replay) and replay[at + 1]["type"] != "reasoning", replay


# --- examples ----------------------------------------------------------------------------------


def test_an_encrypted_reasoning_item_finished_after_its_message_stays_before_it(replay_server):
    body = response(
        added(0, reasoning("rs_1")),
        added(1, message("msg_1")),
        *text_events(1, "msg_1", "The answer", " is 4."),
        done(1, message("msg_1", "The answer is 4.")),
        done(0, reasoning("rs_1", encrypted="enc-1")),
    )
    items = final_items(serve(replay_server, body))
    assert items == [
        {
            "type": "thinking.done",
            "thinking": "",
            "fidelity": {"id": "rs_1", "encrypted_content": "enc-1"},
        },
        {"type": "text.done", "text": "The answer is 4.", "fidelity": {"id": "msg_1"}},
    ]
    assert [(item["type"], item["id"]) for item in replayed(items)] == [
        ("reasoning", "rs_1"),
        ("message", "msg_1"),
    ]


def test_a_reasoning_item_finished_after_the_call_it_leads_to_stays_before_it(replay_server):
    body = response(
        added(0, reasoning("rs_1")),
        *call_events(1, "fc_1", "get_weather", '{"city": "Paris"}'),
        done(0, reasoning("rs_1", encrypted="enc-1")),
    )
    items = final_items(serve(replay_server, body))
    assert [item["type"] for item in items] == ["thinking.done", "tool_call.done"]
    assert [(item["type"], item["id"]) for item in replayed(items)] == [
        ("reasoning", "rs_1"),
        ("function_call", "fc_1"),
    ]


def test_summary_parts_interleaved_with_the_message_stay_one_reasoning_item_before_it(
    replay_server,
):
    first, second = summary_events(0, "rs_1", 0, "Adding"), summary_events(0, "rs_1", 1, "Done")
    body = response(
        added(0, reasoning("rs_1")),
        *first,
        added(1, message("msg_1")),
        *text_events(1, "msg_1", "4")[:2],  # the part opens and its first delta streams
        *second,
        *text_events(1, "msg_1", "4")[2:],
        done(1, message("msg_1", "4")),
        done(0, reasoning("rs_1", encrypted="enc-1")),
    )
    items = final_items(serve(replay_server, body))
    assert [(item["type"], item["fidelity"]["id"]) for item in items] == [
        ("thinking.done", "rs_1"),
        ("thinking.done", "rs_1"),
        ("text.done", "msg_1"),
    ]
    replay = replayed(items)
    assert replay[0]["summary"] == [
        {"type": "summary_text", "text": "Adding"},
        {"type": "summary_text", "text": "Done"},
    ]
    assert_replays_as_a_valid_request(items)


# --- the property: any interleaving, any chunking -----------------------------------------------


@dataclass
class Item:
    """One output item of a generated response and the events that carry it, in order."""

    index: int
    item_id: str
    kind: str  # "encrypted" (reasoning without text), "summary", "message", "call"
    events: list[dict[str, Any]] = field(default_factory=list)
    content: Any = None  # the summary parts, the text, or the arguments


def build_item(index: int, kind: str, data: st.DataObject) -> Item:
    words = st.text("abc xyz", min_size=1, max_size=6)
    if kind == "encrypted":
        item = Item(index, f"rs_{index}", kind)
        item.events = [
            added(index, reasoning(item.item_id)),
            done(index, reasoning(item.item_id, f"enc-{index}")),
        ]
    elif kind == "summary":
        item = Item(index, f"rs_{index}", kind)
        parts = data.draw(st.lists(st.lists(words, min_size=1, max_size=3), min_size=1, max_size=2))
        item.content = ["".join(part) for part in parts]
        item.events = [added(index, reasoning(item.item_id))]
        for number, part in enumerate(parts):
            item.events += summary_events(index, item.item_id, number, *part)
        item.events.append(done(index, reasoning(item.item_id, f"enc-{index}")))
    elif kind == "message":
        item = Item(index, f"msg_{index}", kind)
        text = data.draw(st.lists(words, min_size=1, max_size=4))
        item.content = "".join(text)
        item.events = [
            added(index, message(item.item_id)),
            *text_events(index, item.item_id, *text),
            done(index, message(item.item_id, item.content)),
        ]
    else:
        item = Item(index, f"fc_{index}", kind)
        item.content = {"n": index}
        item.events = call_events(index, item.item_id, f"tool_{index}", json.dumps(item.content))
    return item


@st.composite
def out_of_order_responses(draw: st.DrawFn) -> tuple[list[Item], bytes]:
    """Segments of [reasoning] + message or call, as a turn has them; every item's events stay
    in order and items are announced (`.added`) in output order, but otherwise the items'
    events interleave at random, so items finish in any order."""
    data = draw(st.data())
    kinds: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        lead = draw(st.sampled_from(["", "encrypted", "summary"]))
        kinds += [lead] if lead else []
        kinds.append(draw(st.sampled_from(["message", "call"])))
    items = [build_item(index, kind, data) for index, kind in enumerate(kinds)]
    cursors = [0] * len(items)
    order: list[dict[str, Any]] = []
    while any(cursor < len(item.events) for cursor, item in zip(cursors, items, strict=True)):
        ready = [
            n
            for n, item in enumerate(items)
            if cursors[n] < len(item.events) and (cursors[n] > 0 or n == 0 or cursors[n - 1] > 0)
        ]
        n = draw(st.sampled_from(ready))
        order.append(items[n].events[cursors[n]])
        cursors[n] += 1
    return items, response(*order)


def check_output_order(items: list[Item], decoded: Decoded) -> None:
    assert decoded.error is None, decoded.error
    final = final_items(decoded)
    ids = [item["fidelity"]["id"] for item in final]
    runs = [item_id for at, item_id in enumerate(ids) if at == 0 or ids[at - 1] != item_id]
    assert runs == [item.item_id for item in items]  # output order, each item in one run
    for item in items:
        mine = [done for done in final if done["fidelity"]["id"] == item.item_id]
        if item.kind == "summary":
            assert [done["thinking"] for done in mine] == item.content
        elif item.kind == "message":
            assert [done["text"] for done in mine] == [item.content]
        elif item.kind == "call":
            assert [done["arguments"] for done in mine] == [item.content]
    assert_replays_as_a_valid_request(final)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated=out_of_order_responses(), data=st.data())
def test_items_finished_in_any_order_decode_in_output_order_however_the_body_is_cut(
    generated, data
):
    items, body = generated
    whole = decode_chunks(PROTOCOL, [body])
    check_output_order(items, whole)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=40), label="cuts")
    cut = decode_chunks(PROTOCOL, pieces(body, cuts))
    assert cut.events == whole.events
    assert cut.decoder is not None and whole.decoder is not None
    assert cut.decoder.metadata == whole.decoder.metadata
