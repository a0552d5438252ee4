"""Gemini Interactions API captures, replayed byte for byte over loopback HTTP.

Expected values were read from the capture files (by eye, or from the payloads as `payloads_of`
splits them with `json`, independent of our SSE decoder), never from our output. Both event
vocabularies are here: six captures in the legacy one (`content.*`, `interaction.start` /
`interaction.complete`), six in the steps one (`step.*`, `interaction.created` /
`interaction.completed`).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest

from modelstream import FinalResponse, IncompleteStreamError, ProviderError
from support import (
    CORPUS,
    Capture,
    capture_names,
    decode_chunks,
    decode_over_http,
    load_capture,
    require_corpus,
)

PROTOCOL = "gemini-interactions"
CAPTURES = capture_names(PROTOCOL)


def replay(server, name, slices=(), **options):
    return decode_over_http(server, load_capture(PROTOCOL, name), slices, **options)


def replay_body(server, body: bytes, slices=(), **options):
    """Serve an edited or cut body over loopback HTTP, as a capture is served."""
    return decode_over_http(server, Capture(PROTOCOL, "edited", body, {}), slices, **options)


def payloads_of(capture: Capture) -> list[dict]:
    """The capture's JSON payloads: every frame is `event: <type>\\ndata: <json>\\n\\n`."""
    blocks = [block for block in capture.body.split(b"\n\n") if block.strip()]
    return [json.loads(block.split(b"\ndata: ", 1)[1]) for block in blocks]


def frames(*payloads: dict) -> bytes:
    """A body in the corpus's framing, for synthetic streams."""
    return b"".join(
        b"event: " + p["event_type"].encode() + b"\ndata: " + json.dumps(p).encode() + b"\n\n"
        for p in payloads
    )


def signatures_of(capture: Capture) -> list[str]:
    return [
        p["delta"]["signature"]
        for p in payloads_of(capture)
        if p.get("delta", {}).get("type") == "thought_signature"
    ]


def usage_of(capture: Capture) -> dict:
    return payloads_of(capture)[-1]["interaction"]["usage"]


# --- every capture ------------------------------------------------------------------------------


def test_the_corpus_has_twelve_interactions_captures_six_in_each_vocabulary():
    require_corpus()
    assert len(CAPTURES) == 12
    legacy = [
        n for n in CAPTURES if "legacy_schema" in load_capture(PROTOCOL, n).sidecar["exercises"]
    ]
    assert len(legacy) == 6
    for name in CAPTURES:
        first = payloads_of(load_capture(PROTOCOL, name))[0]["event_type"]
        assert first == ("interaction.start" if name in legacy else "interaction.created")


@pytest.mark.parametrize("name", CAPTURES)
def test_every_capture_replays_over_http_to_a_final_response(replay_server, name):
    decoded = replay(replay_server, name, slices=[97, 13])
    capture = load_capture(PROTOCOL, name)
    last = payloads_of(capture)[-1]["interaction"]
    assert decoded.error is None
    assert decoded.stop is not None
    assert isinstance(decoded.decoder.result, FinalResponse)
    meta = decoded.decoder.metadata
    assert meta.model == last["model"] == capture.sidecar["model"]
    assert meta.response_id == (last["id"] or None)  # store=false: the id is "" throughout
    assert meta.raw_finish_reason == last["status"]


@pytest.mark.parametrize("name", CAPTURES)
def test_every_capture_reports_its_usage_by_the_documented_arithmetic(replay_server, name):
    usage = usage_of(load_capture(PROTOCOL, name))
    # total = input + output + thought + tool-use tokens in every capture
    assert usage["total_tokens"] == (
        usage["total_input_tokens"]
        + usage["total_output_tokens"]
        + usage["total_thought_tokens"]
        + usage["total_tool_use_tokens"]
    )
    decoded = replay(replay_server, name)
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": usage["total_cached_tokens"],
        "prompt_tokens": usage["total_input_tokens"]
        - usage["total_cached_tokens"]
        + usage["total_tool_use_tokens"],
        "thoughts_tokens": usage["total_thought_tokens"],
        "response_tokens": usage["total_output_tokens"],
    }


@pytest.mark.parametrize("name", CAPTURES)
def test_every_thought_signature_rides_on_one_thinking_item(replay_server, name):
    capture = load_capture(PROTOCOL, name)
    sent = signatures_of(capture)
    decoded = replay(replay_server, name)
    kept = [
        i["fidelity"]["thought_signature"]
        for i in decoded.done_items
        if i["type"] == "thinking.done" and "fidelity" in i
    ]
    assert kept == sent
    assert all(i["thinking"] == "" for i in decoded.done_items if i["type"] == "thinking.done")


