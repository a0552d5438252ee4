"""Load: N concurrent streams through `modelstream serve`, per store (memory, Redis).

Separate processes, so no two parties share a GIL: the upstream (this file's `--upstream` child:
paced replies from one uvicorn event loop), the server (`python -m
modelstream.server --config FILE`, what `modelstream serve` runs, with `--redis URL` for the
Redis store; a throwaway `redis-server` on a free port in a temp folder), and the load client
(this file's `--load` child: N concurrent `POST /v1/stream` over httpx, each SSE frame checked).

Each round (store, N) queues N replies of the same synthetic Chat Completions body
(`synthetic.py`, `--events` text chunks, one HTTP chunk per SSE frame, `--pace-ms` between
chunks: a model generating at that pace), starts N streams at once and reads them to `[DONE]`.
Printed per round: events/s (all relayed events over the round's wall time), server CPU µs per
event (the server process's CPU from /proc before and after the round, over the events),
time to first event p50/p99 (request sent to first `id:` frame), errors (a refused request,
a stream that ended with an error line or without `[DONE]`, a wrong id sequence), server RSS
before and after. The baselines, measured in the same run: the in-process decode µs/event
(`StreamDecoder` over the same body, CPU) and, unless `--no-direct`, the same N streams read
straight from the upstream (its TTFE is what the upstream adds; the relay adds the rest), and,
unless `--no-floor`, the CPU µs per event of a byte-for-byte TCP relay (this file's `--floor`
child: asyncio protocols on uvloop, no HTTP, no parsing) carrying the same N streams: what
any Python relay pays per event for the event loop and the socket calls alone at that pace.

    .venv/bin/python bench/bench_load.py                       # 50, 200, 1000 streams, memory
    .venv/bin/python bench/bench_load.py --streams 200,1000 --store memory,redis
    .venv/bin/python bench/bench_load.py --quick --streams 5   # smoke run, a few seconds
    .venv/bin/python bench/bench_load.py --streams 200 --compare ../base/src   # A/B, side by side
    .venv/bin/python bench/bench_load.py --streams 200 --setup single,routed,keys,routed+keys \
        --repeat 3                                             # what routing and keys cost

`--setup` (issue 21) runs each (store, N) round once per setup, so that what the router and the
virtual keys cost per turn shows against today's path, measured in the same run: `single` (the
default, and the only setup before: one upstream, the static key), `routed` (the served model as
two deployments, weights 2:1, on the same upstream, and a fallback served model: each turn runs
the router's whole plan, a weighted pick, the deployments' standings from the router's state,
in Redis with `--store redis`, the fallback appended), `keys` (one upstream, a virtual key with
a big budget and rpm: each turn is identified by the key's store, admitted against its budget
and settled at its end; the store is a SQLite file, the Redis one with `--store redis`) and
`routed+keys`. After each round the servers' /metrics must show that path taken (turns on both
deployments, more on the heavier; every turn settled with the key), else the round has an
error. With `--repeat R` the setups' rounds run R times, interleaved (the order reversed
every other time, so a drift of the machine lands on every setup alike). Printed after the
rounds: each setup's median server CPU per turn (the round's CPU over its N streams) and per
event, and its ratio to `single`: the median over the repeats of the setup's CPU per turn over
`single`'s of the same store, N and repeat; the target is ≤ 1.10.

Exit status: 0 when every round met its targets (`single`: memory ≤ 50 µs/event and no error at
200 streams, relay-added TTFE p99 ≤ 50 ms at 200 streams; Redis ≤ 100 µs/event, no error; the
other setups: no error), 1 when one was missed, 2 when a party failed. The ≤ 1.10 ratio is
printed, not counted in the exit status: on a shared two-core machine a repeat differs from the
next by more than the margin it checks.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

import bench_client
import synthetic
from bench_client import PROMPT
from bench_relay import SERVER_KEY, UPSTREAM_KEY, RelayServer, model_entry, process_cpu
from modelstream import SSEDecoder, StreamDecoder
from modelstream.client.tls import ssl_context_for
from modelstream.client.transports import async_transport

PROTOCOL = "openai-chat"
SERVED_MODEL = "load"
# targets of issue 9: server CPU per relayed event, per store
CPU_TARGET_US = {"memory": 50.0, "redis": 100.0}
TTFE_TARGET_S = 0.050  # relay-added time to first event, p99, at 200 streams (memory)
SETUPS = ("single", "routed", "keys", "routed+keys")
RATIO_TARGET = 1.10  # issue 21: routing and virtual keys cost ≤ 10% more server CPU per turn
BACKUP_MODEL = "load-backup"  # the served model `routed` falls back to


def body_of(events: int) -> bytes:
    return synthetic.build(PROTOCOL, "text", events).data


# --- the upstream: a child that streams N paced replies per command line --------------------


def serve_upstream() -> int:
    """The `--upstream` child. Prints its URL; then each line `COUNT EVENTS PACE_MS` sets the
    reply of the next requests (the body, one HTTP chunk per SSE frame, PACE_MS apart) and
    prints `queued`.

    Not `modelstream.testing.Emulator`: its thread per connection (right for tests) costs this
    machine's second core at a few hundred paced streams, and its accept loop then waits for the
    GIL, which showed as seconds of time to first event in a few streams of each round. This
    is a plain ASGI app on uvicorn: one event loop, a sleep per frame."""
    import threading

    import uvicorn

    reply: dict[str, Any] = {"frames": [], "pace": 0.0}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):  # the request body, unread
            pass
        frames, pace = reply["frames"], reply["pace"]
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for frame in frames:
            if pace:
                await asyncio.sleep(pace)
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    def read_commands() -> None:
        for line in sys.stdin:
            _count, events, pace_ms = line.split()
            body = body_of(int(events))
            reply["frames"] = [frame + b"\n\n" for frame in body.split(b"\n\n") if frame]
            reply["pace"] = float(pace_ms) / 1000
            print("queued", flush=True)
        server.should_exit = True

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4096)  # listening before the URL is printed: no request finds it closed
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    threading.Thread(target=read_commands, daemon=True).start()
    print(f"http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
    server.run(sockets=[listener])
    return 0


class Upstream(bench_client.ChildEmulator):
    def __init__(self) -> None:
        super().__init__(__file__, "--upstream")

    def queue(self, count: int, events: int, pace_ms: float) -> None:
        self._ask(f"{count} {events} {pace_ms}")


# --- the floor: a byte-for-byte TCP relay ----------------------------------------------------


def serve_floor(address: str) -> int:
    """The `--floor HOST:PORT` child: prints its URL, then relays each connection to the
    upstream at `address` byte for byte. It does the least a relay can, one read and one write
    per chunk in one event loop (uvloop when installed), so its CPU per event is the floor
    under the server's figure: the loop's and the kernel's share of an event at this pace."""
    upstream_host, upstream_port = address.rsplit(":", 1)

    class Leg(asyncio.Protocol):
        """One side of a relayed connection; it writes what it reads to its peer."""

        def __init__(self, peer: Leg | None = None) -> None:
            self.peer = peer
            self.transport: asyncio.Transport | None = None
            self.early: list[bytes] = []  # what the client sent before the upstream answered

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport = transport  # type: ignore[assignment]  # uvloop's is not a subclass
            if self.peer is None:  # a client's connection: open its upstream one
                asyncio.get_running_loop().create_task(self.connect())
            else:
                self.peer.peer = self
                for data in self.peer.early:
                    transport.write(data)

        async def connect(self) -> None:
            loop = asyncio.get_running_loop()
            await loop.create_connection(lambda: Leg(self), upstream_host, int(upstream_port))

        def data_received(self, data: bytes) -> None:
            if self.peer is None or self.peer.transport is None:
                self.early.append(data)
            else:
                self.peer.transport.write(data)

        def connection_lost(self, exc: Exception | None) -> None:
            if self.peer is not None and self.peer.transport is not None:
                self.peer.transport.close()

    async def run() -> None:
        server = await asyncio.get_running_loop().create_server(Leg, "127.0.0.1", 0)
        print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until closed

    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        runner.run(run())
    return 0


