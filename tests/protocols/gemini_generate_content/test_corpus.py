"""Gemini generateContent captures, replayed byte for byte over loopback HTTP.

Expected values were read from the capture files (by eye, or by splitting a capture's CRLF
frames with `json` in `chunks_of`, independent of our SSE decoder), never from our output.
"""

from __future__ import annotations

import base64
import json

import pytest

from modelstream import (
    FinalResponse,
    IncompleteStreamError,
    ProviderError,
    ToolCallArgumentParseError,
)
from support import Capture, capture_names, decode_chunks, decode_over_http, load_capture

PROTOCOL = "gemini-generate-content"


def replay(server, name, slices=(), **options):
    return decode_over_http(server, load_capture(PROTOCOL, name), slices, **options)


def replay_body(server, body: bytes, slices=(), **options):
    """Serve an edited or cut body over loopback HTTP, as a capture is served."""
    return decode_over_http(server, Capture(PROTOCOL, "edited", body, {}), slices, **options)


def chunks_of(capture: Capture) -> list[dict]:
    """The capture's JSON chunks: every Gemini capture frames them as `data: <json>\\r\\n\\r\\n`."""
    blocks = [block for block in capture.body.split(b"\r\n\r\n") if block.strip()]
    return [json.loads(block.removeprefix(b"data: ")) for block in blocks]


def part(capture: Capture, chunk: int, index: int = 0) -> dict:
    return chunks_of(capture)[chunk]["candidates"][0]["content"]["parts"][index]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def frame(chunk: dict) -> bytes:
    return b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"


def delta_items(decoded, item_type):
    return [
        e["content_items"][0]
        for e in decoded.events
        if e["content_items"] and e["content_items"][0]["type"] == item_type
    ]


def comparable(decoded):
    return [(e["event_type"], e["content_items"], e["usage_metadata"]) for e in decoded.events]


# --- every capture ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_every_capture_replays_to_a_final_response_or_the_blocked_prompt_error(replay_server, name):
    decoded = replay(replay_server, name, slices=[97, 13])
    capture = load_capture(PROTOCOL, name)
    last = chunks_of(capture)[-1]
    assert decoded.decoder.metadata.model == last["modelVersion"] == capture.sidecar["model"]
    assert decoded.decoder.metadata.response_id == last["responseId"]
    if "candidates" not in last:  # the prompt was refused before any candidate
        block_reason = last["promptFeedback"]["blockReason"]
        assert isinstance(decoded.error, ProviderError)
        assert (decoded.error.error_type, decoded.error.code) == ("prompt_blocked", block_reason)
        assert decoded.decoder.result is decoded.error.partial
        return
    assert decoded.error is None
    assert decoded.stop is not None
    assert isinstance(decoded.decoder.result, FinalResponse)
    assert decoded.decoder.metadata.raw_finish_reason == last["candidates"][0]["finishReason"]


@pytest.mark.parametrize("name", capture_names(PROTOCOL))
def test_every_signature_in_a_capture_rides_on_an_item_or_is_reported_dropped(replay_server, name):
    capture = load_capture(PROTOCOL, name)
    sent = [
        p["thoughtSignature"]
        for chunk in chunks_of(capture)
        for candidate in chunk.get("candidates") or []
        for p in candidate["content"]["parts"]
        if "thoughtSignature" in p
    ]
    decoded = replay(replay_server, name)
    kept = [i["fidelity"]["thought_signature"] for i in decoded.done_items if "fidelity" in i]
    diagnostics = decoded.decoder.metadata.diagnostics
    dropped = [d for d in diagnostics if d["type"] == "thought_signature_dropped"]
    assert len(kept) + len(dropped) == len(sent)
    assert set(kept) <= set(sent)


def test_one_byte_slices_over_crlf_framing_decode_to_the_same_events(replay_server):
    whole = replay(replay_server, "vercel-google-text")
    sliced = replay(replay_server, "vercel-google-text", slices=[1])
    assert sliced.error is None
    assert comparable(sliced) == comparable(whole)


def test_odd_slices_through_streamed_arguments_decode_to_the_same_events(replay_server):
    whole = replay(replay_server, "vercel-vertex-stream-tool-call-args-nested")
    sliced = replay(
        replay_server, "vercel-vertex-stream-tool-call-args-nested", slices=[1, 2, 3, 5, 8, 13]
    )
    assert sliced.error is None
    assert comparable(sliced) == comparable(whole)


# --- text, thinking, signatures -----------------------------------------------------------------


def test_plain_text_parts_join_into_one_item_and_the_last_usage_wins(replay_server):
    decoded = replay(replay_server, "pydanticai-google-text")
    assert decoded.done_items == [
        {"type": "text.done", "text": "The capital of France is Paris.\n"}
    ]
    assert [d["text"] for d in delta_items(decoded, "text.delta")] == [
        "The",
        " capital of France",
        " is Paris.\n",
    ]
    assert decoded.stop["finish_reason"] == "stop"
    # The first chunks say promptTokenCount 15; the last says 13 with candidatesTokenCount 8 and
    # no thoughtsTokenCount (gemini-2.0-flash-exp does not think).
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 13,
        "thoughts_tokens": 0,
        "response_tokens": 8,
    }
    meta = decoded.decoder.metadata
    assert meta.model == "gemini-2.0-flash-exp"
    assert meta.response_id == "w1peaMz6INOvnvgPgYfPiQY"
    assert meta.raw_finish_reason == "STOP"
    assert meta.skipped == {}


