"""A frame that should carry content but is not JSON, or a gap in numbered events, means content
was lost: the turn is not final (SPEC §4, issue 7 item 1), unless the caller opted into
`lenient_frames`, and then the result says what was lost. Each test runs through the real HTTP
path: the emulator serves a real corpus capture with one frame corrupted (in memory), or injects
its malformed-frame fault, to `Client` and `AsyncClient`."""

from __future__ import annotations

import pytest

from modelstream import (
    FinalResponse,
    IncompleteStreamError,
    MalformedFrameError,
    PartialResponse,
    SequenceGapError,
    check_events,
)
from modelstream.testing import Emulator, Reply
from modelstream.testing.replies import split_frames
from support import load_capture
from support.client import MODELS, STREAMING, Drive, Outcome

# For each protocol, a capture that ends asking for a tool call, and a marker of the frame that
# carries a middle fragment of the call's arguments (the N-th frame holding the marker).
TOOL_CAPTURES = {
    "anthropic-messages": ("anthropicsdk-tool-use", b'"partial_json":"ar"', 0),
    "openai-chat": ("openaipy-tool-call", b'"arguments":"city"', 0),
    "openai-responses": ("vercel-azure-tool-call", b'"response.function_call_arguments.delta"', 2),
    "gemini-generate-content": ("vercel-vertex-stream-tool-call-args", b'"Boston"', 0),
}


def corrupted(body: bytes, marker: bytes, nth: int = 0) -> tuple[bytes, int]:
    """`body` with the N-th frame holding `marker` garbled (its JSON loses its last brace, as a
    broken proxy would leave it), and that frame's number among the data frames (1-based)."""
    frames = split_frames(body)
    hits = [i for i, frame in enumerate(frames) if marker in frame]
    index = hits[nth]
    frame = frames[index]
    brace = frame.rindex(b"}")
    frames[index] = frame[:brace] + frame[brace + 1 :]
    number = sum(1 for frame in frames[: index + 1] if b"data:" in frame)
    return b"".join(frames), number


def tool_done_items(outcome: Outcome) -> list[dict[str, object]]:
    return [item for item in outcome.done_items if item["type"] == "tool_call.done"]


