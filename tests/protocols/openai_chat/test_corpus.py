"""OpenAI Chat Completions captures (and compatible gateways), replayed over loopback HTTP.

Expected values were read from the capture files, not from our output. `joined_delta` reads a
capture's `data:` lines with the standard json module, independently of the decoder.
"""

from __future__ import annotations

import base64
import json

import pytest

from modelstream import FinalResponse, IncompleteStreamError, ProviderError
from support import (
    Capture,
    capture_names,
    decode_chunks,
    decode_over_http,
    load_capture,
    require_corpus,
)

PROTOCOL = "openai-chat"
SMALL_CAPTURES = [
    "openaipy-max-tokens",
    "openaipy-refusal",
    "openaipy-tool-call",
    "pydanticai-openai-parallel-empty-args",
    "pydanticai-openrouter-reasoning-signature",
    "pydanticai-openrouter-stream-error",
    "vercel-azure-model-router",
    "vercel-groq-tool-call",
    "vercel-mistral-incremental-tool-call",
]


def replay(server, name, slices=(), **options):
    return decode_over_http(server, load_capture(PROTOCOL, name), slices, **options)


def chunks_of(capture: Capture) -> list[dict]:
    """The JSON payloads of the capture's data lines, read with the standard library."""
    text = capture.body.decode("utf-8").replace("\r\n", "\n")
    return [
        json.loads(line[6:])
        for line in text.split("\n")
        if line.startswith("data: ") and line[6:] != "[DONE]"
    ]


def joined_delta(capture: Capture, field: str) -> str:
    """The join of choice 0's string `delta.<field>` values across the capture."""
    return "".join(
        choice["delta"].get(field) or ""
        for chunk in chunks_of(capture)
        for choice in chunk.get("choices") or []
        if choice.get("index", 0) == 0 and isinstance(choice["delta"].get(field), str)
    )


def items_of(decoded, item_type):
    return [
        e["content_items"][0]
        for e in decoded.events
        if e["content_items"] and e["content_items"][0]["type"] == item_type
    ]


def item_types(decoded):
    return [e["content_items"][0]["type"] for e in decoded.events if e["content_items"]]


def test_the_capture_set_is_the_one_these_tests_were_written_for():
    require_corpus()
    assert len(capture_names(PROTOCOL)) == 22


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_every_capture_replays_to_a_grammar_valid_stream_or_a_typed_error(replay_server, name):
    decoded = replay(replay_server, name)
    if decoded.error is None:
        assert decoded.stop is not None
        assert isinstance(decoded.decoder.result, FinalResponse)
        assert decoded.decoder.metadata.response_id
        assert decoded.decoder.metadata.model == load_capture(PROTOCOL, name).sidecar["model"]
    else:
        assert isinstance(decoded.error, ProviderError)
        assert decoded.error.partial is not None
        assert decoded.decoder.result is decoded.error.partial


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_every_capture_decodes_to_the_same_events_in_odd_slices(replay_server, name):
    whole = replay(replay_server, name)
    sliced = replay(replay_server, name, slices=[7, 1, 13, 2])
    assert sliced.events == whole.events
    assert type(sliced.error) is type(whole.error)


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_every_capture_decodes_to_the_same_events_when_fed_one_byte_at_a_time(name):
    body = load_capture(PROTOCOL, name).body
    whole = decode_chunks(PROTOCOL, [body])
    one_byte = decode_chunks(PROTOCOL, (body[i : i + 1] for i in range(len(body))))
    assert one_byte.events == whole.events
    assert type(one_byte.error) is type(whole.error)


@pytest.mark.parametrize("name", SMALL_CAPTURES)
def test_small_captures_decode_to_the_same_events_one_byte_at_a_time(replay_server, name):
    whole = replay(replay_server, name)
    one_byte = replay(replay_server, name, slices=[1])
    assert one_byte.events == whole.events
    assert one_byte.decoder.metadata.skipped == whole.decoder.metadata.skipped


# --- text -------------------------------------------------------------------------------------


def test_plain_text_streams_as_one_text_item_with_the_trailing_usage(replay_server):
    decoded = replay(replay_server, "openaipy-text-usage", slices=[64])
    assert decoded.done_items == [
        {
            "type": "text.done",
            "text": "I'm unable to provide real-time weather updates. To get the current weather "
            "in San Francisco, I recommend checking a reliable weather website or a weather app.",
        }
    ]
    assert decoded.stop["finish_reason"] == "stop"
    # usage chunk: prompt_tokens 14, completion_tokens 30, reasoning_tokens 0, no cache details
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": None,
        "prompt_tokens": 14,
        "thoughts_tokens": 0,
        "response_tokens": 30,
    }
    meta = decoded.decoder.metadata
    assert meta.response_id == "chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL"
    assert meta.model == "gpt-4o-2024-08-06"
    assert meta.raw_finish_reason == "stop"
    assert meta.skipped == {}