def test_thought_parts_become_one_thinking_item_before_the_answer(replay_server):
    capture = load_capture(PROTOCOL, "pydanticai-google-thinking")
    thoughts = [part(capture, n) for n in range(4)]
    assert all(p["thought"] is True for p in thoughts)
    decoded = replay(replay_server, "pydanticai-google-thinking")
    thinking = decoded.done_items[0]
    assert thinking == {"type": "thinking.done", "thinking": "".join(p["text"] for p in thoughts)}
    assert thinking["thinking"].startswith("**Clarifying User Goals**")
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 34,
        "thoughts_tokens": 787,
        "response_tokens": 469,
    }


def test_a_signature_on_the_first_answer_part_rides_on_the_whole_answer(replay_server):
    # SPEC §3: one item per run of parts of one kind; a signature never ends an item.
    capture = load_capture(PROTOCOL, "pydanticai-google-thinking")
    signed = part(capture, 4)
    assert "thoughtSignature" in signed and "thought" not in signed
    assert not any("thoughtSignature" in part(capture, n) for n in range(5, 23))
    decoded = replay(replay_server, "pydanticai-google-thinking")
    thinking, answer = decoded.done_items
    assert thinking["type"] == "thinking.done"
    assert answer == {
        "type": "text.done",
        "text": "".join(part(capture, n)["text"] for n in range(4, 23)),
        "fidelity": {"thought_signature": signed["thoughtSignature"]},
    }
    assert answer["text"].startswith("This is a great question! Safely crossing the street")
    carriers = [d for d in delta_items(decoded, "text.delta") if "fidelity" in d]
    assert len(carriers) == 1 and carriers[0]["text"] == ""


def test_a_stream_cut_after_the_signed_first_answer_part_closes_no_fragment_of_the_answer(
    replay_server,
):
    capture = load_capture(PROTOCOL, "pydanticai-google-thinking")
    blocks = [b for b in capture.body.split(b"\r\n\r\n") if b.strip()]
    cut = b"".join(block + b"\r\n\r\n" for block in blocks[:7])  # thoughts, answer parts 4-6
    decoded = replay_body(replay_server, cut)
    error = decoded.error
    assert isinstance(error, IncompleteStreamError)
    assert [i["type"] for i in error.partial.items] == ["thinking.done"]
    assert not any(i["type"] == "text.done" for i in decoded.done_items)
    assert error.partial.open_item == {
        "type": "text.delta",
        "text": "".join(part(capture, n)["text"] for n in (4, 5, 6)),
        "fidelity": {"thought_signature": part(capture, 4)["thoughtSignature"]},
    }


def test_a_second_signature_in_one_run_begins_a_new_item_and_keeps_both(replay_server):
    chunks = chunks_of(load_capture(PROTOCOL, "pydanticai-google-text"))
    chunks[0]["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = "sig-one"
    chunks[2]["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = "sig-two"
    decoded = replay_body(replay_server, b"".join(frame(c) for c in chunks))
    assert decoded.done_items == [
        {
            "type": "text.done",
            "text": "The capital of France",
            "fidelity": {"thought_signature": "sig-one"},
        },
        {"type": "text.done", "text": " is Paris.\n", "fidelity": {"thought_signature": "sig-two"}},
    ]


def test_an_empty_text_part_carrying_a_signature_attaches_to_the_text_it_closes(replay_server):
    capture = load_capture(PROTOCOL, "vercel-google-text")
    final = part(capture, 2)
    assert final["text"] == ""
    decoded = replay(replay_server, "vercel-google-text")
    assert decoded.done_items == [
        {
            "type": "text.done",
            "text": 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y',
            "fidelity": {"thought_signature": final["thoughtSignature"]},
        }
    ]
    carriers = [d for d in delta_items(decoded, "text.delta") if "fidelity" in d]
    assert len(carriers) == 1 and carriers[0]["text"] == ""
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 9,
        "thoughts_tokens": 185,
        "response_tokens": 23,
    }


def test_a_vertex_single_chunk_answer_keeps_its_signature_and_thought_count(replay_server):
    capture = load_capture(PROTOCOL, "pydanticai-vertex-flex")
    decoded = replay(replay_server, "pydanticai-vertex-flex", provider="vertex")
    assert decoded.done_items == [
        {
            "type": "text.done",
            "text": "OK",
            "fidelity": {"thought_signature": part(capture, 0)["thoughtSignature"]},
        }
    ]
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 5,
        "thoughts_tokens": 100,
        "response_tokens": 1,
    }
    assert decoded.decoder.metadata.provider == "vertex"
    assert decoded.decoder.metadata.response_id == "a9--aa6MOKL4vdIPz7X2iQ4"


# --- provider-executed tools and metadata -------------------------------------------------------


def test_code_execution_parts_are_skipped_and_the_answer_keeps_its_closing_signature(
    replay_server,
):
    capture = load_capture(PROTOCOL, "pydanticai-google-code-execution")
    decoded = replay(replay_server, "pydanticai-google-code-execution")
    assert decoded.done_items == [
        {
            "type": "text.done",
            "text": "The result of $65465 - 6544 \\times 65464 - 6 + 1.02255$ is "
            "**-428,330,955.97745**.",
            "fidelity": {"thought_signature": part(capture, 5)["thoughtSignature"]},
        }
    ]
    meta = decoded.decoder.metadata
    assert meta.skipped == {"part:executableCode": 1, "part:codeExecutionResult": 1}
    # The executableCode part carried a signature too; with no item to hold it, it is reported.
    assert {"type": "thought_signature_dropped", "part": "executableCode"} in meta.diagnostics
    assert decoded.stop["finish_reason"] == "stop"


