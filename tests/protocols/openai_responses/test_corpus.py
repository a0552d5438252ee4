"""OpenAI Responses captures, replayed byte for byte over loopback HTTP.

Expected values were read from the capture files (by hand, or with `provider_events`, a reader
that shares no code with the decoder), not from our output.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from modelstream import FinalResponse, IncompleteStreamError, ProviderError
from support import Capture, capture_names, decode_chunks, decode_over_http, load_capture

PROTOCOL = "openai-responses"
NAMES = capture_names(PROTOCOL)


def replay(server, name, slices=(), **options):
    return decode_over_http(server, load_capture(PROTOCOL, name), slices, **options)


def provider_events(capture: Capture) -> list[dict[str, Any]]:
    """The capture's JSON events, read line by line (every data line holds one event)."""
    events = []
    for line in capture.body.decode().split("\n"):
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            events.append(json.loads(line[5:]))
    return events


def frames(capture: Capture) -> list[bytes]:
    """The capture's SSE frames, each with its blank line (the corpus uses LF only)."""
    return [frame + b"\n\n" for frame in capture.body.split(b"\n\n") if frame.strip()]


def frame_index(capture: Capture, needle: bytes, occurrence: int = 0) -> int:
    found = [i for i, frame in enumerate(frames(capture)) if needle in frame]
    return found[occurrence]


def of_type(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [item for item in items if item["type"] == kind]


def delta_items(decoded) -> list[dict[str, Any]]:
    return [item for event in decoded.events for item in event["content_items"]]


# --- every capture --------------------------------------------------------------------------


@pytest.mark.parametrize("slices", [(), (7, 1, 64)], ids=["whole", "sliced"])
@pytest.mark.parametrize("name", NAMES)
def test_every_capture_replays_to_a_grammar_valid_stream_or_a_typed_error(
    replay_server, name, slices
):
    decoded = replay(replay_server, name, slices)
    if decoded.error is None:
        assert decoded.stop is not None
        assert isinstance(decoded.decoder.result, FinalResponse)
    else:
        assert decoded.error.partial is not None
        assert decoded.decoder.result is decoded.error.partial


@pytest.mark.parametrize("name", NAMES)
def test_joined_fragments_equal_the_providers_own_done_texts(replay_server, name):
    capture = load_capture(PROTOCOL, name)
    events = provider_events(capture)
    decoded = replay(replay_server, name)
    items = decoded.done_items
    expected_text = [e["text"] for e in events if e["type"] == "response.output_text.done"]
    expected_thinking = [
        e["text"]
        for e in events
        if e["type"] in ("response.reasoning_summary_text.done", "response.reasoning_text.done")
    ]
    expected_arguments = [
        json.loads(e["arguments"])
        for e in events
        if e["type"] == "response.function_call_arguments.done"
    ]
    assert [i["text"] for i in of_type(items, "text.done")] == expected_text
    assert [
        i["thinking"] for i in of_type(items, "thinking.done") if i["thinking"]
    ] == expected_thinking
    assert [i["arguments"] for i in of_type(items, "tool_call.done")] == expected_arguments


@pytest.mark.parametrize("name", NAMES)
def test_every_reasoning_item_becomes_thinking_that_carries_its_item_id_as_id(replay_server, name):
    events = provider_events(load_capture(PROTOCOL, name))
    reasoning_ids = [
        e["item"]["id"]
        for e in events
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "reasoning"
    ]
    thinking = of_type(replay(replay_server, name).done_items, "thinking.done")
    ids = [i["fidelity"]["id"] for i in thinking]
    assert list(dict.fromkeys(ids)) == reasoning_ids


@pytest.mark.parametrize("name", NAMES)
def test_every_function_call_is_a_tool_call_keyed_by_its_call_id(replay_server, name):
    events = provider_events(load_capture(PROTOCOL, name))
    calls = [
        e["item"]
        for e in events
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "function_call"
    ]
    decoded = replay(replay_server, name)
    assert [
        (i["tool_call_id"], i["name"], i["fidelity"]["id"])
        for i in of_type(decoded.done_items, "tool_call.done")
    ] == [(c["call_id"], c["name"], c["id"]) for c in calls]
    if calls:
        assert decoded.stop["finish_reason"] == "tool_call"
        assert decoded.decoder.metadata.raw_finish_reason == "completed"


@pytest.mark.parametrize("name", NAMES)
def test_no_fidelity_uses_the_key_mmsp_reserves_and_every_id_names_an_output_item(
    replay_server, name
):
    # SPEC §2 rule 6: MMSP strips a fidelity key "item_id", so the provider's id rides as "id".
    item_ids = {
        e["item"]["id"] for e in provider_events(load_capture(PROTOCOL, name)) if "item" in e
    }
    fidelities = [
        item["fidelity"] for item in delta_items(replay(replay_server, name)) if "fidelity" in item
    ]
    assert all("item_id" not in fidelity for fidelity in fidelities)
    assert {fidelity["id"] for fidelity in fidelities} <= item_ids


# --- text -----------------------------------------------------------------------------------


def test_an_early_stream_without_sequence_numbers_decodes_text_usage_and_metadata(
    replay_server,
):
    decoded = replay(replay_server, "pydanticai-text", slices=[1])
    assert decoded.done_items == [
        {
            "type": "text.done",
            "text": "The capital of France is Paris.",
            "fidelity": {"id": "msg_67e554a28bec8191b56d3e2331eff88006c52f0e511c76ed"},
        }
    ]
    assert [i["text"] for i in of_type(delta_items(decoded), "text.delta") if i["text"]] == [
        "The",
        " capital",
        " of",
        " France",
        " is",
        " Paris",
        ".",
    ]
    assert decoded.stop["finish_reason"] == "stop"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 278,
        "thoughts_tokens": 0,
        "response_tokens": 9,
    }
    metadata = decoded.decoder.metadata
    assert metadata.model == "gpt-4o-2024-08-06"
    assert metadata.response_id == "resp_67e554a21aa88191b65876ac5e5bbe0406c52f0e511c76ed"


