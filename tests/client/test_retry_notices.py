"""A client's `on_retry` hears each retry as it starts, before its wait: what failed, how long
the wait is, and which attempt comes next. Over real HTTP through the loopback emulator, with
the blocking and the async client (the `mode` fixture); the waits are recorded, not slept."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import pytest

from modelstream import (
    AsyncClient,
    Client,
    ModelstreamError,
    RateLimitError,
    RetryNotice,
    ServerError,
)
from modelstream.client import RetryPolicy, Timeouts
from modelstream.client.failures import classify
from modelstream.client.streams import StreamCall
from modelstream.testing import Emulator, Reply, StreamError, Turn

CLAUDE = "claude-sonnet-4-5"
THREE_ATTEMPTS = RetryPolicy(max_attempts=3, base_delay=0.1)


def complete(mode: str, base_url: str, log: list[Any], **options: Any) -> Any:
    """`complete("hi")` with `on_retry` and `sleep` both writing to `log`, in call order: the
    final message, or the error."""
    options = {
        "api_key": "sk-test-notices",
        "base_url": base_url,
        "retry": THREE_ATTEMPTS,
        "random": lambda: 0.5,
        "on_retry": log.append,
        **options,
    }
    if mode == "sync":
        with Client(options.pop("model", CLAUDE), sleep=lambda s: log.append(s), **options) as c:
            try:
                return c.complete("hi")
            except ModelstreamError as error:
                return error

    async def sleep(seconds: float) -> None:
        log.append(seconds)

    async def main() -> Any:
        async with AsyncClient(options.pop("model", CLAUDE), sleep=sleep, **options) as client:
            try:
                return await client.complete("hi")
            except ModelstreamError as error:
                return error

    return asyncio.run(main())


def notices(log: list[Any]) -> list[RetryNotice]:
    return [entry for entry in log if isinstance(entry, RetryNotice)]


def test_each_retry_is_heard_before_its_wait_with_cause_delay_and_attempt_n_of_m(mode, emu):
    emu.queue(Reply.status(429, retry_after=2), Reply.status(503), Reply.turn(Turn.text("ok")))
    log: list[Any] = []
    message = complete(mode, emu.base_url("anthropic-messages"), log)
    assert message.text == "ok"
    first, second = notices(log)
    assert log == [first, 2.0, second, 0.1]  # backoff after attempt 2: 0.5 x 0.1 x 2
    assert (first.cause, first.delay, first.attempt, first.max_attempts) == ("429", 2.0, 2, 3)
    assert (second.cause, second.delay, second.attempt, second.max_attempts) == ("503", 0.1, 3, 3)
    assert isinstance(first.error, RateLimitError) and first.error.status == 429
    assert isinstance(second.error, ServerError) and second.error.status == 503


def test_a_notice_reads_as_one_line_a_person_can_follow(mode, emu):
    emu.queue(Reply.status(429, retry_after=2), Reply.turn(Turn.text("ok")))
    log: list[Any] = []
    complete(mode, emu.base_url("anthropic-messages"), log)
    (notice,) = notices(log)
    assert str(notice) == "429, retrying in 2.0 s (attempt 2/3)"


def test_the_failure_that_ends_the_call_is_raised_and_not_announced_as_a_retry(mode, emu):
    emu.queue(*[Reply.status(500) for _ in range(3)])
    log: list[Any] = []
    error = complete(mode, emu.base_url("anthropic-messages"), log)
    assert isinstance(error, ServerError)
    assert [(n.attempt, n.max_attempts) for n in notices(log)] == [(2, 3), (3, 3)]
    assert len(emu.requests) == 3


def test_a_failure_that_is_never_retried_is_never_announced(mode, emu):
    emu.queue(Reply.status(400))
    log: list[Any] = []
    complete(mode, emu.base_url("anthropic-messages"), log)
    assert log == []


@pytest.mark.parametrize(
    ("reply", "cause"),
    [
        (Reply.turn(Turn.text("late"), delay_first_byte=3.0), "idle timeout"),
        (Reply.turn(Turn.text("cut"), disconnect_after_bytes=20), "connection lost"),
        (Reply.error_in_body(429), "rate limited"),  # a 200 whose body is an error
    ],
    ids=["idle-timeout", "disconnect", "error-document"],
)
def test_a_failure_without_an_http_status_is_named_by_its_kind(mode, emu, reply, cause):
    emu.queue(reply, Reply.turn(Turn.text("ok")))
    log: list[Any] = []
    message = complete(
        mode, emu.base_url("anthropic-messages"), log, timeouts=Timeouts(attempt=5, idle=0.3)
    )
    assert message.text == "ok"
    assert [notice.cause for notice in notices(log)] == [cause]


def test_an_error_event_before_the_first_event_is_named_by_its_class(mode, emu):
    emu.queue(
        Reply.echo(stream_error=StreamError("throttlingException", "Too many tokens")),
        Reply.turn(Turn.text("ok")),
    )
    log: list[Any] = []
    message = complete(
        mode,
        emu.base_url("bedrock-converse-stream"),
        log,
        model="emulated-model",
        client_type="bedrock-converse-stream",
    )
    assert message.text == "ok"
    assert [notice.cause for notice in notices(log)] == ["rate limited"]


def test_a_refused_connection_is_announced_as_such(mode):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    log: list[Any] = []
    complete(mode, closed, log)
    assert [(n.cause, n.delay, n.attempt) for n in notices(log)] == [
        ("connection refused", pytest.approx(0.05), 2),
        ("connection refused", pytest.approx(0.1), 3),
    ]


def test_a_callback_that_raises_ends_the_call_with_its_exception(mode, emu):
    emu.queue(Reply.status(429, retry_after=1), Reply.turn(Turn.text("never sent")))

    def give_up(notice: RetryNotice) -> None:
        raise RuntimeError(f"gave up on {notice.cause}")

    with pytest.raises(RuntimeError, match="gave up on 429"):
        complete(mode, emu.base_url("anthropic-messages"), [], on_retry=give_up)
    assert len(emu.requests) == 1


async def announce(notice: RetryNotice) -> None:
    """An async callback: called and never awaited, its body would never run."""


@pytest.mark.parametrize("on_retry", ["print", announce], ids=["a-str", "an-async-function"])
@pytest.mark.parametrize("client_class", [Client, AsyncClient])
def test_an_on_retry_that_is_not_a_plain_function_is_refused_when_the_client_is_made(
    client_class: Any, on_retry: Any, emu: Emulator
):
    with pytest.raises(TypeError, match=r"on_retry must be a plain \(not async\) function"):
        client_class(CLAUDE, api_key="sk-test", base_url=emu.url, on_retry=on_retry)


def test_a_resumed_stream_is_no_retry_and_leaves_no_notice() -> None:
    """A modelstream server's stream whose connection dropped goes on (a resume GET), as the
    call decides without a socket: there is nothing to announce."""
    call = StreamCall(
        protocol="modelstream",
        provider="modelstream",
        model="served-model",
        url="http://127.0.0.1:9/v1/stream",
        signer=None,
        retry=THREE_ATTEMPTS,
        timeouts=Timeouts(),
        lenient_tool_arguments=False,
        random=lambda: 0.5,
    )
    call.begin_attempt()
    refused = call.fail(classify(httpx.ConnectError("refused")))  # no stream yet: a retry
    assert refused is not None and call.retry_delay(refused) is not None
    assert call.retry_notice is not None and call.retry_notice.attempt == 2
    call.begin_attempt()
    assert call.accepts(200, {"x-response-id": "resp_1"})
    dropped = call.fail(classify(httpx.ReadError("connection dropped")))
    assert dropped is not None and call.retry_delay(dropped) == 0.0  # resumed at once
    assert call.retry_notice is None
