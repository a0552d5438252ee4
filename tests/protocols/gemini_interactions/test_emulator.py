"""The emulator's Gemini Interactions endpoint: its named events and error shape, and the faults
only it has (an `error` event, a `failed` interaction), seen from the wire and through `Client`
and `AsyncClient` (the `drive` fixture)."""

from __future__ import annotations

import httpx
import orjson
import pytest

from modelstream import ProviderError
from modelstream.testing import Emulator, Reply, StreamError, Text, Turn, render
from support.client import Drive

INTERACTIONS = "gemini-interactions"
TEXT = "The capital of France is Paris, a city on the Seine."


def test_interactions_answers_at_its_path_with_named_events(emu: Emulator) -> None:
    response = httpx.post(
        emu.url + "/v1beta/interactions",
        json={"model": "gemini-2.5-flash", "input": "Hello?", "stream": True},
    )

    frames = [frame for frame in response.content.split(b"\n\n") if frame]
    names = [frame.split(b"\n")[0].removeprefix(b"event: ").decode() for frame in frames]
    assert names == [
        "interaction.created",
        "interaction.status_update",
        "step.start",
        "step.delta",
        "step.delta",
        "step.stop",
        "interaction.completed",
    ]
    last = orjson.loads(frames[-1].split(b"\ndata: ")[1])
    assert last["interaction"]["status"] == "completed"
    assert last["interaction"]["model"] == "gemini-2.5-flash"
    assert set(last["interaction"]["usage"]) >= {"total_input_tokens", "total_output_tokens"}


def test_an_interactions_function_call_streams_arguments_deltas_and_requires_action() -> None:
    body = render(
        INTERACTIONS,
        Turn.tool_call("getWeather", {"location": "Paris"}, signature="sg"),
        fragment_size=5,
    )

    payloads = [orjson.loads(frame.split(b"\ndata: ")[1]) for frame in body.split(b"\n\n") if frame]

    start = next(p for p in payloads if p["event_type"] == "step.start")
    assert start["step"]["type"] == "function_call" and start["step"]["signature"] == "sg"
    fragments = [p["delta"]["arguments"] for p in payloads if p["event_type"] == "step.delta"]
    assert len(fragments) > 2 and orjson.loads("".join(fragments)) == {"location": "Paris"}
    assert payloads[-1]["interaction"]["status"] == "requires_action"


def test_an_interactions_http_error_has_googles_shape(emu: Emulator) -> None:
    emu.queue(Reply.status(429, retry_after=3))

    response = httpx.post(emu.url + "/v1beta/interactions", json={})

    error = response.json()["error"]
    assert (response.status_code, error["code"], error["status"]) == (
        429,
        429,
        "RESOURCE_EXHAUSTED",
    )
    assert error["details"][0]["retryDelay"] == "3s"


def test_an_interactions_error_event_before_the_first_event_is_retried_when_retryable(
    drive: Drive, emu: Emulator
) -> None:
    emu.queue(
        Reply.echo(stream_error=StreamError("error", "overloaded", status=503)),
        Reply.turn(Turn.text("ok")),
    )

    outcome = drive.stream_on(INTERACTIONS)

    assert outcome.error is None and outcome.streamed_text == "ok"
    assert len(emu.requests) == 2


def test_an_interactions_error_event_mid_stream_keeps_the_partial(
    drive: Drive, emu: Emulator
) -> None:
    error = StreamError("error", "quota", after_frames=5, status=429)
    emu.queue(Reply.turn(Turn.text(TEXT), fragment_size=8, stream_error=error))

    outcome = drive.stream_on(INTERACTIONS)

    assert isinstance(outcome.error, ProviderError)
    assert (outcome.error.error_type, outcome.error.provider_message) == (
        "RESOURCE_EXHAUSTED",
        "quota",
    )
    assert outcome.streamed_text == TEXT[:16]
    assert outcome.result is not None and outcome.result.status == "failed"
    assert len(emu.requests) == 1


def test_a_failed_interaction_is_a_provider_error(drive: Drive, emu: Emulator) -> None:
    error = StreamError("failed", "invalid argument", after_frames=4, status=400)
    emu.queue(Reply.turn(Turn(items=[Text(TEXT)]), fragment_size=8, stream_error=error))

    outcome = drive.stream_on(INTERACTIONS)

    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.provider_message == "invalid argument"
    assert not outcome.error.retryable
    assert outcome.streamed_text == TEXT[:8]
    assert len(emu.requests) == 1


def test_a_stream_error_the_protocol_cannot_send_is_refused() -> None:
    with pytest.raises(ValueError, match="no in-stream error"):
        render("openai-chat", Turn.text("x"), stream_error=StreamError("boom"))
    with pytest.raises(ValueError, match="'error' or 'failed'"):
        render(INTERACTIONS, Turn.text("x"), stream_error=StreamError("throttlingException"))
