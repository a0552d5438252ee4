"""Upstream connection pools: each served model's pool holds as many connections as the server
may run streams (`limits.max_concurrent_streams`), not httpx's default 100; and a call that
waits too long for a pooled connection fails as `PoolExhaustedError`, not as a connect timeout."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx

from modelstream import SSEDecoder
from modelstream.client import AsyncClient, RetryPolicy, Timeouts
from modelstream.errors import PoolExhaustedError
from modelstream.testing import Emulator, Reply, Turn
from support.server import AUTH, Serve, stream_body, user

HTTPX_DEFAULT_POOL = 100
STREAMS = HTTPX_DEFAULT_POOL + 6
HELD_SECONDS = 8.0  # each upstream answer waits this long before its body
STAGGER = 0.02  # seconds between the starts of two calls


async def _read_stream(http: httpx.AsyncClient, after: float) -> list[str]:
    await asyncio.sleep(after)
    decoder, data = SSEDecoder(), []
    async with http.stream("POST", "/v1/stream", json=stream_body(), headers=AUTH) as response:
        assert response.status_code == 200
        async for chunk in response.aiter_raw():
            data += [frame.data for frame in decoder.feed(chunk)]
    return data


def test_a_server_runs_more_streams_at_once_than_httpx_pools_by_default(
    serve: Serve, emu: Emulator
) -> None:
    emu.queue(*[Reply.turn(Turn.text("held"), stall_after_bytes=(0, HELD_SECONDS))] * STREAMS)
    server = serve(limits={"max_concurrent_streams": STREAMS + 10})
    results: list[list[str] | BaseException] = []

    async def all_streams() -> None:
        limits = httpx.Limits(max_connections=STREAMS + 10)
        async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=30) as http:
            # staggered: the emulator's listen backlog is 5, and a burst past it would wait on
            # SYN retransmits (seconds) instead of on the server's pool
            reads = [_read_stream(http, index * STAGGER) for index in range(STREAMS)]
            results.extend(await asyncio.gather(*reads, return_exceptions=True))

    callers = threading.Thread(target=asyncio.run, args=(all_streams(),))
    started = time.monotonic()
    callers.start()
    # every call reaches the upstream while the first ones are still held: none waits for a
    # connection (with a pool of 100, six would wait HELD_SECONDS for one)
    arrived = emu.wait_for_requests(STREAMS, timeout=HELD_SECONDS - 2)
    arrived_within = time.monotonic() - started
    callers.join(60)

    assert len(arrived) == STREAMS and arrived_within < HELD_SECONDS
    assert len(results) == STREAMS
    for data in results:
        assert not isinstance(data, BaseException), data
        assert data[-1] == "[DONE]" and not any(d.startswith('{"error"') for d in data)
        assert '"finish_reason":"stop"' in data[-2]


def test_waiting_too_long_for_a_pooled_connection_is_a_pool_exhausted_error(
    emu: Emulator,
) -> None:
    emu.queue(
        Reply.turn(Turn.text("holds the only connection"), stall_after_bytes=(0, 3.0)),
        Reply.turn(Turn.text("never sent")),
    )

    async def two_calls() -> tuple[list[str], BaseException | None]:
        pool = httpx.AsyncClient(limits=httpx.Limits(max_connections=1))
        client = AsyncClient(
            "claude-sonnet-4-5",
            api_key="sk-test-pool",
            base_url=emu.base_url("anthropic-messages"),
            timeouts=Timeouts(connect=0.5),
            retry=RetryPolicy(max_attempts=1),
            http_client=pool,
            traces=False,
        )

        async def first() -> list[str]:
            async with client.stream([user("first")]) as stream:
                return [event["event_type"] async for event in stream]

        async def second() -> BaseException | None:
            await asyncio.sleep(0.2)  # the first call holds the pool's one connection
            try:
                async with client.stream([user("second")]) as stream:
                    async for _ in stream:
                        pass
            except PoolExhaustedError as error:
                return error
            return None

        try:
            return await asyncio.gather(first(), second())
        finally:
            await client.aclose()
            await pool.aclose()

    first_events, error = asyncio.run(two_calls())

    assert first_events[-1] == "stop"  # the call holding the connection was not disturbed
    assert isinstance(error, PoolExhaustedError)
    assert error.timeout == "pool" and error.seconds == 0.5
    assert "pool exhausted: no connection of the HTTP client's pool came free within 0.5 s" in str(
        error
    )
    assert error.fields() == {"missing": "response", "timeout": "pool", "seconds": 0.5}
    assert error.partial is not None and error.partial.status == "incomplete"
    assert len(emu.requests) == 1  # the second request was never sent