def test_every_content_delta_becomes_one_text_delta(replay_server):
    capture = load_capture(PROTOCOL, "vercel-openai-text")
    decoded = decode_over_http(replay_server, capture, slices=[4096])
    deltas = items_of(decoded, "text.delta")
    assert len(deltas) == 300
    (done,) = decoded.done_items
    assert done["text"] == joined_delta(capture, "content")
    assert done["text"].startswith("**Holiday Name:** Harmony Day\n\n**Date:**")
    assert done["text"].endswith("connected through shared human experiences and mutual respect.")
    assert decoded.stop["usage_metadata"]["response_tokens"] == 300
    assert decoded.decoder.metadata.skipped == {}  # obfuscation and service_tier are envelope


def test_logprobs_are_skipped_and_counted(replay_server):
    decoded = replay(replay_server, "openaipy-content-logprobs")
    assert decoded.done_items == [{"type": "text.done", "text": "Foo!"}]
    assert decoded.decoder.metadata.skipped == {"logprobs": 2}


def test_max_tokens_keeps_the_cut_text_and_ends_with_length(replay_server):
    decoded = replay(replay_server, "openaipy-max-tokens", slices=[1])
    assert decoded.done_items == [{"type": "text.done", "text": '{"'}]
    assert decoded.stop["finish_reason"] == "length"
    assert decoded.decoder.metadata.raw_finish_reason == "length"
    assert decoded.stop["usage_metadata"]["prompt_tokens"] == 79
    assert decoded.stop["usage_metadata"]["response_tokens"] == 1


def test_only_choice_zero_of_an_n_3_stream_is_the_turn(replay_server):
    decoded = replay(replay_server, "openaipy-multiple-choices")
    assert decoded.done_items == [
        {"type": "text.done", "text": '{"city":"San Francisco","temperature":65,"units":"f"}'}
    ]
    # 16 chunks each for choice indexes 1 and 2, their finish chunks included
    assert decoded.decoder.metadata.skipped == {"other_choice": 32}
    assert decoded.stop["finish_reason"] == "stop"


# --- refusal ----------------------------------------------------------------------------------


def test_a_refusal_is_marked_text_that_ends_with_stop(replay_server):
    decoded = replay(replay_server, "openaipy-refusal", slices=[1])
    assert decoded.done_items == [
        {
            "type": "text.done",
            "text": "I'm sorry, I can't assist with that request.",
            "fidelity": {"refusal": True},
        }
    ]
    carriers = [d for d in items_of(decoded, "text.delta") if "fidelity" in d]
    assert len(carriers) == 1
    assert decoded.stop["finish_reason"] == "stop"


def test_refusal_logprobs_are_counted_but_never_become_text(replay_server):
    decoded = replay(replay_server, "openaipy-refusal-logprobs")
    (done,) = decoded.done_items
    assert done["text"] == "I'm very sorry, but I can't assist with that."
    assert done["fidelity"] == {"refusal": True}
    assert decoded.decoder.metadata.skipped == {"logprobs": 11}


# --- tool calls -------------------------------------------------------------------------------


def test_a_tool_call_streams_its_argument_fragments_and_ends_asking_for_the_tool(replay_server):
    decoded = replay(replay_server, "openaipy-tool-call", slices=[1])
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "call_c91SqDXlYFuETYv8mUHzz6pp",
            "name": "GetWeatherArgs",
            "arguments": {"city": "Edinburgh", "country": "UK", "units": "c"},
        }
    ]
    fragments = items_of(decoded, "tool_call.delta")
    assert "".join(f["arguments"] for f in fragments) == (
        '{"city":"Edinburgh","country":"UK","units":"c"}'
    )
    assert fragments[0]["name"] == "GetWeatherArgs"
    assert all(f["name"] == "" and f["tool_call_id"] == "" for f in fragments[1:])
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.decoder.metadata.raw_finish_reason == "tool_calls"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": None,
        "prompt_tokens": 76,
        "thoughts_tokens": 0,
        "response_tokens": 24,
    }