def test_a_background_stream_passes_its_queued_status_and_decodes_the_text(replay_server):
    decoded = replay(replay_server, "pydanticai-background-stream", slices=[5, 50])
    assert [i["text"] for i in decoded.done_items] == ["2 + 2 equals 4."]
    assert decoded.decoder.metadata.response_id == (
        "resp_0850765c843cca5300699cc47d93c0819089a181f5feeff8eb"
    )
    assert decoded.decoder.metadata.skipped == {}


def test_a_resumed_stream_takes_its_metadata_from_response_queued(replay_server):
    decoded = replay(replay_server, "pydanticai-background-resume", slices=[3])
    assert [i["text"] for i in decoded.done_items] == ["2 + 2 equals 4."]
    metadata = decoded.decoder.metadata
    assert metadata.response_id == "resp_0850765c843cca5300699cc47d93c0819089a181f5feeff8eb"
    assert metadata.model == "gpt-4o-2024-08-06"
    assert decoded.stop["usage_metadata"]["response_tokens"] == 9


def test_a_stream_resumed_inside_a_text_part_decodes_the_deltas_it_has():
    capture = load_capture(PROTOCOL, "pydanticai-background-resume")
    start = frame_index(capture, b"response.output_text.delta", occurrence=3)
    body = b"".join(frames(capture)[start:])
    remaining = [
        e["delta"] for e in provider_events(capture) if e["type"] == "response.output_text.delta"
    ][3:]
    decoded = decode_chunks(PROTOCOL, [body])
    assert decoded.error is None
    assert decoded.done_items == [
        {
            "type": "text.done",
            "text": "".join(remaining),
            "fidelity": {"id": "msg_0850765c843cca5300699cc48053e88190bf5bbc9d0c8decd5"},
        }
    ]
    assert decoded.stop["finish_reason"] == "stop"


