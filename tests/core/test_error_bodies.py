"""An HTTP 200 whose body is a provider's JSON error object instead of an event stream is a
`ProviderError` with the provider's type, code and message, retried before the first event when
the error says so (issue 7 item 2). Served by the emulator's `Reply.error_in_body` fault in each
protocol's own error shape, to `Client` and `AsyncClient`."""

from __future__ import annotations

import json

import pytest

from modelstream import FinalResponse, IncompleteStreamError, PartialResponse, ProviderError
from modelstream.testing import Emulator, Reply, Turn
from support.client import MODELS, STREAMING, Drive

# What each protocol's error object for HTTP 400 says: (type, code).
REFUSED = {
    "openai-chat": ("invalid_request_error", None),
    "openai-responses": ("invalid_request_error", None),
    "anthropic-messages": ("invalid_request_error", None),
    "gemini-generate-content": ("INVALID_ARGUMENT", 400),
    "gemini-interactions": ("INVALID_ARGUMENT", 400),
    # Bedrock names the type in the `x-amzn-ErrorType` header, which a 200 body lacks
    "bedrock-converse-stream": (None, None),
}
# Whose error object says by itself that it may be retried (Bedrock's says it in the header).
SELF_DESCRIBING = [protocol for protocol in STREAMING if REFUSED[protocol][0] is not None]


@pytest.mark.parametrize("error_status", [429, 503])
@pytest.mark.parametrize("protocol", SELF_DESCRIBING)
def test_a_retryable_error_object_in_a_200_body_is_retried_before_the_first_event(
    drive: Drive, emu: Emulator, protocol: str, error_status: int
) -> None:
    emu.queue(
        Reply.error_in_body(error_status, message="the service is busy, try again"),
        Reply.turn(Turn.text("second try")),
    )
    outcome = drive.stream_on(protocol)

    assert outcome.error is None
    assert outcome.streamed_text == "second try"
    assert isinstance(outcome.result, FinalResponse)
    first, second = emu.wait_for_requests(2, finished=True)
    assert first.status == 200 and second.status == 200  # both answered 200: one body failed
    assert len(outcome.sleeps) == 1  # one backoff between the two arrivals
    retry = outcome.result.metadata.diagnostics[0]
    assert retry["type"] == "retry" and retry["attempt"] == 1
    assert "the service is busy, try again" in str(retry["error"])


@pytest.mark.parametrize("protocol", STREAMING)
def test_a_refusal_in_a_200_body_is_a_provider_error_with_the_providers_facts(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(Reply.error_in_body(400, message="model 'x' does not exist"))
    outcome = drive.stream_on(protocol)

    error = outcome.error
    assert isinstance(error, ProviderError)
    assert not isinstance(error, IncompleteStreamError)
    assert (error.error_type, error.code) == REFUSED[protocol]
    assert error.provider_message == "model 'x' does not exist"
    assert error.retryable is False
    assert "model 'x' does not exist" in str(error)
    assert outcome.events == []
    assert isinstance(outcome.result, PartialResponse) and outcome.result.status == "failed"
    assert len(emu.requests) == 1


def test_a_gemini_error_object_wrapped_in_a_list_is_read_and_retried(
    drive: Drive, emu: Emulator
) -> None:
    error = {
        "code": 503,
        "message": "The model is overloaded. Please try again later.",
        "status": "UNAVAILABLE",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}],
    }
    body = json.dumps([{"error": error}], indent=2)
    emu.queue(
        Reply.body(body, content_type="application/json"),
        Reply.body(body, content_type="application/json"),
        Reply.body(body, content_type="application/json"),
    )
    outcome = drive.stream(MODELS["gemini-generate-content"])

    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.error_type == "UNAVAILABLE" and outcome.error.code == 503
    assert outcome.error.provider_message == error["message"]
    assert outcome.error.retryable and outcome.error.retry_after == 2.0
    assert outcome.sleeps == [2.0, 2.0]  # the provider's RetryInfo, before each retry
    assert len(emu.requests) == 3  # every attempt the retry policy allows


def test_a_200_json_body_that_is_no_error_object_is_an_incomplete_stream(
    drive: Drive, emu: Emulator
) -> None:
    emu.queue(Reply.body(b'{"id": "chatcmpl-1", "choices": []}', content_type="application/json"))
    outcome = drive.stream(MODELS["openai-chat"])

    assert isinstance(outcome.error, IncompleteStreamError)
    assert "one JSON document, not an event stream" in str(outcome.error)
    assert len(emu.requests) == 1