def test_tool_use_prompt_tokens_count_as_input(replay_server):
    # Last chunk: promptTokenCount 147, toolUsePromptTokenCount 360, candidatesTokenCount 108,
    # thoughtsTokenCount 168, totalTokenCount 783 (= 147 + 360 + 108 + 168).
    decoded = replay(replay_server, "pydanticai-google-code-execution")
    usage = decoded.stop["usage_metadata"]
    assert usage == {
        "cached_tokens": 0,
        "prompt_tokens": 147 + 360,
        "thoughts_tokens": 168,
        "response_tokens": 108,
    }
    assert sum(usage.values()) == 783


def test_grounding_metadata_is_skipped_and_counted_once_where_it_is_not_empty(replay_server):
    capture = load_capture(PROTOCOL, "pydanticai-google-web-search")
    chunks = chunks_of(capture)
    grounded = [c for c in chunks if c["candidates"][0].get("groundingMetadata")]
    assert len(grounded) == 1 and len(chunks) == 10
    decoded = replay(replay_server, "pydanticai-google-web-search")
    assert decoded.decoder.metadata.skipped == {"candidate:groundingMetadata": 1}
    (text,) = decoded.done_items
    assert text["type"] == "text.done"
    assert text["text"] == "".join(part(capture, n)["text"] for n in range(10))
    assert text["text"].startswith("### Weather in San Francisco is Mild and Partly Cloudy Today")
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 17 + 102,
        "thoughts_tokens": 412,
        "response_tokens": 241,
    }


# --- function calls -----------------------------------------------------------------------------


def test_a_whole_function_call_with_empty_args_and_a_signature_is_one_tool_call(replay_server):
    capture = load_capture(PROTOCOL, "pydanticai-google-tool-call-signature")
    decoded = replay(replay_server, "pydanticai-google-tool-call-signature")
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "call_1",
            "name": "get_country",
            "arguments": {},
            "fidelity": {"thought_signature": part(capture, 0)["thoughtSignature"]},
        }
    ]
    assert decoded.stop["finish_reason"] == "tool_call"
    meta = decoded.decoder.metadata
    assert meta.raw_finish_reason == "STOP"
    assert {
        "type": "tool_call_id_synthesized",
        "tool_call_id": "call_1",
        "name": "get_country",
    } in meta.diagnostics
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 29,
        "thoughts_tokens": 202,
        "response_tokens": 10,
    }


def test_a_whole_function_call_streams_its_args_as_one_fragment_and_the_empty_text_opens_nothing(
    replay_server,
):
    capture = load_capture(PROTOCOL, "vercel-google-tool-call")
    decoded = replay(replay_server, "vercel-google-tool-call")
    (call,) = decoded.done_items
    assert call == {
        "type": "tool_call.done",
        "tool_call_id": "call_1",
        "name": "weather",
        "arguments": {"location": "San Francisco"},
        "fidelity": {"thought_signature": part(capture, 0)["thoughtSignature"]},
    }
    first = delta_items(decoded, "tool_call.delta")[0]
    assert first["name"] == "weather"
    assert json.loads(first["arguments"]) == {"location": "San Francisco"}
    assert decoded.stop["finish_reason"] == "tool_call"


def test_streamed_partial_args_build_each_call_and_the_empty_function_call_ends_it(replay_server):
    capture = load_capture(PROTOCOL, "vercel-vertex-stream-tool-call-args")
    decoded = replay(replay_server, "vercel-vertex-stream-tool-call-args")
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "call_1",
            "name": "getWeather",
            "arguments": {"location": "Boston"},
            "fidelity": {"thought_signature": part(capture, 0)["thoughtSignature"]},
        },
        {
            "type": "tool_call.done",
            "tool_call_id": "call_2",
            "name": "getWeather",
            "arguments": {"location": "San Francisco"},
        },
    ]
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 26,
        "thoughts_tokens": 132,
        "response_tokens": 23,
    }


def test_streamed_arguments_arrive_as_fragments_that_join_into_valid_json(replay_server):
    decoded = replay(replay_server, "vercel-vertex-stream-tool-call-args")
    fragments = delta_items(decoded, "tool_call.delta")
    starts = [f for f in fragments if f["name"]]
    assert [(f["name"], f["arguments"]) for f in starts] == [("getWeather", ""), ("getWeather", "")]
    texts = [f["arguments"] for f in fragments]
    first_call = texts[: fragments.index(starts[1])]
    assert len([t for t in first_call if t]) > 1  # streamed, not one blob at the end
    assert json.loads("".join(first_call)) == {"location": "Boston"}


