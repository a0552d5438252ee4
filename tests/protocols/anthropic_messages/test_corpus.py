"""Anthropic Messages captures, replayed byte for byte over loopback HTTP.

Expected values were read from the capture files, not from our output.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from modelstream import (
    FinalResponse,
    IncompleteStreamError,
    ProviderError,
    ToolCallArgumentParseError,
)
from support import Capture, capture_names, decode_chunks, decode_over_http, load_capture

PROTOCOL = "anthropic-messages"


def replay(server, name, slices=(), **options):
    return decode_over_http(server, load_capture(PROTOCOL, name), slices, **options)


# --- An independent reading of a capture file ------------------------------------------------
# Only the stdlib `json` module and plain line parsing: nothing here is shared with
# src/modelstream, so a decoder bug cannot hide in a helper both sides use.

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # not str.splitlines: that also splits on U+2028
_USAGE_FIELDS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
_OUR_BLOCKS = {"text", "thinking", "redacted_thinking", "tool_use"}


def read_payloads(body: bytes) -> list[dict[str, Any]]:
    """The JSON of every SSE event's data lines, in order.

    An event still open at the end of the body is kept: anthropicsdk-tool-use and
    anthropicsdk-incomplete-partial-json end without a final newline after message_stop.
    """
    payloads: list[dict[str, Any]] = []
    data: list[str] = []
    for line in [*_LINE_BREAK.split(body.decode("utf-8")), ""]:
        if line == "":
            if data:
                payloads.append(json.loads("\n".join(data)))
            data = []
        elif line.startswith("data:"):
            value = line[len("data:") :]
            data.append(value[1:] if value.startswith(" ") else value)
    return payloads


@dataclass
class Expected:
    """What a capture holds, read from the file: the items we must produce and the usage."""

    items: list[dict[str, Any]] = field(default_factory=list)
    # A tool_use block whose joined input_json_delta is not a JSON object: the decoder must
    # raise ToolCallArgumentParseError with this as the open item (items stop before it).
    unparseable_call: dict[str, Any] | None = None
    usage: dict[str, int | None] = field(default_factory=dict)
    stop_reason: str | None = None
    message: dict[str, Any] = field(default_factory=dict)  # the message_start message
    provider_blocks: Counter[str] = field(default_factory=Counter)  # blocks we have no item for


def _joined(deltas: list[dict[str, Any]], delta_type: str, key: str) -> str:
    return "".join(d[key] for d in deltas if d["type"] == delta_type)


def _expected_item(block: dict[str, Any], deltas: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The done item one content block must produce, or None when it produces nothing."""
    kind = block["type"]
    if kind == "text":
        text = block.get("text", "") + _joined(deltas, "text_delta", "text")
        return {"type": "text.done", "text": text} if text else None  # rule D: empty opens nothing
    if kind == "thinking":
        thinking = block.get("thinking", "") + _joined(deltas, "thinking_delta", "thinking")
        signatures = [d["signature"] for d in deltas if d["type"] == "signature_delta"]
        signature = signatures[-1] if signatures else block.get("signature")
        if not thinking and not signature:
            return None
        item: dict[str, Any] = {"type": "thinking.done", "thinking": thinking}
        if signature:
            item["fidelity"] = {"signature": signature}
        return item
    if kind == "redacted_thinking":
        return {
            "type": "thinking.done",
            "thinking": "",
            "fidelity": {"redacted_thinking": block["data"]},
        }
    raw = _joined(deltas, "input_json_delta", "partial_json")
    return {
        "type": "tool_call.done",
        "tool_call_id": block["id"],
        "name": block["name"],
        "arguments": raw,  # still raw: parsed by the caller, which decides what a failure means
    }