def test_the_first_chunk_may_carry_role_id_name_and_empty_arguments_together(replay_server):
    decoded = replay(replay_server, "openaipy-strict-tool-call")
    first = items_of(decoded, "tool_call.delta")[0]
    assert first == {
        "type": "tool_call.delta",
        "tool_call_id": "call_CTf1nWJLqSeRgDqaCG27xZ74",
        "name": "get_weather",
        "arguments": "",
    }
    assert decoded.done_items[0]["arguments"] == {"city": "San Francisco", "state": "CA"}


def test_parallel_tool_calls_come_out_one_group_after_the_other(replay_server):
    decoded = replay(replay_server, "openaipy-parallel-tool-calls", slices=[5, 9])
    first, second = decoded.done_items
    assert first == {
        "type": "tool_call.done",
        "tool_call_id": "call_JMW1whyEaYG438VE1OIflxA2",
        "name": "GetWeatherArgs",
        "arguments": {"city": "Edinburgh", "country": "GB", "units": "c"},
    }
    assert second == {
        "type": "tool_call.done",
        "tool_call_id": "call_DNYTawLBoN8fj3KN6qU9N1Ou",
        "name": "get_stock_price",
        "arguments": {"ticker": "AAPL", "exchange": "NASDAQ"},
    }
    types = item_types(decoded)
    assert types.index("tool_call.done") < types.index("tool_call.delta", 1 + 12)
    assert decoded.stop["finish_reason"] == "tool_call"


def test_tool_calls_interleaved_across_chunks_are_kept_apart_by_index():
    capture = load_capture(PROTOCOL, "openaipy-parallel-tool-calls")
    frames = [f + b"\n\n" for f in capture.body.split(b"\n\n") if f.strip()]
    calls = [f for f in frames if b'"tool_calls":[' in f]
    first = [f for f in calls if b'"tool_calls":[{"index":0' in f]
    second = [f for f in calls if b'"tool_calls":[{"index":1' in f]
    interleaved = [f for pair in zip(first, second, strict=False) for f in pair]
    interleaved += first[len(second) :] + second[len(first) :]
    rest = [f for f in frames if f not in calls]
    body = b"".join(rest[:1] + interleaved + rest[1:])
    assert body.index(b'"tool_calls":[{"index":1') < body.rindex(b'"tool_calls":[{"index":0')
    decoded = decode_chunks(PROTOCOL, [body])
    assert decoded.error is None
    assert [d["arguments"] for d in decoded.done_items] == [
        {"city": "Edinburgh", "country": "GB", "units": "c"},
        {"ticker": "AAPL", "exchange": "NASDAQ"},
    ]


def test_two_tool_calls_with_empty_object_arguments(replay_server):
    decoded = replay(replay_server, "pydanticai-openai-parallel-empty-args", slices=[1])
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "call_q2UyBRP7eXNTzAoR8lEhjc9Z",
            "name": "get_country",
            "arguments": {},
        },
        {
            "type": "tool_call.done",
            "tool_call_id": "call_b51ijcpFkDiTQG1bQzsrmtW5",
            "name": "get_product_name",
            "arguments": {},
        },
    ]
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 364,
        "thoughts_tokens": 0,
        "response_tokens": 40,
    }


def test_a_whole_tool_call_in_one_chunk_with_usage_from_groq(replay_server):
    decoded = replay(replay_server, "vercel-groq-tool-call", provider="groq")
    assert decoded.done_items == [
        {"type": "tool_call.done", "tool_call_id": "tk85n1k4m", "name": "weather", "arguments": {}}
    ]
    # no prompt_tokens_details and no completion_tokens_details: cache and thoughts unknown
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": None,
        "prompt_tokens": 210,
        "thoughts_tokens": None,
        "response_tokens": 15,
    }
    assert decoded.decoder.metadata.provider == "groq"


def test_groq_usage_is_read_from_x_groq_when_the_top_level_usage_is_absent():
    capture = load_capture(PROTOCOL, "vercel-groq-tool-call")
    head, sep, _ = capture.body.rpartition(b',"usage":{"queue_time"')
    finish_line_end = capture.body.index(b"\n", len(head))
    body = head + b"}" + capture.body[finish_line_end:]
    assert sep and b'"x_groq":{"id":"req_01kh52nj5yfcat8hrmvrk2j2hj","usage"' in body
    decoded = decode_chunks(PROTOCOL, [body])
    assert decoded.stop["usage_metadata"]["prompt_tokens"] == 210
    assert decoded.stop["usage_metadata"]["response_tokens"] == 15


