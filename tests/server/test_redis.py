"""The Redis Streams store (server/stores/redis.py) against a real `redis-server`: the store
contract (support/store_contract.py), what only a shared store must do (leases, caps and expiry seen
from several processes, a dead reader or producer), and resumes served by a second server
instance that shares the Redis with the first.

The session's `redis-server` (support/redis_server.py) listens on 127.0.0.1 on a free port, keeps
nothing on disk, and is stopped at the end.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream import SSEDecoder
from modelstream.server.stores import (
    Entry,
    MemoryStore,
    ProducerLostError,
    StoreError,
    StoreFullError,
    UnknownStreamError,
)
from modelstream.server.stores.memory import MAX_BATCH
from modelstream.server.stores.redis import RedisStore, check_reachable, redacted_url
from modelstream.testing import Emulator, Reply
from support import REPO
from support.redis_server import (
    EVERY_WRITE_ON_DISK,
    RedisProcess,
    ReplyDroppingProxy,
    free_port,
)
from support.server import (
    AUTH,
    STORY,
    LiveServer,
    Serve,
    SSEStream,
    first_piece,
    last_event_id,
    paced_story,
    post_stream,
    read_sse,
    resume,
    stream_body,
    without_clock,
)
from support.store_contract import StoreFactory, contract_tests, read_all, run

# Every test of the contract, collected here a second time (server/test_store.py has them too):
# this module's `store_factory` fixture hands them a `RedisStore`.
globals().update(contract_tests())


def redis_factory(url: str, prefix: str) -> StoreFactory:
    def make(max_events_per_stream: int = 100, max_bytes: int = 1 << 20, **options: Any) -> Any:
        return RedisStore.from_url(
            url,
            prefix=prefix,
            max_events_per_stream=max_events_per_stream,
            max_bytes=max_bytes,
            **options,
        )

    return make


@pytest.fixture
def store_factory(redis_url: str, prefix: str) -> StoreFactory:
    """What the imported contract tests ask for: here, a `RedisStore`."""
    return redis_factory(redis_url, prefix)


@pytest.fixture(params=["memory", "redis"])
def any_store(request: pytest.FixtureRequest) -> StoreFactory:
    """The contract tests written in this file run against both stores."""
    if request.param == "memory":
        return lambda max_events_per_stream=100, max_bytes=1 << 20: MemoryStore(
            max_events_per_stream=max_events_per_stream, max_bytes=max_bytes
        )
    return redis_factory(request.getfixturevalue("redis_url"), request.getfixturevalue("prefix"))


# --- more of the contract, for both stores ---------------------------------------------------


def test_an_unknown_stream_is_refused_by_every_method(any_store: StoreFactory) -> None:
    async def body() -> None:
        store = any_store()
        assert not await store.exists("nope")
        assert await store.unread_seconds("nope") is None
        for call in (
            store.append("nope", 1, b"x"),
            store.finish("nope"),
            store.expire("nope", 1),
            read_all(store, "nope"),
        ):
            with pytest.raises(UnknownStreamError, match="no stream 'nope' is stored"):
                await call
        await store.aclose()

    run(body)


def test_a_second_finish_changes_nothing(any_store: StoreFactory) -> None:
    async def body() -> None:
        store = any_store()
        await store.create("r1")
        await store.append("r1", 1, b"one")
        assert await store.finish("r1", b"terminal") == 2
        assert await store.finish("r1", b"again") == 2
        assert await read_all(store, "r1") == [(1, b"one"), (2, b"terminal")]
        await store.aclose()

    run(body)


def test_an_empty_finished_stream_reads_as_nothing(any_store: StoreFactory) -> None:
    async def body() -> None:
        store = any_store()
        await store.create("r1")
        assert await store.finish("r1") == 0
        assert await read_all(store, "r1") == []
        await store.aclose()

    run(body)


def test_a_reader_after_the_end_gets_only_entries_past_its_point(
    any_store: StoreFactory,
) -> None:
    async def body() -> None:
        store = any_store()
        await store.create("r1")
        await store.append("r1", 1, b"one")
        reader = asyncio.create_task(read_all(store, "r1", after=2))
        await asyncio.sleep(0.05)
        for seq in (2, 3):
            await store.append("r1", seq, b"entry %d" % seq)
        await store.finish("r1")
        assert await asyncio.wait_for(reader, 5) == [(3, b"entry 3")]
        assert await read_all(store, "r1", after=9) == []
        await store.aclose()

    run(body)


def test_long_streams_come_back_in_bounded_batches_in_order(any_store: StoreFactory) -> None:
    async def body() -> list[list[Entry]]:
        store = any_store(max_events_per_stream=5000)
        await store.create("r1")
        for seq in range(1, 2501):
            await store.append("r1", seq, b"%d" % seq)
        await store.finish("r1")
        batches = [batch async for batch in store.read("r1", 0, idle_timeout=5)]
        await store.aclose()
        return batches

    batches = run(body)
    assert all(0 < len(batch) <= MAX_BATCH for batch in batches)
    entries = [entry for batch in batches for entry in batch]
    assert entries == [(seq, b"%d" % seq) for seq in range(1, 2501)]


def test_several_readers_each_count_until_the_last_one_leaves(any_store: StoreFactory) -> None:
    async def body() -> None:
        store = any_store()
        await store.create("r1")
        readers = [asyncio.create_task(read_all(store, "r1")) for _ in range(2)]
        await asyncio.sleep(0.05)
        readers[0].cancel()
        await asyncio.gather(readers[0], return_exceptions=True)
        await asyncio.sleep(0.05)
        assert await store.unread_seconds("r1") == 0.0
        readers[1].cancel()
        await asyncio.gather(readers[1], return_exceptions=True)
        await asyncio.sleep(0.05)
        unread = await store.unread_seconds("r1")
        assert unread is not None and 0.03 <= unread < 5
        await store.aclose()

    run(body)


# --- what a store shared by processes must do ------------------------------------------------


def test_a_reader_on_one_instance_counts_as_attached_on_another(
    store_factory: StoreFactory,
) -> None:
    async def body() -> None:
        here, there = store_factory(), store_factory()
        await here.create("r1")
        assert await there.exists("r1")
        reader = asyncio.create_task(read_all(there, "r1"))
        await asyncio.sleep(0.05)
        assert await here.unread_seconds("r1") == 0.0
        await here.append("r1", 1, b"written here")
        await here.finish("r1")
        assert await asyncio.wait_for(reader, 5) == [(1, b"written here")]
        unread = await here.unread_seconds("r1")
        assert unread is not None and unread < 5
        await here.aclose()
        await there.aclose()

    run(body)


def test_a_reader_that_pauses_between_batches_keeps_its_lease(
    store_factory: StoreFactory,
) -> None:
    """The lease is renewed while the iterator is open, not only while it waits in Redis: a
    response stuck writing to a slow client still counts as a reader."""

    async def body() -> None:
        store = store_factory(reader_lease_seconds=1.0)
        observer = store_factory()
        await store.create("r1")
        await store.append("r1", 1, b"x")
        reader = store.read("r1", 0, idle_timeout=5)
        assert await anext(reader) == [(1, b"x")]
        for _ in range(12):  # 3 s: three leases long
            await asyncio.sleep(0.25)
            assert await observer.unread_seconds("r1") == 0.0
        await reader.aclose()
        await asyncio.sleep(0.05)
        assert (await observer.unread_seconds("r1") or 0.0) > 0.0
        await store.aclose()
        await observer.aclose()

    run(body)


CHILD_READER = """
import asyncio, sys
from modelstream.server.stores.redis import RedisStore