@pytest.mark.parametrize("protocol", list(TOOL_CAPTURES))
def test_a_corrupted_argument_fragment_makes_the_tool_call_turn_incomplete(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    name, marker, nth = TOOL_CAPTURES[protocol]
    body = load_capture(protocol, name).body
    broken, frame = corrupted(body, marker, nth)
    emu.queue(Reply.body(body), Reply.body(broken))

    intact = drive.stream(MODELS[protocol])
    assert intact.error is None and isinstance(intact.result, FinalResponse)
    assert intact.result.message["finish_reason"] == "tool_call"  # what the capture says

    outcome = drive.stream(MODELS[protocol])
    assert isinstance(outcome.error, MalformedFrameError)
    assert isinstance(outcome.error, IncompleteStreamError)  # the provider's fault, not ours
    assert outcome.error.frame == frame
    assert f"frame {frame} of the stream was not valid JSON" in str(outcome.error)
    assert not any(event["event_type"] == "stop" for event in outcome.events)
    assert tool_done_items(outcome) == []  # the arguments never arrive truncated
    partial = outcome.result
    assert isinstance(partial, PartialResponse) and partial.status == "incomplete"
    assert partial is outcome.error.partial
    assert all(item["type"] != "tool_call.done" for item in partial.items)
    assert len(emu.requests) == 2  # the broken body was not retried


@pytest.mark.parametrize("protocol", list(TOOL_CAPTURES))
def test_lenient_frames_skips_the_corrupted_frame_and_the_result_says_so(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    name, marker, nth = TOOL_CAPTURES[protocol]
    broken, frame = corrupted(load_capture(protocol, name).body, marker, nth)
    emu.queue(Reply.body(broken))

    # (lenient tool arguments too: the lost fragment may leave the arguments unparseable)
    outcome = drive.stream(MODELS[protocol], lenient_frames=True, lenient_tool_arguments=True)

    assert outcome.error is None
    check_events(outcome.events)
    assert isinstance(outcome.result, FinalResponse)
    metadata = outcome.result.metadata
    assert metadata.lost_frames == 1  # one frame, counted once (no gap counted after it)
    assert metadata.skipped["malformed_frame"] == 1
    notes = [d for d in metadata.diagnostics if d["type"] == "malformed_frame"]
    assert len(notes) == 1 and notes[0]["frame"] == frame


@pytest.mark.parametrize("protocol", STREAMING)
def test_the_emulators_malformed_frame_fault_ends_the_turn_incomplete(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(Reply.echo(malformed_frame_at=2))
    outcome = drive.stream_on(protocol)

    assert isinstance(outcome.error, MalformedFrameError)
    assert outcome.error.frame == 3 and outcome.error.preview == "{not json"
    assert isinstance(outcome.result, PartialResponse)
    assert outcome.result.status == "incomplete"
    assert "frame 3" in outcome.result.reason
    assert len(emu.requests) == 1


@pytest.mark.parametrize("protocol", STREAMING)
def test_the_emulators_malformed_frame_is_skipped_and_counted_when_lenient(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(Reply.echo(malformed_frame_at=2))
    outcome = drive.stream_on(protocol, lenient_frames=True)

    assert outcome.error is None
    check_events(outcome.events)
    assert outcome.streamed_text == "echo: hello"  # the inserted frame carried nothing
    assert isinstance(outcome.result, FinalResponse)
    assert outcome.result.metadata.lost_frames == 1


def test_a_gap_in_responses_sequence_numbers_makes_the_turn_incomplete(
    drive: Drive, emu: Emulator
) -> None:
    frames = split_frames(load_capture("openai-responses", "pydanticai-phase").body)
    lost = next(i for i, frame in enumerate(frames) if b'"sequence_number":6}' in frame)
    assert b'"delta":"I"' in frames[lost]
    emu.queue(Reply.body(b"".join(frames[:lost] + frames[lost + 1 :])))

    outcome = drive.stream(MODELS["openai-responses"])

    assert isinstance(outcome.error, SequenceGapError)
    assert (outcome.error.previous, outcome.error.received) == (5, 7)
    assert "event 6 never arrived" in str(outcome.error)
    assert isinstance(outcome.result, PartialResponse)
    assert outcome.result.status == "incomplete"
    assert not any(event["event_type"] == "stop" for event in outcome.events)


def test_a_gap_in_responses_sequence_numbers_is_noted_when_lenient(
    drive: Drive, emu: Emulator
) -> None:
    body = load_capture("openai-responses", "pydanticai-phase").body
    frames = split_frames(body)
    lost = next(i for i, frame in enumerate(frames) if b'"sequence_number":6}' in frame)
    emu.queue(Reply.body(body), Reply.body(b"".join(frames[:lost] + frames[lost + 1 :])))

    whole = drive.stream(MODELS["openai-responses"])
    outcome = drive.stream(MODELS["openai-responses"], lenient_frames=True)

    assert outcome.error is None
    assert isinstance(outcome.result, FinalResponse)
    assert outcome.streamed_text == whole.streamed_text.replace("I", "", 1)  # the lost "I"
    metadata = outcome.result.metadata
    assert metadata.lost_frames == 1
    assert metadata.skipped["sequence_gap"] == 1
    gap = next(d for d in metadata.diagnostics if d["type"] == "sequence_gap")
    assert (gap["previous"], gap["received"]) == (5, 7)


@pytest.mark.parametrize(
    ("protocol", "frame", "kind"),
    [
        ("openai-chat", b'data: {"object": "gateway.extra", "note": 1}\n\n', "chunk:note"),
        ("openai-chat", b"data: [1, 2, 3]\n\n", "chunk:not_an_object"),
        ("anthropic-messages", b'event: new\ndata: {"type": "new"}\n\n', "event:new"),
        ("openai-responses", b'event: x\ndata: {"type": "response.new"}\n\n', "event:response.new"),
        ("openai-responses", b'data: {"no_type": true}\n\n', "event:untyped"),
    ],
)
def test_valid_json_of_an_unknown_kind_is_still_skipped_and_counted(
    drive: Drive, emu: Emulator, protocol: str, frame: bytes, kind: str
) -> None:
    frames = split_frames(load_capture(protocol, TOOL_CAPTURES[protocol][0]).body)
    emu.queue(Reply.body(b"".join([*frames[:2], frame, *frames[2:]])))

    outcome = drive.stream(MODELS[protocol])

    assert outcome.error is None
    assert isinstance(outcome.result, FinalResponse)
    assert outcome.result.metadata.lost_frames == 0
    assert outcome.result.metadata.skipped[kind] == 1
