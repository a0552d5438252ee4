"""Settings are values: `timeouts=5`, `retry=3`, `retry=False`, an `httpx.Timeout` or the
project's objects; a wrong type raises `TypeError` naming the parameter when the client is made.
A call overrides them with `timeout=` and `max_retries=`, proven over real HTTP: a stall hits the
call's timeout, and the emulator counts the attempts a 503 gets."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import httpx
import pytest

from modelstream import (
    AsyncClient,
    Client,
    ModelstreamError,
    ProviderError,
    RetryPolicy,
    StreamTimeoutError,
    Timeouts,
)
from modelstream.testing import Emulator, Reply, Turn

KEY = "sk-test-0123456789"
MODEL = "claude-sonnet-4-5"
LONG = "word " * 300


def complete(emu: Emulator, mode: str, client: dict[str, Any], call: dict[str, Any]) -> Any:
    """`complete("Hi", **call)` on a client made with `client`; the error if it raised.
    Backoffs are not slept (the emulator's arrival records count the attempts)."""
    options = {"api_key": KEY, "base_url": emu.base_url("anthropic-messages"), **client}
    try:
        if mode == "sync":
            with Client(MODEL, sleep=lambda _: None, **options) as sync_client:
                return sync_client.complete("Hi", **call)

        async def no_sleep(_: float) -> None:
            return None

        async def main() -> Any:
            async with AsyncClient(MODEL, sleep=no_sleep, **options) as async_client:
                return await async_client.complete("Hi", **call)

        return asyncio.run(main())
    except Exception as exc:
        return exc


# --- construction --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("timeouts", "5"),
        ("timeouts", True),
        ("timeouts", [5]),
        ("timeouts", {"idle": 5}),
        ("retry", 2.5),
        ("retry", "3"),
        ("retry", True),
        ("retry", {"max_attempts": 3}),
        ("lenient_tool_arguments", "yes"),
        ("lenient_frames", 1),
        ("model", 5),
        ("api_key", b"sk-test"),
        ("base_url", 8080),
        ("client_type", ["openai-chat"]),
        ("http_client", "http://localhost"),
        ("sleep", 0.5),
        ("random", 0.5),
        ("traces", 5),
        ("signer", "sigv4"),
        ("platform", 3),
    ],
)
@pytest.mark.parametrize("client_class", [Client, AsyncClient])
def test_a_wrong_typed_setting_raises_type_error_naming_it(
    client_class: type[Client] | type[AsyncClient], setting: str, value: Any
) -> None:
    options: dict[str, Any] = {"model": "claude-sonnet-4-5", "api_key": KEY, setting: value}
    with pytest.raises(TypeError, match=rf"^{setting} must be"):
        client_class(**options)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5, Timeouts(connect=5, attempt=5, idle=5)),
        (30.0, Timeouts(connect=10, attempt=30, idle=30)),
        (httpx.Timeout(3.0, read=7.0), Timeouts(connect=3, attempt=600, idle=7)),
        (Timeouts(idle=9), Timeouts(idle=9)),
        (False, Timeouts(connect=None, attempt=None, idle=None)),
        (0, Timeouts(connect=None, attempt=None, idle=None)),
        (None, Timeouts()),
    ],
)
def test_timeouts_take_seconds_an_httpx_timeout_or_the_object(value: Any, expected: Any) -> None:
    with Client(MODEL, api_key=KEY, timeouts=value) as client:
        assert client.timeouts == expected


@pytest.mark.parametrize(
    ("value", "attempts"),
    [(5, 5), (1, 1), (False, 1), (0, 1), (RetryPolicy(max_attempts=2), 2), (None, 3)],
)
def test_retry_takes_attempts_or_the_object_and_false_disables(value: Any, attempts: int) -> None:
    with Client(MODEL, api_key=KEY, retry=value) as client:
        assert client.retry.max_attempts == attempts


@pytest.mark.parametrize(
    ("setting", "value", "error"), [("timeouts", -1, ValueError), ("retry", -2, ValueError)]
)
def test_a_negative_setting_is_refused(setting: str, value: int, error: type[Exception]) -> None:
    with pytest.raises(error, match=setting):
        Client(MODEL, api_key=KEY, **{setting: value})


# --- the settings at work ------------------------------------------------------------------


def test_a_number_of_seconds_bounds_the_calls(emu: Emulator, mode: str) -> None:
    emu.queue(Reply.turn(Turn.text(LONG), fragment_size=10, stall_after_bytes=(800, 6.0)))
    started = time.monotonic()
    error = complete(emu, mode, {"timeouts": 0.5}, {})
    assert time.monotonic() - started < 4.5  # the stall lasts 6 s
    assert isinstance(error, StreamTimeoutError)
    assert error.partial is not None and error.partial.text
    assert len(emu.requests) == 1  # events had been delivered: never retried