@functools.cache
def expected_from_file(name: str) -> Expected:
    expected = Expected()
    blocks: dict[int, tuple[dict[str, Any], list[dict[str, Any]]]] = {}  # in order of start
    thinking_tokens: int | None = None
    counts: dict[str, int] = {}
    for payload in read_payloads(load_capture(PROTOCOL, name).body):
        kind = payload["type"]
        if kind == "content_block_start":
            blocks[payload["index"]] = (payload["content_block"], [])
        elif kind == "content_block_delta":
            blocks[payload["index"]][1].append(payload["delta"])
        elif kind in ("message_start", "message_delta"):
            if kind == "message_start":
                expected.message = payload["message"]
            usage = (expected.message if kind == "message_start" else payload).get("usage") or {}
            for key in _USAGE_FIELDS:  # cumulative counts: the last reported value wins
                if key == "output_tokens" and kind == "message_start":
                    continue  # a placeholder before generation, never the turn's output
                if usage.get(key) is not None:
                    counts[key] = usage[key]
            details = usage.get("output_tokens_details") or {}
            if details.get("thinking_tokens") is not None:
                thinking_tokens = details["thinking_tokens"]
            if kind == "message_delta" and payload["delta"].get("stop_reason"):
                expected.stop_reason = payload["delta"]["stop_reason"]

    for block, _ in blocks.values():
        if block["type"] not in _OUR_BLOCKS:
            expected.provider_blocks[block["type"]] += 1
    for block, deltas in blocks.values():
        if block["type"] not in _OUR_BLOCKS:
            continue  # server tools, their results, MCP blocks: executed by the provider
        item = _expected_item(block, deltas)
        if item is not None and item["type"] == "tool_call.done":
            raw = item["arguments"]
            try:
                arguments = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                arguments = None
            if not isinstance(arguments, dict):
                expected.unparseable_call = {**item, "type": "tool_call.delta"}
                break
            item["arguments"] = arguments
        if item is not None:
            expected.items.append(item)
    if expected.stop_reason == "refusal" and expected.unparseable_call is None:
        # SPEC §2: a refusal is the model's answer, marked by fidelity, even when empty
        expected.items.append({"type": "text.done", "text": "", "fidelity": {"refusal": True}})

    # The arithmetic documented in src/modelstream/protocols/anthropic_messages/decoder.py
    fresh = counts.get("input_tokens")
    created = counts.get("cache_creation_input_tokens")
    output = counts.get("output_tokens")
    expected.usage = {
        "cached_tokens": counts.get("cache_read_input_tokens"),
        "prompt_tokens": None if fresh is None else fresh + (created or 0),
        "thoughts_tokens": thinking_tokens,
        "response_tokens": (
            output if output is None or thinking_tokens is None else output - thinking_tokens
        ),
    }
    return expected


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_done_items_are_the_content_blocks_read_from_the_capture(replay_server, name):
    expected = expected_from_file(name)
    assert expected.items or expected.unparseable_call, "the capture holds no item to compare"
    decoded = replay(replay_server, name)
    assert decoded.done_items == expected.items
    if expected.unparseable_call is None:
        assert decoded.error is None
        assert decoded.decoder.result.message["content_items"] == expected.items
    else:
        assert isinstance(decoded.error, ToolCallArgumentParseError)
        assert decoded.error.partial.items == expected.items
        assert decoded.error.partial.open_item == expected.unparseable_call


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_usage_is_the_last_reported_counts_mapped_as_the_adapter_documents(replay_server, name):
    expected = expected_from_file(name)
    decoded = replay(replay_server, name)
    if expected.unparseable_call is None:
        assert decoded.stop is not None
        assert decoded.stop["usage_metadata"] == expected.usage
    else:
        assert decoded.error.partial.usage == expected.usage


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_the_raw_finish_reason_is_the_captured_stop_reason(replay_server, name):
    expected = expected_from_file(name)
    assert expected.stop_reason is not None
    decoded = replay(replay_server, name)
    assert decoded.decoder.metadata.raw_finish_reason == expected.stop_reason


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_response_id_and_model_come_from_message_start(replay_server, name):
    expected = expected_from_file(name)
    decoded = replay(replay_server, name)
    assert decoded.decoder.metadata.response_id == expected.message["id"]
    assert decoded.decoder.metadata.model == expected.message["model"]


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_blocks_executed_by_the_provider_are_counted_by_their_type(replay_server, name):
    expected = expected_from_file(name)
    decoded = replay(replay_server, name)
    skipped = {
        kind.removeprefix("block:"): n
        for kind, n in decoded.decoder.metadata.skipped.items()
        if kind.startswith("block:")
    }
    assert skipped == dict(expected.provider_blocks)


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_one_byte_slices_over_http_decode_exactly_like_the_whole_body(replay_server, name):
    whole = replay(replay_server, name)
    sliced = replay(replay_server, name, slices=[1])
    assert whole.events, "the unsliced replay produced no events to compare"
    assert sliced.events == whole.events
    assert type(sliced.error) is type(whole.error)
    assert str(sliced.error) == str(whole.error)
    assert sliced.decoder.result == whole.decoder.result
    assert sliced.decoder.metadata == whole.decoder.metadata


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_every_capture_replays_to_a_grammar_valid_stream_or_a_typed_error(replay_server, name):
    decoded = replay(replay_server, name)
    if decoded.error is None:
        assert decoded.stop is not None
        assert isinstance(decoded.decoder.result, FinalResponse)
    else:
        assert decoded.error.partial is not None
        assert decoded.decoder.result is decoded.error.partial


