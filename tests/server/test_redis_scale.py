"""The Redis store at scale (server/stores/redis.py, redis_io.py), against a real redis-server of
each test's own: a thousand streams written and read at once through one store with a bounded
number of Redis connections, read or resumed on a second store (another process's), and
`append_many`: a batch stored at once, or not at all.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis

from modelstream.server.stores import Entry, StoreFullError, StreamTooLongError
from modelstream.server.stores.redis import RedisStore
from modelstream.server.stores.redis_io import Follower
from support.redis_server import RedisProcess, ReplyDroppingProxy
from support.store_contract import read_all, run

STREAMS = 1000
EVENTS = 24  # per stream


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A redis-server only this test talks to, so its client count is this test's."""
    server = RedisProcess(tmp_path).start()
    yield server
    server.stop()


class ClientCounter:
    """Samples Redis's `connected_clients` every few ms from a thread (on a connection of its
    own, not counted) and keeps the highest."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> ClientCounter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _sample(self) -> None:
        with redis.Redis.from_url(self.url) as client:
            while not self._stop.is_set():
                connected = int(client.info("clients")["connected_clients"]) - 1
                self.peak = max(self.peak, connected)
                self._stop.wait(0.005)


def event(rid: str, seq: int) -> bytes:
    return b'{"stream":"%s","seq":%d,"text":"%s"}' % (rid.encode(), seq, b"x" * (seq % 50))


async def produce(store: RedisStore, rid: str, rng: random.Random) -> None:
    """The events of one stream in batches of 1 to 6 (as a relay coalesces what is ready),
    at a model's uneven pace, then its end."""
    seq = 1
    while seq <= EVENTS:
        size = min(rng.randint(1, 6), EVENTS - seq + 1)
        if size == 1:
            await store.append(rid, seq, event(rid, seq))
        else:
            await store.append_many(rid, seq, [event(rid, s) for s in range(seq, seq + size)])
        seq += size
        await asyncio.sleep(rng.uniform(0, 0.02))
    await store.finish(rid)


def test_a_thousand_streams_through_one_store_use_a_bounded_number_of_connections(
    own_redis: RedisProcess, prefix: str
) -> None:
    """1,000 streams, each with a live reader on the store that writes it and another on a
    second store (a second process) that starts at a random point, all at once: every reader
    gets exactly its stream's entries, and neither store opens more than a few connections."""

    async def body() -> int:
        here = RedisStore.from_url(own_redis.url, prefix=prefix, max_events_per_stream=1000)
        there = RedisStore.from_url(own_redis.url, prefix=prefix)
        rng = random.Random(9)
        rids = [f"r{n}" for n in range(STREAMS)]
        await asyncio.gather(*(here.create(rid) for rid in rids))
        starts = {rid: rng.randint(0, EVENTS) for rid in rids}
        readers_here = [asyncio.create_task(read_all(here, rid)) for rid in rids]
        readers_there = [asyncio.create_task(read_all(there, rid, starts[rid])) for rid in rids]
        await asyncio.sleep(0.2)  # every reader attached and waiting
        attached = await asyncio.gather(*(here.unread_seconds(rid) for rid in rids))
        assert attached == [0.0] * STREAMS
        await asyncio.gather(*(produce(here, rid, random.Random(rid)) for rid in rids))
        got_here = await asyncio.wait_for(asyncio.gather(*readers_here), 60)
        got_there = await asyncio.wait_for(asyncio.gather(*readers_there), 60)
        for rid, entries, late in zip(rids, got_here, got_there, strict=True):
            expected = [(seq, event(rid, seq)) for seq in range(1, EVENTS + 1)]
            assert entries == expected
            assert late == expected[starts[rid] :]
        await here.aclose()
        await there.aclose()
        return sum(len(entries) for entries in got_here + got_there)

    with ClientCounter(own_redis.url) as counter:
        read = run(body)

    assert read >= STREAMS * EVENTS
    # per store: one for the batched ops, one for the XREAD loop, and one for a command sent
    # while both are busy (a wake); before, each waiting reader held a connection of its own
    assert 2 <= counter.peak <= 6, f"{counter.peak} Redis connections for two stores"


