"""A tool call whose name arrives after its start (issue 18 item 12).

SPEC §2: the first `tool_call.delta` of a group carries the name. Some streams open a call before
they name it: a legacy Interactions `content.start` with only the call's `id`, a Chat chunk whose
`function.name` comes a chunk after the call's id (OpenAI-compatible gateways), a Responses
`function_call` item whose name is empty at `.added` and given at `.done`. The group is held
(nothing of it is emitted, its arguments are kept) until the name is known. A call that ends
without one never becomes a tool call: the turn ends in `IncompleteStreamError` (the provider
never sent what the call needs to run), like a call whose arguments break off.

Every stream here is synthetic, built in the provider's framing, and decoded over loopback HTTP
as the corpus tests do; `decode_over_http` checks the grammar of every event as it comes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream import (
    GrammarChecker,
    GrammarViolation,
    IncompleteStreamError,
    ItemAssembler,
    StreamMetadata,
)
from modelstream.protocols.bedrock_converse_stream.emulator import event_message
from support import Capture, Decoded, ReplayServer, decode_over_http


def serve(server: ReplayServer, protocol: str, body: bytes) -> Decoded:
    return decode_over_http(server, Capture(protocol, "late-name", body, {}), slices=[7])


def named_frames(*payloads: dict[str, Any], key: str = "type") -> bytes:
    """`event: <payload[key]>` + `data: <json>` frames (Responses, Anthropic, Interactions)."""
    return b"".join(
        b"event: " + p[key].encode() + b"\ndata: " + json.dumps(p).encode() + b"\n\n"
        for p in payloads
    )


def data_frames(*payloads: dict[str, Any], end: bytes = b"") -> bytes:
    """`data: <json>` frames (Chat Completions, generateContent)."""
    return b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in payloads) + end


def tool_events(decoded: Decoded) -> list[dict[str, Any]]:
    return [
        item
        for event in decoded.events
        for item in event["content_items"]
        if item["type"].startswith("tool_call.")
    ]


def assert_never_a_call(decoded: Decoded) -> None:
    """The nameless call ended the turn as incomplete and left no trace of a call."""
    assert isinstance(decoded.error, IncompleteStreamError), decoded.error
    assert "name" in str(decoded.error)
    assert tool_events(decoded) == []
    assert decoded.stop is None
    partial = decoded.error.partial
    assert partial is not None and partial.status == "incomplete"
    assert all(item["type"] != "tool_call.done" for item in partial.items)
    assert partial.open_item is None


# --- the grammar ------------------------------------------------------------------------------


def test_the_grammar_checker_rejects_a_first_tool_call_fragment_without_a_name():
    checker = GrammarChecker()
    first = {"type": "tool_call.delta", "tool_call_id": "c1", "name": "", "arguments": "{}"}
    with pytest.raises(GrammarViolation) as caught:
        checker.feed(
            {
                "role": "assistant",
                "event_type": "delta",
                "content_items": [first],
                "usage_metadata": None,
                "finish_reason": None,
                "created_at": 0,
            }
        )
    assert caught.value.rule == "2"
    assert "name" in str(caught.value)


# --- the assembler: any interleaving, names early, late or never --------------------------------


@st.composite
def blocks_with_late_names(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Text blocks and tool calls; each call is named at a random fragment (or never)."""
    blocks = []
    for n in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            text = draw(st.lists(st.text("xyz", min_size=1, max_size=3), min_size=1, max_size=3))
            blocks.append({"key": ("text", n), "fragments": text})
            continue
        arguments = draw(st.dictionaries(st.text("ab", max_size=2), st.integers(0, 9), max_size=2))
        raw = json.dumps(arguments)
        cuts = sorted(draw(st.lists(st.integers(0, len(raw)), max_size=3)))
        fragments = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
        named_at = draw(st.integers(0, len(fragments)))  # len(fragments): never named
        repeated = draw(st.booleans())  # a gateway repeating the name on every later chunk
        blocks.append(
            {
                "key": ("call", n),
                "fragments": fragments,
                "named_at": named_at,
                "repeated": repeated,
                "arguments": arguments,
            }
        )
    return blocks


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=blocks_with_late_names(), data=st.data())
def test_any_interleaving_of_calls_named_late_or_never_yields_a_valid_stream(blocks, data):
    queues = {
        block["key"]: [
            *range(len(block["fragments"])),
            *(["end"] if data.draw(st.booleans()) else []),
        ]
        for block in blocks
    }
    by_key = {block["key"]: block for block in blocks}
    assembler = ItemAssembler(StreamMetadata(protocol="test"))
    checker = GrammarChecker()
    events: list[Any] = []
    opened: list[Any] = []  # keys in order of first appearance
    error = None
    try:
        while any(queues.values()):
            key = data.draw(st.sampled_from([k for k, q in queues.items() if q]))
            step = queues[key].pop(0)
            block = by_key[key]
            if step == "end":
                assembler.end_item(key)
            elif key[0] == "text":
                assembler.text(key, block["fragments"][step])
            else:
                named = step == block["named_at"] or (
                    block["repeated"] and step > block["named_at"]
                )
                assembler.tool_call(
                    key,
                    block["fragments"][step],
                    name=f"tool{key[1]}" if named else "",
                    tool_call_id=f"id{key[1]}" if step == 0 else "",
                )
            if key not in opened:
                opened.append(key)
            events += assembler.drain()
        assembler.finish("stop", "stop")
        assembler.end_of_input()
    except IncompleteStreamError as exc:
        error = exc
    events += assembler.drain()
    for event in events:
        checker.feed(event)

    never = [k for k in opened if len(by_key[k]["fragments"]) == by_key[k].get("named_at")]
    done = [item for event in events for item in event["content_items"] if ".done" in item["type"]]
    expected = opened[: opened.index(never[0])] if never else opened
    assert len(done) == len(expected)
    for item, key in zip(done, expected, strict=True):
        block = by_key[key]
        if key[0] == "text":
            assert item == {"type": "text.done", "text": "".join(block["fragments"])}
        else:
            assert item == {
                "type": "tool_call.done",
                "tool_call_id": f"id{key[1]}",
                "name": f"tool{key[1]}",
                "arguments": block["arguments"],
            }
    if never:
        assert error is not None and error.missing == "tool call name"
        unnamed = {f"id{key[1]}" for key in never}
        assert not any(
            item.get("tool_call_id") in unnamed
            for event in events
            for item in event["content_items"]
        )
    else:
        assert error is None
        checker.end()