def test_a_later_fragment_without_id_and_with_an_empty_name_continues_the_call(replay_server):
    decoded = replay(replay_server, "vercel-mistral-incremental-tool-call", slices=[1])
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "chatcmpl-tool-9f149c74c42f265b",
            "name": "webSearchTool",
            "arguments": {"query": "current Berlin weather"},
        }
    ]
    # the stray delta.index is no content and nothing to count
    assert decoded.decoder.metadata.skipped == {}
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 128,
        "prompt_tokens": 171 - 128,
        "thoughts_tokens": None,
        "response_tokens": 14,
    }


def test_a_tool_call_with_an_empty_id_gets_a_synthesized_one():
    body = load_capture(PROTOCOL, "vercel-groq-tool-call").body
    body = body.replace(b'"id":"tk85n1k4m"', b'"id":""')
    decoded = decode_chunks(PROTOCOL, [body])
    (call,) = decoded.done_items
    assert call["tool_call_id"] == "call_1"
    assert call["name"] == "weather"
    diagnostics = decoded.decoder.metadata.diagnostics
    assert {"type": "tool_call_id_synthesized", "tool_call_id": "call_1", "name": "weather"} in (
        diagnostics
    )


def test_null_arguments_on_the_first_fragment_are_an_empty_start():
    body = load_capture(PROTOCOL, "openaipy-tool-call").body
    body = body.replace(
        b'"name":"GetWeatherArgs","arguments":""', b'"name":"GetWeatherArgs","arguments":null'
    )
    decoded = decode_chunks(PROTOCOL, [body])
    assert decoded.done_items[0]["arguments"] == {
        "city": "Edinburgh",
        "country": "UK",
        "units": "c",
    }


# --- reasoning --------------------------------------------------------------------------------


def test_deepseek_reasoning_content_is_thinking_then_text_with_usage_on_the_finish_chunk(
    replay_server,
):
    capture = load_capture(PROTOCOL, "pydanticai-deepseek-reasoning")
    decoded = decode_over_http(replay_server, capture, slices=[333])
    thinking, text = decoded.done_items
    assert thinking["type"] == "thinking.done"
    assert thinking["thinking"] == joined_delta(capture, "reasoning_content")
    assert thinking["thinking"].startswith('Hmm, the user just said "Hello".')
    assert thinking["fidelity"] == {"reasoning_field": "reasoning_content"}
    assert text == {"type": "text.done", "text": "Hello there! 😊 How can I help you today?"}
    # prompt 6, completion 212 of which reasoning 198, prompt_cache_hit_tokens 0
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 6,
        "thoughts_tokens": 198,
        "response_tokens": 14,
    }


def test_thinking_is_done_before_the_tool_call_that_follows_it_starts(replay_server):
    decoded = replay(replay_server, "vercel-deepseek-tool-call")
    types = item_types(decoded)
    assert types.index("thinking.done") < types.index("tool_call.delta")
    thinking, call = decoded.done_items
    assert thinking["thinking"] == (
        "The user is asking for the weather in San Francisco. I need to use the weather tool to "
        "get this information. Let me invoke the weather tool with the location parameter set "
        'to "San Francisco".'
    )
    assert call == {
        "type": "tool_call.done",
        "tool_call_id": "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
        "name": "weather",
        "arguments": {"location": "San Francisco"},
    }
    # prompt 339 with prompt_cache_hit_tokens 320; completion 83 with reasoning 39
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 320,
        "prompt_tokens": 19,
        "thoughts_tokens": 39,
        "response_tokens": 44,
    }


def test_xai_completion_tokens_exclude_reasoning_so_they_are_the_response(replay_server):
    capture = load_capture(PROTOCOL, "vercel-xai-tool-call")
    decoded = decode_over_http(replay_server, capture, provider="xai")
    thinking, call = decoded.done_items
    assert thinking["thinking"] == joined_delta(capture, "reasoning_content")
    assert thinking["fidelity"] == {"reasoning_field": "reasoning_content"}
    assert call["arguments"] == {"location": "San Francisco"}
    assert call["tool_call_id"] == "call_79382389"
    # prompt 307 (cached 306), completion 26, reasoning 227, total 560 = 307 + 26 + 227
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 306,
        "prompt_tokens": 1,
        "thoughts_tokens": 227,
        "response_tokens": 26,
    }


