"""The client never shows its API key, even when the provider echoes it inside a 200 stream: in
the provider message of an error event, in `str(error)`, in the partial's reason and in the
diagnostics (issue 7 item 8, client part). HTTP error bodies were masked already."""

from __future__ import annotations

import json

import pytest

from modelstream import MalformedFrameError, PartialResponse, ProviderError
from modelstream.testing import Emulator, Reply, StreamError
from test_client_support import API_KEY, MODELS, STREAMING, Drive

pytest_plugins = ["test_client_support"]

ECHO = f"Incorrect API key provided: {API_KEY}. You can find your key in the dashboard."

# An error event in each protocol's stream, carrying a message that echoes the key.
ERROR_FRAMES = {
    "openai-chat": {"error": {"message": ECHO, "type": "invalid_request_error", "code": None}},
    "openai-responses": {"type": "error", "code": "invalid_api_key", "message": ECHO},
    "anthropic-messages": {
        "type": "error",
        "error": {"type": "authentication_error", "message": ECHO},
    },
    "gemini-generate-content": {
        "error": {"code": 400, "message": ECHO, "status": "INVALID_ARGUMENT"}
    },
}
# The protocols whose in-stream error the emulator writes itself: that error, by its kind.
STREAM_ERRORS = {
    "gemini-interactions": StreamError("error", ECHO, status=400),
    "bedrock-converse-stream": StreamError("validationException", ECHO),
}


def error_reply(protocol: str) -> Reply:
    """A 200 stream whose first frame is an error that echoes the key."""
    if protocol in STREAM_ERRORS:
        return Reply.echo(stream_error=STREAM_ERRORS[protocol])
    name = "error" if protocol in ("openai-responses", "anthropic-messages") else None
    return Reply.body(sse(ERROR_FRAMES[protocol], name))


def sse(payload: object, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


def assert_masked(error: Exception, partial: PartialResponse | None) -> None:
    assert API_KEY not in str(error) and API_KEY not in repr(error)
    assert "***" in str(error)
    assert partial is not None and API_KEY not in partial.reason
    assert all(API_KEY not in json.dumps(note) for note in partial.metadata.diagnostics)


@pytest.mark.parametrize("protocol", STREAMING)
def test_an_error_event_that_echoes_the_key_is_masked(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(error_reply(protocol))
    outcome = drive.stream_on(protocol)

    error = outcome.error
    assert isinstance(error, ProviderError)
    assert error.provider_message == ECHO.replace(API_KEY, "***")
    assert isinstance(outcome.result, PartialResponse)
    assert_masked(error, outcome.result)


@pytest.mark.parametrize("protocol", STREAMING)
def test_an_error_object_in_a_200_body_that_echoes_the_key_is_masked(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(Reply.error_in_body(401, message=ECHO))
    outcome = drive.stream_on(protocol)

    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.provider_message == ECHO.replace(API_KEY, "***")
    assert_masked(outcome.error, outcome.error.partial)


def test_a_malformed_frame_that_echoes_the_key_is_masked_in_the_error_and_diagnostics(
    drive: Drive, emu: Emulator
) -> None:
    broken = f'data: {{"choices": [{{"delta": {{"content": "{API_KEY}"\n\n'.encode()
    emu.queue(Reply.body(broken), Reply.body(broken + b"data: [DONE]\n\n"))

    strict = drive.stream(MODELS["openai-chat"])
    lenient = drive.stream(MODELS["openai-chat"], lenient_frames=True)

    assert isinstance(strict.error, MalformedFrameError)
    assert API_KEY not in strict.error.preview
    assert_masked(strict.error, strict.error.partial)
    notes = lenient.result.metadata.diagnostics if lenient.result else []
    assert any(note["type"] == "malformed_frame" for note in notes)
    assert all(API_KEY not in json.dumps(note) for note in notes)