def test_a_phase_on_the_message_item_rides_as_text_fidelity(replay_server):
    decoded = replay(replay_server, "pydanticai-phase", slices=[11, 2])
    thinking, text, call = decoded.done_items
    assert text == {
        "type": "text.done",
        "text": "I\u2019ll check the capital lookup tool for \u201cPotatoLand.\u201d",
        "fidelity": {
            "id": "msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce",
            "phase": "commentary",
        },
    }
    assert thinking["thinking"] == ""
    assert thinking["fidelity"]["id"] == "rs_0fabc13af1ee0049006a691dfe60b081a1baa444d3cf19afba"
    assert call["name"] == "get_capital"
    assert call["tool_call_id"] == "call_LabG58Uhrq9kZvR52BYKjToD"
    assert call["arguments"] == {"country": "PotatoLand"}
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 63,
        "thoughts_tokens": 26,
        "response_tokens": 69 - 26,
    }


# --- reasoning ------------------------------------------------------------------------------


def test_each_reasoning_summary_part_is_its_own_thinking_item(replay_server):
    decoded = replay(replay_server, "pydanticai-reasoning-summary", slices=[97, 1, 13])
    thinking = of_type(decoded.done_items, "thinking.done")
    assert len(thinking) == 4
    headings = [t["thinking"].split("\n")[0] for t in thinking]
    assert headings == [
        "**Providing street crossing instructions**",
        "**Explaining street crossing safety**",
        "**Sharing street crossing safety tips**",
        "**Providing safe crossing advice**",
    ]
    for part in thinking:
        assert part["fidelity"]["id"] == "rs_68c42d1d0878819d8266007cd3d1402c08fbf9b1584184ff"
        assert part["fidelity"]["part"] == "summary_text"
    (text,) = of_type(decoded.done_items, "text.done")
    assert text["text"].startswith("I'm not a road safety professional, but here are some")
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 13,
        "thoughts_tokens": 1408,
        "response_tokens": 1680 - 1408,
    }


def test_the_encrypted_content_of_the_finished_item_rides_on_its_last_part_only(replay_server):
    capture = load_capture(PROTOCOL, "pydanticai-reasoning-summary")
    (done,) = [
        e["item"]
        for e in provider_events(capture)
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "reasoning"
    ]
    assert done["encrypted_content"].startswith("gAAAAABoxC0m_QWpOlSt8wyPk_gtnjiI4mNLOryYlNXO")
    thinking = of_type(replay(replay_server, capture.name).done_items, "thinking.done")
    assert [t["fidelity"].get("encrypted_content") for t in thinking] == [
        None,
        None,
        None,
        done["encrypted_content"],
    ]


def test_a_summary_part_is_done_as_soon_as_the_next_part_starts():
    capture = load_capture(PROTOCOL, "pydanticai-reasoning-summary")
    second_part = frame_index(capture, b'"summary_index":1,"part"')
    body = b"".join(frames(capture)[: second_part + 3])  # the part, then two of its deltas
    decoded = decode_chunks(PROTOCOL, [body])
    assert isinstance(decoded.error, IncompleteStreamError)
    (first,) = decoded.done_items
    assert first["thinking"].startswith("**Providing street crossing instructions**")
    assert "encrypted_content" not in first["fidelity"]
    second_deltas = [
        e["delta"]
        for e in provider_events(capture)
        if e["type"] == "response.reasoning_summary_text.delta" and e["summary_index"] == 1
    ]
    assert decoded.error.partial.open_item["thinking"] == "".join(second_deltas[:2])


def test_an_encrypted_reasoning_item_without_text_is_an_empty_thinking_item(replay_server):
    capture = load_capture(PROTOCOL, "pydanticai-moderation")
    added, done = (
        e["item"]
        for e in provider_events(capture)
        if e["type"].startswith("response.output_item.") and e["item"]["type"] == "reasoning"
    )
    # The encrypted content on `.added` is superseded by the one on `.done`.
    assert added["encrypted_content"] != done["encrypted_content"]
    decoded = replay(replay_server, capture.name)
    thinking, text = decoded.done_items
    assert thinking == {
        "type": "thinking.done",
        "thinking": "",
        "fidelity": {
            "id": "rs_06fe400e17c64daf006a5fa35397e8819c87342597af84fde1",
            "encrypted_content": done["encrypted_content"],
        },
    }
    assert text["text"] == "Paris."
    assert decoded.stop["finish_reason"] == "stop"