def test_mistral_thinking_chunks_inside_content_are_thinking(replay_server):
    capture = load_capture(PROTOCOL, "pydanticai-mistral-thinking")
    decoded = decode_over_http(replay_server, capture, slices=[100])
    thinking, text = decoded.done_items
    assert thinking["thinking"].startswith(
        "Okay, the user is asking how to cross the street. I know that crossing the street "
    )
    assert thinking["thinking"].endswith(
        "compile this information into a clear and concise response."
    )
    assert len(thinking["thinking"]) == 421
    assert thinking["fidelity"] == {"reasoning_field": "content.thinking"}
    assert text["text"] == joined_delta(capture, "content")
    assert text["text"].startswith("To cross the street safely, follow these steps:\n\n1. Look")
    # usage on the finish chunk, no completion_tokens_details: thoughts unknown
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": None,
        "prompt_tokens": 10,
        "thoughts_tokens": None,
        "response_tokens": 232,
    }


def test_openrouter_reasoning_signature_arrives_late_and_rides_on_one_fragment(replay_server):
    decoded = replay(replay_server, "pydanticai-openrouter-reasoning-signature", slices=[1])
    thinking, text = decoded.done_items
    assert thinking["thinking"] == "This is a simple arithmetic question. 2+2 equals 4."
    assert thinking["fidelity"] == {
        "format": "anthropic-claude-v1",
        "reasoning_field": "reasoning",
        "signature": "Et0BCkgIChACGAIqQA2s7h7tA7IG35fbwVkou9PM2hANVJNUwcEM4q12fTRDK6y3v6YoEvJ+7bko8"
        "wnW/GLsQFXadaJPAEMCpLkhI9ISDLjFkeR1aVUIvdCtyBoMrUTovh0jwk+wpnZWIjANV3e6VVdgbGSsEyyTHO6K"
        "MmVtqqs79f9blnVdJmmMIwMyTi6bEtG59+jTU7v1zlsqQ2IKGZILOlr6adh0Aam7zYttvisys+wjyZZXU1y/Srz0n"
        "mp1cFgVOJe1BLKQI3SSRrjsqQC0uAEUZy0GX0Rq1AXjvIcYAQ==",
    }
    carriers = [d for d in items_of(decoded, "thinking.delta") if "fidelity" in d]
    assert len(carriers) == 1 and carriers[0]["thinking"] == ""
    assert text == {"type": "text.done", "text": "2 + 2 = 4"}
    # the usage chunk after the finish chunk still has a choices array
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 43,
        "thoughts_tokens": 13,
        "response_tokens": 36 - 13,
    }
    assert decoded.decoder.metadata.skipped == {"sse_comment": 4}


# --- filters, moderation, extras --------------------------------------------------------------


def test_azure_filter_results_are_skipped_and_counted(replay_server):
    decoded = replay(replay_server, "vercel-azure-model-router", slices=[1], provider="azure")
    assert decoded.done_items == [{"type": "text.done", "text": "Capital of Denmark."}]
    assert decoded.decoder.metadata.skipped == {
        "chunk:prompt_filter_results": 1,
        "content_filter_results": 4,  # the non-empty ones, on the four content chunks
    }
    # the first chunk's id and model are empty: both come from the next chunk
    assert decoded.decoder.metadata.response_id == "chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt"
    assert decoded.decoder.metadata.model == "gpt-5-nano-2025-08-07"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 15,
        "thoughts_tokens": 64,
        "response_tokens": 78 - 64,
    }


def test_a_moderation_chunk_after_the_usage_is_skipped_and_counted(replay_server):
    decoded = replay(replay_server, "pydanticai-openai-moderation")
    assert decoded.done_items == [{"type": "text.done", "text": "Paris."}]
    assert decoded.decoder.metadata.skipped == {"chunk:moderation": 1}
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 13,
        "thoughts_tokens": 0,
        "response_tokens": 11,
    }


# --- errors and endings -----------------------------------------------------------------------


def test_groq_event_error_is_a_provider_error_keeping_the_open_reasoning(replay_server):
    capture = load_capture(PROTOCOL, "pydanticai-groq-tool-use-failed")
    decoded = decode_over_http(replay_server, capture, slices=[512], provider="groq")
    error = decoded.error
    assert isinstance(error, ProviderError)
    assert error.error_type == "invalid_request_error"
    assert error.code == "tool_use_failed"
    assert error.provider == "groq"
    assert error.retryable is False
    assert error.provider_message.startswith(
        "Tool call validation failed: tool call validation failed: parameters for tool "
        "get_something_by_name did not match schema"
    )
    partial = error.partial
    assert partial.status == "failed"
    assert partial.items == []
    assert partial.open_item["type"] == "thinking.delta"
    assert partial.open_item["thinking"] == joined_delta(capture, "reasoning")
    assert partial.open_item["thinking"].startswith("We need to call the tool with invalid")
    assert not any(e["event_type"] == "stop" for e in decoded.events)
    (detail,) = [d for d in partial.metadata.diagnostics if d["type"] == "provider_error"]
    assert detail["error"]["failed_generation"].startswith('{"name": "get_something_by_name"')


