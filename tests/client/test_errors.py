"""A provider's error arrives as the `ProviderError` subclass that names its cause, read from the
status and the provider's own error body (refusals, error events inside a 200 stream), with
every fact of a `ProviderError` kept; a request that never connected is a
`ProviderConnectionError`, not an incomplete stream (issue 10 item 3). Through the real HTTP
path: the emulator's statuses and bodies, a closed port, a name that does not resolve."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from typing import Any

import pytest

from modelstream import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceededError,
    IncompleteStreamError,
    NotFoundError,
    OverloadedError,
    PartialResponse,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from modelstream.client import RetryPolicy
from modelstream.client.routing import route_for_model
from modelstream.testing import Emulator, Reply, StreamError
from support import CORPUS, require_corpus
from support.client import MODELS, STREAMING, Drive

ONCE = RetryPolicy(max_attempts=1)

STATUS_CAUSES = [
    (400, BadRequestError),
    (401, AuthenticationError),
    (403, PermissionDeniedError),
    (404, NotFoundError),
    (422, BadRequestError),
    (429, RateLimitError),
    (500, ServerError),
    (502, ServerError),
    (503, OverloadedError),
    (529, OverloadedError),
]


def provider_of(protocol: str) -> str:
    """The provider the protocol's test model routes to (openai-chat's is DeepSeek's)."""
    route = route_for_model(MODELS[protocol])
    assert route is not None
    return route.provider


def assert_one_line_naming_provider_and_model(error: Exception, protocol: str) -> None:
    text = str(error)
    assert "\n" not in text and "\r" not in text
    assert provider_of(protocol) in text and f"model {MODELS[protocol]}" in text


def closed_port() -> int:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- refusals, by status ---------------------------------------------------------------------


@pytest.mark.parametrize("protocol", STREAMING)
@pytest.mark.parametrize(("status", "cause"), STATUS_CAUSES, ids=[s for s, _ in STATUS_CAUSES])
def test_each_refusal_status_is_the_error_of_its_cause_with_every_provider_fact(
    emu: Emulator, protocol: str, status: int, cause: type[ProviderError]
) -> None:
    emu.queue(Reply.status(status, retry_after=3 if status == 429 else None))
    outcome = Drive("sync", emu).stream_on(protocol, retry=ONCE)

    error = outcome.error
    assert type(error) is cause and isinstance(error, ProviderError)
    assert error.status == status
    assert error.retryable is (status == 429 or status >= 500)
    assert error.provider == provider_of(protocol) and error.model == MODELS[protocol]
    assert error.provider_message  # the emulator's message, read from the protocol's shape
    assert error.error_type is not None  # each protocol's error body names a type
    if status == 429:
        assert error.retry_after == 3.0
    assert_one_line_naming_provider_and_model(error, protocol)
    assert isinstance(outcome.result, PartialResponse) and outcome.result.status == "failed"
    assert len(emu.requests) == 1


# The providers' own bodies (shapes and wording from their error references and reports).
OPENAI_CONTEXT = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your "
        "messages resulted in 131072 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
ANTHROPIC_PROMPT_TOO_LONG = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 210000 tokens > 200000 maximum",
    },
}
ANTHROPIC_CONTEXT_LIMIT = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "input length and `max_tokens` exceed context limit: 188240 + 21333 > "
        "200000, decrease input length or `max_tokens` and try again",
    },
}
GEMINI_CONTEXT = {
    "error": {
        "code": 400,
        "message": "The input token count (1200293) exceeds the maximum number of tokens "
        "allowed (1048576).",
        "status": "INVALID_ARGUMENT",
    }
}
GEMINI_BAD_KEY = {
    "error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
            }
        ],
    }
}
OPENAI_QUOTA = {
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "param": None,
        "code": "insufficient_quota",
    }
}
BEDROCK_TYPE = "x-amzn-errortype"
BEDROCK_NAMESPACE = ":http://internal.amazon.com/coral/com.amazon.bedrock/"