@pytest.mark.parametrize(
    ("client", "call", "arrivals"),
    [
        ({}, {}, 3),  # the default: three attempts
        ({"retry": 4}, {}, 4),
        ({"retry": False}, {}, 1),
        ({"retry": 4}, {"max_retries": 1}, 2),  # the call's override wins
        ({}, {"max_retries": 0}, 1),
        ({"retry": False}, {"max_retries": 2}, 3),
    ],
)
def test_a_503_gets_the_attempts_the_settings_give(
    emu: Emulator, mode: str, client: dict[str, Any], call: dict[str, Any], arrivals: int
) -> None:
    emu.queue(*[Reply.status(503) for _ in range(6)])
    error = complete(emu, mode, client, call)
    assert isinstance(error, ProviderError) and error.status == 503
    assert len(emu.requests) == arrivals


def test_max_retries_lets_a_call_recover_and_the_next_call_keeps_the_client_setting(
    emu: Emulator,
) -> None:
    emu.queue(Reply.status(503), Reply.status(503), Reply.turn(Turn.text("finally")))
    options = {"api_key": KEY, "base_url": emu.base_url("anthropic-messages")}
    with Client(MODEL, retry=False, sleep=lambda _: None, **options) as client:
        assert client.complete("Hi", max_retries=2).text == "finally"
        assert len(emu.requests) == 3
        emu.queue(Reply.status(503), Reply.turn(Turn.text("unused")))
        with pytest.raises(ProviderError):
            client.complete("Hi")
    assert len(emu.requests) == 4  # retry=False again: one attempt


def test_a_per_call_timeout_hits_a_stall_the_client_setting_waits_out(
    emu: Emulator, mode: str
) -> None:
    stalled = Reply.turn(Turn.text(LONG), fragment_size=10, stall_after_bytes=(800, 1.5))
    emu.queue(stalled)
    started = time.monotonic()
    error = complete(emu, mode, {"timeouts": 30}, {"timeout": Timeouts(idle=0.3)})
    assert time.monotonic() - started < 1.4
    assert isinstance(error, StreamTimeoutError) and error.timeout == "idle"
    emu.queue(stalled)
    message = complete(emu, mode, {"timeouts": 30}, {})  # the client's 30 s: the stall is waited
    assert not isinstance(message, Exception), message
    assert message.text == LONG


@pytest.mark.parametrize(
    ("call", "words"),
    [
        ({"timeout": "1"}, "^timeout must be"),
        ({"timeout": True}, "^timeout must be"),
        ({"max_retries": "2"}, "^max_retries must be an int"),
        ({"max_retries": 1.5}, "^max_retries must be"),
    ],
)
def test_a_wrong_per_call_override_is_refused_before_sending(
    emu: Emulator, call: dict[str, Any], words: str
) -> None:
    with Client(MODEL, api_key=KEY, base_url=emu.base_url("anthropic-messages")) as client:
        with pytest.raises(TypeError, match=words):
            client.stream("Hi", **call)
        with pytest.raises(ValueError, match="max_retries must be 0 or more"):
            client.stream("Hi", max_retries=-1)
    assert emu.requests == []


# --- the two reports -----------------------------------------------------------------


def test_timeouts_as_a_float_streams_a_turn(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("fine")))
    message = complete(emu, "sync", {"timeouts": 5.0}, {})  # was AttributeError on 'float'
    assert not isinstance(message, Exception), message
    assert message.text == "fine"


@pytest.mark.parametrize("mode_", ["sync", "async"])
def test_retry_as_an_int_retries_a_refused_connection_and_raises_its_error(mode_: str) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits: list[float] = []
    options: dict[str, Any] = {"api_key": KEY, "base_url": f"http://127.0.0.1:{port}", "retry": 2}
    with pytest.raises(ModelstreamError) as caught:
        if mode_ == "sync":
            with Client(MODEL, sleep=waits.append, **options) as client:
                client.complete("Hi")
        else:

            async def sleep(seconds: float) -> None:
                waits.append(seconds)

            async def main() -> None:
                async with AsyncClient(MODEL, sleep=sleep, **options) as client:
                    await client.complete("Hi")

            asyncio.run(main())
    assert len(waits) == 1  # two attempts: one backoff between them
    assert "127.0.0.1" in str(caught.value) or "connect" in str(caught.value).lower()
