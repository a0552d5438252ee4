"""What a stream costs the caller's process, counted: reading is pulled, so a slow consumer of a
100 MB body holds only a little of it at a time; and a stream stopped mid-way (task cancelled,
`aclose()`, leaving `with`, `break`, `close()`) leaves no task and no open connection behind.

Memory is the peak RSS (VmHWM) of a child process that consumes the stream (the emulator that
sends it runs here, outside what is measured). Connections are the sockets this process holds
open to the emulator's port. Both are read from Linux's /proc."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modelstream.client import AsyncClient, Client
from modelstream.testing import Emulator, Reply, Turn, render
from modelstream.testing.replies import split_frames
from modelstream.types import Event
from support.client import API_KEY, HELLO, MODELS, STREAMING

MIB = 1 << 20
needs_proc = pytest.mark.skipif(
    not os.path.exists("/proc/net/tcp"), reason="memory and sockets are read from Linux's /proc"
)

# --- pull-based reading: 100 MB through a consumer that sleeps between events ----------------

BODY_BYTES = 100 * MIB
WORDS = 200  # text events, one per word
PAD_LINE = b": " + b"p" * 1021 + b"\n"  # an SSE comment line of 1 KiB: skipped, counted


def padded_body() -> tuple[bytes, int]:
    """An OpenAI Chat stream of 200 one-word text events with ~500 KiB of SSE comment lines
    before each frame: 100 MiB in all, of which the answer is 1 KiB. Returns it and the
    number of comment lines."""
    frames = split_frames(
        render("openai-chat", Turn.text("word " * WORDS), model="m", fragment_size=5)
    )
    lines_per_gap = (BODY_BYTES // len(frames)) // len(PAD_LINE)
    gap = PAD_LINE * lines_per_gap
    return b"".join(gap + frame for frame in frames), lines_per_gap * len(frames)


CONSUMER = """
import asyncio, json, sys, time
from modelstream.client import AsyncClient, Client

mode, base_url, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
hello = [{"role": "user", "content_items": [{"type": "text.done", "text": "hello"}]}]
kwargs = {"model": "deepseek-chat", "api_key": "sk-test", "base_url": base_url}
seen = {}

def rss_mib(field):  # VmRSS now; VmHWM the peak of this process image, not its parent's
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024

def baseline():  # after a warm-up turn: every import done, the connection pool in place
    seen["baseline_mib"] = rss_mib("VmRSS")
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak restarts from here

def report(stream, count):
    result = stream.result
    print(json.dumps({
        **seen,
        "peak_mib": rss_mib("VmHWM"),
        "events": count,
        "status": result.status,
        "text": "".join(i.get("text", "") for i in result.message["content_items"]),
        "skipped": result.metadata.skipped,
    }))

if mode == "sync":
    with Client(**kwargs) as client:
        client.complete(hello)
        baseline()
        with client.stream(hello) as stream:
            count = 0
            for event in stream:
                count += 1
                time.sleep(pause)
    report(stream, count)
else:
    async def main():
        async with AsyncClient(**kwargs) as client:
            await client.complete(hello)
            baseline()
            async with client.stream(hello) as stream:
                count = 0
                async for event in stream:
                    count += 1
                    await asyncio.sleep(pause)
        report(stream, count)
    asyncio.run(main())