def test_a_second_store_resumes_any_stream_while_it_is_written(
    own_redis: RedisProcess, prefix: str
) -> None:
    """Resumes from every point of a running stream, on another store, while the first one
    writes it: each gets the entries after its point, none lost, none twice."""

    async def body() -> None:
        here = RedisStore.from_url(own_redis.url, prefix=prefix)
        there = RedisStore.from_url(own_redis.url, prefix=prefix)
        rids = [f"s{n}" for n in range(50)]
        await asyncio.gather(*(here.create(rid) for rid in rids))
        resumes = [
            asyncio.create_task(read_all(there, rid, after))
            for rid in rids
            for after in range(0, EVENTS + 2, 5)
        ]
        await asyncio.gather(*(produce(here, rid, random.Random(rid)) for rid in rids))
        results = await asyncio.wait_for(asyncio.gather(*resumes), 30)
        index = 0
        for rid in rids:
            for after in range(0, EVENTS + 2, 5):
                expected = [(seq, event(rid, seq)) for seq in range(after + 1, EVENTS + 1)]
                assert results[index] == expected, (rid, after)
                index += 1
        await here.aclose()
        await there.aclose()

    run(body)


# --- append_many ------------------------------------------------------------------------------


def test_a_batch_is_stored_whole_and_read_as_single_appends_are(
    redis_url: str, prefix: str
) -> None:
    async def body() -> list[Entry]:
        store = RedisStore.from_url(redis_url, prefix=prefix)
        await store.create("r1")
        await store.append("r1", 1, b"one")
        await store.append_many("r1", 2, [b"two", b"three", b"four"])
        await store.append_many("r1", 5, [])  # nothing to store
        await store.append("r1", 5, b"five")
        with pytest.raises(ValueError, match="expected seq 6, got 7"):
            await store.append_many("r1", 7, [b"x", b"y"])
        await store.finish("r1")
        with pytest.raises(ValueError, match="finished"):
            await store.append_many("r1", 6, [b"x", b"y"])
        entries = await read_all(store, "r1")
        await store.aclose()
        return entries

    assert run(body) == [(1, b"one"), (2, b"two"), (3, b"three"), (4, b"four"), (5, b"five")]


def test_a_batch_that_would_pass_a_cap_stores_nothing(redis_url: str, prefix: str) -> None:
    async def body() -> None:
        store = RedisStore.from_url(
            redis_url, prefix=prefix, max_events_per_stream=4, max_bytes=4000
        )
        await store.create("r1")
        await store.append_many("r1", 1, [b"a", b"b"])
        with pytest.raises(StreamTooLongError, match="limit of 4 events"):
            await store.append_many("r1", 3, [b"c", b"d", b"e"])
        await store.append_many("r1", 3, [b"c", b"d"])  # exactly up to the cap
        await store.create("r2")
        with pytest.raises(StoreFullError):
            await store.append_many("r2", 1, [b"x" * 1000] * 4)
        assert await store.finish("r2", b"terminal") == 1  # none of the four was stored
        assert await store.finish("r1") == 4
        assert [seq for seq, _ in await read_all(store, "r1")] == [1, 2, 3, 4]
        await store.aclose()

    run(body)


def test_a_batch_whose_reply_was_lost_is_sent_again_and_stored_once(
    redis_url: str, prefix: str
) -> None:
    async def body() -> tuple[int, list[Entry]]:
        proxy = ReplyDroppingProxy(redis_url, marker=b"the reply of this batch is lost")
        store = RedisStore.from_url(await proxy.start(), prefix=prefix)
        await store.create("r1")
        await store.append("r1", 1, b"before")
        await store.append_many("r1", 2, [b"x", b"the reply of this batch is lost"])
        with pytest.raises(ValueError, match="expected seq 4, got 2"):
            await store.append_many("r1", 2, [b"x", b"another batch"])  # not a replay
        await store.append("r1", 4, b"after")
        await store.finish("r1")
        entries = await read_all(store, "r1")
        await store.aclose()
        await proxy.aclose()
        return proxy.dropped, entries

    dropped, entries = run(body)
    assert dropped == 1
    assert entries == [
        (1, b"before"),
        (2, b"x"),
        (3, b"the reply of this batch is lost"),
        (4, b"after"),
    ]