def test_text_then_tool_call_streams_arguments_and_ends_asking_for_the_tool(replay_server):
    decoded = replay(replay_server, "anthropicsdk-tool-use", slices=[7])
    text, call = decoded.done_items
    assert text == {"type": "text.done", "text": "I'll check the current weather in Paris for you."}
    assert call == {
        "type": "tool_call.done",
        "tool_call_id": "toolu_01NRLabsLyVHZPKxbKvkfSMn",
        "name": "get_weather",
        "arguments": {"location": "Paris"},
    }
    fragments = [
        e["content_items"][0]["arguments"]
        for e in decoded.events
        if e["content_items"] and e["content_items"][0]["type"] == "tool_call.delta"
    ]
    assert "".join(fragments) == '{"location": "Paris"}'
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 377,
        "thoughts_tokens": None,
        "response_tokens": 65,
    }
    meta = decoded.decoder.metadata
    assert meta.response_id == "msg_019Q1hrJbZG26Fb9BQhrkHEr"
    assert meta.model == "claude-sonnet-4-20250514"
    assert meta.raw_finish_reason == "tool_use"
    assert meta.skipped["ping"] == 1


def test_thinking_signature_arrives_after_the_text_and_rides_on_one_fragment(replay_server):
    decoded = replay(replay_server, "pydanticai-anthropic-thinking")
    thinking, text = decoded.done_items
    assert thinking["thinking"].startswith("This is a straightforward question about")
    assert thinking["fidelity"]["signature"].startswith("EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/ecn")
    carriers = [
        e["content_items"][0]
        for e in decoded.events
        if e["content_items"]
        and e["content_items"][0]["type"] == "thinking.delta"
        and "fidelity" in e["content_items"][0]
    ]
    assert len(carriers) == 1 and carriers[0]["thinking"] == ""
    assert text["text"].startswith("Here are the basic steps for safely crossing")
    assert decoded.stop["finish_reason"] == "stop"


def test_redacted_thinking_keeps_its_opaque_data_as_fidelity(replay_server):
    decoded = replay(replay_server, "pydanticai-anthropic-redacted-thinking")
    first, second, text = decoded.done_items
    assert first["type"] == second["type"] == "thinking.done"
    assert first["thinking"] == "" and second["thinking"] == ""
    assert first["fidelity"]["redacted_thinking"].startswith("EqkECkYIBxgCKkA8AZ4noDfV5VcOJe")
    assert second["fidelity"]["redacted_thinking"].startswith("EtgBCkYIBxgCKkDQfGkwzflEJP5asG3o")
    assert text["type"] == "text.done"


def test_max_tokens_inside_tool_json_is_never_a_tool_call(replay_server):
    decoded = replay(replay_server, "anthropicsdk-incomplete-partial-json", slices=[1, 3, 5])
    error = decoded.error
    assert isinstance(error, ToolCallArgumentParseError)
    assert error.name == "make_file"
    assert error.tool_call_id == "toolu_01EKqbqmZrGRXy18eN7m9kvY"
    assert error.partial.status == "failed"
    assert error.partial.metadata.raw_finish_reason == "max_tokens"
    assert [i["type"] for i in error.partial.items] == ["text.done"]
    assert error.partial.open_item["type"] == "tool_call.delta"
    assert error.partial.open_item["arguments"].startswith('{"filename": "taxes.txt"')
    assert not any(e["event_type"] == "stop" for e in decoded.events)


def test_max_tokens_inside_tool_json_recovers_the_fields_received_when_lenient(replay_server):
    decoded = replay(
        replay_server, "anthropicsdk-incomplete-partial-json", lenient_tool_arguments=True
    )
    assert decoded.error is None
    call = decoded.done_items[-1]
    assert call["arguments"]["filename"] == "taxes.txt"
    assert call["arguments"]["lines_of_text"][0].startswith("# COMPREHENSIVE TAX GUIDE")
    assert decoded.stop["finish_reason"] == "length"
    (recovered,) = [
        d for d in decoded.decoder.metadata.diagnostics if d["type"] == "tool_arguments_recovered"
    ]
    assert recovered["mode"] == "partial"