class FloorRelay(bench_client.ChildEmulator):
    """The `--floor` child, relaying to the upstream at `upstream_url`."""

    def __init__(self, upstream_url: str) -> None:
        super().__init__(__file__, "--floor", upstream_url.split("//", 1)[1])


# --- a throwaway redis-server ----------------------------------------------------------------


class RedisServer:
    """`redis-server` on a free loopback port, keeping nothing on disk, in a temp folder."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
        command += ["--appendonly", "no", "--dir", str(folder), "--maxclients", "10000"]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self.close()
        raise RuntimeError("redis-server did not start")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


# --- the setups: what the server does per turn besides relaying (module docstring) ----------


def setup_settings(setup: str, upstream_url: str, folder: Path) -> dict[str, Any]:
    """The config settings `setup` adds to the server's (`RelayServer`'s); none for `single`."""
    settings: dict[str, Any] = {}
    if "routed" in setup:
        # no rpm or tpm: the router's limits are not what is measured, its plan is (a lone
        # deployment without limits or fallbacks would take the plan's fast path instead)
        def deployment(name: str, weight: float) -> dict[str, Any]:
            return model_entry(
                upstream_url,
                PROTOCOL,
                SERVED_MODEL,
                deployment=name,
                weight=weight,
                fallbacks=[BACKUP_MODEL],
            )

        settings["models"] = [
            deployment("load-a", 2),
            deployment("load-b", 1),
            model_entry(upstream_url, PROTOCOL, BACKUP_MODEL),
        ]
    if "keys" in setup:
        # the upstream's model is priced in the catalogue: every turn is admitted at an estimate
        # and settled at its cost, none refused for an unknown one
        settings["virtual_keys"] = {"path": str(folder / "keys.sqlite3")}
    return settings


def create_key(folder: Path, redis_url: str | None) -> str:
    """A virtual key for the round, with room for all its turns (budget, rpm), in the store the
    server reads (`[virtual_keys]`'s SQLite file; with Redis, that Redis under the server's
    prefix); its secret."""
    from modelstream.server.keys import KeyStore, RedisKeyStore, SQLiteKeyStore

    async def create() -> str:
        store: KeyStore
        if redis_url is None:
            store = SQLiteKeyStore(folder / "keys.sqlite3")
        else:
            store = RedisKeyStore.from_url(redis_url)
        try:
            _record, secret = await store.create("bench-load", budget="1000.00", rpm=100_000)
        finally:
            await store.aclose()
        return secret.reveal()

    return asyncio.run(create())


DEPLOYMENT_TURNS = "modelstream_server_deployment_turns_total"  # {deployment="..."}
KEY_TURNS = "modelstream_server_key_turns_total"  # {key="...",model="..."}: settled turns


def turn_counts(servers: list[RelayServer]) -> dict[str, float]:
    """The servers' turns by deployment (`load-a`, ...) and, as `key`, settled with the key."""
    counts: dict[str, float] = {}
    for server in servers:
        for line in httpx.get(server.url + "/metrics", timeout=10).text.splitlines():
            series, _, value = line.rpartition(" ")
            if series.startswith(DEPLOYMENT_TURNS + "{"):
                name = series.split('"')[1]
            elif series.startswith(KEY_TURNS + "{"):
                name = "key"
            else:
                continue
            counts[name] = counts.get(name, 0) + float(value)
    return counts


