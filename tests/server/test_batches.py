"""The relay hands events to the store in batches (`StreamStore.append_many`) and its readers
write each batch at once, yet the wire keeps one SSE frame and one id per event, byte for byte
what one frame per event was; caps end a stream at the same event as before; the metrics count
events, not batches; and an upstream pool never grows past `POOL_SIZE` connections."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

import httpx
import orjson
import pytest

from modelstream.server import BackgroundServer, create_app, settings_from_mapping
from modelstream.server import relay as streams
from modelstream.server.stores import (
    MemoryStore,
    StoreFullError,
    StreamTooLongError,
    UnknownStreamError,
)
from modelstream.testing import Emulator, Reply, Turn
from support import REPO
from support.server import AUTH, Serve, config_for, post_stream, stream_body
from support.store_contract import read_all, run

LONG_TEXT = "many small pieces of text " * 20


class CountingStore(MemoryStore):
    """The memory store, noting the size of each batch it was handed."""

    def __init__(self, **options: int) -> None:
        super().__init__(**options)
        self.batches: list[int] = []

    async def append_many(self, response_id: str, first_seq: int, entries: Sequence[bytes]) -> None:
        self.batches.append(len(entries))
        await super().append_many(response_id, first_seq, entries)


# --- the store: append_many ------------------------------------------------------------------


def test_append_many_stores_consecutive_entries_like_appends_one_by_one() -> None:
    async def body() -> None:
        store = MemoryStore()
        await store.create("r")
        await store.append_many("r", 1, [b"a", b"b"])
        await store.append("r", 3, b"c")
        await store.append_many("r", 4, [b"d"])
        await store.append_many("r", 5, [])  # nothing to store: not an error
        assert await store.finish("r") == 4
        assert await read_all(store, "r") == [(1, b"a"), (2, b"b"), (3, b"c"), (4, b"d")]

    run(body)


def test_append_many_refuses_a_gap_a_repeat_a_finished_or_an_unknown_stream() -> None:
    async def body() -> None:
        store = MemoryStore()
        await store.create("r")
        await store.append_many("r", 1, [b"a", b"b"])
        with pytest.raises(ValueError, match="expected seq 3, got 2"):
            await store.append_many("r", 2, [b"x"])
        with pytest.raises(ValueError, match="expected seq 3, got 4"):
            await store.append_many("r", 4, [b"x"])
        await store.finish("r")
        with pytest.raises(ValueError, match="finished"):
            await store.append_many("r", 3, [b"x"])
        with pytest.raises(UnknownStreamError):
            await store.append_many("nope", 1, [b"x"])

    run(body)


def test_append_many_is_all_or_nothing_at_the_event_cap() -> None:
    async def body() -> None:
        store = MemoryStore(max_events_per_stream=3)
        await store.create("r")
        await store.append_many("r", 1, [b"a", b"b"])
        size = store.size
        with pytest.raises(StreamTooLongError, match="limit of 3 events"):
            await store.append_many("r", 3, [b"c", b"d"])
        assert store.size == size
        await store.append_many("r", 3, [b"c"])  # what fits still goes in
        await store.finish("r")
        assert [seq for seq, _ in await read_all(store, "r")] == [1, 2, 3]

    run(body)


def test_append_many_is_all_or_nothing_at_the_byte_cap() -> None:
    async def body() -> None:
        store = MemoryStore(max_bytes=64 * 16 + 16 * 100)  # room for a few 100-byte entries
        await store.create("r")
        entry = b"x" * 100
        with pytest.raises(StoreFullError):
            await store.append_many("r", 1, [entry] * 20)
        assert store.size == 0
        await store.append_many("r", 1, [entry] * 2)
        await store.finish("r")
        assert len(await read_all(store, "r")) == 2

    run(body)


def test_a_waiting_reader_gets_a_batch_in_one_wake_up() -> None:
    async def body() -> None:
        store = MemoryStore()
        await store.create("r")
        reader = store.read("r", 0, idle_timeout=5)
        first = asyncio.ensure_future(anext(reader))
        await asyncio.sleep(0.01)  # the reader is waiting
        await store.append_many("r", 1, [b"a", b"b", b"c"])
        assert await first == [(1, b"a"), (2, b"b"), (3, b"c")]
        await reader.aclose()

    run(body)


def test_an_idle_reader_gets_keep_alives_and_then_the_entries() -> None:
    async def body() -> None:
        store = MemoryStore()
        await store.create("r")
        batches: list[list[tuple[int, bytes]]] = []

        async def read() -> None:
            async for batch in store.read("r", 0, idle_timeout=0.05):
                batches.append(batch)

        started = time.monotonic()
        task = asyncio.ensure_future(read())
        await asyncio.sleep(0.18)
        silence = time.monotonic() - started
        await store.append_many("r", 1, [b"a"])
        await asyncio.sleep(0.01)
        await store.finish("r")
        await task
        # one per 50 ms of silence (fewer when timers run late on a busy machine), never more
        assert 1 <= batches.count([]) <= silence / 0.05
        assert batches[-1] == [(1, b"a")] and all(b == [] for b in batches[:-1])
        assert await store.unread_seconds("r") is not None  # the reader left cleanly

    run(body)


# --- the relay, through HTTP -----------------------------------------------------------------


def test_events_that_arrive_together_are_one_batch_yet_one_frame_and_id_each(
    serve: Serve, emu: Emulator
) -> None:
    # the whole upstream body in one HTTP chunk: every event is ready at once
    emu.queue(Reply.turn(Turn.text(LONG_TEXT), fragment_size=4, chunk_size=1 << 20))
    store = CountingStore()
    server = serve(store=store)
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("chat"))

    events = len(stream.events)
    assert stream.done and stream.errors == [] and events > 100
    assert sum(store.batches) == events
    assert max(store.batches) > 1 and len(store.batches) < events  # batched, not one by one
    # byte for byte the frames of one event each: `id: <rid>:<n>`, `data: <event JSON>`
    rid = stream.response_id
    assert rid is not None
    expected = b"".join(
        b"id: %s:%d\ndata: %s\n\n" % (rid.encode(), n, orjson.dumps(orjson.loads(data)))
        for n, data in enumerate(stream.data[:-1], start=1)
    )
    assert stream.raw == expected + b"data: [DONE]\n\n"


class SlowStore(CountingStore):
    """A store with a round trip per call, as a networked one has."""

    async def append_many(self, response_id: str, first_seq: int, entries: Sequence[bytes]) -> None:
        await asyncio.sleep(0.02)
        await super().append_many(response_id, first_seq, entries)


def test_a_slow_store_gets_bounded_batches_and_every_event_in_order(
    serve: Serve, emu: Emulator
) -> None:
    text = "".join(chr(ord("a") + n % 26) for n in range(2 * streams.MAX_PENDING))
    emu.queue(Reply.turn(Turn.text(text), fragment_size=1, chunk_size=1 << 22))
    store = SlowStore()
    server = serve(store=store)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        stream = post_stream(http, stream_body("chat"))

    assert stream.done and stream.errors == []
    assert stream.seqs == list(range(1, len(stream.events) + 1))
    deltas = [e["content_items"][0] for e in stream.events if e["event_type"] == "delta"]
    assert "".join(d["text"] for d in deltas if d["type"] == "text.delta") == text
    assert sum(store.batches) == len(stream.events)
    assert 1 < max(store.batches) <= streams.MAX_PENDING  # the pump waited for the store


def test_the_event_cap_ends_a_batch_at_the_same_event_as_one_by_one(
    serve: Serve, emu: Emulator
) -> None:
    emu.queue(Reply.turn(Turn.text(LONG_TEXT), fragment_size=2, chunk_size=1 << 20))
    server = serve(limits={"max_events_per_stream": 5})
    with httpx.Client(base_url=server.url) as http:
        stream = post_stream(http, stream_body("chat"))

    assert len(stream.events) == 5
    (error,) = stream.errors
    assert error["type"] == "StreamTooLongError" and error["limit"] == 5
    assert stream.seqs == [1, 2, 3, 4, 5, 6] and stream.done


def test_a_slow_reader_and_a_fast_one_each_get_every_event_once(
    serve: Serve, emu: Emulator
) -> None:
    emu.queue(Reply.turn(Turn.text(LONG_TEXT), fragment_size=3, delay=0.002))
    server = serve()
    body = stream_body("chat")
    with (
        httpx.Client(base_url=server.url, timeout=30) as http,
        http.stream("POST", "/v1/stream", json=body, headers=AUTH) as first,
    ):
        rid = first.headers["x-response-id"]
        fast = http.get(f"/v1/streams/{rid}", params={"after": 0}, headers=AUTH).content
        slow = b""
        for chunk in first.iter_raw(256):  # behind the producer: several events per wake-up
            slow += chunk
            time.sleep(0.003)

    assert slow == fast
    ids = [line for line in slow.split(b"\n") if line.startswith(b"id: ")]
    assert ids == [b"id: %s:%d" % (rid.encode(), n) for n in range(1, len(ids) + 1)]
    assert len(ids) > 100 and slow.endswith(b"data: [DONE]\n\n")


def test_metrics_count_every_event_of_every_batch(serve: Serve, emu: Emulator) -> None:
    emu.queue(
        Reply.turn(Turn.text(LONG_TEXT), fragment_size=4, chunk_size=1 << 20),
        Reply.turn(Turn.text(LONG_TEXT), fragment_size=5, delay=0.001),
    )
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        counts = [len(post_stream(http, stream_body("chat")).events) for _ in range(2)]
        deadline = time.monotonic() + 5
        while "modelstream_server_streams_in_flight 0\n" not in (text := http.get("/metrics").text):
            assert time.monotonic() < deadline
            time.sleep(0.01)

    assert f'modelstream_server_events_total{{model="chat"}} {sum(counts)}\n' in text


class SlowCreateStore(MemoryStore):
    """The memory store, each new stream registered after a wait (a store across a network,
    like Redis): the streams that start meanwhile run their own starts."""

    async def create(self, response_id: str, owner: str = "") -> None:
        await asyncio.sleep(0.05)
        await super().create(response_id, owner)


@pytest.mark.parametrize("store", [MemoryStore, SlowCreateStore])
def test_concurrent_streams_past_one_pool_get_a_second_pool(
    serve: Serve, emu: Emulator, store: type[MemoryStore]
) -> None:
    count = streams.POOL_SIZE + 8
    emu.queue(*[Reply.turn(Turn.text("a few words " * 10), fragment_size=4, delay=0.01)] * count)
    serve()  # only for the keys in the environment: this test keeps a handle on its app
    app = create_app(settings_from_mapping(config_for(emu), os.environ), store=store())

    async def one(http: httpx.AsyncClient) -> list[str]:
        async with http.stream("POST", "/v1/stream", json=stream_body("chat"), headers=AUTH) as r:
            assert r.status_code == 200
            return [line async for line in r.aiter_lines() if line.startswith("data: ")]

    async def body(url: str) -> list[list[str]]:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            return await asyncio.gather(*(one(http) for _ in range(count)))

    with BackgroundServer(app) as server:
        results = asyncio.run(body(server.url))
        shards = list(app.state.relay._shards["chat"])
        deadline = time.monotonic() + 5  # a producer ends just after its reader saw [DONE]
        while any(shard.streams for shard in shards) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert all(lines[-1] == "data: [DONE]" and len(lines) > 10 for lines in results)
    assert not any('"error"' in line for lines in results for line in lines)
    assert len(shards) == 2 and [shard.streams for shard in shards] == [0, 0]


# --- the load benchmark ----------------------------------------------------------------------


def run_load_benchmark(*args: str) -> str:
    """bench/bench_load.py with `args`, which must exit 0; its output."""
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_load.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO / "bench")},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_load_benchmark_runs_quickly_and_reports_each_round() -> None:
    output = run_load_benchmark("--quick", "--streams", "5", "--processes", "1,2")
    rows = [line.split() for line in output.splitlines() if line.startswith("memory ")]
    # per row: processes, streams, events (20 chunks: 20 deltas, done, stop)
    assert [row[1:4] for row in rows] == [["1", "5", "110"], ["2", "5", "110"]]
    assert "in-process decode" in output
    # the floor: the byte-for-byte relay's CPU per event, a number in every row
    floors = [float(row[row.index("→") + 3]) for row in rows]
    assert all(0 < floor < 10_000 for floor in floors), floors


def test_the_load_benchmark_compares_two_trees_side_by_side() -> None:
    output = run_load_benchmark(
        *("--quick", "--streams", "6", "--no-direct", "--no-floor", "--compare", str(REPO / "src"))
    )
    (line,) = [line for line in output.splitlines() if "this / other" in line]
    here, there = (float(part.split()[-1]) for part in line.split(", ")[:2])
    assert here > 0 and there > 0
    assert float(line.split()[-1]) == pytest.approx(here / there, abs=0.01)


class AppendLog(MemoryStore):
    """The memory store, noting each batch's stream and size, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, int]] = []

    async def append_many(self, response_id: str, first_seq: int, entries: Sequence[bytes]) -> None:
        self.log.append((response_id, len(entries)))
        await super().append_many(response_id, first_seq, entries)