async def main():
    url, prefix, rid, lease = sys.argv[1:]
    store = RedisStore.from_url(url, prefix=prefix, reader_lease_seconds=float(lease))
    async for batch in store.read(rid, 0, idle_timeout=60):
        print("read", len(batch), flush=True)

asyncio.run(main())
"""


def test_a_reader_whose_process_died_counts_as_gone_once_its_lease_lapses(
    redis_url: str, prefix: str
) -> None:
    lease = 2.0
    store = RedisStore.from_url(redis_url, prefix=prefix)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(store.create("r1"))
    loop.run_until_complete(store.append("r1", 1, b"x"))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_READER, redis_url, prefix, "r1", str(lease)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "read 1"  # the child's reader is open
        time.sleep(lease)  # its lease has been renewed at least once
        assert loop.run_until_complete(store.unread_seconds("r1")) == 0.0
        child.send_signal(signal.SIGKILL)  # no chance to leave
        child.wait(10)
        killed = time.monotonic()
        assert loop.run_until_complete(store.unread_seconds("r1")) == 0.0  # its lease still runs
        while (unread := loop.run_until_complete(store.unread_seconds("r1"))) == 0.0:
            assert time.monotonic() - killed < lease + 5, "the dead reader's lease never lapsed"
            time.sleep(0.02)
        lapsed_after = time.monotonic() - killed
        loop.run_until_complete(store.aclose())
    finally:
        loop.close()
        child.kill()
        child.communicate()

    assert lapsed_after <= lease + 1.0  # a lease from the last renewal before the kill, no more
    assert unread is not None and unread < 1.0  # from the lapse, not the kill (>= 2/3 lease)


def test_a_running_stream_whose_producer_went_silent_is_forgotten(
    store_factory: StoreFactory,
) -> None:
    async def body() -> None:
        store = store_factory(orphan_seconds=0.3)
        await store.create("r1")
        await store.append("r1", 1, b"x")
        reader = asyncio.create_task(read_all(store, "r1"))
        await asyncio.sleep(0.5)
        assert not await store.exists("r1")
        with pytest.raises(UnknownStreamError):
            await asyncio.wait_for(reader, 5)
        await store.aclose()

    run(body)


def test_a_producer_sending_heartbeats_keeps_its_stream(
    store_factory: StoreFactory,
) -> None:
    async def body() -> None:
        store = store_factory(orphan_seconds=0.5)
        await store.create("r1")
        for _ in range(12):  # 1.2 s, well past orphan_seconds
            await asyncio.sleep(0.1)
            assert await store.heartbeat("r1") is not None
        assert await store.exists("r1")
        await store.finish("r1")
        await store.expire("r1", 60)
        await asyncio.sleep(0.5)  # a finished stream keeps its retention, heartbeat or not
        assert await store.exists("r1")
        await store.aclose()

    run(body)


def test_a_reader_reports_a_producer_whose_lease_lapsed_and_the_stream_can_then_be_ended(
    store_factory: StoreFactory,
) -> None:
    async def body() -> None:
        store = store_factory(producer_lease_seconds=0.3)
        await store.create("r1")
        await store.append("r1", 1, b"before the producer died")
        started = time.monotonic()
        with pytest.raises(ProducerLostError, match="stopped renewing its lease") as lost:
            await asyncio.wait_for(read_all(store, "r1"), 10)
        waited = time.monotonic() - started
        assert 2.0 <= waited < 6  # the lapse, watched for LAPSE_CONFIRM_SECONDS
        assert lost.value.fields()["partial_status"] == "incomplete"
        assert await store.finish_orphaned("r1", b"the error line")
        assert not await store.finish_orphaned("r1", b"a second reader's")  # ended once
        assert await read_all(store, "r1") == [
            (1, b"before the producer died"),
            (2, b"the error line"),
        ]
        await store.aclose()

    run(body)


def test_a_producer_that_keeps_renewing_is_never_taken_as_lost(
    store_factory: StoreFactory,
) -> None:
    async def body() -> None:
        store = store_factory(producer_lease_seconds=0.3)
        await store.create("r1")
        reader = asyncio.create_task(read_all(store, "r1"))
        for _ in range(30):  # 3 s: ten leases, past the confirmation time
            await asyncio.sleep(0.1)
            assert await store.heartbeat("r1") == 0.0
        assert not reader.done()
        assert not await store.finish_orphaned("r1", b"must not be stored")
        await store.append("r1", 1, b"alive")
        await store.finish("r1")
        assert await asyncio.wait_for(reader, 5) == [(1, b"alive")]
        await store.aclose()

    run(body)


def test_the_same_entry_appended_again_is_a_replay_and_a_different_one_a_bug(
    store_factory: StoreFactory,
) -> None:
    """The store's client sends a command again when its connection broke before the reply: the
    same entry again is that replay; a different one under the same seq is still a bug."""

    async def body() -> None:
        store = store_factory()
        await store.create("r1")
        await store.create("r1")  # a replayed create of the empty stream
        await store.append("r1", 1, b"once")
        await store.append("r1", 1, b"once")
        with pytest.raises(ValueError, match="expected seq 2, got 1"):
            await store.append("r1", 1, b"other")
        await store.append("r1", 2, b"twice")
        with pytest.raises(ValueError, match="already exists"):
            await store.create("r1")
        await store.finish("r1")
        assert await read_all(store, "r1") == [(1, b"once"), (2, b"twice")]
        await store.aclose()

    run(body)


def test_an_append_whose_reply_was_lost_is_sent_again_and_stored_once(
    redis_url: str, prefix: str
) -> None:
    async def body() -> tuple[int, list[Entry]]:
        proxy = ReplyDroppingProxy(redis_url, marker=b"the reply of this is lost")
        store = RedisStore.from_url(await proxy.start(), prefix=prefix)
        await store.create("r1")
        await store.append("r1", 1, b"before")
        await store.append("r1", 2, b"the reply of this is lost")  # the client sends it again
        await store.append("r1", 3, b"after")
        await store.finish("r1")
        entries = await read_all(store, "r1")
        await store.aclose()
        await proxy.aclose()
        return proxy.dropped, entries

    dropped, entries = run(body)
    assert dropped == 1
    assert entries == [(1, b"before"), (2, b"the reply of this is lost"), (3, b"after")]


def test_the_byte_cap_covers_all_instances(store_factory: StoreFactory) -> None:
    async def body() -> None:
        here, there = store_factory(max_bytes=2000), store_factory(max_bytes=2000)
        await here.create("a")
        await here.append("a", 1, b"a" * 1900)
        with pytest.raises(StoreFullError):
            await there.create("b")
        await here.aclose()
        await there.aclose()

    run(body)


def test_an_expired_stream_gives_its_bytes_back(store_factory: StoreFactory) -> None:
    async def body() -> int:
        store = store_factory(max_bytes=2000)
        await store.create("old")
        await store.append("old", 1, b"o" * 1500)
        await store.finish("old")
        await store.expire("old", 0.05)
        await asyncio.sleep(0.1)
        await store.create("new")  # sweeps the expired one before checking room
        assert isinstance(store, RedisStore)
        counted = int(await store.client.get(store.prefix + "g:bytes") or 0)
        await store.aclose()
        return counted

    assert run(body) == 0


def test_an_unreachable_redis_is_a_store_error(prefix: str) -> None:
    async def body() -> None:
        store = RedisStore.from_url(f"redis://127.0.0.1:{free_port()}/0", prefix=prefix)
        with pytest.raises(StoreError, match="the Redis store failed: ConnectionError"):
            await store.create("r1")
        with pytest.raises(StoreError):
            await read_all(store, "r1")
        await store.aclose()

    run(body)


def test_a_client_that_decodes_responses_is_refused(redis_url: str) -> None:
    with pytest.raises(ValueError, match="decode_responses=False"):
        RedisStore.from_url(redis_url + "?decode_responses=True")


DOC = (REPO / "docs" / "server-redis.md").read_text()


# the uvicorn workers' app factory is run by server/test_processes.py
EXAMPLES = [
    block
    for block in re.findall(r"```python\n(.*?)```", DOC, flags=re.S)
    if not block.startswith("# serve_workers.py")
]


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_scaling_out_example_runs_as_written(
    example: str,
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    exec(compile(example, "docs/server-redis.md", "exec"), {})
    out = capsys.readouterr().out
    assert re.fullmatch(r"3 events from A, \d+ from B, then \[DONE\]\n", out), out


def test_a_start_up_check_names_an_unreachable_redis_without_its_password(
    redis_url: str,
) -> None:
    check_reachable(redis_url)
    closed = f"redis://:hunter2secret@127.0.0.1:{free_port()}/0"
    with pytest.raises(StoreError, match="cannot reach Redis at redis://:\\*\\*\\*@127") as caught:
        check_reachable(closed, timeout=1)
    assert "hunter2secret" not in str(caught.value)


def test_a_url_is_shown_without_its_password() -> None:
    assert redacted_url("redis://:s3cret@cache:6380/2") == "redis://:***@cache:6380/2"
    assert redacted_url("rediss://app:s3cret@[::1]/0") == "rediss://app:***@[::1]/0"
    assert redacted_url("redis://cache:6379/0") == "redis://cache:6379/0"


# --- two server instances sharing one Redis --------------------------------------------------


def shared_store(redis_url: str, prefix: str, **options: Any) -> RedisStore:
    return RedisStore.from_url(redis_url, prefix=prefix, **options)


@pytest.fixture
def pair(serve: Serve, redis_url: str, prefix: str) -> tuple[LiveServer, LiveServer]:
    """Two server instances on one Redis: a load balancer may send a request to either."""
    return (
        serve(store=shared_store(redis_url, prefix)),
        serve(store=shared_store(redis_url, prefix)),
    )


def joined(pieces: list[SSEStream]) -> SSEStream:
    """The events of several connections, in the order received, without their [DONE]s."""
    out = SSEStream(pieces[0].response_id)
    for piece in pieces:
        pairs = [(i, d) for i, d in zip(piece.ids, piece.data, strict=True) if d != "[DONE]"]
        out.ids += [i for i, _ in pairs]
        out.data += [d for _, d in pairs]
    return out


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    cuts=st.lists(st.integers(1, 4000), max_size=4),
    on_b=st.lists(st.booleans(), min_size=5, max_size=5),
    pauses=st.lists(st.sampled_from([0.0, 0.01, 0.05]), min_size=5, max_size=5),
)
def test_a_stream_started_on_one_instance_and_resumed_on_either_equals_the_uncut_one(
    pair: tuple[LiveServer, LiveServer],
    emu: Emulator,
    cuts: list[int],
    on_b: list[bool],
    pauses: list[float],
) -> None:
    a, b = pair
    with httpx.Client(base_url=a.url) as http_a, httpx.Client(base_url=b.url) as http_b:
        emu.queue(paced_story())
        reference = post_stream(http_a, stream_body())

        emu.queue(paced_story())
        pieces = [first_piece(http_a, cuts[0] if cuts else None)]
        response_id = pieces[0].response_id
        assert response_id is not None
        resumes = [*cuts[1:], None]
        for index, cut in enumerate(resumes):
            if pieces[-1].done:
                break
            time.sleep(pauses[index])
            http = http_b if on_b[index] or index == 0 else http_a  # the first resume is on B
            pieces.append(resume(http, response_id, last_event_id(pieces), cut))
        if not pieces[-1].done:
            pieces.append(resume(http_b, response_id, last_event_id(pieces)))
        replay = resume(http_b, response_id, None)

    whole = joined(pieces)
    assert whole.seqs == list(range(1, len(whole.data) + 1))  # none twice, none lost
    assert whole.data == replay.data[:-1]  # byte for byte what instance A stored
    assert without_clock(whole) == without_clock(reference)
    assert whole.events[-1]["event_type"] == "stop"


def test_a_reader_on_the_other_instance_keeps_the_stream_from_being_abandoned(
    serve: Serve, emu: Emulator, redis_url: str, prefix: str
) -> None:
    """The producer on A sees B's reader through its lease: no cancel after the grace period,
    though nobody reads on A, and the stream outlasts several leases."""
    emu.queue(Reply.turn(STORY, fragment_size=2, delay=0.01))  # ~1.5 s of stream
    overrides = {"resume_grace_seconds": 0.3}
    a = serve(store=shared_store(redis_url, prefix, reader_lease_seconds=0.6), **overrides)
    b = serve(store=shared_store(redis_url, prefix, reader_lease_seconds=0.6), **overrides)
    with httpx.Client(base_url=a.url) as http_a, httpx.Client(base_url=b.url) as http_b:
        first = first_piece(http_a, 200)
        assert first.response_id is not None
        rest = resume(http_b, first.response_id, last_event_id([first]))

    assert rest.done and not rest.errors
    assert rest.events[-1]["event_type"] == "stop"
    (upstream,) = emu.wait_for_requests(1, finished=True)
    assert not upstream.client_closed_early


def test_a_stream_nobody_resumes_on_any_instance_is_cancelled_after_the_grace_period(
    serve: Serve, emu: Emulator, redis_url: str, prefix: str
) -> None:
    emu.queue(Reply.turn(STORY, fragment_size=2, delay=0.02))  # several seconds of stream
    a = serve(store=shared_store(redis_url, prefix), resume_grace_seconds=0.4)
    b = serve(store=shared_store(redis_url, prefix), resume_grace_seconds=0.4)
    with httpx.Client(base_url=a.url) as http_a, httpx.Client(base_url=b.url) as http_b:
        first = first_piece(http_a, 200)
        dropped = time.monotonic()
        (upstream,) = emu.wait_for_requests(1, finished=True, timeout=10)
        waited = upstream.finished_at - dropped if upstream.finished_at else None
        assert first.response_id is not None
        replay = resume(http_b, first.response_id, None)

    assert upstream.client_closed_early
    assert waited is not None and 0.35 <= waited < 2.5
    (error,) = replay.errors
    assert error["type"] == "StreamCancelledError" and error["reason"] == "abandoned"
    assert replay.seqs == list(range(1, len(replay.events) + 2))


def test_a_finished_stream_resumes_on_the_other_instance_until_it_expires(
    serve: Serve, emu: Emulator, redis_url: str, prefix: str
) -> None:
    emu.queue(paced_story())
    a = serve(store=shared_store(redis_url, prefix), retain_seconds=1.0)
    b = serve(store=shared_store(redis_url, prefix), retain_seconds=1.0)
    with httpx.Client(base_url=a.url) as http_a, httpx.Client(base_url=b.url) as http_b:
        whole = post_stream(http_a, stream_body())
        assert whole.response_id is not None
        tail = resume(http_b, whole.response_id, f"{whole.response_id}:3")
        time.sleep(1.5)
        gone = http_b.get(f"/v1/streams/{whole.response_id}", headers=AUTH)

    assert tail.data == whole.data[3:]
    assert gone.status_code == 404 and gone.json()["error"]["type"] == "NotFoundError"


def test_two_readers_on_two_instances_see_the_same_live_stream(
    pair: tuple[LiveServer, LiveServer], emu: Emulator
) -> None:
    a, b = pair
    emu.queue(Reply.turn(STORY, fragment_size=6, delay=0.005))
    seen: dict[str, SSEStream] = {}
    with httpx.Client(base_url=a.url) as http_a, httpx.Client(base_url=b.url) as http_b:
        with http_a.stream("POST", "/v1/stream", json=stream_body(), headers=AUTH) as response:
            response_id = response.headers["x-response-id"]
            other = threading.Thread(
                target=lambda: seen.setdefault("b", resume(http_b, response_id, None))
            )
            other.start()
            on_a = read_sse(response)
        other.join(10)

    assert on_a.done and seen["b"].data == on_a.data


# --- a Redis that crashes and comes back with its data ----------------------------------------


@pytest.fixture
def crashing_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A redis-server of this test's own that writes every change to disk before it answers, so
    that killed and started again it has every event it acknowledged."""
    server = RedisProcess(tmp_path, EVERY_WRITE_ON_DISK).start()
    yield server
    server.stop()