def setup_problems(setup: str, servers: list[RelayServer], turns: int) -> list[str]:
    """What shows, in the servers' /metrics after a round of `turns` turns (warm-up included),
    that the round did not run the path `setup` names: `routed`, turns on both deployments, more
    on the heavier, none on the fallback; `keys`, every turn settled against the key."""
    try:
        counts = turn_counts(servers)
        deadline = time.monotonic() + 5  # a turn settles just after its last event is sent
        while "keys" in setup and counts.get("key", 0) < turns and time.monotonic() < deadline:
            time.sleep(0.1)
            counts = turn_counts(servers)
    except httpx.HTTPError as exc:
        return [f"the servers' /metrics: {type(exc).__name__}: {exc}"]
    problems = []
    if "keys" in setup and counts.get("key", 0) != turns:
        problems.append(f"{counts.get('key', 0):.0f} of {turns} turns settled with the key")
    heavy, light, backup = (counts.get(name, 0) for name in ("load-a", "load-b", BACKUP_MODEL))
    if "routed" in setup and (not heavy > light > 0 or backup):
        problems.append(
            f"turns by deployment: load-a {heavy:.0f}, load-b {light:.0f}, {BACKUP_MODEL} "
            f"{backup:.0f} (weights 2:1, the fallback unused)"
        )
    return problems


# --- the load client: a child process that runs N streams at once ---------------------------


@dataclass
class StreamRun:
    ttfe: float | None = None  # seconds from the request to the first event
    events: int = 0
    error: str | None = None


async def one_stream(
    http: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str],
    relayed: bool,
    delay: float,
) -> StreamRun:
    """Start after `delay` seconds, then read one stream to its end, checking each frame:
    relayed ids `<rid>:1`, `:2`, … one per event, no error line, `[DONE]` last."""
    await asyncio.sleep(delay)
    run = StreamRun()
    decoder = SSEDecoder()
    start = time.perf_counter()
    done = False
    try:
        async with http.stream("POST", url, content=body, headers=headers) as response:
            if response.status_code != 200:
                await response.aread()
                run.error = f"HTTP {response.status_code}: {response.text[:200]}"
                return run
            prefix = response.headers.get("x-response-id", "") + ":"
            async for chunk in response.aiter_raw():
                for frame in decoder.feed(chunk):
                    if frame.data == "[DONE]":
                        done = True
                        continue
                    if done or frame.data.startswith('{"error"'):
                        run.error = f"error line: {frame.data[:200]}"
                        return run
                    if run.ttfe is None:
                        run.ttfe = time.perf_counter() - start
                    run.events += 1
                    if relayed and frame.id != f"{prefix}{run.events}":
                        run.error = f"frame {run.events} has id {frame.id!r}"
                        return run
    except httpx.HTTPError as exc:
        run.error = f"{type(exc).__name__}: {exc}"
        return run
    if not done:
        run.error = f"no [DONE] after {run.events} events"
    return run


