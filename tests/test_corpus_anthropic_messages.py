"""Anthropic Messages captures, replayed byte for byte over loopback HTTP.

Expected values were read from the capture files, not from our output.
"""

from __future__ import annotations

import pytest

from modelstream import (
    FinalResponse,
    IncompleteStreamError,
    ProviderError,
    ToolCallArgumentParseError,
)
from support import capture_names, decode_chunks, decode_over_http, load_capture

PROTOCOL = "anthropic-messages"


def replay(server, name, slices=(), **options):
    return decode_over_http(server, load_capture(PROTOCOL, name), slices, **options)


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