def read_for(http: httpx.Client, path: str, headers: dict[str, str], seconds: float) -> SSEStream:
    """A resume read until [DONE] or for at most `seconds` (keep-alives let it look at the
    clock), whichever comes first."""
    deadline = time.monotonic() + seconds
    decoder, out = SSEDecoder(), SSEStream(None)
    with http.stream("GET", path, headers=headers) as response:
        assert response.status_code == 200, response.read()
        for chunk in response.iter_raw():
            for frame in decoder.feed(chunk):
                out.ids.append(frame.id if frame.data != "[DONE]" else None)
                out.data.append(frame.data)
            if out.done or time.monotonic() > deadline:
                break
    return out


def test_a_stream_whose_producer_lost_redis_mid_stream_ends_with_an_error_line_once_it_is_back(
    serve: Serve, emu: Emulator, crashing_redis: RedisProcess, prefix: str
) -> None:
    """Redis dies while the upstream is sending: the producer cannot store the rest, nor its
    end. Redis comes back with the events it had: a resume gets them, then, instead of
    keep-alives for `orphan_seconds`, the typed error line and [DONE] within seconds."""
    emu.queue(Reply.turn(STORY, fragment_size=2, delay=0.03))  # ~10 s of stream
    store = RedisStore.from_url(crashing_redis.url, prefix=prefix, producer_lease_seconds=2)
    server = serve(store=store, keepalive_seconds=0.5)
    with httpx.Client(base_url=server.url) as http:
        first = first_piece(http, 400)  # the client drops, as a client does during an outage
        assert first.response_id is not None and first.seqs
        crashing_redis.kill()
        (upstream,) = emu.wait_for_requests(1, finished=True, timeout=15)
        assert upstream.client_closed_early  # the producer gave up on the upstream call
        time.sleep(3)  # ...and on storing its end: the store's client retries for ~1.5 s
        crashing_redis.start()  # same port, same data
        back = time.monotonic()
        rest = read_for(
            http,
            f"/v1/streams/{first.response_id}",
            {**AUTH, "last-event-id": f"{first.response_id}:{first.seqs[-1]}"},
            seconds=30,
        )
        took = time.monotonic() - back
        replay = read_for(http, f"/v1/streams/{first.response_id}", AUTH, seconds=10)

    assert rest.done, f"no end after {took:.1f} s, only keep-alives"
    assert took < 10
    (error,) = rest.errors
    assert error["type"] == "ProducerLostError" and error["partial_status"] == "incomplete"
    assert "stopped renewing its lease" in error["message"]
    assert rest.seqs[0] == first.seqs[-1] + 1
    assert first.seqs + rest.seqs == list(range(1, len(first.seqs) + len(rest.seqs) + 1))
    assert replay.data == [*first.data, *rest.data]  # stored for every later reader too


