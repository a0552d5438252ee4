"""The client never shows its API key, even when the provider echoes it inside a 200 stream: in
the provider message of an error event, in `str(error)`, in the partial's reason and in the
diagnostics (issue 7 item 8, client part). HTTP error bodies were masked already. A key is
masked only where it stands as a whole token and is at least 8 characters long (issue 10
item 6)."""

from __future__ import annotations

import json

import pytest

from modelstream import MalformedFrameError, PartialResponse, ProviderError
from modelstream.auth import Secret
from modelstream.auth.secret import mask_secret
from modelstream.testing import Emulator, Reply, StreamError
from support.client import API_KEY, MODELS, STREAMING, Drive

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


# --- what counts as the key (issue 10 item 6) ---------------------------------------------------

OLLAMA_HINT = 'model "llama3.2" not found, try `ollama pull llama3.2`'


def test_a_short_key_is_not_masked_so_an_upstream_message_reaches_the_user_unchanged(
    drive: Drive, emu: Emulator
) -> None:
    not_found = {"error": {"message": OLLAMA_HINT, "type": "not_found_error", "code": None}}
    emu.queue(Reply.status(404, body=not_found), Reply.body(sse(not_found)))

    refused = drive.stream_on("openai-chat", api_key="ollama")
    in_stream = drive.stream_on("openai-chat", api_key="ollama")

    for error in (refused.error, in_stream.error):
        assert isinstance(error, ProviderError)
        assert error.provider_message == OLLAMA_HINT
        assert str(error).endswith(": " + OLLAMA_HINT)
        assert error.partial is not None and "***" not in error.partial.reason


def test_a_short_key_is_never_written_by_the_library_itself(drive: Drive, emu: Emulator) -> None:
    short = "Zq7xW"  # below the masking length: nothing of ours may ever contain it
    emu.queue(Reply.status(401))
    outcome = drive.stream(MODELS["anthropic-messages"], api_key=short)

    assert short in str(emu.requests[0].headers)  # it was sent
    error = outcome.error
    assert isinstance(error, ProviderError) and error.status == 401
    shown = [str(error), repr(error), repr(error.fields()), repr(outcome.result)]
    for text in shown:
        assert short not in text, text


@pytest.mark.parametrize(
    "echo",
    [
        f"key={API_KEY}",
        f"Bearer {API_KEY}.",
        f'"{API_KEY}"',
        f"({API_KEY})",
        f"{API_KEY}-session",
        f"line one\n{API_KEY}\nline three",
    ],
)
def test_a_real_looking_key_standing_as_a_token_is_still_masked(
    drive: Drive, emu: Emulator, echo: str
) -> None:
    emu.queue(Reply.status(401, body={"error": {"message": echo, "type": "invalid_api_key"}}))
    outcome = drive.stream_on("openai-responses")

    error = outcome.error
    assert isinstance(error, ProviderError)
    assert API_KEY not in str(error) and API_KEY not in error.provider_message
    assert error.provider_message == echo.replace(API_KEY, "***")


@pytest.mark.parametrize(
    ("text", "secret", "masked"),
    [
        ("try `ollama pull llama3.2`", "ollama", "try `ollama pull llama3.2`"),  # short
        ("key sk-abcdefgh.", "sk-abcdefgh", "key ***."),
        ("sk-abcdefgh", "sk-abcdefgh", "***"),
        ("sk-abcdefgh sk-abcdefgh", "sk-abcdefgh", "*** ***"),
        ("xsk-abcdefgh", "sk-abcdefgh", "xsk-abcdefgh"),  # inside a longer word
        ("sk-abcdefghz sk-abcdefgh", "sk-abcdefgh", "sk-abcdefghz ***"),
        ("sk-abcdefgh_2", "sk-abcdefgh", "***_2"),  # `_` and `-` are punctuation
        ("passwords", "password", "passwords"),
        ("a=b64key+/==!", "b64key+/==", "a=***!"),  # a punctuation edge is its own boundary
        ("no key here", "sk-abcdefgh", "no key here"),
    ],
)
def test_a_secret_is_masked_only_as_a_whole_token_of_eight_characters_or_more(
    text: str, secret: str, masked: str
) -> None:
    assert mask_secret(text, secret) == masked
    assert Secret(secret).redact(text) == masked