async def load(
    urls: list[str], count: int, relayed: bool, ramp: float, keys: list[str] | None = None
) -> dict[str, Any]:
    """COUNT streams, stream i to urls[i % len(urls)] (several server processes); relayed ones
    with keys[i % len(urls)] when it is given and not "-" (a virtual key's secret), else the
    server's static key."""
    if relayed:
        body = json.dumps({"model": SERVED_MODEL, "messages": PROMPT, "config": {}}).encode()
        chosen = [key if key != "-" else SERVER_KEY for key in keys or ["-"] * len(urls)]
        headers = [
            {"authorization": f"Bearer {key}", "content-type": "application/json"} for key in chosen
        ]
    else:
        body = bench_client.floor_request(PROTOCOL)
        auth = {"authorization": f"Bearer {UPSTREAM_KEY}", "content-type": "application/json"}
        headers = [auth] * len(urls)
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    timeout = httpx.Timeout(120, pool=120)
    # the client's lean sockets (client/network.py), for the same reason as uvloop above
    transport = async_transport(ssl_context_for(urls[0]), limits)
    async with httpx.AsyncClient(transport=transport, timeout=timeout) as http:
        start = time.perf_counter()
        runs = await asyncio.gather(
            *(
                one_stream(
                    http,
                    urls[i % len(urls)],
                    body,
                    headers[i % len(urls)],
                    relayed,
                    ramp * i / count,
                )
                for i in range(count)
            )
        )
        wall = time.perf_counter() - start
    return {
        "wall": wall,
        "ttfe": [r.ttfe for r in runs if r.ttfe is not None],
        "events": sum(r.events for r in runs),
        "errors": [r.error for r in runs if r.error is not None],
    }


def serve_load() -> int:
    """The `--load` child: each stdin line `URL[,URL…] COUNT relay|direct RAMP [KEY[,KEY…]]`
    runs COUNT streams, started evenly over RAMP seconds (spread over the URLs), with each URL's
    bearer KEY when given ("-": the static one), and prints one JSON line of results."""
    for line in sys.stdin:
        url, count, kind, ramp, *keys = line.split()
        cpu = time.process_time()
        chosen = keys[0].split(",") if keys else None
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            result = runner.run(
                load(url.split(","), int(count), kind == "relay", float(ramp), chosen)
            )
        result["cpu"] = time.process_time() - cpu
        print(json.dumps(result), flush=True)
    return 0