def test_nested_partial_args_build_the_whole_object_with_arrays(replay_server):
    capture = load_capture(PROTOCOL, "vercel-vertex-stream-tool-call-args-nested")
    decoded = replay(replay_server, "vercel-vertex-stream-tool-call-args-nested")
    (call,) = decoded.done_items
    assert call["name"] == "cookRecipe"
    assert call["fidelity"] == {"thought_signature": part(capture, 0)["thoughtSignature"]}
    ingredients = [
        ("16 oz", "Lasagna noodles"),
        ("1 lb", "Ground beef"),
        ("15 oz", "Ricotta cheese"),
        ("3 cups", "Mozzarella cheese"),
        ("1/2 cup", "Parmesan cheese"),
        ("24 oz", "Tomato sauce"),
        ("1", "Egg"),
        ("2 cloves", "Garlic"),
        ("1 tsp", "Salt"),
        ("1/2 tsp", "Pepper"),
    ]
    steps = [
        "Preheat oven to 375°F (190°C).",
        # arrives in two pieces: "... drain and set aside" then "."
        "Cook lasagna noodles according to package directions, drain and set aside.",
        "Brown ground beef with minced garlic in a skillet. Drain fat and stir in tomato sauce. "
        "Simmer for 10 minutes.",
        "In a bowl, mix ricotta cheese, egg, salt, pepper, and Parmesan cheese.",
        # arrives in two pieces: "In a 9x13 baking dish, spread a" then " thin layer ..."
        "In a 9x13 baking dish, spread a thin layer of meat sauce.",
        "Layer noodles, ricotta mixture, mozzarella, and meat sauce. Repeat.",
        "Top with remaining mozzarella cheese.",
        "Cover with foil and bake for 25 minutes.",
        "Remove foil and bake for another 25 minutes until golden.",
        "Let stand for 15 minutes before serving.",
    ]
    assert call["arguments"] == {
        "recipe": {
            "ingredients": [{"amount": a, "name": n} for a, n in ingredients],
            "name": "Lasagna",
            "steps": steps,
        }
    }
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 31,
        "thoughts_tokens": 1026,
        "response_tokens": 684,
    }


def test_array_partial_args_keep_numbers_and_end_without_a_terminal_function_call(replay_server):
    decoded = replay(replay_server, "vercel-vertex-stream-array-args-no-terminal")
    (call,) = decoded.done_items
    assert call["name"] == "writeItems"
    assert call["arguments"] == {
        "operations": [
            {
                "action": "add",
                "description": "Fresh red apple",
                "itemid": "apple_001",
                "price": 0.5,
            },
            {
                "action": "add",
                "description": "Ripe yellow banana",
                "itemid": "banana_001",
                "price": 0.3,
            },
        ]
    }
    assert decoded.stop["finish_reason"] == "tool_call"


def test_a_last_partial_args_part_without_will_continue_ends_the_call_before_the_finish():
    capture = load_capture(PROTOCOL, "vercel-vertex-stream-array-args-no-terminal")
    last = capture.body.rindex(b"data: ")
    decoded = decode_chunks(PROTOCOL, [capture.body[:last]])
    assert isinstance(decoded.error, IncompleteStreamError)  # no finishReason yet
    assert [i["type"] for i in decoded.done_items] == ["tool_call.done"]
    assert decoded.error.partial.open_item is None


def test_thinking_then_a_call_without_args_then_three_streamed_calls(replay_server):
    capture = load_capture(PROTOCOL, "vercel-vertex-stream-no-args-parallel")
    assert "args" not in part(capture, 1)["functionCall"]
    decoded = replay(replay_server, "vercel-vertex-stream-no-args-parallel")
    thinking, theme, *screens = decoded.done_items
    assert thinking == {"type": "thinking.done", "thinking": part(capture, 0)["text"]}
    assert theme == {
        "type": "tool_call.done",
        "tool_call_id": "call_1",
        "name": "read_theme",
        "arguments": {},
        "fidelity": {"thought_signature": part(capture, 1)["thoughtSignature"]},
    }
    assert [(s["name"], s["tool_call_id"], s["arguments"]) for s in screens] == [
        ("read_screen", "call_2", {"id": "A"}),
        ("read_screen", "call_3", {"id": "B"}),
        ("read_screen", "call_4", {"id": "C"}),
    ]
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 249,
        "thoughts_tokens": 183,
        "response_tokens": 58,
    }


def test_a_function_call_id_from_the_provider_is_kept():
    capture = load_capture(PROTOCOL, "vercel-google-tool-call")
    first, last = chunks_of(capture)
    first["candidates"][0]["content"]["parts"][0]["functionCall"]["id"] = "fc_weather_1"
    decoded = decode_chunks(PROTOCOL, [frame(first), frame(last)])
    (call,) = decoded.done_items
    assert call["tool_call_id"] == "fc_weather_1"
    assert not any(
        d["type"] == "tool_call_id_synthesized" for d in decoded.decoder.metadata.diagnostics
    )


# --- breaks, cuts and errors --------------------------------------------------------------------


def test_a_body_cut_inside_streamed_arguments_is_incomplete_and_keeps_the_open_call():
    capture = load_capture(PROTOCOL, "vercel-vertex-stream-tool-call-args-nested")
    cut = capture.body.index(b'"$.recipe.name"')
    cut = capture.body.rindex(b"data: ", 0, cut)
    decoded = decode_chunks(PROTOCOL, [capture.body[:cut]])
    error = decoded.error
    assert isinstance(error, IncompleteStreamError)
    assert error.partial.status == "incomplete"
    assert error.partial.items == []
    assert error.partial.open_item["type"] == "tool_call.delta"
    assert error.partial.open_item["name"] == "cookRecipe"
    assert error.partial.open_item["arguments"].startswith(
        '{"recipe":{"ingredients":[{"amount":"16 oz","name":"Lasagna noodles"}'
    )