def test_a_refusal_is_a_marked_answer_that_ends_with_stop(replay_server):
    decoded = replay(replay_server, "anthropicsdk-refusal-handwritten")
    assert decoded.done_items == [{"type": "text.done", "text": "", "fidelity": {"refusal": True}}]
    assert decoded.stop["finish_reason"] == "stop"
    assert decoded.decoder.metadata.raw_finish_reason == "refusal"
    details = [d for d in decoded.decoder.metadata.diagnostics if d["type"] == "refusal"]
    assert details[0]["details"]["category"] == "cyber"


def test_server_tool_blocks_are_skipped_and_counted(replay_server):
    decoded = replay(replay_server, "pydanticai-anthropic-pause-turn")
    skipped = decoded.decoder.metadata.skipped
    assert skipped["block:server_tool_use"] == 11
    assert skipped["block:web_search_tool_result"] == 10
    assert decoded.stop["finish_reason"] == "unknown"
    assert decoded.decoder.metadata.raw_finish_reason == "pause_turn"
    usage = decoded.stop["usage_metadata"]
    assert usage["thoughts_tokens"] == 261
    assert usage["response_tokens"] == 943 - 261
    assert usage["prompt_tokens"] == 404500


def test_empty_tool_input_becomes_an_empty_object(replay_server):
    decoded = replay(replay_server, "vercel-anthropic-tool-no-args")
    call = decoded.done_items[-1]
    assert call["type"] == "tool_call.done"
    assert call["arguments"] == {}
    assert decoded.decoder.metadata.skipped["ping"] == 3


def test_a_body_cut_before_message_stop_is_incomplete_and_keeps_the_open_text():
    body = load_capture(PROTOCOL, "anthropicsdk-tool-use").body
    cut = body.index(b"event: content_block_stop")
    decoded = decode_chunks(PROTOCOL, [body[:cut]])
    assert isinstance(decoded.error, IncompleteStreamError)
    assert decoded.error.partial.status == "incomplete"
    assert decoded.error.partial.open_item == {
        "type": "text.delta",
        "text": "I'll check the current weather in Paris for you.",
    }
    assert not any(i["type"] == "text.done" for i in decoded.done_items)


def test_an_in_stream_error_event_becomes_a_provider_error_with_the_partial():
    body = load_capture(PROTOCOL, "vercel-anthropic-text").body
    cut = body.index(b"event: content_block_stop")
    error_frame = (
        b'event: error\ndata: {"type":"error","error":'
        b'{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    decoded = decode_chunks(PROTOCOL, [body[:cut], error_frame])
    error = decoded.error
    assert isinstance(error, ProviderError)
    assert error.error_type == "overloaded_error"
    assert error.provider_message == "Overloaded"
    assert error.retryable is True
    assert error.partial.status == "failed"
    assert error.partial.open_item["text"].startswith("Hello!")


def test_cache_writes_count_as_prompt_input_and_cache_reads_as_cached():
    body = (
        b"event: message_start\n"
        b'data: {"type":"message_start","message":{"id":"msg_c","model":"claude-x","usage":'
        b'{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":50,'
        b'"output_tokens":1}}}\n\n'
        b"event: content_block_start\n"
        b'data: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
        b"event: content_block_delta\n"
        b'data: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"ok"}}\n\n'
        b"event: content_block_stop\n"
        b'data: {"type":"content_block_stop","index":0}\n\n'
        b"event: message_delta\n"
        b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
        b'"usage":{"output_tokens":7}}\n\n'
        b"event: message_stop\n"
        b'data: {"type":"message_stop"}\n\n'
    )
    decoded = decode_chunks(PROTOCOL, [body])
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 50,
        "prompt_tokens": 110,
        "thoughts_tokens": None,
        "response_tokens": 7,
    }


def test_without_usage_in_message_delta_the_output_is_unknown_not_the_start_placeholder(
    replay_server,
):
    capture = load_capture(PROTOCOL, "vercel-anthropic-text")
    reported = (
        b',"usage":{"input_tokens":12,"cache_creation_input_tokens":0,'
        b'"cache_read_input_tokens":0,"output_tokens":30}'
    )
    assert capture.body.count(reported) == 1  # the message_delta's usage
    assert b'"output_tokens":1,' in capture.body  # message_start's placeholder
    body = capture.body.replace(reported, b"")
    decoded = decode_over_http(replay_server, Capture(PROTOCOL, "no-delta-usage", body, {}))
    assert decoded.error is None
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 12,
        "thoughts_tokens": None,
        "response_tokens": None,
    }
    assert {"type": "usage_missing"} in decoded.decoder.metadata.diagnostics
    assert decoded.decoder.result.message["content_items"][0]["text"].startswith("Hello! I'm")