# --- Gemini Interactions ----------------------------------------------------------------------


def interactions(*payloads: dict[str, Any]) -> bytes:
    """A turn in the legacy vocabulary (`content.*`) or the steps one (`step.*`)."""
    start, end = "interaction.start", "interaction.complete"
    if payloads[0]["event_type"].startswith("step."):
        start, end = "interaction.created", "interaction.completed"
    return named_frames(
        {"event_type": start, "interaction": {"id": "v1_y", "model": "m"}},
        *payloads,
        {"event_type": end, "interaction": {"status": "requires_action"}},
        key="event_type",
    )


def test_an_interactions_call_started_with_its_id_only_takes_its_name_from_the_delta(
    replay_server,
):
    body = interactions(
        {
            "event_type": "content.start",
            "index": 0,
            "content": {"type": "function_call", "id": "c9"},
        },
        {
            "event_type": "content.delta",
            "index": 0,
            "delta": {"type": "function_call", "id": "c9", "name": "f", "arguments": {"x": 1}},
        },
        {"event_type": "content.stop", "index": 0},
    )
    decoded = serve(replay_server, "gemini-interactions", body)
    assert decoded.error is None
    first = tool_events(decoded)[0]
    assert (first["name"], first["tool_call_id"]) == ("f", "c9")
    assert decoded.done_items == [
        {"type": "tool_call.done", "tool_call_id": "c9", "name": "f", "arguments": {"x": 1}}
    ]
    assert decoded.stop["finish_reason"] == "tool_call"


def test_interactions_arguments_streamed_before_the_name_are_held_and_kept(replay_server):
    body = interactions(
        {"event_type": "step.start", "index": 0, "step": {"type": "function_call", "id": "c1"}},
        {
            "event_type": "step.delta",
            "index": 0,
            "delta": {"type": "arguments_delta", "arguments": '{"q": '},
        },
        {
            "event_type": "step.delta",
            "index": 0,
            "delta": {"type": "function_call", "name": "lookup"},
        },
        {
            "event_type": "step.delta",
            "index": 0,
            "delta": {"type": "arguments_delta", "arguments": '"a"}'},
        },
        {"event_type": "step.stop", "index": 0},
    )
    decoded = serve(replay_server, "gemini-interactions", body)
    assert decoded.error is None
    deltas = [item for item in tool_events(decoded) if item["type"] == "tool_call.delta"]
    assert deltas[0]["name"] == "lookup"
    assert "".join(item["arguments"] for item in deltas) == '{"q": "a"}'
    assert decoded.done_items == [
        {"type": "tool_call.done", "tool_call_id": "c1", "name": "lookup", "arguments": {"q": "a"}}
    ]


def test_an_interactions_call_that_ends_without_a_name_is_never_a_tool_call(replay_server):
    body = interactions(
        {"event_type": "content.start", "index": 0, "content": {"type": "text"}},
        {
            "event_type": "content.delta",
            "index": 0,
            "delta": {"type": "text", "text": "Let me look."},
        },
        {"event_type": "content.stop", "index": 0},
        {
            "event_type": "content.start",
            "index": 1,
            "content": {"type": "function_call", "id": "c9"},
        },
        {
            "event_type": "content.delta",
            "index": 1,
            "delta": {"type": "function_call", "arguments": {"x": 1}},
        },
        {"event_type": "content.stop", "index": 1},
    )
    decoded = serve(replay_server, "gemini-interactions", body)
    assert_never_a_call(decoded)
    assert decoded.done_items == [{"type": "text.done", "text": "Let me look."}]


# --- OpenAI Chat Completions ------------------------------------------------------------------