def test_max_tokens_while_arguments_stream_is_never_an_executable_call():
    chunks = chunks_of(load_capture(PROTOCOL, "vercel-vertex-stream-tool-call-args"))
    cut = chunks[3]  # the chunk after "Boston": the empty functionCall that ends the call
    cut["candidates"][0]["content"]["parts"] = [{"text": ""}]
    cut["candidates"][0]["finishReason"] = "MAX_TOKENS"
    decoded = decode_chunks(PROTOCOL, [frame(c) for c in (*chunks[:2], cut)])
    assert isinstance(decoded.error, ToolCallArgumentParseError)
    assert decoded.error.name == "getWeather"
    assert decoded.error.partial.metadata.raw_finish_reason == "MAX_TOKENS"


def test_max_tokens_while_arguments_stream_recovers_the_fields_received_when_lenient():
    chunks = chunks_of(load_capture(PROTOCOL, "vercel-vertex-stream-tool-call-args"))
    cut = chunks[3]
    cut["candidates"][0]["content"]["parts"] = [{"text": ""}]
    cut["candidates"][0]["finishReason"] = "MAX_TOKENS"
    decoded = decode_chunks(
        PROTOCOL, [frame(c) for c in (*chunks[:2], cut)], lenient_tool_arguments=True
    )
    assert decoded.error is None
    assert decoded.done_items[0]["arguments"] == {"location": "Boston"}
    assert decoded.stop["finish_reason"] == "length"


def test_max_tokens_before_any_argument_arrived_is_not_an_empty_call():
    chunks = chunks_of(load_capture(PROTOCOL, "vercel-vertex-stream-tool-call-args"))
    cut = chunks[1]
    cut["candidates"][0]["content"]["parts"] = [{"text": ""}]
    cut["candidates"][0]["finishReason"] = "MAX_TOKENS"
    decoded = decode_chunks(PROTOCOL, [frame(chunks[0]), frame(cut)])
    assert isinstance(decoded.error, ToolCallArgumentParseError)


@pytest.mark.parametrize(
    ("raw", "finish"),
    [("MAX_TOKENS", "length"), ("SAFETY", "unknown"), ("RECITATION", "unknown")],
)
def test_finish_reasons_map_and_keep_the_raw_reason(raw, finish):
    chunks = chunks_of(load_capture(PROTOCOL, "pydanticai-google-text"))
    chunks[-1]["candidates"][0]["finishReason"] = raw
    decoded = decode_chunks(PROTOCOL, [frame(c) for c in chunks])
    assert decoded.stop["finish_reason"] == finish
    assert decoded.decoder.metadata.raw_finish_reason == raw
    assert decoded.done_items[0]["text"] == "The capital of France is Paris.\n"


def test_an_in_band_error_object_is_a_provider_error_with_the_partial():
    chunks = chunks_of(load_capture(PROTOCOL, "vercel-google-text"))
    error = {
        "error": {
            "code": 503,
            "message": "The model is overloaded. Please try again later.",
            "status": "UNAVAILABLE",
        }
    }
    decoded = decode_chunks(PROTOCOL, [frame(chunks[0]), frame(error)])
    assert isinstance(decoded.error, ProviderError)
    assert decoded.error.error_type == "UNAVAILABLE"
    assert decoded.error.code == 503
    assert decoded.error.provider_message == "The model is overloaded. Please try again later."
    assert decoded.error.retryable is True
    assert decoded.error.partial.status == "failed"
    assert decoded.error.partial.open_item == {"type": "text.delta", "text": "There are **3**"}


def test_an_in_band_rate_limit_error_carries_the_retry_delay():
    error = {
        "error": {
            "code": 429,
            "message": "Resource exhausted.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "27s"}],
        }
    }
    decoded = decode_chunks(PROTOCOL, [frame(error)])
    assert isinstance(decoded.error, ProviderError)
    assert decoded.error.retryable is True
    assert decoded.error.retry_after == 27.0


def test_a_blocked_prompt_without_candidates_is_a_provider_error():
    # The shape Gemini sends for a blocked prompt (vercel/ai fixture issue-19758-prompt-block).
    blocked = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        "modelVersion": "gemini-3.7-flash",
        "responseId": "EXCPatOAKMrQjMcPteHVmQo",
    }
    decoded = decode_chunks(PROTOCOL, [frame(blocked)])
    error = decoded.error
    assert isinstance(error, ProviderError)
    assert error.error_type == "prompt_blocked"
    assert error.code == "PROHIBITED_CONTENT"
    assert error.retryable is False
    assert error.partial.usage["prompt_tokens"] == 9
    assert error.partial.metadata.response_id == "EXCPatOAKMrQjMcPteHVmQo"


def test_other_candidates_are_skipped_and_counted():
    chunks = chunks_of(load_capture(PROTOCOL, "pydanticai-google-text"))
    for chunk in chunks:
        other = json.loads(json.dumps(chunk["candidates"][0]))
        other["index"] = 1
        other["content"]["parts"] = [{"text": "other choice"}]
        chunk["candidates"].append(other)
    decoded = decode_chunks(PROTOCOL, [frame(c) for c in chunks])
    assert decoded.done_items == [
        {"type": "text.done", "text": "The capital of France is Paris.\n"}
    ]
    assert decoded.decoder.metadata.skipped == {"other_candidate": 3}


