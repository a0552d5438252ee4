"""The Redis store at scale: N concurrent streams written and read through one `RedisStore`.

A redis-server of its own (nothing on disk) on a free port; this process plays one server: for
each of N streams a producer appends EVENTS events (one `append` per event, or `append_many`
of BATCH events, as a relay that coalesces what is ready per wake-up does) and sends a
heartbeat every second, as the relay does, and a reader (`store.read`, as an HTTP response
does) takes them as they come. Every reader's entries are checked: all of its stream's, in
order, none twice.

Timed: wall clock from the first create to the last reader's end; CPU with
`time.process_time` (this process: producers, readers and the store together) and Redis's own
`used_cpu_user + used_cpu_sys`. events/s = N × EVENTS / wall.

Baseline, in the same run and on the same Redis: redis-py alone, `XADD` of the same events
into N streams in pipelines of N commands (one event per stream per round trip, the least a
store that writes each event can do), then one `XRANGE` per stream to read them back.

Targets (issue 9): ≥ 20,000 events/s through one process and ≤ 100 µs of this process's CPU per
event (which here is the store's share only: the relay's own work comes on top).

    .venv/bin/python bench/bench_store_redis.py              # N = 200 and 1000, batch 1 and 8
    .venv/bin/python bench/bench_store_redis.py --streams 1000 --batch 8 --events 200

Exit status: 0 every target met, 1 a target missed, 2 a wrong result.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import redis
import redis.asyncio as aioredis

from modelstream.server.stores.redis import RedisStore

EVENTS_PER_SECOND_TARGET = 20_000
CPU_US_PER_EVENT_TARGET = 100.0
NO_DISK = ("--save", "", "--appendonly", "no")


@dataclass
class Figures:
    events: int
    wall: float
    cpu: float
    redis_cpu: float
    peak_clients: int = 0

    @property
    def rate(self) -> float:
        return self.events / self.wall

    @property
    def cpu_us(self) -> float:
        return self.cpu / self.events * 1e6

    @property
    def redis_us(self) -> float:
        return self.redis_cpu / self.events * 1e6


def start_redis(folder: str) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (Debian: apt-get install -y redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [binary, *("--bind", "127.0.0.1", "--port", str(port)), *NO_DISK, "--dir", folder],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(200):
        try:
            with redis.Redis.from_url(url) as client:
                client.ping()
            return process, url
        except redis.ConnectionError:
            time.sleep(0.02)
    process.kill()
    sys.exit("redis-server did not start")


def redis_cpu(url: str) -> float:
    with redis.Redis.from_url(url) as client:
        info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def clients(url: str) -> int:
    with redis.Redis.from_url(url) as client:
        return int(client.info("clients")["connected_clients"]) - 1


def event(stream: int, seq: int) -> bytes:
    """About the size of a relayed text delta event."""
    return (
        b'{"event_type":"delta","item_index":0,"content_index":0,"type":"text.delta",'
        b'"delta":"word %d of stream %d ","created_at":1764600000.%06d}' % (seq, stream, seq)
    )


async def run_store(url: str, streams: int, events: int, batch: int, prefix: str) -> Figures:
    store = RedisStore.from_url(url, prefix=prefix, max_events_per_stream=events + 10)
    rids = [f"bench{n}" for n in range(streams)]
    peak = 0
    done = asyncio.Event()

    async def produce(n: int, rid: str) -> None:
        last_beat = time.monotonic()
        seq = 1
        while seq <= events:
            size = min(batch, events - seq + 1)
            if size == 1:
                await store.append(rid, seq, event(n, seq))
            else:
                await store.append_many(rid, seq, [event(n, s) for s in range(seq, seq + size)])
            seq += size
            if time.monotonic() - last_beat >= 1.0:
                await store.heartbeat(rid)
                last_beat = time.monotonic()
        await store.finish(rid)

    async def read(n: int, rid: str) -> int:
        expected = 1
        async for entries in store.read(rid, 0, idle_timeout=5):
            for seq, data in entries:
                if seq != expected or data != event(n, seq):
                    raise SystemExit(f"WRONG RESULT: stream {rid} entry {seq}, expected {expected}")
                expected += 1
        return expected - 1

    async def watch_clients() -> None:
        nonlocal peak
        probe = aioredis.Redis.from_url(url)
        while not done.is_set():
            info = await probe.info("clients")
            peak = max(peak, int(info["connected_clients"]) - 1)  # less this probe
            await asyncio.sleep(0.05)
        await probe.aclose()

    watcher = asyncio.create_task(watch_clients())
    redis_before = redis_cpu(url)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(store.create(rid) for rid in rids))
    readers = [asyncio.create_task(read(n, rid)) for n, rid in enumerate(rids)]
    await asyncio.gather(*(produce(n, rid) for n, rid in enumerate(rids)))
    counts = await asyncio.gather(*readers)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    redis_used = redis_cpu(url) - redis_before
    done.set()
    await watcher
    await store.aclose()
    if counts != [events] * streams:
        raise SystemExit(f"WRONG RESULT: readers got {sorted(set(counts))} entries, not {events}")
    return Figures(streams * events, wall, cpu, redis_used, peak)


async def run_baseline(url: str, streams: int, events: int, prefix: str) -> Figures:
    client = aioredis.Redis.from_url(url)
    keys = [f"{prefix}base:{n}" for n in range(streams)]
    redis_before = redis_cpu(url)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for seq in range(1, events + 1):
        pipe = client.pipeline(transaction=False)
        for n, key in enumerate(keys):
            pipe.xadd(key, {b"d": event(n, seq)}, id=f"{seq}-0")
        await pipe.execute()
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.xrange(key)
    read = await pipe.execute()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    redis_used = redis_cpu(url) - redis_before
    await client.delete(*keys)
    await client.aclose()
    if [len(entries) for entries in read] != [events] * streams:
        raise SystemExit("WRONG RESULT: the baseline read back a different count")
    return Figures(streams * events, wall, cpu, redis_used)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, action="append", help="default: 200 and 1000")
    parser.add_argument("--batch", type=int, action="append", help="default: 1 and 8")
    parser.add_argument("--events", type=int, default=100, help="per stream (default 100)")
    args = parser.parse_args()
    streams_list = args.streams or [200, 1000]
    batches = args.batch or [1, 8]
    missed = False
    with tempfile.TemporaryDirectory() as folder:
        process, url = start_redis(folder)
        try:
            print(
                f"redis-server {redis.Redis.from_url(url).info('server')['redis_version']}, "
                f"redis-py {redis.__version__}, {args.events} events per stream"
            )
            print(
                f"{'case':<34} {'events/s':>10} {'CPU µs/ev':>10} {'Redis µs/ev':>12} {'conns':>6}"
            )
            for streams in streams_list:
                base = asyncio.run(run_baseline(url, streams, args.events, "b:"))
                print(
                    f"{f'raw XADD pipeline, N={streams}':<34} {base.rate:>10,.0f} "
                    f"{base.cpu_us:>10.1f} {base.redis_us:>12.1f} {'1':>6}"
                )
                for batch in batches:
                    figures = asyncio.run(
                        run_store(url, streams, args.events, batch, f"s{streams}x{batch}:")
                    )
                    ok = (
                        figures.rate >= EVENTS_PER_SECOND_TARGET
                        and figures.cpu_us <= CPU_US_PER_EVENT_TARGET
                    )
                    missed |= not ok
                    label = f"RedisStore, N={streams}, batch {batch}"
                    print(
                        f"{label:<34} {figures.rate:>10,.0f} {figures.cpu_us:>10.1f} "
                        f"{figures.redis_us:>12.1f} {figures.peak_clients:>6}  "
                        f"{'ok' if ok else 'MISSED'} (x{figures.cpu_us / base.cpu_us:.1f} "
                        "baseline CPU)"
                    )
        finally:
            process.terminate()
            process.wait(10)
    print(
        f"targets: ≥ {EVENTS_PER_SECOND_TARGET:,} events/s, ≤ {CPU_US_PER_EVENT_TARGET:.0f} "
        "µs CPU/event in this process"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
