"""Faults injected by the emulator, seen from both sides: what the caller gets, and what the
emulator saw (requests, arrival times, a client that closed early). Each test runs through
`Client` and `AsyncClient`."""

from __future__ import annotations

import asyncio
import time

import pytest

from modelstream import IncompleteStreamError, PartialResponse
from modelstream.client import AsyncClient, AsyncEventStream, Client, StreamTimeoutError, Timeouts
from modelstream.testing import Emulator, Reply, Turn, render
from modelstream.types import Event
from support.client import API_KEY, HELLO, MODELS, STREAMING, Drive

CLAUDE = MODELS["anthropic-messages"]
LONG_TEXT = "The quick brown fox jumps over the lazy dog. " * 8
LONG_TURN = Turn.text(LONG_TEXT)
# the fault tests run on every protocol the emulator streams (the registry's)
each_protocol = pytest.mark.parametrize("protocol", STREAMING)


def long_reply(**faults: object) -> Reply:
    return Reply.turn(LONG_TURN, fragment_size=10, **faults)  # type: ignore[arg-type]


def long_body(protocol: str) -> bytes:
    return render(protocol, LONG_TURN, fragment_size=10)


def assert_partial_holds_exactly_what_was_streamed(error: IncompleteStreamError) -> None:
    """The partial's open item is the join of the deltas the caller saw: nothing lost, nothing
    twice (a retry after an event would have repeated the first deltas)."""
    partial = error.partial
    assert partial is not None and partial.status == "incomplete"
    assert partial.items == []  # the text never finished, so it is not a done item
    assert partial.open_item is not None and partial.open_item["type"] == "text.delta"


@each_protocol
@pytest.mark.parametrize(
    ("timeouts", "which"),
    [(Timeouts(attempt=0.3, idle=5), "attempt"), (Timeouts(attempt=5, idle=0.3), "idle")],
)
def test_a_first_byte_later_than_a_timeout_is_retried(
    drive: Drive, emu: Emulator, timeouts: Timeouts, which: str, protocol: str
) -> None:
    # the late reply would arrive after 3 s: the retry must come well before (a loaded CI
    # machine gets a wide margin on both sides)
    emu.queue(Reply.turn(Turn.text("late"), delay_first_byte=3.0), Reply.turn(Turn.text("ok")))
    outcome = drive.stream_on(protocol, timeouts=timeouts)

    assert outcome.error is None
    assert outcome.result is not None and outcome.result.status == "final"
    assert outcome.streamed_text == "ok"
    first, second = emu.wait_for_requests(2, finished=True)
    assert first.client_closed_early and first.status is None  # given up before its headers
    assert 0.25 <= second.received_at - first.received_at < 2.5
    retry = outcome.result.metadata.diagnostics[0]
    assert retry["type"] == "retry" and f"{which} timeout" in retry["error"]