def test_each_image_is_its_own_item_and_audio_chunks_of_one_clip_join():
    png, jpeg = b"\x89PNG\r\n\x1a\n-one", b"\xff\xd8\xff-two"
    pcm = [b"\x00\x01\x02", b"\x03\x04"]

    def inline(data: bytes, mime: str) -> dict:
        return {"inlineData": {"mimeType": mime, "data": base64.b64encode(data).decode()}}

    chunks = [
        {"candidates": [{"content": {"parts": [inline(png, "image/png")], "role": "model"}}]},
        {"candidates": [{"content": {"parts": [inline(jpeg, "image/jpeg")], "role": "model"}}]},
        {"candidates": [{"content": {"parts": [inline(pcm[0], "audio/L16")], "role": "model"}}]},
        {
            "candidates": [
                {
                    "content": {"parts": [inline(pcm[1], "audio/L16")], "role": "model"},
                    "finishReason": "STOP",
                }
            ]
        },
    ]
    decoded = decode_chunks(PROTOCOL, [frame(c) for c in chunks])
    assert decoded.error is None
    assert decoded.done_items == [
        {"type": "inline_data.done", "data": png, "mime_type": "image/png"},
        {"type": "inline_data.done", "data": jpeg, "mime_type": "image/jpeg"},
        {"type": "inline_data.done", "data": pcm[0] + pcm[1], "mime_type": "audio/L16"},
    ]


def test_a_signature_on_an_audio_chunk_rides_on_the_clip_without_ending_it(replay_server):
    pcm = [b"\x00\x01", b"\x02\x03", b"\x04\x05"]

    def chunk(data: bytes, **extra) -> dict:
        part = {"inlineData": {"mimeType": "audio/L16;rate=24000", "data": b64(data)}, **extra}
        return {"candidates": [{"content": {"parts": [part], "role": "model"}}]}

    chunks = [chunk(pcm[0]), chunk(pcm[1], thoughtSignature="sig-audio"), chunk(pcm[2])]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    decoded = replay_body(replay_server, b"".join(frame(c) for c in chunks))
    assert decoded.done_items == [
        {
            "type": "inline_data.done",
            "data": b"".join(pcm),
            "mime_type": "audio/L16;rate=24000",
            "fidelity": {"thought_signature": "sig-audio"},
        }
    ]


def test_an_image_is_done_as_soon_as_its_part_arrives():
    image = {"mimeType": "image/png", "data": base64.b64encode(b"\x89PNG-bytes").decode()}
    chunk = {"candidates": [{"content": {"parts": [{"inlineData": image}], "role": "model"}}]}
    decoded = decode_chunks(PROTOCOL, [frame(chunk)])
    assert isinstance(decoded.error, IncompleteStreamError)  # no finishReason came
    assert decoded.error.partial.items == [
        {"type": "inline_data.done", "data": b"\x89PNG-bytes", "mime_type": "image/png"}
    ]
    assert decoded.error.partial.open_item is None


def test_url_safe_base64_inline_data_decodes_to_the_same_bytes():
    data = b"\xfb\xff\xbf-needs-both-alphabets"
    image = {"mimeType": "image/png", "data": base64.urlsafe_b64encode(data).decode()}
    assert "-" in image["data"] or "_" in image["data"]
    chunk = {
        "candidates": [
            {
                "content": {"parts": [{"inlineData": image}], "role": "model"},
                "finishReason": "STOP",
            }
        ]
    }
    decoded = decode_chunks(PROTOCOL, [frame(chunk)])
    assert decoded.done_items == [
        {"type": "inline_data.done", "data": data, "mime_type": "image/png"}
    ]


def test_thoughts_stay_unknown_when_thought_parts_came_but_no_thought_count():
    usage = {"promptTokenCount": 4, "candidatesTokenCount": 2}
    answer = {"content": {"parts": [{"text": "Hi"}], "role": "model"}}
    thought = {"content": {"parts": [{"text": "Greet back.", "thought": True}], "role": "model"}}
    chunks = [
        {"candidates": [answer], "usageMetadata": usage},
        {"candidates": [{**thought, "finishReason": "STOP"}], "usageMetadata": usage},
    ]
    decoded = decode_chunks(PROTOCOL, [frame(c) for c in chunks])
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 4,
        "thoughts_tokens": None,
        "response_tokens": 2,
    }


def test_cached_content_tokens_are_taken_out_of_the_prompt_count():
    chunks = chunks_of(load_capture(PROTOCOL, "pydanticai-google-text"))
    chunks[-1]["usageMetadata"]["cachedContentTokenCount"] = 5
    decoded = decode_chunks(PROTOCOL, [frame(c) for c in chunks])
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 5,
        "prompt_tokens": 13 - 5,
        "thoughts_tokens": 0,
        "response_tokens": 8,
    }


# --- more captures: text, signatures, thinking ---------------------------------------------------
# Texts and counts below were read from each capture's payloads; signatures are taken from the
# part that carries them with `part`, which reads the file with `json` alone.


def usage(prompt, thoughts, response, cached=0):
    return {
        "cached_tokens": cached,
        "prompt_tokens": prompt,
        "thoughts_tokens": thoughts,
        "response_tokens": response,
    }