def test_openrouter_error_object_after_finish_length_is_a_provider_error(replay_server):
    decoded = replay(replay_server, "pydanticai-openrouter-stream-error", provider="openrouter")
    error = decoded.error
    assert isinstance(error, ProviderError)
    assert error.code == 400
    assert error.provider_message == "Token limit reached"
    partial = error.partial
    assert partial.items == [
        {
            "type": "thinking.done",
            "thinking": "We need to respond to a greeting. The user",
            "fidelity": {"reasoning_field": "reasoning"},
        }
    ]
    assert partial.metadata.raw_finish_reason == "length"
    # the error chunk carries the usage: prompt 43, completion 10, reasoning 11
    assert partial.usage == {
        "cached_tokens": 0,
        "prompt_tokens": 43,
        "thoughts_tokens": 11,
        "response_tokens": 10,
    }
    assert partial.metadata.skipped == {"finish_repeated": 1, "sse_comment": 17}


def test_a_body_without_done_but_with_a_finish_reason_still_ends_with_stop():
    body = load_capture(PROTOCOL, "openaipy-text-usage").body
    assert body.endswith(b"data: [DONE]\n\n")
    decoded = decode_chunks(PROTOCOL, [body[: -len(b"data: [DONE]\n\n")]])
    assert decoded.error is None
    assert decoded.stop["finish_reason"] == "stop"
    assert decoded.stop["usage_metadata"]["response_tokens"] == 30


def test_a_body_cut_before_the_finish_reason_is_incomplete_and_keeps_the_open_text():
    body = load_capture(PROTOCOL, "pydanticai-openai-moderation").body
    cut = body.index(b'"finish_reason":"stop"')
    cut = body.rindex(b"\n\n", 0, cut) + 2
    decoded = decode_chunks(PROTOCOL, [body[:cut]])
    assert isinstance(decoded.error, IncompleteStreamError)
    assert decoded.error.partial.status == "incomplete"
    assert decoded.error.partial.open_item == {"type": "text.delta", "text": "Paris."}
    assert decoded.done_items == []


def test_done_without_a_finish_reason_is_incomplete():
    body = load_capture(PROTOCOL, "openaipy-tool-call").body
    cut = body.index(b'"finish_reason":"tool_calls"')
    cut = body.rindex(b"\n\n", 0, cut) + 2
    decoded = decode_chunks(PROTOCOL, [body[:cut] + b"data: [DONE]\n\n"])
    assert isinstance(decoded.error, IncompleteStreamError)
    # a tool call is never closed without its finish reason
    assert decoded.error.partial.items == []
    assert decoded.error.partial.open_item["name"] == "GetWeatherArgs"


def test_frames_after_done_are_skipped_and_counted():
    body = load_capture(PROTOCOL, "pydanticai-openai-moderation").body
    content_frame = next(f for f in body.split(b"\n\n") if b'"content":"Paris"' in f)
    decoded = decode_chunks(PROTOCOL, [body + content_frame + b"\n\n"])
    assert decoded.done_items == [{"type": "text.done", "text": "Paris."}]
    assert decoded.decoder.metadata.skipped["after_done"] == 1


def test_a_malformed_frame_is_skipped_and_noted_never_fatal():
    body = load_capture(PROTOCOL, "pydanticai-openai-moderation").body
    cut = body.index(b"data: ", 1)
    broken = body[:cut] + b"data: {not json\n\n" + body[cut:]
    decoded = decode_chunks(PROTOCOL, [broken], lenient_frames=True)  # else fatal (issue 7)
    assert decoded.done_items == [{"type": "text.done", "text": "Paris."}]
    assert decoded.decoder.metadata.skipped["malformed_frame"] == 1
    assert decoded.decoder.metadata.diagnostics[0]["preview"] == "{not json"


# --- dialects no capture shows, on a captured envelope -----------------------------------------