def chunk(*calls: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"tool_calls": list(calls)} if calls else {}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def chat(*chunks: dict[str, Any]) -> bytes:
    return data_frames(*chunks, chunk(finish="tool_calls"), end=b"data: [DONE]\n\n")


def test_a_chat_call_named_in_a_later_chunk_than_its_id_streams_with_its_name(replay_server):
    body = chat(
        chunk({"index": 0, "id": "call_1", "type": "function", "function": {"arguments": ""}}),
        chunk({"index": 0, "function": {"name": "get_weather"}}),
        chunk({"index": 0, "function": {"arguments": '{"city":'}}),
        chunk({"index": 0, "function": {"arguments": '"Paris"}'}}),
    )
    decoded = serve(replay_server, "openai-chat", body)
    assert decoded.error is None
    first = tool_events(decoded)[0]
    assert (first["name"], first["tool_call_id"]) == ("get_weather", "call_1")
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "call_1",
            "name": "get_weather",
            "arguments": {"city": "Paris"},
        }
    ]
    assert decoded.stop["finish_reason"] == "tool_call"


def test_a_later_chat_call_waits_behind_an_earlier_one_still_without_its_name(replay_server):
    body = chat(
        chunk({"index": 0, "id": "call_a", "function": {"arguments": '{"x":'}}),
        chunk({"index": 1, "id": "call_b", "function": {"name": "second", "arguments": "{}"}}),
        chunk({"index": 0, "function": {"name": "first", "arguments": "1}"}}),
    )
    decoded = serve(replay_server, "openai-chat", body)
    assert decoded.error is None
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "call_a",
            "name": "first",
            "arguments": {"x": 1},
        },
        {"type": "tool_call.done", "tool_call_id": "call_b", "name": "second", "arguments": {}},
    ]


def test_a_chat_call_never_named_is_never_a_tool_call(replay_server):
    body = chat(
        chunk({"index": 0, "id": "call_1", "type": "function", "function": {"arguments": "{}"}})
    )
    assert_never_a_call(serve(replay_server, "openai-chat", body))


# --- OpenAI Responses -------------------------------------------------------------------------


def responses(*payloads: dict[str, Any]) -> bytes:
    return named_frames(
        {"type": "response.created", "response": {"id": "resp_1", "model": "m"}},
        *payloads,
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}},
    )


def test_a_responses_call_named_only_at_its_done_streams_with_its_name(replay_server):
    added = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "",
        "arguments": "",
    }
    done = {**added, "name": "get_weather", "arguments": '{"city":"Paris"}'}
    body = responses(
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": '{"city":',
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": '"Paris"}',
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done},
    )
    decoded = serve(replay_server, "openai-responses", body)
    assert decoded.error is None
    assert tool_events(decoded)[0]["name"] == "get_weather"
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "call_1",
            "name": "get_weather",
            "arguments": {"city": "Paris"},
            "fidelity": {"id": "fc_1"},
        }
    ]


def test_a_responses_call_never_named_is_never_a_tool_call(replay_server):
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "arguments": "{}"}
    body = responses(
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
    )
    assert_never_a_call(serve(replay_server, "openai-responses", body))


# --- the protocols that name a call at its start: a nameless start is never a call -------------


def test_an_anthropic_tool_use_block_without_a_name_is_never_a_tool_call(replay_server):
    body = named_frames(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "model": "m",
                "usage": {"input_tokens": 1, "output_tokens": 0},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{}"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    )
    assert_never_a_call(serve(replay_server, "anthropic-messages", body))


def test_a_bedrock_tool_delta_without_its_start_is_never_a_tool_call(replay_server):
    body = b"".join(
        [
            event_message("messageStart", {"role": "assistant"}),
            event_message(
                "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}
            ),
            event_message("contentBlockStop", {"contentBlockIndex": 0}),
            event_message("messageStop", {"stopReason": "tool_use"}),
        ]
    )
    assert_never_a_call(serve(replay_server, "bedrock-converse-stream", body))


def test_a_gemini_function_call_without_a_name_is_never_a_tool_call(replay_server):
    body = data_frames(
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"functionCall": {"args": {"x": 1}}}]},
                    "finishReason": "STOP",
                }
            ],
            "modelVersion": "m",
        }
    )
    assert_never_a_call(serve(replay_server, "gemini-generate-content", body))


def test_an_interactions_signature_before_the_call_is_named_keeps_the_calls_own_id(replay_server):
    body = interactions(
        {"event_type": "content.start", "index": 0, "content": {"type": "function_call"}},
        {
            "event_type": "content.delta",
            "index": 0,
            "delta": {"type": "thought_signature", "signature": "sig-1"},
        },
        {
            "event_type": "content.delta",
            "index": 0,
            "delta": {"type": "function_call", "id": "c9", "name": "f", "arguments": {"x": 1}},
        },
        {"event_type": "content.stop", "index": 0},
    )
    decoded = serve(replay_server, "gemini-interactions", body)
    assert decoded.error is None
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "c9",
            "name": "f",
            "arguments": {"x": 1},
            "fidelity": {"thought_signature": "sig-1"},
        }
    ]