@pytest.mark.parametrize(
    ("name", "text", "expected_usage"),
    [
        ("vercel-google-empty-text-signature", "4", usage(15, 52, 1)),
        ("vercel-google-gemini-3.7-flash", "OK", usage(6, 50, 1)),
        (
            "vercel-google-gemini3-signature-only",
            'There are **3** "r"s in strawberry.\n\nSt**r**awbe**rr**y',
            usage(9, 302, 23),
        ),
        (
            "vercel-google-gemini3-text-signature",
            'There are **3** "r"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.',
            usage(9, 256, 29),
        ),
        (
            "vercel-google-tool-result-answer",
            "It is currently sunny and 72 degrees in San Francisco.",
            usage(311, 161, 13),
        ),
        (
            "pydanticai-google-structured-output",
            '{\n  "city": "Mexico City",\n  "country": "Mexico"\n} ',
            usage(128, 30, 21),
        ),
    ],
)
def test_a_signature_sent_on_an_empty_last_part_rides_on_the_one_answer_item(
    replay_server, name, text, expected_usage
):
    capture = load_capture(PROTOCOL, name)
    last = len(chunks_of(capture)) - 1
    closing = part(capture, last)
    assert closing["text"] == "" and closing["thoughtSignature"]
    decoded = replay(replay_server, name, slices=[5, 61])
    assert decoded.done_items == [
        {
            "type": "text.done",
            "text": text,
            "fidelity": {"thought_signature": closing["thoughtSignature"]},
        }
    ]
    assert decoded.stop["finish_reason"] == "stop"
    assert decoded.stop["usage_metadata"] == expected_usage
    assert decoded.decoder.metadata.skipped == {}


def test_structured_output_text_is_the_json_the_schema_asked_for(replay_server):
    decoded = replay(replay_server, "pydanticai-google-structured-output")
    (answer,) = decoded.done_items
    assert json.loads(answer["text"]) == {"city": "Mexico City", "country": "Mexico"}


@pytest.mark.parametrize(
    ("name", "text", "expected_usage", "skipped"),
    [
        ("pydanticai-google-single-chunk", "Paris", usage(6, 35, 1), {}),
        (
            # a sanitized capture: the answer, then an empty text part with STOP
            "vercel-google-search-sanitized",
            "The current date is Wednesday, August 26, 2026.",
            usage(17 + 308, 333, 37),
            {},
        ),
        (
            # chunk 0: urlContextMetadata and an empty groundingMetadata; chunk 1: grounding
            "pydanticai-google-url-context",
            "Pydantic AI Gateway is now available!",
            usage(32 + 4610, 37, 25),
            {"candidate:urlContextMetadata": 1, "candidate:groundingMetadata": 1},
        ),
    ],
)
def test_unsigned_answers_are_one_text_item_without_fidelity(
    replay_server, name, text, expected_usage, skipped
):
    decoded = replay(replay_server, name)
    assert decoded.done_items == [{"type": "text.done", "text": text}]
    assert decoded.stop["finish_reason"] == "stop"
    assert decoded.stop["usage_metadata"] == expected_usage
    assert decoded.decoder.metadata.skipped == skipped


def test_max_tokens_ends_the_text_with_length_and_keeps_every_part(replay_server):
    capture = load_capture(PROTOCOL, "vercel-google-flash-max-tokens")
    chunks = chunks_of(capture)
    assert len(chunks) == 8
    decoded = replay(replay_server, "vercel-google-flash-max-tokens", slices=[1, 7])
    (text,) = decoded.done_items
    assert text["text"] == "".join(part(capture, n)["text"] for n in range(8))
    assert text["text"].startswith("## Seed & Song Day - Celebrated on the Vernal Equinox\n\n")
    assert text["text"].endswith("connects people to the natural world.\n\n*   **The")
    assert len(text["text"]) == 1008
    assert decoded.stop["finish_reason"] == "length"
    assert decoded.decoder.metadata.raw_finish_reason == "MAX_TOKENS"
    # Only the last chunk counts candidates (200; promptTokenCount drops from 10 to 9 there);
    # gemini-2.0-flash reports no thoughtsTokenCount and streamed no thought.
    assert decoded.stop["usage_metadata"] == usage(9, 0, 200)


def test_flash_thoughts_become_one_unsigned_thinking_item_before_the_answer(replay_server):
    capture = load_capture(PROTOCOL, "vercel-google-flash-thoughts")
    assert [part(capture, n).get("thought", False) for n in range(4)] == [
        True,
        True,
        False,
        False,
    ]
    decoded = replay(replay_server, "vercel-google-flash-thoughts")
    assert decoded.done_items == [
        {
            "type": "thinking.done",
            "thinking": 'I need to count the letter "r" in "strawberry".\n\n'
            "s-t-r-a-w-b-e-r-r-y. I count 3 r's.\n\n",
        },
        {"type": "text.done", "text": 'There are **3** "r"s in the word "strawberry".'},
    ]
    assert decoded.stop["usage_metadata"] == usage(14, 151, 13)


# --- more captures: function calls ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "call", "expected_usage"),
    [
        (
            "pydanticai-google-flash-tool-call",
            ("get_capital", {"country": "France"}),
            usage(52, 0, 5),
        ),
        (
            "vercel-google-flash-tool-call",
            ("weather", {"location": "San Francisco"}),
            usage(26, 0, 4),
        ),
    ],
)
def test_a_gemini_2_0_call_without_id_or_signature_is_one_tool_call(
    replay_server, name, call, expected_usage
):
    decoded = replay(replay_server, name)
    assert decoded.done_items == [
        {"type": "tool_call.done", "tool_call_id": "call_1", "name": call[0], "arguments": call[1]}
    ]
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.decoder.metadata.raw_finish_reason == "STOP"
    assert decoded.stop["usage_metadata"] == expected_usage