def test_ops_of_many_streams_in_one_tick_go_to_redis_as_one_command(
    own_redis: RedisProcess, prefix: str
) -> None:
    """Appends and heartbeats of 200 streams issued together cost Redis a handful of commands,
    not one (or more) each."""

    async def body() -> None:
        store = RedisStore.from_url(own_redis.url, prefix=prefix)
        rids = [f"b{n}" for n in range(200)]
        await asyncio.gather(*(store.create(rid) for rid in rids))
        with redis.Redis.from_url(own_redis.url) as probe:
            probe.config_resetstat()
            await asyncio.gather(*(store.append(rid, 1, b"x") for rid in rids))
            await asyncio.gather(*(store.heartbeat(rid) for rid in rids))
            stats = probe.info("commandstats")
        # one script call per tick: appends, then heartbeats (each running 200 ops in Redis)
        assert stats["cmdstat_evalsha"]["calls"] == 2, stats
        await store.aclose()

    run(body)


def test_a_reader_that_joins_while_the_shared_read_waits_gets_its_entries_at_once(
    redis_url: str, prefix: str
) -> None:
    """The store's one XREAD waits up to a second on the streams of its readers; a reader of
    another stream joining meanwhile wakes it, rather than waiting for that second to pass."""

    async def body() -> list[float]:
        store = RedisStore.from_url(redis_url, prefix=prefix)
        await store.create("idle")
        idle = asyncio.create_task(read_all(store, "idle"))
        took = []
        for n in range(5):
            await asyncio.sleep(0.2)  # the shared XREAD now waits on "idle" alone
            rid = f"new{n}"
            await store.create(rid)
            await store.append(rid, 1, b"waiting")
            started = asyncio.get_running_loop().time()
            reader = store.read(rid, 0, idle_timeout=5)
            assert await anext(reader) == [(1, b"waiting")]
            took.append(asyncio.get_running_loop().time() - started)
            await reader.aclose()
        await store.finish("idle")
        await asyncio.wait_for(idle, 5)
        await store.aclose()
        return took

    took = run(body)
    assert max(took) < 0.5, took  # not the second an XREAD waits


@pytest.mark.parametrize("protocol", [2, 3])
def test_the_store_works_over_either_redis_protocol(
    redis_url: str, prefix: str, protocol: int
) -> None:
    """RESP3 (`?protocol=3` in the URL) shapes XREAD's reply differently."""

    async def body() -> list[Entry]:
        store = RedisStore.from_url(f"{redis_url}?protocol={protocol}", prefix=prefix)
        await store.create("r1", "owner-hash")
        reader = asyncio.create_task(read_all(store, "r1"))
        await store.append_many("r1", 1, [b"one", b"two"])
        await asyncio.sleep(0.05)
        await store.append("r1", 3, b"three")
        assert await store.owner("r1") == "owner-hash"
        assert await store.heartbeat("r1") == 0.0
        await store.finish("r1")
        entries = await asyncio.wait_for(reader, 5)
        await store.aclose()
        return entries

    assert run(body) == [(1, b"one"), (2, b"two"), (3, b"three")]


def test_a_reader_joining_behind_another_on_the_same_stream_misses_nothing(
    redis_url: str, prefix: str
) -> None:
    """The shared XREAD reads a stream after the last entry its reader has; a second reader of
    that stream joins from the beginning, and before the XREAD is sent again (no wake here, so
    it waits for the next entry) entry 51 arrives. The second reader must get 1 to 51, never
    51 alone."""

    async def body() -> tuple[list[bytes], list[bytes]]:
        client = aioredis.Redis.from_url(redis_url)
        key = f"{prefix}events".encode()
        for seq in range(1, 51):
            await client.xadd(key, {b"d": b"%d" % seq}, id=f"{seq}-0")
        follower = Follower(
            client,
            f"{prefix}wake",
            lambda: None,  # never woken: only entry 51 ends the XREAD in flight
            lambda exc: exc,
            block_seconds=2,
            count=1024,
        )
        ahead = follower.subscribe(key, (50, 0))
        await asyncio.sleep(0.2)  # its XREAD waits after entry 50
        behind = follower.subscribe(key, (0, 0))
        await client.xadd(key, {b"d": b"51"}, id="51-0")
        got: dict[str, list[bytes]] = {"ahead": [], "behind": []}
        for name, subscription in (("ahead", ahead), ("behind", behind)):
            while len(got[name]) < (1 if name == "ahead" else 51):
                await subscription.wait(5)
                taken = follower.take(subscription, 1024)
                assert taken, f"{name} got nothing"
                got[name] += [entry_id for entry_id, _ in taken]
        await follower.aclose()
        await client.aclose()
        return got["ahead"], got["behind"]

    ahead, behind = asyncio.run(body())
    assert ahead == [b"51-0"]
    assert behind == [b"%d-0" % seq for seq in range(1, 52)]