def test_while_a_stream_waits_for_its_first_event_a_bulk_stream_yields_after_each_event(
    serve: Serve, emu: Emulator
) -> None:
    """A first event must not wait behind another stream's bulk (a fast upstream delivers a
    whole answer in one read): while a stream is starting, every other producer lets the loop
    run after each event, so its events reach the store one by one, not as one batch."""
    store = AppendLog()
    server = serve(store=store)
    emu.queue(
        Reply.turn(Turn.text("late answer"), delay_first_byte=1.5),
        Reply.turn(Turn.text(LONG_TEXT), fragment_size=2),
    )
    with httpx.Client(base_url=server.url, timeout=10) as http:
        first_ids: list[str | None] = []

        def late() -> None:
            first_ids.append(post_stream(http, stream_body("anthropic")).response_id)

        waiting = threading.Thread(target=late)
        waiting.start()
        emu.wait_for_requests(1)  # the late stream is starting: its upstream has not answered
        bulk = post_stream(http, stream_body("anthropic"))
        waiting.join(10)

    bulk_batches = [size for rid, size in store.log if rid == bulk.response_id]
    assert sum(bulk_batches) == len(bulk.events) > 100
    assert max(bulk_batches) <= 2  # stored event by event while the other stream started
    late_batches = [size for rid, size in store.log if rid == first_ids[0]]
    assert sum(late_batches) >= 3  # the late stream was served too