def test_a_gemini_3_call_keeps_its_signature_and_the_empty_closing_text_opens_nothing(
    replay_server,
):
    capture = load_capture(PROTOCOL, "vercel-google-gemini3-tool-call-signature")
    signed = part(capture, 0)
    assert part(capture, 1) == {"text": ""}
    decoded = replay(replay_server, "vercel-google-gemini3-tool-call-signature")
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "call_1",
            "name": "weather",
            "arguments": {"location": "San Francisco"},
            "fidelity": {"thought_signature": signed["thoughtSignature"]},
        }
    ]
    assert len(signed["thoughtSignature"]) == 5488
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.stop["usage_metadata"] == usage(29, 804, 15)


def test_nested_whole_args_and_the_providers_call_id_are_kept(replay_server):
    decoded = replay(replay_server, "vercel-google-nested-args-redacted")
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "call_345658",
            "name": "search",
            "arguments": {"condition": {"or": [{"term": "x"}, {"term": "y"}]}},
            "fidelity": {"thought_signature": "<redacted>"},
        }
    ]
    meta = decoded.decoder.metadata
    assert not any(d["type"] == "tool_call_id_synthesized" for d in meta.diagnostics)
    assert meta.response_id == "<redacted>"
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.stop["usage_metadata"] == usage(694, 205, 26)


# --- more captures: provider-executed tools, images, a blocked prompt ----------------------------


def test_file_search_parts_are_skipped_and_the_answer_keeps_its_closing_signature(replay_server):
    capture = load_capture(PROTOCOL, "pydanticai-google-file-search-gemini3")
    assert "toolCall" in part(capture, 0) and "toolResponse" in part(capture, 1)
    decoded = replay(replay_server, "pydanticai-google-file-search-gemini3")
    (answer,) = decoded.done_items
    assert answer == {
        "type": "text.done",
        "text": "".join(part(capture, n)["text"] for n in range(2, 8)),
        "fidelity": {"thought_signature": part(capture, 7)["thoughtSignature"]},
    }
    assert answer["text"].startswith("The capital of France is **Paris**.\n\n")
    assert answer["text"].endswith(
        "situated on the Seine River in the northern part of the country."
    )
    meta = decoded.decoder.metadata
    assert meta.skipped == {
        "part:toolCall": 1,
        "part:toolResponse": 1,
        "candidate:groundingMetadata": 1,
    }
    dropped = [d for d in meta.diagnostics if d["type"] == "thought_signature_dropped"]
    assert dropped == [
        {"type": "thought_signature_dropped", "part": "toolCall"},
        {"type": "thought_signature_dropped", "part": "toolResponse"},
    ]
    # last chunk: promptTokenCount 427, toolUsePromptTokenCount 771, candidatesTokenCount 122,
    # thoughtsTokenCount 447, totalTokenCount 1767 (= 427 + 771 + 122 + 447)
    assert decoded.stop["usage_metadata"] == usage(427 + 771, 447, 122)
    assert sum(decoded.stop["usage_metadata"].values()) == 1767


def test_search_then_structured_output_skips_the_search_parts_and_keeps_the_json(replay_server):
    capture = load_capture(PROTOCOL, "pydanticai-google-structured-output-search")
    assert "toolCall" in part(capture, 0, 0) and part(capture, 0, 1) == {"text": ""}
    decoded = replay(replay_server, "pydanticai-google-structured-output-search")
    (answer,) = decoded.done_items
    assert answer == {
        "type": "text.done",
        "text": '{\n  "city": "Mexico City",\n  "country": "Mexico"\n} ',
        "fidelity": {"thought_signature": part(capture, 4)["thoughtSignature"]},
    }
    meta = decoded.decoder.metadata
    assert meta.skipped == {
        "part:toolCall": 1,
        "part:toolResponse": 1,
        "candidate:groundingMetadata": 1,
    }
    # The last chunk's usage has no candidatesTokenCount (promptTokenCount 87,
    # thoughtsTokenCount 78, totalTokenCount 165): the answer's output count is unknown.
    assert decoded.stop["usage_metadata"] == usage(87, 78, None)


def test_a_generated_image_is_one_inline_data_item_with_its_signature(replay_server):
    capture = load_capture(PROTOCOL, "vercel-google-image-signature-sanitized")
    image = part(capture, 0)
    assert image["inlineData"] == {"mimeType": "image/jpeg", "data": "AA=="}
    decoded = replay(replay_server, "vercel-google-image-signature-sanitized")
    assert decoded.done_items == [
        {
            "type": "inline_data.done",
            "data": b"\x00",
            "mime_type": "image/jpeg",
            "fidelity": {"thought_signature": "live-image-thought-signature"},
        }
    ]
    assert decoded.stop["finish_reason"] == "stop"
    assert decoded.stop["usage_metadata"] == usage(8, 175, 1228)
    message = decoded.decoder.result.message
    assert [i["type"] for i in message["content_items"]] == ["inline_data.done"]


def test_the_blocked_prompt_capture_is_a_provider_error_with_the_prompt_usage(replay_server):
    decoded = replay(replay_server, "vercel-google-prompt-blocked")
    error = decoded.error
    assert isinstance(error, ProviderError)
    assert error.error_type == "prompt_blocked"
    assert error.code == "PROHIBITED_CONTENT"
    assert error.retryable is False
    assert error.partial.items == [] and error.partial.open_item is None
    assert error.partial.usage == usage(9, None, None)
    assert error.partial.metadata.model == "gemini-3.7-flash"
    assert error.partial.metadata.response_id == "aHCPap25B_eR_uMPw-XvuAQ"
    assert decoded.events == []