@pytest.mark.parametrize("name", CAPTURES)
def test_every_capture_replays_with_the_cli_as_jsonl_that_checks_valid(name, tmp_path):
    require_corpus()
    path = CORPUS / PROTOCOL / f"{name}.sse"
    replay_command = [sys.executable, "-m", "modelstream", "replay", str(path)]
    result = subprocess.run(
        [*replay_command, "--protocol", PROTOCOL, "--format", "jsonl"],
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[-1]["event_type"] == "stop"
    events = tmp_path / "events.jsonl"
    events.write_bytes(result.stdout)
    check = subprocess.run(
        [sys.executable, "-m", "modelstream", "check", str(events)],
        capture_output=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stdout + check.stderr


# --- text and thinking, capture by capture ------------------------------------------------------

TEXTS = {
    "vercel-interactions-basic": [
        "I'm doing great, thank you for asking!\n\nHow are you doing today? And what can I do for "
        "you?"
    ],
    "vercel-interactions-stateful-turn1": [
        "The three largest cities in Spain by population are:\n\n1.  **Madrid**\n2.  "
        "**Barcelona**\n3.  **Valencia**"
    ],
    "vercel-interactions-stateless-turn1": [
        "The three largest cities in Spain are:\n\n1.  **Madrid**\n2.  **Barcelona**\n3.  "
        "**Valencia**"
    ],
    "vercel-interactions-stateless-turn2": [
        "The most famous landmark in **Barcelona** (the second largest city) is undoubtedly the "
        "**Sagrada Familia**."
    ],
    "vercel-interactions-legacy-stateful-turn1": [
        "The three largest cities in Spain, by population, are:\n\n1.  **Madrid**\n2.  "
        "**Barcelona**\n3.  **Valencia**"
    ],
    "vercel-interactions-legacy-stateless-turn1": [
        "The three largest cities in Spain are:\n\n1.  **Madrid**\n2.  **Barcelona**\n3.  "
        "**Valencia**"
    ],
    "vercel-interactions-legacy-tool-result-answer": [
        "The weather in San Francisco right now is sunny with a temperature of 16 degrees Celsius."
    ],
    "vercel-interactions-legacy-google-search-handwritten": [
        "Last week, two notable AI developments were reported."
    ],
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_a_signed_thought_step_then_the_answer_text_as_one_item(replay_server, name):
    capture = load_capture(PROTOCOL, name)
    (signature,) = signatures_of(capture)
    decoded = replay(replay_server, name)
    assert decoded.done_items == [
        {"type": "thinking.done", "thinking": "", "fidelity": {"thought_signature": signature}},
        *({"type": "text.done", "text": text} for text in TEXTS[name]),
    ]
    assert decoded.stop["finish_reason"] == "stop"


def test_multi_byte_text_of_a_legacy_turn_survives_one_byte_slices(replay_server):
    name = "vercel-interactions-legacy-stateful-turn2"
    decoded = replay(replay_server, name, slices=[1])
    text = decoded.done_items[-1]["text"]
    assert "Antoni Gaudí, is renowned worldwide" in text
    assert text.endswith("one of Spain's most visited attractions.")
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 12,
        "thoughts_tokens": 476,
        "response_tokens": 76,
    }


def test_the_event_type_comes_from_the_payload_not_the_sse_event_line(replay_server):
    capture = load_capture(PROTOCOL, "vercel-interactions-basic")
    bare = b"".join(
        b"data: " + json.dumps(p).encode() + b"\n\n" for p in payloads_of(capture)
    )  # as vercel's tests feed it: no `event:` lines at all
    misnamed = capture.body.replace(b"event: step.delta", b"event: message")
    whole = replay(replay_server, "vercel-interactions-basic")
    for body in (bare, misnamed):
        decoded = replay_body(replay_server, body)
        assert decoded.error is None
        assert decoded.done_items == whole.done_items


# --- function calls -----------------------------------------------------------------------------


def test_a_function_call_step_streams_its_arguments_and_ends_the_turn_as_tool_call(replay_server):
    capture = load_capture(PROTOCOL, "vercel-interactions-tool-call")
    start = payloads_of(capture)[5]
    assert start["step"]["arguments"] == {} and start["step"]["signature"] == ""
    decoded = replay(replay_server, "vercel-interactions-tool-call")
    thinking, call = decoded.done_items
    assert thinking["fidelity"] == {"thought_signature": signatures_of(capture)[0]}
    assert call == {
        "type": "tool_call.done",
        "tool_call_id": "61nzpsv4",
        "name": "getWeather",
        "arguments": {"location": "San Francisco"},
    }  # the empty signature on the step is no signature
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.decoder.metadata.raw_finish_reason == "requires_action"


def test_whole_arguments_on_a_function_call_start_are_the_call(replay_server):
    body = frames(
        {"event_type": "interaction.created", "interaction": {"id": "v1_x", "model": "m"}},
        {
            "event_type": "step.start",
            "index": 0,
            "step": {
                "type": "function_call",
                "id": "c1",
                "name": "lookup",
                "arguments": {"q": "a", "n": 2},
                "signature": "sig-call",
            },
        },
        {"event_type": "step.stop", "index": 0},
        {"event_type": "interaction.completed", "interaction": {"status": "requires_action"}},
    )
    decoded = replay_body(replay_server, body)
    assert decoded.done_items == [
        {
            "type": "tool_call.done",
            "tool_call_id": "c1",
            "name": "lookup",
            "arguments": {"q": "a", "n": 2},
            "fidelity": {"thought_signature": "sig-call"},
        }
    ]
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.stop["usage_metadata"]["prompt_tokens"] is None  # no usage was sent


def test_a_legacy_function_call_delta_carries_the_whole_call(replay_server):
    body = frames(
        {"event_type": "interaction.start", "interaction": {"id": "v1_y", "model": "m"}},
        {"event_type": "content.start", "index": 0, "content": {"type": "function_call"}},
        {
            "event_type": "content.delta",
            "index": 0,
            "delta": {"type": "function_call", "id": "c9", "name": "f", "arguments": {"x": 1}},
        },
        {"event_type": "content.stop", "index": 0},
        {"event_type": "interaction.complete", "interaction": {"status": "requires_action"}},
    )
    decoded = replay_body(replay_server, body)
    assert decoded.done_items == [
        {"type": "tool_call.done", "tool_call_id": "c9", "name": "f", "arguments": {"x": 1}}
    ]


# --- media --------------------------------------------------------------------------------------


def test_a_video_delta_is_one_inline_data_item_of_its_bytes(replay_server):
    capture = load_capture(PROTOCOL, "vercel-interactions-video-handwritten")
    delta = payloads_of(capture)[3]["delta"]
    assert delta == {"type": "video", "mime_type": "video/mp4", "data": "AAAAIGZ0eXBpc29t"}
    decoded = replay(replay_server, "vercel-interactions-video-handwritten")
    assert decoded.done_items == [
        {
            "type": "inline_data.done",
            "mime_type": "video/mp4",
            "data": b"\x00\x00\x00 ftypisom",  # an MP4 `ftyp` box header
        }
    ]
    assert decoded.stop["finish_reason"] == "stop"


def test_a_legacy_image_block_is_one_inline_data_item_after_the_signed_thought(replay_server):
    decoded = replay(replay_server, "vercel-interactions-legacy-image-handwritten")
    thinking, image = decoded.done_items
    assert thinking["fidelity"] == {"thought_signature": "__SIGNATURE_TRUNCATED__"}
    # The upstream placeholder happens to be URL-safe base64 text, so it decodes like data:
    # no decoder can tell a placeholder from an image.
    assert image == {
        "type": "inline_data.done",
        "mime_type": "image/jpeg",
        "data": base64.urlsafe_b64decode("__IMAGE_DATA_TRUNCATED__"),
    }


def test_media_that_is_not_base64_is_skipped_and_counted(replay_server):
    body = frames(
        {"event_type": "interaction.created", "interaction": {"id": "", "model": "m"}},
        {"event_type": "step.start", "index": 0, "step": {"type": "model_output"}},
        {
            "event_type": "step.delta",
            "index": 0,
            "delta": {"type": "image", "mime_type": "image/png", "data": "not base64!"},
        },
        {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "caption"}},
        {"event_type": "step.stop", "index": 0},
        {"event_type": "interaction.completed", "interaction": {"status": "completed"}},
    )
    decoded = replay_body(replay_server, body)
    assert decoded.done_items == [{"type": "text.done", "text": "caption"}]
    assert decoded.decoder.metadata.skipped == {"image_undecodable": 1}


# --- built-in tools and citations ---------------------------------------------------------------


def test_search_steps_and_annotations_are_skipped_and_counted(replay_server):
    decoded = replay(replay_server, "vercel-interactions-legacy-google-search-handwritten")
    assert decoded.decoder.metadata.skipped == {
        "step:google_search_call": 1,
        "step:google_search_result": 1,
        "annotation": 1,
    }
    # 50 tool-use tokens are input the search fed back: 12 + 50 prompt tokens
    assert decoded.stop["usage_metadata"]["prompt_tokens"] == 62


# --- thought summaries and signatures (SPEC §3) -------------------------------------------------


def thought_stream(*deltas: dict) -> bytes:
    return frames(
        {"event_type": "interaction.created", "interaction": {"id": "v1_t", "model": "m"}},
        {"event_type": "step.start", "index": 0, "step": {"type": "thought"}},
        *({"event_type": "step.delta", "index": 0, "delta": d} for d in deltas),
        {"event_type": "step.stop", "index": 0},
        {"event_type": "step.start", "index": 1, "step": {"type": "model_output"}},
        {"event_type": "step.delta", "index": 1, "delta": {"type": "text", "text": "ok"}},
        {"event_type": "step.stop", "index": 1},
        {
            "event_type": "interaction.completed",
            "interaction": {
                "status": "completed",
                "usage": {"total_input_tokens": 5, "total_output_tokens": 1},
            },
        },
    )


def summary(text: str) -> dict:
    return {"type": "thought_summary", "content": {"type": "text", "text": text}}


def test_summary_deltas_and_a_signature_after_them_are_one_thinking_item(replay_server):
    body = thought_stream(
        summary("Weighing "),
        summary("the options."),
        {"type": "thought_signature", "signature": "s1"},
    )
    decoded = replay_body(replay_server, body)
    assert decoded.done_items == [
        {
            "type": "thinking.done",
            "thinking": "Weighing the options.",
            "fidelity": {"thought_signature": "s1"},
        },
        {"type": "text.done", "text": "ok"},
    ]
    # thought tokens absent while a summary streamed: unknown, never 0
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 5,
        "thoughts_tokens": None,
        "response_tokens": 1,
    }