"""


@pytest.fixture(scope="module")
def hundred_mib() -> tuple[bytes, int]:
    return padded_body()


@needs_proc
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_consumer_that_sleeps_between_events_holds_little_of_a_100_mb_stream(
    mode: str, hundred_mib: tuple[bytes, int]
) -> None:
    body, comment_lines = hundred_mib
    with Emulator() as emu:
        emu.queue(Reply.turn(Turn.text("warm-up")), Reply.body(body))
        child = subprocess.run(
            [sys.executable, "-c", CONSUMER, mode, emu.base_url("openai-chat"), "0.02"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert child.returncode == 0, child.stderr
        (_, request) = emu.wait_for_requests(2, finished=True)
    outcome = json.loads(child.stdout)

    # the whole body went through: every byte sent, every comment line counted, the turn final
    assert request.bytes_sent == len(body) > BODY_BYTES * 0.99
    assert not request.client_closed_early
    assert outcome["status"] == "final"
    assert outcome["text"] == "word " * WORDS
    assert outcome["skipped"]["sse_comment"] == comment_lines
    # ...yet the consumer's memory grew by a small fraction of it: nothing read ahead
    growth = outcome["peak_mib"] - outcome["baseline_mib"]
    print(f"\n{mode}: peak RSS {outcome['peak_mib']:.1f} MiB, growth {growth:.1f} MiB")
    assert growth < 10, f"the consumer's peak RSS grew by {growth:.1f} MiB over a 100 MiB body"


# --- no task and no connection left after a stream is stopped --------------------------------

LONG_TURN = Turn.text("The quick brown fox jumps over the lazy dog. " * 8)
ROUNDS = 3  # streams stopped one after another on the same client


def long_reply() -> Reply:
    return Reply.turn(LONG_TURN, fragment_size=10, delay=0.05)  # ~3 s: stopped long before


def open_connections(port: int) -> int:
    """Sockets this process holds open to 127.0.0.1:`port` (client sides, not the server's)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[2].rsplit(":", 1)[1], 16) == port:  # the remote end is the emulator
                inodes.add(fields[9])
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed while we looked
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            held += 1
    return held


def other_tasks() -> set[asyncio.Task[Any]]:
    """The unfinished asyncio tasks besides the one asking."""
    current = asyncio.current_task()
    return {task for task in asyncio.all_tasks() if task is not current}


def assert_stopped_and_released(emu: Emulator, rounds: int) -> None:
    records = emu.wait_for_requests(rounds, timeout=5, finished=True)
    assert all(record.client_closed_early for record in records)


async def stop_by_cancelling_the_task(client: AsyncClient, port: int) -> None:
    seen: list[Event] = []

    async def consume() -> None:
        async for event in client.stream(HELLO):
            seen.append(event)

    task = asyncio.create_task(consume())
    while len(seen) < 2:
        await asyncio.sleep(0.01)
    assert open_connections(port) == 1  # the count sees the stream's connection
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def stop_with_aclose(client: AsyncClient, port: int) -> None:
    stream = client.stream(HELLO)
    await anext(stream)
    await anext(stream)
    assert open_connections(port) == 1
    await stream.aclose()
    assert stream.result is not None and stream.result.status == "cancelled"


async def stop_by_leaving_async_with(client: AsyncClient, port: int) -> None:
    async with client.stream(HELLO) as stream:
        async for _ in stream:
            assert open_connections(port) == 1
            break
    assert stream.result is not None and stream.result.status == "cancelled"


async def stop_by_a_timeout(client: AsyncClient, port: int) -> None:
    stream = client.stream(HELLO)
    await anext(stream)
    assert open_connections(port) == 1
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):  # the reply takes ~3 s
            async for _ in stream:
                pass
    assert stream.result is not None and stream.result.status == "cancelled"


ASYNC_STOPS = {
    "task.cancel()": stop_by_cancelling_the_task,
    "aclose()": stop_with_aclose,
    "async with exit": stop_by_leaving_async_with,
    "asyncio.timeout": stop_by_a_timeout,
}