@each_protocol
def test_a_stall_mid_stream_longer_than_the_idle_timeout_ends_the_stream_without_a_retry(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(long_reply(stall_after_bytes=(len(long_body(protocol)) // 2, 6.0)))
    started = time.monotonic()
    outcome = drive.stream_on(protocol, timeouts=Timeouts(idle=0.3))

    assert time.monotonic() - started < 4.5  # the stall lasts 6 s
    assert isinstance(outcome.error, StreamTimeoutError)
    assert outcome.error.timeout == "idle"
    assert_partial_holds_exactly_what_was_streamed(outcome.error)
    assert outcome.error.partial is not None and outcome.error.partial.open_item is not None
    assert outcome.error.partial.open_item["text"] == outcome.streamed_text  # type: ignore[typeddict-item]
    assert 0 < len(outcome.streamed_text) < len(LONG_TEXT)
    assert outcome.result is outcome.error.partial
    assert len(emu.requests) == 1  # events had reached the caller: never retried


@each_protocol
def test_a_stream_slower_than_the_attempt_timeout_ends_with_an_attempt_timeout(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(long_reply(delay=0.1))  # 36 frames or more: 3.5 s or more in all
    started = time.monotonic()
    outcome = drive.stream_on(protocol, timeouts=Timeouts(attempt=0.5, idle=5))

    assert 0.5 <= time.monotonic() - started < 2.5  # the whole body takes 3.5 s or more
    assert isinstance(outcome.error, StreamTimeoutError)
    assert outcome.error.timeout == "attempt"
    assert_partial_holds_exactly_what_was_streamed(outcome.error)
    assert len(emu.requests) == 1


@each_protocol
def test_a_disconnect_mid_stream_is_an_incomplete_stream_with_the_partial(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    # half the body: inside a frame (for Bedrock, inside a binary message)
    emu.queue(long_reply(disconnect_after_bytes=len(long_body(protocol)) // 2 + 3))
    outcome = drive.stream_on(protocol)

    assert isinstance(outcome.error, IncompleteStreamError)
    assert not isinstance(outcome.error, StreamTimeoutError)
    assert "connection broke" in str(outcome.error)
    assert_partial_holds_exactly_what_was_streamed(outcome.error)
    assert outcome.error.partial is not None and outcome.error.partial.open_item is not None
    assert outcome.error.partial.open_item["text"] == outcome.streamed_text  # type: ignore[typeddict-item]
    assert len(emu.requests) == 1


@each_protocol
def test_a_disconnect_before_the_first_event_is_retried(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(long_reply(disconnect_after_bytes=20), Reply.turn(Turn.text("second try")))
    outcome = drive.stream_on(protocol)

    assert outcome.error is None
    assert outcome.streamed_text == "second try"
    assert len(emu.requests) == 2


@each_protocol
def test_leaving_the_stream_early_closes_the_connection_and_keeps_the_partial(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(long_reply(delay=0.05))
    outcome = drive.stream_on(protocol, take=3)

    assert outcome.error is None and len(outcome.events) == 3
    assert outcome.result is not None and outcome.result.status == "cancelled"
    assert outcome.result.open_item is not None
    assert outcome.result.open_item["text"] == outcome.streamed_text  # type: ignore[typeddict-item]
    (request,) = emu.wait_for_requests(1, timeout=2, finished=True)
    assert request.client_closed_early
    # the whole body takes 2 s or more: the server saw the close long before
    assert request.finished_at is not None and request.finished_at - request.received_at < 2.0


@each_protocol
def test_leaving_after_the_stop_event_keeps_the_final_result(
    drive: Drive, emu: Emulator, protocol: str
) -> None:
    emu.queue(Reply.turn(Turn.text("short")))
    everything = drive.stream_on(protocol)
    emu.queue(Reply.turn(Turn.text("short")))
    outcome = drive.stream_on(protocol, take=len(everything.events))

    assert outcome.events[-1]["event_type"] == "stop"
    assert outcome.result is not None and outcome.result.status == "final"


def test_breaking_out_of_a_for_loop_closes_the_sync_stream_at_once(emu: Emulator) -> None:
    emu.queue(long_reply(delay=0.05))
    with Client(CLAUDE, api_key=API_KEY, base_url=emu.base_url("anthropic-messages")) as client:
        stream = client.stream(HELLO)
        for _event in stream:
            break
        assert stream.result is not None and stream.result.status == "cancelled"
        (request,) = emu.wait_for_requests(1, timeout=2, finished=True)
    assert request.client_closed_early


def test_cancelling_the_task_closes_the_async_stream_and_keeps_the_partial(
    emu: Emulator,
) -> None:
    emu.queue(long_reply(delay=0.05))
    seen: list[Event] = []

    async def consume(stream: AsyncEventStream) -> None:
        async for event in stream:
            seen.append(event)

    async def run() -> AsyncEventStream:
        async with AsyncClient(
            CLAUDE, api_key=API_KEY, base_url=emu.base_url("anthropic-messages")
        ) as client:
            stream = client.stream(HELLO)
            task = asyncio.create_task(consume(stream))
            while not seen:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await emu.wait_for_requests_async(1, timeout=2, finished=True)
            return stream

    stream = asyncio.run(run())
    assert stream.result is not None and stream.result.status == "cancelled"
    assert emu.requests[0].client_closed_early


def test_aclose_after_a_break_closes_the_async_stream(emu: Emulator) -> None:
    emu.queue(long_reply(delay=0.05))

    async def run() -> str:
        async with AsyncClient(
            CLAUDE, api_key=API_KEY, base_url=emu.base_url("anthropic-messages")
        ) as client:
            stream = client.stream(HELLO)
            async for _event in stream:
                break
            await stream.aclose()
            assert stream.result is not None
            return stream.result.status

    assert asyncio.run(run()) == "cancelled"
    (request,) = emu.wait_for_requests(1, timeout=2, finished=True)
    assert request.client_closed_early


def test_a_stream_closed_before_it_is_read_sends_nothing(drive: Drive, emu: Emulator) -> None:
    client = drive.make_client(CLAUDE)
    if isinstance(client, Client):
        with client, client.stream(HELLO) as stream:
            pass
        result = stream.result
    else:

        async def run(client: AsyncClient) -> AsyncEventStream:
            async with client, client.stream(HELLO) as stream:
                return stream

        result = asyncio.run(run(client)).result
    assert result is not None and result.status == "cancelled"
    assert emu.requests == []


def test_cancelling_during_a_backoff_sends_no_further_attempt(emu: Emulator) -> None:
    emu.queue(Reply.status(503), Reply.turn(Turn.text("never fetched")))
    backing_off = asyncio.Event()

    async def sleep(seconds: float) -> None:
        backing_off.set()
        await asyncio.sleep(60)

    async def run() -> AsyncEventStream:
        async with AsyncClient(
            CLAUDE, api_key=API_KEY, base_url=emu.base_url("anthropic-messages"), sleep=sleep
        ) as client:
            stream = client.stream(HELLO)
            task = asyncio.create_task(anext(stream))
            await backing_off.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return stream

    stream = asyncio.run(run())
    assert isinstance(stream.result, PartialResponse)
    assert (stream.result.status, stream.result.reason) == ("cancelled", "cancelled by the caller")
    assert len(emu.requests) == 1