def test_a_second_signature_within_a_run_begins_a_new_item(replay_server):
    body = thought_stream(
        {"type": "thought_signature", "signature": "s1"},
        summary("first"),
        {"type": "thought_signature", "signature": "s2"},
        summary(" second"),
    )
    decoded = replay_body(replay_server, body)
    assert decoded.done_items[:2] == [
        {"type": "thinking.done", "thinking": "first", "fidelity": {"thought_signature": "s1"}},
        {"type": "thinking.done", "thinking": " second", "fidelity": {"thought_signature": "s2"}},
    ]


# --- the end of the turn ------------------------------------------------------------------------


@pytest.mark.parametrize("name", CAPTURES)
def test_a_capture_cut_before_its_terminal_event_is_incomplete_with_the_partial_kept(
    replay_server, name
):
    capture = load_capture(PROTOCOL, name)
    terminal = capture.body.rindex(b"event: interaction.complete")
    decoded = replay_body(replay_server, capture.body[:terminal])
    assert isinstance(decoded.error, IncompleteStreamError)
    assert decoded.stop is None
    whole = replay(replay_server, name)
    # every step stopped before the terminal event, so every item is done
    assert decoded.error.partial.items == whole.done_items
    assert decoded.error.partial.status == "incomplete"


def test_a_stream_cut_inside_the_answer_keeps_the_open_text_and_no_done(replay_server):
    capture = load_capture(PROTOCOL, "vercel-interactions-stateful-turn1")
    cut = capture.body[: capture.body.index(b'"text":".  **Valencia**"')]
    cut = cut[: cut.rindex(b"\n\n") + 2]
    decoded = replay_body(replay_server, cut)
    error = decoded.error
    assert isinstance(error, IncompleteStreamError)
    assert [i["type"] for i in error.partial.items] == ["thinking.done"]
    assert error.partial.open_item == {
        "type": "text.delta",
        "text": "The three largest cities in Spain by population are:\n\n1.  **Madrid**\n2.  "
        "**Barcelona**\n3",
    }