@needs_proc
@pytest.mark.parametrize("protocol", STREAMING)
@pytest.mark.parametrize("how", ASYNC_STOPS)
def test_an_async_stream_stopped_mid_way_leaves_no_task_and_no_connection(
    how: str, protocol: str, emu: Emulator
) -> None:
    stop = ASYNC_STOPS[how]
    port = int(emu.url.rsplit(":", 1)[1])

    async def run() -> None:
        before = other_tasks()
        async with AsyncClient(
            MODELS[protocol],
            client_type=protocol,
            api_key=API_KEY,
            base_url=emu.base_url(protocol),
        ) as client:
            for _ in range(ROUNDS):
                emu.queue(long_reply())
                await stop(client, port)
                assert open_connections(port) == 0  # closed, not kept in the pool
                assert other_tasks() == before
        assert other_tasks() == before

    asyncio.run(run())
    assert_stopped_and_released(emu, ROUNDS)


@needs_proc
def test_an_async_stream_cancelled_while_waiting_for_headers_leaves_nothing(
    emu: Emulator,
) -> None:
    port = int(emu.url.rsplit(":", 1)[1])

    async def run() -> None:
        before = other_tasks()
        async with AsyncClient(
            MODELS["anthropic-messages"],
            api_key=API_KEY,
            base_url=emu.base_url("anthropic-messages"),
        ) as client:
            for served in range(1, ROUNDS + 1):
                emu.queue(Reply.turn(Turn.text("late"), delay_first_byte=5))
                stream = client.stream(HELLO)
                task = asyncio.create_task(anext(stream))
                await emu.wait_for_requests_async(served)
                assert open_connections(port) == 1
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                assert open_connections(port) == 0
                assert other_tasks() == before
                assert stream.result is not None and stream.result.status == "cancelled"

    asyncio.run(run())
    assert_stopped_and_released(emu, ROUNDS)


def stop_by_breaking(client: Client, port: int) -> None:
    stream = client.stream(HELLO)
    for count, _ in enumerate(stream, 1):
        if count == 2:
            assert open_connections(port) == 1
            break
    assert stream.result is not None and stream.result.status == "cancelled"


def stop_with_close(client: Client, port: int) -> None:
    stream = client.stream(HELLO)
    next(stream)
    next(stream)
    assert open_connections(port) == 1
    stream.close()
    assert stream.result is not None and stream.result.status == "cancelled"


def stop_by_leaving_with(client: Client, port: int) -> None:
    with client.stream(HELLO) as stream:
        events: Iterator[Event] = iter(stream)
        next(events)
        assert open_connections(port) == 1
    assert stream.result is not None and stream.result.status == "cancelled"


SYNC_STOPS = {
    "break": stop_by_breaking,
    "close()": stop_with_close,
    "with exit": stop_by_leaving_with,
}


@needs_proc
@pytest.mark.parametrize("protocol", STREAMING)
@pytest.mark.parametrize("how", SYNC_STOPS)
def test_a_sync_stream_stopped_mid_way_leaves_no_connection(
    how: str, protocol: str, emu: Emulator
) -> None:
    stop = SYNC_STOPS[how]
    port = int(emu.url.rsplit(":", 1)[1])
    with Client(
        MODELS[protocol], client_type=protocol, api_key=API_KEY, base_url=emu.base_url(protocol)
    ) as client:
        for _ in range(ROUNDS):
            emu.queue(long_reply())
            stop(client, port)
            assert open_connections(port) == 0  # closed at once, not kept in the pool
    assert_stopped_and_released(emu, ROUNDS)


@needs_proc
def test_a_finished_stream_keeps_one_pooled_connection_and_closing_the_client_frees_it(
    emu: Emulator,
) -> None:
    """The count is no artefact of cancelling: a stream read to its end leaves its connection
    in the pool for the next turn, reused, and closing the client closes it."""
    port = int(emu.url.rsplit(":", 1)[1])
    emu.queue(Reply.turn(Turn.text("short")), Reply.turn(Turn.text("again")))
    with Client(
        MODELS["anthropic-messages"], api_key=API_KEY, base_url=emu.base_url("anthropic-messages")
    ) as client:
        client.complete(HELLO)
        assert open_connections(port) == 1
        client.complete(HELLO)
        assert open_connections(port) == 1
    assert open_connections(port) == 0