def test_a_producer_outliving_a_redis_restart_keeps_its_stream_going(
    serve: Serve, emu: Emulator, crashing_redis: RedisProcess, prefix: str
) -> None:
    """Redis is away for longer than the producer's lease while the upstream is silent: the
    producer renews as soon as Redis is back, so no reader takes it as lost, and the turn ends
    as the upstream sends it."""
    emu.queue(Reply.turn(STORY, fragment_size=8, stall_after_bytes=(1500, 7.0)))
    store = RedisStore.from_url(crashing_redis.url, prefix=prefix, producer_lease_seconds=1)
    server = serve(store=store, keepalive_seconds=0.5)
    with httpx.Client(base_url=server.url) as http:
        first = first_piece(http, 300)
        assert first.response_id is not None and first.seqs
        time.sleep(1)  # the producer stored what came before the stall: now it only waits
        crashing_redis.kill()
        time.sleep(2.5)  # two leases and more
        crashing_redis.start()
        rest = read_for(
            http,
            f"/v1/streams/{first.response_id}",
            {**AUTH, "last-event-id": f"{first.response_id}:{first.seqs[-1]}"},
            seconds=30,
        )

    assert rest.done and not rest.errors
    assert rest.events[-1]["event_type"] == "stop"
    assert first.seqs + rest.seqs == list(range(1, len(first.seqs) + len(rest.seqs) + 1))


def test_healthz_reports_the_store_and_a_new_stream_is_refused_while_redis_is_down(
    serve: Serve, emu: Emulator, crashing_redis: RedisProcess, prefix: str
) -> None:
    server = serve(store=RedisStore.from_url(crashing_redis.url, prefix=prefix))
    with httpx.Client(base_url=server.url, timeout=15) as http:
        up = http.get("/healthz")
        crashing_redis.kill()
        down = http.get("/healthz")
        refused = http.post("/v1/stream", json=stream_body(), headers=AUTH)
        crashing_redis.start()
        again = http.get("/healthz")

    assert up.status_code == 200
    assert up.json() == {
        "status": "ok",
        "streams_in_flight": 0,
        "store": {"kind": "redis", "status": "ok"},
    }
    assert down.status_code == 503
    assert down.json() == {
        "status": "unavailable",
        "streams_in_flight": 0,
        "store": {"kind": "redis", "status": "unavailable"},
    }
    assert str(crashing_redis.port) not in down.text  # no address for an unauthenticated probe
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
    assert refused.json()["error"]["type"] == "StoreUnavailableError"
    assert again.status_code == 200 and again.json()["status"] == "ok"
    assert emu.requests == []