def _openrouter_body(deltas: list[dict], finish_reason: str = "stop") -> bytes:
    """Chunks on the envelope of pydanticai-openrouter-reasoning-signature's first chunk."""
    template = chunks_of(load_capture(PROTOCOL, "pydanticai-openrouter-reasoning-signature"))[0]
    frames = []
    for i, delta in enumerate(deltas):
        chunk = dict(template)
        last = i == len(deltas) - 1
        chunk["choices"] = [
            {"index": 0, "delta": delta, "finish_reason": finish_reason if last else None}
        ]
        frames.append(b"data: " + json.dumps(chunk).encode() + b"\n\n")
    return b"".join(frames) + b"data: [DONE]\n\n"


def test_a_new_reasoning_details_index_is_a_new_thinking_item():
    body = _openrouter_body(
        [
            {
                "reasoning": "first",
                "reasoning_details": [
                    {"type": "reasoning.text", "text": "first", "format": "f1", "index": 0}
                ],
            },
            {
                "reasoning_details": [
                    {"type": "reasoning.text", "signature": "sig0", "format": "f1", "index": 0}
                ]
            },
            {
                "reasoning": "second",
                "reasoning_details": [
                    {"type": "reasoning.text", "text": "second", "format": "f1", "index": 1}
                ],
            },
            {
                "reasoning_details": [
                    {"type": "reasoning.encrypted", "data": "opaque", "format": "f1", "index": 2}
                ]
            },
            {"content": "answer"},
        ]
    )
    decoded = decode_chunks(PROTOCOL, [body])
    assert decoded.done_items == [
        {
            "type": "thinking.done",
            "thinking": "first",
            "fidelity": {"format": "f1", "reasoning_field": "reasoning", "signature": "sig0"},
        },
        {
            "type": "thinking.done",
            "thinking": "second",
            "fidelity": {"format": "f1", "reasoning_field": "reasoning"},
        },
        {
            "type": "thinking.done",
            "thinking": "",
            "fidelity": {
                "encrypted": "opaque",
                "detail_type": "reasoning.encrypted",
                "format": "f1",
            },
        },
        {"type": "text.done", "text": "answer"},
    ]


def test_two_reasoning_details_indexes_in_one_chunk_are_two_thinking_items():
    body = _openrouter_body(
        [
            {
                "reasoning_details": [
                    {"type": "reasoning.text", "text": "a", "signature": "s0", "index": 0},
                    {"type": "reasoning.summary", "summary": "b", "id": "rs_1", "index": 1},
                ]
            },
            {"content": "answer"},
        ]
    )
    decoded = decode_chunks(PROTOCOL, [body])
    assert decoded.done_items[:2] == [
        {
            "type": "thinking.done",
            "thinking": "a",
            "fidelity": {"signature": "s0", "reasoning_field": "reasoning_details"},
        },
        {
            "type": "thinking.done",
            "thinking": "b",
            "fidelity": {
                "detail_type": "reasoning.summary",
                "reasoning_id": "rs_1",
                "reasoning_field": "reasoning_details",
            },
        },
    ]


def test_reasoning_details_without_a_reasoning_string_carry_the_text():
    body = _openrouter_body(
        [
            {"reasoning_details": [{"type": "reasoning.text", "text": "only here", "index": 0}]},
            {"content": "answer"},
        ]
    )
    decoded = decode_chunks(PROTOCOL, [body])
    assert decoded.done_items[0] == {
        "type": "thinking.done",
        "thinking": "only here",
        "fidelity": {"reasoning_field": "reasoning_details"},
    }


def test_a_gateway_reusing_one_index_for_two_whole_calls_gives_two_calls():
    body = _openrouter_body(
        [
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "a",
                        "type": "function",
                        "function": {"name": "one", "arguments": "{}"},
                    }
                ]
            },
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "b",
                        "type": "function",
                        "function": {"name": "two", "arguments": '{"x": 1}'},
                    }
                ]
            },
        ],
        finish_reason="tool_calls",
    )
    decoded = decode_chunks(PROTOCOL, [body])
    assert [(c["tool_call_id"], c["name"], c["arguments"]) for c in decoded.done_items] == [
        ("a", "one", {}),
        ("b", "two", {"x": 1}),
    ]


def test_calls_without_an_index_are_told_apart_by_their_ids():
    body = _openrouter_body(
        [
            {"tool_calls": [{"id": "a", "function": {"name": "one", "arguments": '{"k":'}}]},
            {"tool_calls": [{"function": {"arguments": ' "v"}'}}]},
            {"tool_calls": [{"id": "b", "function": {"name": "two", "arguments": "{}"}}]},
        ],
        finish_reason="tool_calls",
    )
    decoded = decode_chunks(PROTOCOL, [body])
    assert [(c["tool_call_id"], c["arguments"]) for c in decoded.done_items] == [
        ("a", {"k": "v"}),
        ("b", {}),
    ]