def test_raw_reasoning_text_from_deepseek_is_thinking_before_the_tool_call(replay_server):
    decoded = replay(replay_server, "pydanticai-deepseek-function-call", slices=[29])
    thinking, call = decoded.done_items
    assert thinking == {
        "type": "thinking.done",
        "thinking": "The user asks about temperature in Tokyo. I'll call the tool.",
        "fidelity": {"id": "fa6f3a83-5d25-46e8-9d03-1a89ce5cf2ba", "part": "reasoning_text"},
    }
    assert call == {
        "type": "tool_call.done",
        "tool_call_id": "call_00_xjY8Z2BvSlzgEmmw0DtH0464",
        "name": "get_temperature",
        "arguments": {"city": "Tokyo"},
        "fidelity": {"id": "62bf2bb7-56af-4e3a-883b-83d4aad54da1"},
    }
    assert decoded.stop["finish_reason"] == "tool_call"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 256,
        "prompt_tokens": 366 - 256,
        "thoughts_tokens": 14,
        "response_tokens": 59 - 14,
    }


def test_openrouter_reasoning_finished_after_the_message_still_streams_in_order(replay_server):
    decoded = replay(replay_server, "pydanticai-openrouter-raw-reasoning", slices=[1, 2, 3])
    kinds = [item["type"] for item in delta_items(decoded)]
    assert kinds.index("thinking.done") < kinds.index("text.delta")
    thinking, text = decoded.done_items
    assert thinking["thinking"] == (
        'The user asks: "What is 2+2?" They expect a straightforward answer: 4. Just answer 4.'
    )
    assert thinking["fidelity"] == {"id": "rs_tmp_2kbe7x16sax", "part": "reasoning_text"}
    assert text == {
        "type": "text.done",
        "text": "4",
        "fidelity": {"id": "msg_tmp_8cjof4f6zpw"},
    }
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 78,
        "thoughts_tokens": 22,
        "response_tokens": 37 - 22,
    }


def test_openrouter_done_sentinel_is_tolerated_and_its_comment_counted(replay_server):
    decoded = replay(replay_server, "pydanticai-openrouter-raw-reasoning")
    assert decoded.error is None
    assert decoded.decoder.metadata.skipped == {"sse_comment": 1}
    assert decoded.decoder.metadata.diagnostics == []


@pytest.mark.parametrize(
    ("name", "item_id", "call"),
    [
        (
            "vercel-openai-reasoning-encrypted-content",
            "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9",
            (
                "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
                "fc_01830d662ab3856501693c32151234819091cfca267e98cc5f",
            ),
        ),
        (
            "vercel-azure-reasoning-encrypted-content",
            "rs_0ca3f598125653cf01693c1f22e2d08195b4275856d2c3bd9f",
            (
                "call_UdvUeOElp5zdU0DKr6IoyhjE",
                "fc_0ca3f598125653cf01693c1f25167881959e4d4741c31622ce",
            ),
        ),
    ],
)
def test_a_summarised_encrypted_reasoning_item_precedes_the_calculator_call(
    replay_server, name, item_id, call
):
    capture = load_capture(PROTOCOL, name)
    (done,) = [
        e["item"]
        for e in provider_events(capture)
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "reasoning"
    ]
    decoded = replay(replay_server, name, slices=[64])
    thinking, tool_call = decoded.done_items
    assert thinking["thinking"].startswith("**Calculat")
    assert thinking["fidelity"] == {
        "id": item_id,
        "part": "summary_text",
        "encrypted_content": done["encrypted_content"],
    }
    assert tool_call == {
        "type": "tool_call.done",
        "tool_call_id": call[0],
        "name": "calculator",
        "arguments": {"a": 12, "b": 7, "op": "add"},
        "fidelity": {"id": call[1]},
    }