def _loop_factory() -> Any:
    """uvloop when it is installed, as the server gets it from uvicorn: the load client shares
    the machine's cores with the server, and the less it takes the less it disturbs them."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


class LoadChild:
    """A `--load` child of `script`: one command line in, one JSON line of results out."""

    def __init__(self, script: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(script), "--load"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(self, command: str) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the load client ended before answering")
        result: dict[str, Any] = json.loads(line)
        return result

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


class LoadClient(LoadChild):
    def __init__(self) -> None:
        super().__init__(__file__)

    def run(
        self,
        url: str,
        count: int,
        relayed: bool,
        ramp: float = 0.0,
        keys: Sequence[str | None] = (),
    ) -> dict[str, Any]:
        """Relayed streams to the i-th of the comma-separated `url`s carry keys[i] when it is
        given and not None (a virtual key's secret), else the static key."""
        kind = "relay" if relayed else "direct"
        chosen = f" {','.join(key or '-' for key in keys)}" if any(keys) else ""
        return self.ask(f"{url} {count} {kind} {ramp}{chosen}")


# --- baseline: the in-process decode ---------------------------------------------------------


def decode_us_per_event(events: int, reps: int = 5) -> float:
    """CPU µs per event of `StreamDecoder` over the body, one frame per feed (min of reps)."""
    from modelstream.testing.replies import split_frames

    frames = split_frames(body_of(events))
    best = float("inf")
    for _ in range(reps):
        start = time.process_time()
        count = 0
        for _ in range(max(1, 2000 // events)):
            decoder = StreamDecoder(PROTOCOL)
            for frame in frames:
                count += len(decoder.feed(frame))
            count += len(decoder.end())
        best = min(best, (time.process_time() - start) / count)
    return best * 1e6


# --- the rounds ------------------------------------------------------------------------------


@dataclass
class Round:
    store: str
    streams: int
    processes: int = 1
    events: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    ttfe: list[float] = field(default_factory=list)
    direct_ttfe: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rss_before: int = 0
    rss_after: int = 0
    others_cpu: float = 0.0  # the upstream's and the load client's CPU in the round
    floor_cpu_us: float = float("nan")  # the byte-for-byte relay's CPU µs per event
    cpu_each: list[float] = field(default_factory=list)  # per server process
    setup: str = "single"  # SETUPS
    repeat: int = 0  # which pass over the setups (--repeat)
    # --side-by-side: the CPU of the `single` server that ran beside this setup's in the round
    # (`cpu` is then this setup's server's alone, `events` its share)
    beside_cpu: float = float("nan")

    @property
    def cpu_us(self) -> float:
        return self.cpu / self.events * 1e6 if self.events else float("nan")

    @property
    def cpu_turn_us(self) -> float:
        """The servers' CPU µs per turn: the round's CPU over its streams."""
        return self.cpu / self.streams * 1e6 if self.streams else float("nan")

    @property
    def capacity(self) -> float:
        """Events/s one server process relays with a core of its own (1 / CPU per event; with
        several processes, their CPU over the events of all)."""
        return 1e6 / self.cpu_us if self.events else float("nan")

    def met(self) -> bool:
        """No error; and for `single`, from 200 streams on (where the targets are set), the
        CPU target (the other setups' is their ratio to it: `summarise`)."""
        ok = not self.errors
        if self.setup != "single":
            return ok
        if self.streams >= 200:
            ok = ok and self.cpu_us <= CPU_TARGET_US[self.store]
        if self.store == "memory" and self.streams == 200 and self.direct_ttfe:
            ok = ok and percentile(self.ttfe, 99) - percentile(self.direct_ttfe, 99) <= (
                TTFE_TARGET_S
            )
        return ok


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(pct) - 1]


def start_py_spy(
    folder: str | None, pid: int, store: str, streams: int, setup: str = "single"
) -> subprocess.Popen[bytes] | None:
    """With `--py-spy FOLDER`: sample the server during the round (py-spy must be installed;
    `pip install py-spy`), writing a speedscope profile per round into FOLDER."""
    if folder is None:
        return None
    name = f"server-{store}-{setup}-{streams}-{time.time():.0f}.speedscope.json"
    out = Path(folder) / name
    command = ["py-spy", "record", "-p", str(pid), "-o", str(out), "-f", "speedscope", "-r", "200"]
    spy = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # attached before the round starts
    return spy


def run_round(
    store: str,
    streams: int,
    processes: int,
    args: argparse.Namespace,
    upstream: Upstream,
    client: LoadClient,
    folder: Path,
    floor: FloorRelay | None = None,
    setup: str = "single",
    repeat: int = 0,
) -> Round:
    """One round: `processes` server processes (behind one Redis with `--store redis`; each with
    its own memory store otherwise), `streams` streams spread over them, the server configured
    and called as `setup` says."""
    result = Round(store, streams, processes, setup=setup, repeat=repeat)
    redis = RedisServer(folder) if store == "redis" else None
    servers: list[RelayServer] = []
    beside = args.side_by_side and setup != "single"
    # each server's setup and the tree it imports modelstream from: with --compare this tree's,
    # then the other's; with --side-by-side `single`'s server, then the setup's
    plan: list[tuple[str, str | None]]
    if args.compare:
        plan = [(setup, None), (setup, args.compare)]
    elif beside:
        plan = [("single", None), (setup, None)]
    else:
        plan = [(setup, None)] * processes
    count = streams * len(plan) if beside else streams  # side by side: N streams each
    try:
        key = create_key(folder, redis.url if redis else None) if "keys" in setup else None
        for server_setup, source in plan:
            limits = {"max_concurrent_streams": max(count, 1) + 16}
            if "keys" in server_setup:
                # virtual keys count as many callers, each with half the server unless told
                # otherwise: this round's one key runs all its streams
                limits["max_streams_per_key"] = limits["max_concurrent_streams"]
            servers.append(
                RelayServer(
                    upstream.url,
                    folder,
                    args.traces,
                    served={PROTOCOL: SERVED_MODEL},
                    limits=limits,
                    redis=redis.url if redis else None,
                    source=source,
                    settings=setup_settings(server_setup, upstream.url, folder),
                )
            )
        urls = ",".join(server.url + "/v1/stream" for server in servers)
        keys = [key if "keys" in server_setup else None for server_setup, _ in plan]
        # warm up: a stream per server (routed: per deployment) opens its upstream pool and
        # imports what a stream needs
        warm = len(servers) * (3 if "routed" in setup else 1)
        upstream.queue(warm, args.events, 0)
        client.run(urls, warm, relayed=True, keys=keys)
        if not args.no_direct:
            upstream.queue(streams, args.events, args.pace_ms)
            url = upstream.url + bench_client.request_path(PROTOCOL)
            direct = client.run(url, streams, False, args.ramp)
            result.direct_ttfe = direct["ttfe"]
        if floor is not None:
            upstream.queue(streams, args.events, args.pace_ms)
            url = floor.url + bench_client.request_path(PROTOCOL)
            before = process_cpu(floor.process.pid)
            carried = client.run(url, streams, False, args.ramp)
            if carried["errors"] or not carried["events"]:
                raise RuntimeError(f"the floor relay failed: {carried['errors'][:1]}")
            spent = process_cpu(floor.process.pid) - before
            result.floor_cpu_us = spent / carried["events"] * 1e6
        upstream.queue(count, args.events, args.pace_ms)
        result.rss_before = sum(server.rss() for server in servers)
        spied = servers[-1] if beside else servers[0]
        spy = start_py_spy(args.py_spy, spied.process.pid, store, streams, setup)
        cpu = [server.cpu() for server in servers]
        upstream_cpu = process_cpu(upstream.process.pid)
        relayed = client.run(urls, count, True, args.ramp, keys)
        result.cpu_each = [
            server.cpu() - before for server, before in zip(servers, cpu, strict=True)
        ]
        result.cpu = sum(result.cpu_each)
        result.others_cpu = process_cpu(upstream.process.pid) - upstream_cpu + relayed["cpu"]
        if spy is not None:
            spy.send_signal(signal.SIGINT)  # py-spy writes its profile on SIGINT
            spy.wait(timeout=60)
        result.rss_after = sum(server.rss() for server in servers)
        result.events = relayed["events"]
        result.wall = relayed["wall"]
        result.ttfe = relayed["ttfe"]
        result.errors = relayed["errors"]
        if beside:  # the round's figures are the setup's server's
            result.beside_cpu, result.cpu = result.cpu_each
            result.events //= 2
        if not result.errors:  # else the turns the servers should show are not known
            mine = servers[1:] if beside else servers
            turns = (warm + count) // len(servers) * len(mine)
            result.errors += setup_problems(setup, mine, turns)
    finally:
        for server in servers:
            if server.process.poll() is not None:
                result.errors.append("a server died:\n" + server.output()[-2000:])
            server.close()
        if redis is not None:
            redis.close()
    return result


def report(rounds: list[Round], decode_us: float, args: argparse.Namespace) -> int:
    # a setup column only when there is more than today's one round per (store, N)
    detailed = args.setups != ["single"] or args.repeat > 1
    column = f"{'setup':11} " if detailed else ""
    print(
        f"\n{column}{'store':7} {'procs':>5} {'streams':>7} {'events':>8} {'events/s':>9} "
        f"{'cpu µs/ev':>9} "
        f"{'capacity':>9} {'ttfe p50':>8} {'p99':>7} {'direct p99':>10} {'errors':>6} "
        f"{'rss MB':>13} {'others':>6} {'floor':>6}  target"
    )
    status = 0
    for r in rounds:
        direct = percentile(r.direct_ttfe, 99) * 1e3 if r.direct_ttfe else float("nan")
        ok = r.met()
        status = status or (0 if ok else 1)
        target = f"≤{CPU_TARGET_US[r.store]:.0f} µs, " if r.streams >= 200 else ""
        target = (target if r.setup == "single" else "") + "0 errors"
        setup = f"{r.setup:11} " if detailed else ""
        print(
            f"{setup}{r.store:7} {r.processes:5d} {r.streams:7d} {r.events:8,d} "
            f"{r.events / r.wall:9,.0f} {r.cpu_us:9.1f} {r.capacity:9,.0f} "
            f"{percentile(r.ttfe, 50) * 1e3:6.0f}ms "
            f"{percentile(r.ttfe, 99) * 1e3:5.0f}ms {direct:8.0f}ms {len(r.errors):6d} "
            f"{r.rss_before / 2**20:5.0f} → {r.rss_after / 2**20:4.0f} "
            f"{r.others_cpu / r.wall:6.2f} {r.floor_cpu_us:6.1f}  "
            f"{target} {'PASS' if ok else 'FAIL'}"
        )
    print(f"\nbaseline: in-process decode {decode_us:.1f} µs/event (same body, same run)")
    if args.compare:
        print(
            f"compare: CPU µs per event of this tree's server and of {args.compare}'s, side by side"
        )
        for r in rounds:
            here, there = (cpu / (r.events / 2) * 1e6 for cpu in r.cpu_each)
            print(
                f"  {r.setup + ' ' if detailed else ''}{r.store} {r.streams}: this tree "
                f"{here:.1f}, the other {there:.1f}, this / other {here / there:.2f}"
            )
    print(
        "capacity: 1e6 / cpu µs per event, the events/s of one server process on a core of its"
        " own (with several processes: per core); others: the upstream's and the load client's"
        f" CPU (cores) beside the servers, of {os.cpu_count()} on this machine; floor: CPU µs"
        " per event of a byte-for-byte TCP relay (uvloop, no HTTP) carrying the same streams"
    )
    for r in rounds:
        if r.errors:
            kinds: dict[str, int] = {}
            for error in r.errors:
                kinds[error[:120]] = kinds.get(error[:120], 0) + 1
            label = f"{r.setup} " * detailed
            print(f"{label}{r.store} ×{r.processes} {r.streams}: {len(r.errors)} errors")
            for text, count in sorted(kinds.items(), key=lambda item: -item[1])[:5]:
                print(f"  {count} × {text}")
    if detailed:
        summarise(rounds, args.setups, args.side_by_side)
    return status


def summarise(rounds: list[Round], setups: list[str], side_by_side: bool) -> None:
    """Per (store, processes, N) and setup, the medians over the repeats of the server's CPU
    per turn and per event, and the ratio to `single`: the median of each repeat's CPU per turn
    over `single`'s in the same repeat (with --side-by-side: over the `single` server's beside
    it in the same round), its min–max beside it, against RATIO_TARGET."""
    groups: dict[tuple[str, int, int], list[Round]] = {}
    for r in rounds:
        groups.setdefault((r.store, r.processes, r.streams), []).append(r)
    repeats = max(r.repeat for r in rounds) + 1
    print(
        f"\nper turn, median of {repeats} repeat{'s' * (repeats > 1)}: server CPU over the round"
        " / its streams; ratio: CPU per turn / "
        + (
            "the single server's beside it in the same round (--side-by-side)"
            if side_by_side
            else "single's of the same store, N and repeat"
        )
    )
    print(
        f"{'store':7} {'procs':>5} {'streams':>7} {'setup':11} {'µs/turn':>8} {'µs/event':>8} "
        f"{'ttfe p99':>8} {'errors':>6} {'ratio':>6} {'min–max':>11}  ≤ {RATIO_TARGET:.2f}"
    )
    for (store, processes, streams), group in groups.items():
        single = {r.repeat: r for r in group if r.setup == "single"}
        for setup in setups:
            mine = [r for r in group if r.setup == setup]
            turn = statistics.median(r.cpu_turn_us for r in mine)
            event = statistics.median(r.cpu_us for r in mine)
            p99 = statistics.median(percentile(r.ttfe, 99) for r in mine) * 1e3
            errors = sum(len(r.errors) for r in mine)
            row = (
                f"{store:7} {processes:5d} {streams:7d} {setup:11} {turn:8,.0f} {event:8.1f} "
                f"{p99:6.0f}ms {errors:6d} "
            )
            if setup == "single":
                print(row + f"{1:6.2f}")
                continue
            ratios = [
                r.cpu / r.beside_cpu
                if not math.isnan(r.beside_cpu)
                else r.cpu_turn_us / single[r.repeat].cpu_turn_us
                for r in mine
            ]
            ratio = statistics.median(ratios)
            verdict = "meets" if ratio <= RATIO_TARGET else "MISSES"
            if errors or any(single[r.repeat].errors for r in mine if r.repeat in single):
                verdict += " (rounds with errors: not comparable)"
            print(row + f"{ratio:6.2f} {min(ratios):5.2f}–{max(ratios):<5.2f}  {verdict}")
    print(f"the ratio's ≤ {RATIO_TARGET:.2f} (issue 21) is informational: not in the exit status")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", default="50,200,1000", help="concurrent streams per round")
    parser.add_argument("--store", default="memory", help="memory, redis or memory,redis")
    parser.add_argument("--events", type=int, default=100, help="text chunks per stream")
    parser.add_argument("--pace-ms", type=float, default=20.0, help="ms between upstream chunks")
    parser.add_argument(
        "--ramp-s",
        type=float,
        dest="ramp",
        help="start the streams evenly over this many seconds (default: one stream's "
        "duration, events × pace, so all N run at once at its end; 0: all at once)",
    )
    parser.add_argument(
        "--processes",
        default="1",
        help="server processes per round, e.g. 1,2 (behind one Redis with --store redis; "
        "streams spread over them)",
    )
    parser.add_argument("--traces", action="store_true", help="the server records traces")
    parser.add_argument("--no-direct", action="store_true", help="skip the direct TTFE baseline")
    parser.add_argument(
        "--no-floor", action="store_true", help="skip the byte-for-byte relay's CPU baseline"
    )
    parser.add_argument(
        "--compare",
        metavar="SRC",
        help="run two servers side by side, this tree's and one importing modelstream from the "
        "folder SRC (e.g. another worktree's src), streams alternating; prints each one's CPU "
        "per event: an A/B that shares the machine's ups and downs",
    )
    parser.add_argument(
        "--setup",
        default="single",
        help="what the server does per turn, a round each: single (one upstream, the static "
        "key), routed (two weighted deployments and a fallback), keys (a virtual key), "
        "routed+keys; comma-separated (single is added for the ratios when missing)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run the setups' rounds this many times, interleaved; medians are reported",
    )
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="run each setup's round with a single server beside its own, N streams each, "
        "alternating (as --compare does), and read its ratio within the round",
    )
    parser.add_argument("--py-spy", metavar="FOLDER", help="profile the server with py-spy")
    parser.add_argument("--quick", action="store_true", help="short streams (20 events)")
    parser.add_argument("--upstream", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--load", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor", metavar="HOST:PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.upstream:
        return serve_upstream()
    if args.load:
        return serve_load()
    if args.floor:
        return serve_floor(args.floor)
    if args.quick:
        args.events = min(args.events, 20)
    if args.ramp is None:
        args.ramp = args.events * args.pace_ms / 1000
    counts = [int(n) for n in args.streams.split(",") if n]
    process_counts = [int(n) for n in args.processes.split(",") if n]
    if args.compare:
        if not Path(args.compare, "modelstream").is_dir():
            parser.error(f"--compare: no modelstream package in {args.compare}")
        args.compare = str(Path(args.compare).resolve())
        process_counts = [2]
    stores = [s for s in args.store.split(",") if s]
    if any(s not in CPU_TARGET_US for s in stores) or not counts or not process_counts:
        parser.error("--store takes memory and/or redis; --streams and --processes lists of counts")
    args.setups = [s for s in args.setup.split(",") if s]
    if not args.setups or any(s not in SETUPS for s in args.setups) or args.repeat < 1:
        parser.error(f"--setup takes some of {', '.join(SETUPS)}; --repeat a count from 1")
    if args.side_by_side and (args.compare or process_counts != [1]):
        parser.error("--side-by-side runs one server per setup: not with --compare or --processes")
    if "single" not in args.setups:
        args.setups.insert(0, "single")  # what the ratios are to
    args.setups = list(dict.fromkeys(args.setups))
    print(
        f"modelstream load benchmark — Python {platform.python_version()}, {PROTOCOL} upstream, "
        f"{args.events} text chunks per stream, {args.pace_ms:g} ms apart, started over "
        f"{args.ramp:g} s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
        flush=True,
    )
    decode_us = decode_us_per_event(args.events)
    upstream = Upstream()
    client = LoadClient()
    floor = None if args.no_floor else FloorRelay(upstream.url)
    rounds: list[Round] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
            for store, processes, count in itertools.product(stores, process_counts, counts):
                for repeat in range(args.repeat):
                    # every other pass in the reverse order: a drift of the machine over the
                    # passes lands on every setup alike
                    for setup in args.setups if repeat % 2 == 0 else args.setups[::-1]:
                        folder = Path(tmp) / f"{len(rounds)}-{store}-{processes}-{count}-{setup}"
                        folder.mkdir()
                        r = run_round(
                            store, count, processes, args, upstream, client, folder, floor,
                            setup=setup, repeat=repeat,
                        )  # fmt: skip
                        rounds.append(r)
                        label, turn = "", ""
                        if args.setups != ["single"]:
                            label, turn = f" {setup}", f"{r.cpu_turn_us:,.0f} µs/turn, "
                        print(
                            f"  {store} ×{processes} {count}{label}: {r.events:,} events, "
                            f"{r.cpu_us:.1f} µs/event, {turn}{len(r.errors)} errors",
                            flush=True,
                        )
    except RuntimeError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 2
    finally:
        client.close()
        if floor is not None:
            floor.close()
        upstream.close()
    return report(rounds, decode_us, args)


if __name__ == "__main__":
    sys.exit(main())
