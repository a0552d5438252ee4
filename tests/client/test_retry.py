"""Retries happen only before the first event, wait what the provider asks (or a jittered
backoff), and end with the provider's error; the pure rules first, then over real HTTP."""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from modelstream import IncompleteStreamError, ProviderConnectionError, ProviderError
from modelstream.client import RetryPolicy
from modelstream.client.http_errors import provider_error_from_http
from modelstream.client.retry import backoff_delay, parse_retry_after, retry_delay
from modelstream.testing import Emulator, Reply, Turn
from support.client import MODELS, STREAMING, Drive

CLAUDE = MODELS["anthropic-messages"]
# the HTTP retry tests run on every protocol the emulator streams (the registry's)
each_protocol = pytest.mark.parametrize("protocol", STREAMING)

NOW = 1_700_000_000.0


# --- the rules ---------------------------------------------------------------------------


def test_backoff_is_full_jitter_under_an_exponential_ceiling_capped_at_max_delay() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=0.5, max_delay=3)
    ceilings = [backoff_delay(policy, attempt, lambda: 0.999999) for attempt in range(1, 6)]
    assert ceilings == pytest.approx([0.5, 1, 2, 3, 3], abs=1e-4)
    assert backoff_delay(policy, 4, lambda: 0.0) == 0
    assert backoff_delay(policy, 2, lambda: 0.25) == pytest.approx(0.25)


def test_retry_after_is_waited_exactly_up_to_the_cap_and_beyond_it_ends_the_call() -> None:
    policy = RetryPolicy(max_attempts=3, max_retry_after=30)
    assert retry_delay(policy, 1, retryable=True, retry_after=12, random=lambda: 0.5) == 12
    assert retry_delay(policy, 1, retryable=True, retry_after=31, random=lambda: 0.5) is None


