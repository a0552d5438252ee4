"""The stream store contract (server/stores/base.py) as test functions that ask for a
`store_factory` fixture: server/test_store.py collects them against the memory store, and
server/test_redis.py collects them a second time against Redis, each with a `store_factory` of
its own. Also the two steps every store test takes: `run` an async body, `read_all` of a
stream."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from modelstream.server.stores import (
    Entry,
    StoreFullError,
    StreamStore,
    StreamTooLongError,
    UnknownStreamError,
)

StoreFactory = Callable[..., StreamStore]


def run(test: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(test())


async def read_all(store: StreamStore, rid: str, after: int = 0) -> list[Entry]:
    entries: list[Entry] = []
    async for batch in store.read(rid, after, idle_timeout=5):
        entries.extend(batch)
    return entries


def contract_tests() -> dict[str, Callable[..., None]]:
    """Every test of the contract, by name: what a test module puts in its namespace to have
    pytest collect them there, with that module's `store_factory`."""
    return {name: test for name, test in globals().items() if name.startswith("test_")}


# --- the contract -----------------------------------------------------------------------------


def test_entries_come_back_in_order_after_any_sequence_number(
    store_factory: StoreFactory,
) -> None:
    async def body() -> None:
        store = store_factory()
        await store.create("r1")
        for seq in range(1, 6):
            await store.append("r1", seq, b"event %d" % seq)
        assert await store.finish("r1") == 5

        assert await read_all(store, "r1") == [(n, b"event %d" % n) for n in range(1, 6)]
        assert await read_all(store, "r1", 3) == [(4, b"event 4"), (5, b"event 5")]
        assert await read_all(store, "r1", 5) == []
        await store.aclose()

    run(body)


def test_a_reader_waits_for_new_entries_and_ends_when_the_stream_finishes(
    store_factory: StoreFactory,
) -> None:
    async def body() -> None:
        store = store_factory()
        await store.create("r1")
        await store.append("r1", 1, b"first")
        reader = asyncio.create_task(read_all(store, "r1"))
        await asyncio.sleep(0.05)
        assert not reader.done()
        await store.append("r1", 2, b"second")
        await store.finish("r1", b"terminal")

        assert await asyncio.wait_for(reader, 5) == [
            (1, b"first"),
            (2, b"second"),
            (3, b"terminal"),
        ]

    run(body)


def test_an_idle_reader_gets_an_empty_batch_for_a_keepalive(store_factory: StoreFactory) -> None:
    async def body() -> list[list[Entry]]:
        store = store_factory()
        await store.create("r1")
        batches: list[list[Entry]] = []
        async for batch in store.read("r1", 0, idle_timeout=0.05):
            batches.append(batch)
            if len(batches) == 2:
                await store.append("r1", 1, b"late")
            if batch and batch[-1][0] == 1:
                await store.finish("r1")
        return batches

    batches = run(body)
    assert batches[:2] == [[], []]
    assert batches[-1] == [(1, b"late")]


def test_a_reader_counts_as_attached_while_it_reads(store_factory: StoreFactory) -> None:
    async def body() -> None:
        store = store_factory()
        await store.create("r1")
        reader = asyncio.create_task(read_all(store, "r1"))
        await asyncio.sleep(0.05)
        assert await store.unread_seconds("r1") == 0.0
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await asyncio.sleep(0.1)
        unread = await store.unread_seconds("r1")
        assert unread is not None and 0.05 <= unread < 5
        assert await store.unread_seconds("unknown") is None

    run(body)


def test_the_per_stream_cap_ends_a_stream_but_its_terminal_entry_still_fits(
    store_factory: StoreFactory,
) -> None:
    async def body() -> None:
        store = store_factory(max_events_per_stream=3)
        await store.create("r1")
        for seq in range(1, 4):
            await store.append("r1", seq, b"x")
        with pytest.raises(StreamTooLongError, match="limit of 3 events"):
            await store.append("r1", 4, b"x")
        assert await store.finish("r1", b"error") == 4
        assert (await read_all(store, "r1"))[-1] == (4, b"error")

    run(body)


def test_a_full_store_evicts_finished_streams_before_refusing(
    store_factory: StoreFactory,
) -> None:
    async def body() -> None:
        store = store_factory(max_bytes=2000)
        await store.create("old")
        await store.append("old", 1, b"o" * 700)
        await store.finish("old")
        await store.create("live")
        await store.append("live", 1, b"l" * 700)

        await store.append("live", 2, b"l" * 700)  # only fits once "old" is gone
        assert not await store.exists("old")
        with pytest.raises(StoreFullError, match="buffer is full"):
            await store.append("live", 3, b"l" * 700)

    run(body)


def test_no_new_stream_starts_while_running_streams_fill_the_store(
    store_factory: StoreFactory,
) -> None:
    async def body() -> None:
        store = store_factory(max_bytes=2000)
        await store.create("live")
        await store.append("live", 1, b"l" * 1900)

        with pytest.raises(StoreFullError):
            await store.create("new")
        await store.finish("live")
        await store.create("new")  # the finished stream made way
        assert not await store.exists("live")

    run(body)


def test_a_finished_stream_is_forgotten_when_it_expires(store_factory: StoreFactory) -> None:
    async def body() -> None:
        store = store_factory()
        await store.create("r1")
        await store.finish("r1")
        await store.expire("r1", 0.05)
        assert await store.exists("r1")
        await asyncio.sleep(0.1)
        assert not await store.exists("r1")
        with pytest.raises(UnknownStreamError):
            await read_all(store, "r1")

    run(body)


def test_a_gap_or_an_append_after_finish_is_a_bug(store_factory: StoreFactory) -> None:
    async def body() -> None:
        store = store_factory()
        await store.create("r1")
        with pytest.raises(ValueError, match="expected seq 1"):
            await store.append("r1", 2, b"x")
        await store.finish("r1")
        with pytest.raises(ValueError, match="finished"):
            await store.append("r1", 1, b"x")
        with pytest.raises(UnknownStreamError):
            await store.append("nope", 1, b"x")

    run(body)