def test_the_legacy_function_call_delta_is_a_tool_call():
    body = _openrouter_body(
        [
            {"function_call": {"name": "lookup", "arguments": '{"q": '}},
            {"function_call": {"arguments": '"x"}'}},
        ],
        finish_reason="function_call",
    )
    decoded = decode_chunks(PROTOCOL, [body])
    (call,) = decoded.done_items
    assert (call["name"], call["arguments"]) == ("lookup", {"q": "x"})
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.decoder.metadata.raw_finish_reason == "function_call"


def test_a_content_filter_finish_is_unknown_with_the_raw_reason_kept():
    body = _openrouter_body([{"content": "partial"}], finish_reason="content_filter")
    decoded = decode_chunks(PROTOCOL, [body])
    assert decoded.stop["finish_reason"] == "unknown"
    assert decoded.decoder.metadata.raw_finish_reason == "content_filter"


def test_unknown_delta_fields_are_skipped_and_counted_never_text():
    body = _openrouter_body(
        [{"content": "see", "annotations": [{"type": "url_citation"}]}, {"content": " this"}]
    )
    decoded = decode_chunks(PROTOCOL, [body])
    assert decoded.done_items == [{"type": "text.done", "text": "see this"}]
    assert decoded.decoder.metadata.skipped["delta:annotations"] == 1


# --- audio output ---------------------------------------------------------------------------
# No capture holds Chat audio output (corpus README: gaps); these chunks follow the documented
# shape of `delta.audio` (id, base64 pcm16 `data`, `transcript` pieces, then `expires_at`)
# inside the envelope of openaipy-text-usage.


def audio_stream(deltas: list[dict], finish: str = "stop") -> bytes:
    capture = load_capture(PROTOCOL, "openaipy-text-usage")
    first, *_, finish_chunk, usage_chunk = chunks_of(capture)
    chunks = [first]
    for audio in deltas:
        chunk = json.loads(json.dumps(first))
        chunk["choices"][0]["delta"] = {"audio": audio}
        chunks.append(chunk)
    finish_chunk["choices"][0]["finish_reason"] = finish
    chunks += [finish_chunk, usage_chunk]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


PCM = [b"\x00\x01\x02\x03", b"\xfe\xff", b"\x10\x20\x30\x40\x50\x60"]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_audio_chunks_of_one_clip_join_one_inline_data_item_and_the_transcript_is_text(
    replay_server,
):
    body = audio_stream(
        [
            {"id": "audio_abc123", "transcript": "Hello"},
            {"data": b64(PCM[0]), "transcript": " there"},
            {"data": b64(PCM[1])},
            {"data": b64(PCM[2]), "transcript": "!"},
            {"expires_at": 1729234747},
        ]
    )
    decoded = decode_over_http(replay_server, Capture(PROTOCOL, "audio", body, {}), [9, 1])
    assert decoded.error is None
    assert decoded.done_items == [
        {"type": "text.done", "text": "Hello there!", "fidelity": {"audio_id": "audio_abc123"}},
        {
            "type": "inline_data.done",
            "data": b"".join(PCM),
            "mime_type": "audio/pcm;rate=24000",
            "fidelity": {"audio_id": "audio_abc123", "expires_at": 1729234747},
        },
    ]
    assert [i["type"] for i in decoded.decoder.result.message["content_items"]] == [
        "text.done",
        "inline_data.done",
    ]
    assert "delta:audio" not in decoded.decoder.metadata.skipped
    assert decoded.stop["finish_reason"] == "stop"


def test_an_audio_clip_cut_before_the_finish_is_never_done(replay_server):
    body = audio_stream([{"id": "audio_cut", "data": b64(PCM[0])}, {"data": b64(PCM[1])}])
    cut = body[: body.index(b'"finish_reason": "stop"')]
    cut = cut[: cut.rindex(b"data: ")]
    decoded = decode_over_http(replay_server, Capture(PROTOCOL, "audio-cut", cut, {}))
    assert isinstance(decoded.error, IncompleteStreamError)
    assert decoded.error.partial.items == []
    assert decoded.error.partial.open_item == {
        "type": "inline_data.delta",
        "data": PCM[0] + PCM[1],
        "mime_type": "audio/pcm;rate=24000",
        "fidelity": {"audio_id": "audio_cut"},
    }