@pytest.mark.parametrize(
    ("protocol", "status", "body", "headers", "cause"),
    [
        ("openai-chat", 400, OPENAI_CONTEXT, {}, ContextWindowExceededError),
        ("anthropic-messages", 400, ANTHROPIC_PROMPT_TOO_LONG, {}, ContextWindowExceededError),
        ("anthropic-messages", 400, ANTHROPIC_CONTEXT_LIMIT, {}, ContextWindowExceededError),
        ("gemini-generate-content", 400, GEMINI_CONTEXT, {}, ContextWindowExceededError),
        (
            "bedrock-converse-stream",
            400,
            {"message": "Input is too long for requested model."},
            {BEDROCK_TYPE: "ValidationException" + BEDROCK_NAMESPACE},
            ContextWindowExceededError,
        ),
        ("gemini-generate-content", 400, GEMINI_BAD_KEY, {}, AuthenticationError),
        (
            "bedrock-converse-stream",
            403,
            {"message": "The security token included in the request is invalid."},
            {BEDROCK_TYPE: "UnrecognizedClientException" + BEDROCK_NAMESPACE},
            AuthenticationError,
        ),
        (
            "bedrock-converse-stream",
            403,
            {"message": "You don't have access to the model with the specified model ID."},
            {BEDROCK_TYPE: "AccessDeniedException" + BEDROCK_NAMESPACE},
            PermissionDeniedError,
        ),
        (
            "bedrock-converse-stream",
            400,
            {"message": "The provided model identifier is invalid."},
            {BEDROCK_TYPE: "ValidationException" + BEDROCK_NAMESPACE},
            BadRequestError,
        ),
    ],
    ids=[
        "openai-context-length-exceeded",
        "anthropic-prompt-is-too-long",
        "anthropic-input-and-max-tokens",
        "gemini-input-token-count",
        "bedrock-input-is-too-long",
        "gemini-api-key-invalid-is-a-400",
        "bedrock-unrecognized-client-is-a-403",
        "bedrock-access-denied",
        "bedrock-validation",
    ],
)
def test_the_providers_own_bodies_name_the_cause_beyond_the_status(
    emu: Emulator,
    protocol: str,
    status: int,
    body: dict[str, Any],
    headers: dict[str, str],
    cause: type[ProviderError],
) -> None:
    emu.queue(Reply.status(status, body=body, headers=headers))
    outcome = Drive("sync", emu).stream_on(protocol, retry=ONCE)

    error = outcome.error
    assert type(error) is cause and error.status == status and not error.retryable
    assert error.provider_message in json.dumps(body)
    assert_one_line_naming_provider_and_model(error, protocol)


def test_a_context_window_error_is_a_bad_request_too(drive: Drive, emu: Emulator) -> None:
    emu.queue(Reply.status(400, body=OPENAI_CONTEXT))
    outcome = drive.stream_on("openai-responses")

    error = outcome.error
    assert isinstance(error, ContextWindowExceededError) and isinstance(error, BadRequestError)
    assert (error.error_type, error.code) == ("invalid_request_error", "context_length_exceeded")
    assert str(error).startswith("context window exceeded (openai, model ")
    assert len(emu.requests) == 1  # a 400 is never retried


def test_a_rate_limit_is_retried_after_its_retry_after_then_raised_with_it(
    drive: Drive, emu: Emulator
) -> None:
    emu.queue(*[Reply.status(429, retry_after=2) for _ in range(2)])
    outcome = drive.stream_on("anthropic-messages", retry=RetryPolicy(max_attempts=2))

    error = outcome.error
    assert isinstance(error, RateLimitError) and error.retryable
    assert (error.retry_after, error.error_type) == (2.0, "rate_limit_error")
    assert outcome.sleeps == [2.0] and len(emu.requests) == 2