# --- tool calls -----------------------------------------------------------------------------


def test_function_call_arguments_stream_in_fragments_after_the_name_and_call_id(replay_server):
    decoded = replay(replay_server, "pydanticai-function-call", slices=[2])
    deltas = of_type(delta_items(decoded), "tool_call.delta")
    assert (deltas[0]["name"], deltas[0]["tool_call_id"]) == (
        "get_capital",
        "call_kL0PCQV7M2WMoVX8V8OtYSAL",
    )
    assert all(d["name"] == "" and d["tool_call_id"] == "" for d in deltas[1:])
    assert "".join(d["arguments"] for d in deltas) == '{"country":"France"}'
    assert len([d for d in deltas if d["arguments"]]) == 5
    assert decoded.done_items[-1]["arguments"] == {"country": "France"}
    assert decoded.stop["finish_reason"] == "tool_call"


def test_an_azure_call_joins_six_argument_fragments(replay_server):
    decoded = replay(replay_server, "vercel-azure-tool-call", slices=[5, 9])
    deltas = [d for d in of_type(delta_items(decoded), "tool_call.delta") if d["arguments"]]
    assert len(deltas) == 6
    (call,) = decoded.done_items
    assert call["name"] == "weather"
    assert call["tool_call_id"] == "call_H5DxLSFnsGhiROnUiDHmgyc8"
    assert call["arguments"] == {"location": "San Francisco"}
    assert decoded.decoder.metadata.model == "gpt-5.1"


# --- skipped things -------------------------------------------------------------------------


def test_web_search_items_their_events_and_citations_are_skipped_and_counted(replay_server):
    decoded = replay(replay_server, "vercel-openai-web-search", slices=[301])
    assert decoded.decoder.metadata.skipped == {
        "item:web_search_call": 6,
        "event:response.web_search_call.in_progress": 6,
        "event:response.web_search_call.searching": 6,
        "event:response.web_search_call.completed": 6,
        "annotation": 12,
    }
    thinking = of_type(decoded.done_items, "thinking.done")
    assert len(thinking) == 7 and all(t["thinking"] == "" for t in thinking)
    (text,) = of_type(decoded.done_items, "text.done")
    assert text["text"].startswith("I checked today\u2019s tech headlines (today = December 5")
    assert decoded.stop["finish_reason"] == "stop"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 3712,
        "prompt_tokens": 31073 - 3712,
        "thoughts_tokens": 3712,
        "response_tokens": 4416 - 3712,
    }


def test_code_interpreter_calls_and_their_code_deltas_are_skipped_and_counted(replay_server):
    decoded = replay(replay_server, "vercel-openai-code-interpreter", slices=[1000, 7])
    assert decoded.decoder.metadata.skipped == {
        "item:code_interpreter_call": 3,
        "event:response.code_interpreter_call.in_progress": 3,
        "event:response.code_interpreter_call_code.delta": 149,
        "event:response.code_interpreter_call_code.done": 3,
        "event:response.code_interpreter_call.interpreting": 3,
        "event:response.code_interpreter_call.completed": 3,
        "annotation": 1,
    }
    (text,) = of_type(decoded.done_items, "text.done")
    assert text["text"].startswith("Here\u2019s a simulation of rolling two fair six-sided dice")
    assert "import random" not in text["text"]
    assert decoded.stop["usage_metadata"]["prompt_tokens"] == 6047 - 2944