def test_an_incomplete_status_ends_the_turn_as_length(replay_server):
    capture = load_capture(PROTOCOL, "vercel-interactions-stateless-turn1")
    body = capture.body.replace(b'"status":"completed"', b'"status":"incomplete"')
    decoded = replay_body(replay_server, body)
    assert decoded.stop["finish_reason"] == "length"
    assert decoded.decoder.metadata.raw_finish_reason == "incomplete"


def error_stream(error: dict) -> bytes:
    return frames(
        {"event_type": "interaction.created", "interaction": {"id": "v1_e", "model": "m"}},
        {"event_type": "step.start", "index": 0, "step": {"type": "model_output"}},
        {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "Hal"}},
        {"event_type": "error", "error": error},
    )


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        ({"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota"}, True),
        ({"code": 503, "message": "overloaded"}, True),
        ({"code": "UNAVAILABLE", "message": "try later"}, True),
        ({"code": 400, "status": "INVALID_ARGUMENT", "message": "bad"}, False),
    ],
)
def test_an_error_event_is_a_provider_error_with_the_partial_kept(replay_server, error, retryable):
    decoded = replay_body(replay_server, error_stream(error))
    raised = decoded.error
    assert isinstance(raised, ProviderError)
    assert raised.retryable is retryable
    assert raised.provider_message == error["message"]
    assert raised.partial.status == "failed"
    assert raised.partial.open_item == {"type": "text.delta", "text": "Hal"}