def test_a_used_up_quota_is_a_rate_limit_error_that_is_not_retried(
    drive: Drive, emu: Emulator
) -> None:
    emu.queue(Reply.status(429, body=OPENAI_QUOTA), Reply.status(429, body=OPENAI_QUOTA))
    outcome = drive.stream_on("openai-chat")  # the default policy retries a 429

    error = outcome.error
    assert isinstance(error, RateLimitError) and error.status == 429
    assert error.retryable is False and error.code == "insufficient_quota"
    assert outcome.sleeps == [] and len(emu.requests) == 1


def test_anthropic_529_is_an_overloaded_error_retried_like_any_server_error(
    drive: Drive, emu: Emulator
) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    emu.queue(*[Reply.status(529, body=overloaded) for _ in range(2)])
    outcome = drive.stream_on("anthropic-messages", retry=RetryPolicy(max_attempts=2))

    error = outcome.error
    assert isinstance(error, OverloadedError) and isinstance(error, ServerError)
    assert (error.status, error.error_type, error.retryable) == (529, "overloaded_error", True)
    assert len(emu.requests) == 2


def test_a_message_written_on_several_lines_is_one_line_in_the_error(
    drive: Drive, emu: Emulator
) -> None:
    message = "Invalid request.\n  Field 'messages' is required.\n"
    emu.queue(Reply.status(400, body={"error": {"message": message, "type": "invalid_request"}}))
    outcome = drive.stream_on("openai-chat")

    error = outcome.error
    assert isinstance(error, BadRequestError)
    assert error.provider_message == message  # the provider's words, as sent
    assert str(error).endswith(": Invalid request. Field 'messages' is required.")


# --- errors inside a 200 stream --------------------------------------------------------------