def test_an_image_generation_result_is_one_inline_data_item_between_reasoning_and_message(
    replay_server,
):
    capture = load_capture(PROTOCOL, "vercel-openai-image-generation")
    (call,) = [
        e["item"]
        for e in provider_events(capture)
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "image_generation_call"
    ]
    assert call["output_format"] == "webp" and len(call["result"]) == 327
    # Truncated upstream (the corpus notes say so), but still base64 of a WebP header.
    image = base64.b64decode(call["result"])
    assert image.startswith(b"RIFF") and image[8:12] == b"WEBP"
    decoded = replay(replay_server, "vercel-openai-image-generation", slices=[7, 1, 64])
    assert decoded.error is None
    reasoning, inline, message = decoded.done_items
    assert reasoning == {
        "type": "thinking.done",
        "thinking": "",
        "fidelity": {"id": "rs_0df93c0bb83a72f20068c979db90b4819e94cedbfda2d49af6"},
    }
    assert inline == {
        "type": "inline_data.done",
        "data": image,
        "mime_type": "image/webp",
        "fidelity": {"id": "ig_0df93c0bb83a72f20068c979f589c0819e9f0fc2d1a27aa1b8"},
    }
    assert message == {
        "type": "text.done",
        "text": "",
        "fidelity": {"id": "msg_0df93c0bb83a72f20068c97a0b36f4819ea5906451007f95e2"},
    }
    skipped = decoded.decoder.metadata.skipped
    assert "item:image_generation_call" not in skipped
    assert skipped["event:response.image_generation_call.partial_image"] == 1  # a preview
    assert decoded.stop["finish_reason"] == "stop"
    assert decoded.decoder.result.message["content_items"][1]["mime_type"] == "image/webp"


def test_an_image_generation_call_cut_before_its_result_is_no_item(replay_server):
    capture = load_capture(PROTOCOL, "vercel-openai-image-generation")
    cut = frame_index(capture, b"response.image_generation_call.completed")
    body = b"".join(frames(capture)[:cut])
    decoded = decode_over_http(replay_server, Capture(PROTOCOL, "image-cut", body, {}))
    assert isinstance(decoded.error, IncompleteStreamError)
    assert [i["type"] for i in decoded.error.partial.items] == ["thinking.done"]
    assert decoded.error.partial.open_item is None


# --- errors and endings ---------------------------------------------------------------------


def test_an_error_event_then_response_failed_is_one_provider_error_with_the_events_facts(
    replay_server,
):
    decoded = replay(replay_server, "vercel-openai-error", slices=[17])
    error = decoded.error
    assert isinstance(error, ProviderError)
    assert error.error_type == "insufficient_quota"
    assert error.code == "insufficient_quota"
    assert error.provider_message.startswith("You exceeded your current quota, please check")
    assert error.retryable is False
    assert error.partial.status == "failed"
    assert error.partial.items == []
    assert error.partial.metadata.model == "gpt-5-nano-2025-08-07"
    assert not any(e["event_type"] == "stop" for e in decoded.events)


def test_response_failed_alone_is_a_provider_error_with_its_code():
    capture = load_capture(PROTOCOL, "vercel-openai-error")
    body = b"".join(f for f in frames(capture) if not f.startswith(b"event: error"))
    decoded = decode_chunks(PROTOCOL, [body])
    error = decoded.error
    assert isinstance(error, ProviderError)
    assert error.code == "insufficient_quota"
    assert error.error_type is None
    assert error.provider_message.startswith("You exceeded your current quota")


def _with_incomplete_ending(reason: str) -> list[bytes]:
    """pydanticai-text with response.completed turned into response.incomplete."""
    capture = load_capture(PROTOCOL, "pydanticai-text")
    *head, completed = frames(capture)
    event = json.loads(completed.split(b"data: ", 1)[1])
    event["type"] = "response.incomplete"
    event["response"]["status"] = "incomplete"
    event["response"]["incomplete_details"] = {"reason": reason}
    return [*head, b"event: response.incomplete\ndata: " + json.dumps(event).encode() + b"\n\n"]


@pytest.mark.parametrize(
    ("reason", "finish_reason"),
    [("max_output_tokens", "length"), ("content_filter", "unknown")],
)
def test_response_incomplete_ends_the_turn_with_the_mapped_reason(reason, finish_reason):
    decoded = decode_chunks(PROTOCOL, _with_incomplete_ending(reason))
    assert decoded.error is None
    assert decoded.stop["finish_reason"] == finish_reason
    assert decoded.decoder.metadata.raw_finish_reason == reason
    assert decoded.done_items[0]["text"] == "The capital of France is Paris."
    assert decoded.stop["usage_metadata"]["response_tokens"] == 9