def test_no_delay_is_given_once_the_attempts_are_used_or_for_a_final_failure() -> None:
    policy = RetryPolicy(max_attempts=2)
    assert retry_delay(policy, 1, retryable=True, retry_after=None, random=lambda: 0.5) == 0.25
    assert retry_delay(policy, 2, retryable=True, retry_after=None, random=lambda: 0.5) is None
    assert retry_delay(policy, 1, retryable=False, retry_after=None, random=lambda: 0.5) is None


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": format_datetime(datetime.fromtimestamp(NOW + 20, UTC), usegmt=True)}, 20),
        ({"retry-after": format_datetime(datetime.fromtimestamp(NOW - 5, UTC), usegmt=True)}, 0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_as_seconds_an_http_date_or_milliseconds(
    headers: dict[str, str], seconds: float | None
) -> None:
    assert parse_retry_after(headers, NOW) == seconds


@pytest.mark.parametrize(
    ("status", "body", "error_type", "code", "message"),
    [
        (
            429,
            b'{"error": {"message": "Rate limit reached for requests", "type": "requests",'
            b' "param": null, "code": "rate_limit_exceeded"}}',
            "requests",
            "rate_limit_exceeded",
            "Rate limit reached",
        ),
        (
            529,
            b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
            "overloaded_error",
            None,
            "Overloaded",
        ),
        (
            503,
            b'[{"error": {"code": 503, "message": "The model is overloaded.",'
            b' "status": "UNAVAILABLE"}}]',
            "UNAVAILABLE",
            503,
            "The model is overloaded.",
        ),
        (502, b"<html><body>Bad gateway</body></html>", None, None, "<html><body>Bad gateway"),
        (500, b"", None, None, "Internal Server Error"),
    ],
    ids=["openai", "anthropic", "gemini", "html", "empty"],
)
def test_http_errors_are_read_from_each_providers_error_shape(
    status: int, body: bytes, error_type: str | None, code: object, message: str
) -> None:
    error = provider_error_from_http(status, {}, body, provider="p", now=NOW)
    assert (error.status, error.error_type, error.code) == (status, error_type, code)
    assert error.provider_message.startswith(message)
    assert error.retryable


def test_gemini_retry_info_gives_the_retry_delay_when_no_header_does() -> None:
    body = (
        b'{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota",'
        b' "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",'
        b' "retryDelay": "17s"}]}}'
    )
    error = provider_error_from_http(429, {}, body, provider="google", now=NOW)
    assert error.retry_after == 17


# --- over HTTP ---------------------------------------------------------------------------


@each_protocol
def test_a_429_is_retried_after_the_retry_after_it_asks_for(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(Reply.status(429, retry_after=0.4), Reply.turn(Turn.text("ok")))
    outcome = drive.stream_on(protocol, real_sleep=True)

    assert outcome.error is None and outcome.streamed_text == "ok"
    assert outcome.sleeps == [0.4]
    first, second = emu.requests
    assert second.received_at - first.received_at >= 0.4
    assert outcome.result is not None
    (retry,) = outcome.result.metadata.diagnostics[:1]
    assert (retry["type"], retry["status"], retry["delay_s"]) == ("retry", 429, 0.4)


@each_protocol
def test_server_errors_exhaust_the_attempts_then_raise_the_provider_error(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(*[Reply.status(500)] * 3)
    outcome = drive.stream_on(
        protocol,
        retry=RetryPolicy(max_attempts=3, base_delay=0.5, max_delay=8),
        random=lambda: 0.5,
    )

    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.status == 500 and outcome.error.retryable
    assert outcome.sleeps == [0.25, 0.5]  # half of 0.5, then half of 1.0
    assert len(emu.requests) == 3
    assert outcome.events == []
    assert outcome.result is outcome.error.partial
    assert outcome.result is not None and outcome.result.status == "failed"
    assert [d["attempt"] for d in outcome.result.metadata.diagnostics] == [1, 2]


@each_protocol
@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_each_retryable_status_is_retried(
    drive: Drive, emu: Emulator, status: int, protocol: str
) -> None:
    emu.queue(Reply.status(status), Reply.turn(Turn.text("ok")))
    outcome = drive.stream_on(protocol)

    assert outcome.error is None and outcome.streamed_text == "ok"
    assert [r.status for r in emu.requests] == [status, 200]


@each_protocol
@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_a_client_error_is_raised_at_once(
    drive: Drive, emu: Emulator, status: int, protocol: str
) -> None:
    emu.queue(Reply.status(status))
    outcome = drive.stream_on(protocol)

    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.status == status and not outcome.error.retryable
    assert outcome.sleeps == [] and len(emu.requests) == 1


@each_protocol
def test_a_retry_after_beyond_the_cap_ends_the_call_with_the_provider_error(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(Reply.status(429, retry_after=120))
    outcome = drive.stream_on(protocol, retry=RetryPolicy(max_retry_after=30))

    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.retry_after == 120
    assert outcome.sleeps == [] and len(emu.requests) == 1


def test_a_retryable_error_event_before_the_first_event_is_retried(
    drive: Drive, emu: Emulator
) -> None:
    overloaded = (
        b"event: error\n"
        b'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    emu.queue(Reply.body(overloaded, content_type="text/event-stream"), Reply.turn(Turn.text("ok")))
    outcome = drive.stream(CLAUDE)

    assert outcome.error is None and outcome.streamed_text == "ok"
    assert len(emu.requests) == 2


def test_an_unreachable_host_is_retried_then_raised_as_a_connection_error(
    drive: Drive,
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    outcome = drive.stream(
        CLAUDE, base_url=f"http://127.0.0.1:{port}", retry=RetryPolicy(max_attempts=2)
    )

    assert isinstance(outcome.error, ProviderConnectionError)
    assert not isinstance(outcome.error, IncompleteStreamError)
    assert f"could not connect to http://127.0.0.1:{port}" in str(outcome.error)
    assert len(outcome.sleeps) == 1
    assert outcome.result is not None and outcome.result.status == "failed"


def test_max_attempts_of_one_disables_retries(drive: Drive, emu: Emulator) -> None:
    emu.queue(Reply.status(503), Reply.turn(Turn.text("never")))
    outcome = drive.stream(CLAUDE, retry=RetryPolicy(max_attempts=1))

    assert isinstance(outcome.error, ProviderError) and outcome.error.status == 503
    assert len(emu.requests) == 1