def sse(payload: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


@pytest.mark.parametrize(
    ("protocol", "reply", "cause", "retryable"),
    [
        (
            "anthropic-messages",
            Reply.body(
                sse(
                    {"type": "error", "error": {"type": "overloaded_error", "message": "Over"}},
                    "error",
                )
            ),
            OverloadedError,
            True,
        ),
        (
            "openai-responses",  # the shape OpenAI streams when the input does not fit
            Reply.body(
                sse(
                    {
                        "type": "error",
                        "sequence_number": 2,
                        "error": {
                            "type": "invalid_request_error",
                            "code": "context_length_exceeded",
                            "message": "Your input exceeds the context window of this model. "
                            "Please adjust your input and try again.",
                            "param": "input",
                        },
                    },
                    "error",
                )
            ),
            ContextWindowExceededError,
            False,
        ),
        (
            "bedrock-converse-stream",
            Reply.echo(stream_error=StreamError("throttlingException", "Too many tokens")),
            RateLimitError,
            True,
        ),
        (
            "gemini-interactions",
            Reply.echo(stream_error=StreamError("error", "Resource exhausted", status=429)),
            RateLimitError,
            True,
        ),
    ],
    ids=["anthropic-overloaded", "responses-context", "bedrock-throttling", "interactions-429"],
)
def test_an_error_event_gets_the_class_its_type_names(
    emu: Emulator, protocol: str, reply: Reply, cause: type[ProviderError], retryable: bool
) -> None:
    emu.queue(reply)
    outcome = Drive("async", emu).stream_on(protocol, retry=ONCE)

    error = outcome.error
    assert type(error) is cause
    assert error.status is None  # the response was a 200; the error came in its body
    assert error.retryable is retryable
    assert_one_line_naming_provider_and_model(error, protocol)


@pytest.mark.parametrize(
    ("protocol", "capture", "cause", "retryable"),
    [
        ("openai-responses", "vercel-openai-error", RateLimitError, False),  # insufficient_quota
        ("openai-chat", "pydanticai-groq-tool-use-failed", BadRequestError, False),
        (
            "bedrock-converse-stream",
            "vercel-bedrock-model-stream-error-synthetic",
            ServerError,
            True,
        ),
    ],
)
def test_recorded_error_events_get_the_class_their_type_names(
    drive: Drive,
    emu: Emulator,
    protocol: str,
    capture: str,
    cause: type[ProviderError],
    retryable: bool,
) -> None:
    require_corpus()
    suffix = ".bin" if protocol == "bedrock-converse-stream" else ".sse"
    body = (CORPUS / protocol / f"{capture}{suffix}").read_bytes()
    emu.queue(Reply.body(body))
    outcome = drive.stream_on(protocol, retry=ONCE)

    assert type(outcome.error) is cause
    assert outcome.error.retryable is retryable


# --- a request that never connected ----------------------------------------------------------


def test_a_refused_connection_is_a_connection_error_after_the_retries_not_an_incomplete_stream(
    drive: Drive,
) -> None:
    port = closed_port()
    outcome = drive.stream(
        MODELS["anthropic-messages"],
        base_url=f"http://127.0.0.1:{port}",
        retry=RetryPolicy(max_attempts=2),
    )

    error = outcome.error
    assert isinstance(error, ProviderConnectionError)
    assert not isinstance(error, IncompleteStreamError | ProviderError)
    assert (error.host, error.reason, error.attempts) == (f"http://127.0.0.1:{port}", "refused", 2)
    assert str(error) == (
        f"could not connect to http://127.0.0.1:{port} (anthropic, model "
        f"{MODELS['anthropic-messages']}, 2 attempts): the connection was refused"
    )
    assert len(outcome.sleeps) == 1  # retried once, as any connection error
    result = outcome.result
    assert isinstance(result, PartialResponse) and result.status == "failed"
    assert (result.items, result.open_item) == ([], None)  # nothing was received


def test_a_host_name_that_does_not_resolve_is_a_connection_error_naming_the_host(
    drive: Drive,
) -> None:
    started = time.monotonic()  # `.invalid` never resolves (RFC 2606): no network is asked
    outcome = drive.stream_on("openai-chat", base_url="https://nonexistent.invalid/v1", retry=ONCE)

    error = outcome.error
    assert isinstance(error, ProviderConnectionError)
    assert (error.host, error.reason) == ("https://nonexistent.invalid", "dns")
    host = "https://nonexistent.invalid"
    assert str(error).startswith(f"could not connect to {host} ({provider_of('openai-chat')}, ")
    assert "the host name did not resolve" in str(error)
    assert time.monotonic() - started < 10


def test_a_failed_tls_handshake_is_a_connection_error(drive: Drive, emu: Emulator) -> None:
    plain = emu.base_url("openai-chat")  # the emulator speaks plain HTTP: no TLS server hello
    outcome = drive.stream_on(
        "openai-chat", base_url=plain.replace("http://", "https://"), retry=ONCE
    )

    error = outcome.error
    assert isinstance(error, ProviderConnectionError) and error.reason == "tls"
    assert "the TLS handshake failed" in str(error)
    assert emu.requests == []


def test_the_cli_says_in_one_line_that_it_could_not_connect() -> None:
    port = closed_port()
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith("_API_KEY") and not name.startswith("MODELSTREAM_")
    }
    environment["MODELSTREAM_TEST_ERRORS_KEY"] = "test-key-for-errors"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "modelstream.cli.main",
            "chat",
            "-m",
            "claude-sonnet-4-5",
            "--base-url",
            f"http://127.0.0.1:{port}",
            "--api-key-env",
            "MODELSTREAM_TEST_ERRORS_KEY",
            "Hello?",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )

    assert result.returncode == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("error")]
    assert errors == [
        f"error: could not connect to http://127.0.0.1:{port} (anthropic, model "
        "claude-sonnet-4-5, 3 attempts): the connection was refused"
    ]
    assert "partial" not in result.stdout and "do not act" not in result.stdout
    assert "test-key-for-errors" not in result.stdout + result.stderr