def test_a_refusal_part_streams_as_text_marked_as_a_refusal():
    # No capture holds a Responses refusal (corpus README, gaps); these frames follow the
    # documented shapes of response.refusal.delta and a content part of type "refusal".
    capture = load_capture(PROTOCOL, "pydanticai-text")
    parts = frames(capture)
    added = frame_index(capture, b"response.output_item.added")
    completed = frame_index(capture, b"response.completed")
    item = "msg_67e554a28bec8191b56d3e2331eff88006c52f0e511c76ed"
    made = [
        {
            "type": "response.content_part.added",
            "item_id": item,
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "refusal", "refusal": ""},
        },
        *(
            {
                "type": "response.refusal.delta",
                "item_id": item,
                "output_index": 0,
                "content_index": 0,
                "delta": piece,
            }
            for piece in ("I'm sorry, ", "I can't help with that.")
        ),
        {
            "type": "response.refusal.done",
            "item_id": item,
            "output_index": 0,
            "content_index": 0,
            "refusal": "I'm sorry, I can't help with that.",
        },
        {
            "type": "response.content_part.done",
            "item_id": item,
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "refusal", "refusal": "I'm sorry, I can't help with that."},
        },
    ]
    body = [
        *parts[: added + 1],
        *(b"data: " + json.dumps(e).encode() + b"\n\n" for e in made),
        *parts[completed:],
    ]
    decoded = decode_chunks(PROTOCOL, body)
    assert decoded.done_items == [
        {
            "type": "text.done",
            "text": "I'm sorry, I can't help with that.",
            "fidelity": {"id": item, "refusal": True},
        }
    ]
    assert decoded.stop["finish_reason"] == "stop"


def test_a_body_cut_before_response_completed_is_incomplete_and_keeps_the_open_text():
    capture = load_capture(PROTOCOL, "pydanticai-text")
    cut = frame_index(capture, b"response.output_text.done")
    decoded = decode_chunks(PROTOCOL, frames(capture)[:cut])
    assert isinstance(decoded.error, IncompleteStreamError)
    assert decoded.error.partial.status == "incomplete"
    assert decoded.error.partial.open_item == {
        "type": "text.delta",
        "text": "The capital of France is Paris.",
        "fidelity": {"id": "msg_67e554a28bec8191b56d3e2331eff88006c52f0e511c76ed"},
    }
    assert decoded.done_items == []


def test_a_function_call_cut_before_its_item_is_done_is_never_a_tool_call():
    capture = load_capture(PROTOCOL, "pydanticai-function-call")
    cut = frame_index(capture, b"response.function_call_arguments.done")
    decoded = decode_chunks(PROTOCOL, frames(capture)[:cut])
    assert isinstance(decoded.error, IncompleteStreamError)
    assert decoded.error.partial.open_item["arguments"] == '{"country":"France"}'
    assert decoded.error.partial.items == []


def test_events_after_response_completed_are_counted_and_change_nothing():
    capture = load_capture(PROTOCOL, "pydanticai-text")
    parts = frames(capture)
    late_delta = parts[frame_index(capture, b"response.output_text.delta")]
    decoded = decode_chunks(PROTOCOL, [*parts, late_delta])
    assert decoded.error is None
    assert [i["text"] for i in decoded.done_items] == ["The capital of France is Paris."]
    assert decoded.decoder.metadata.skipped == {"after_stop": 1}


def test_a_text_part_streamed_without_content_part_added_still_gets_its_fidelity():
    capture = load_capture(PROTOCOL, "pydanticai-phase")
    body = [f for f in frames(capture) if not f.startswith(b"event: response.content_part.added")]
    decoded = decode_chunks(PROTOCOL, body, lenient_frames=True)  # a numbering gap, else fatal
    (text,) = of_type(decoded.done_items, "text.done")
    assert text["text"] == "I\u2019ll check the capital lookup tool for \u201cPotatoLand.\u201d"
    assert text["fidelity"] == {
        "id": "msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce",
        "phase": "commentary",
    }