def test_an_error_event_reads_retry_info(replay_server):
    details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]
    error = {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "slow", "details": details}
    raised = replay_body(replay_server, error_stream(error)).error
    assert isinstance(raised, ProviderError)
    assert raised.retry_after == 7.0


def test_a_failed_terminal_status_is_a_provider_error(replay_server):
    capture = load_capture(PROTOCOL, "vercel-interactions-basic")
    body = capture.body.replace(
        b'"status":"completed"',
        b'"status":"failed","error":{"code":500,"status":"INTERNAL","message":"boom"}',
    )
    raised = replay_body(replay_server, body).error
    assert isinstance(raised, ProviderError)
    assert (raised.code, raised.error_type, raised.retryable) == (500, "INTERNAL", True)
    assert [i["type"] for i in raised.partial.items] == ["thinking.done", "text.done"]


def test_a_failed_status_update_then_the_end_of_the_body_is_a_provider_error(replay_server):
    capture = load_capture(PROTOCOL, "vercel-interactions-basic")
    terminal = capture.body.rindex(b"event: interaction.completed")
    body = capture.body[:terminal] + frames(
        {"event_type": "interaction.status_update", "interaction_id": "x", "status": "failed"}
    )
    raised = replay_body(replay_server, body).error
    assert isinstance(raised, ProviderError)
    assert raised.error_type == "failed" and raised.retryable is False


def test_frames_after_the_terminal_event_change_nothing(replay_server):
    capture = load_capture(PROTOCOL, "vercel-interactions-basic")
    body = (
        capture.body
        + frames(
            {"event_type": "step.delta", "index": 1, "delta": {"type": "text", "text": "late"}}
        )
        + b"data: [DONE]\n\n"
    )
    decoded = replay_body(replay_server, body)
    assert decoded.done_items == replay(replay_server, "vercel-interactions-basic").done_items
    assert decoded.decoder.metadata.skipped == {"after_stop": 1}


def test_decoding_in_process_matches_the_http_replay():
    require_corpus()
    capture = load_capture(PROTOCOL, "vercel-interactions-tool-call")
    decoded = decode_chunks(PROTOCOL, [capture.body])
    assert decoded.error is None
    assert decoded.done_items[-1]["name"] == "getWeather"


def test_a_signature_on_output_content_rides_on_its_own_item(replay_server):
    body = frames(
        {"event_type": "interaction.created", "interaction": {"id": "v1_s", "model": "m"}},
        {"event_type": "step.start", "index": 0, "step": {"type": "model_output"}},
        {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "Here "}},
        {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "it is."}},
        {
            "event_type": "step.delta",
            "index": 0,
            "delta": {"type": "image", "mime_type": "image/png", "data": "AQI=", "signature": "si"},
        },
        {"event_type": "step.stop", "index": 0},
        {"event_type": "interaction.completed", "interaction": {"status": "completed"}},
    )
    decoded = replay_body(replay_server, body)
    assert decoded.done_items == [
        {"type": "text.done", "text": "Here it is."},
        {
            "type": "inline_data.done",
            "mime_type": "image/png",
            "data": b"\x01\x02",
            "fidelity": {"thought_signature": "si"},
        },
    ]
