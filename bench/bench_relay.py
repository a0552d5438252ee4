"""Relay throughput: the 20,000-chunk stream through `modelstream serve`, against in-process.

Three processes, so no two parties share a GIL: the emulator (`modelstream.testing.Emulator`,
the upstream, in the child process of `bench_client.py`), the server (`python -m
modelstream.server --config FILE`, what `modelstream serve` runs: uvicorn, MemoryStore, traces
recorded into a throwaway file) and this process, the client. Each case streams the same
synthetic body (`synthetic.py`) two ways:

- **in-process**: `AsyncClient(model, client_type=<protocol>)` straight from the emulator.
- **relay**: emulator → server (its `AsyncClient` decodes the upstream; each event is stored and
  sent on as `id:` + `data:` SSE) → `AsyncClient(server_model_id, client_type="modelstream")`
  in this process; or, with `--client sse` (the fallback while the library had no such client),
  the least a reader does: httpx `aiter_raw`, `modelstream.SSEDecoder`, `loads_event` per frame.

Timed: wall clock (`time.perf_counter`) from the request to the closed response; events/s is the
events the caller received over that. In-process and relay run interleaved (the order alternates
each round), several times; the minimum of each counts. Every run is checked (the event count
equals the first run's, the last event is a `stop` with the body's finish reason, the final text
is the body's; for `sse` also the last SSE id is `<response_id>:<count>`), and an untimed first
run each way checks that the text deltas join to the body's text.

Target: relay events/s ≥ 0.5 × in-process events/s, for every case.

    .venv/bin/python bench/bench_relay.py            # full run
    .venv/bin/python bench/bench_relay.py --quick    # smoke run: 5,000 chunks, 3 reps
    .venv/bin/python bench/bench_relay.py --profile  # then cProfile the server and the client

Exit status: 0 all targets met, 1 a target missed, 2 a wrong result (or a party failed).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import platform
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import IO, Any

import httpx

import bench_client
import synthetic
from bench_client import MODELS, PROMPT, Expected, Run, Upstream, ours_problem, stream_problem
from modelstream import AsyncClient, SSEDecoder
from modelstream.errors import ConfigurationError, StreamError
from modelstream.jsonwire import dumps, loads_event

RATIO_TARGET = 0.5
FRAGMENTS = 20_000
DEFAULT_PROTOCOLS = ("anthropic-messages", "openai-chat")
DEFAULT_CHUNKINGS = ("16k", "frame")  # what the emulator writes per HTTP chunk (bench_client)
CLIENTS = ("modelstream", "sse")
# the server's model table: one server_model_id per upstream protocol, named after it
SERVED = {name: name for name in synthetic.PROTOCOLS}
UPSTREAM_KEY = "bench-upstream-key-not-secret"
SERVER_KEY = "bench-server-key-not-secret"
UPSTREAM_KEY_ENV = "MODELSTREAM_BENCH_UPSTREAM_KEY"
SERVER_KEY_ENV = "MODELSTREAM_BENCH_SERVER_KEY"


def process_cpu(pid: int) -> float:
    """CPU seconds another process has run, all its threads: the kernel's nanosecond
    run-time accounting (`schedstat`), where it exists; else user + system ticks."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (FileNotFoundError, ProcessLookupError):  # a thread that just ended
                continue
        return total / 1e9
    except OSError:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    return process_cpu(os.getpid())


def loaded(pid: int, name: str) -> bool:
    """Whether a process has mapped a file whose path contains `name` (Linux)."""
    try:
        return name in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


# --- the server: `python -m modelstream.server` in a child process ---------------------------


def log_text(log: IO[bytes]) -> str:
    """What a running child has written to `log` so far. Read at an offset (`os.pread`): the
    child writes through the same open file, so a seek here would move its writes too, and its
    next line would overwrite the start of the file (a `listening on` line lost that way)."""
    fd = log.fileno()
    return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")


def model_entry(upstream_url: str, protocol: str, server_id: str, **more: Any) -> dict[str, Any]:
    """A `[[models]]` entry serving the upstream at `upstream_url` (speaking `protocol`) as
    `server_id`, one attempt per turn; `more`: further fields of the entry (`deployment`,
    `weight`, `fallbacks`, ...)."""
    return {
        "server_model_id": server_id,
        "model": MODELS[protocol],
        "client_type": protocol,
        "base_url": upstream_url + bench_client.BASE_PATHS[protocol],
        "api_key": "$" + UPSTREAM_KEY_ENV,
        "max_attempts": 1,
        **more,
    }


class RelayServer:
    """`modelstream serve --config FILE --port 0` in a child process, in front of the emulator.

    With `profile`, the child is this file's `--serve-profiled`: the same command, plus a
    cProfile that SIGUSR1 starts and SIGUSR2 stops and writes to `profile`.
    """

    def __init__(
        self,
        upstream_url: str,
        folder: Path,
        traces: bool,
        profile: Path | None = None,
        *,
        served: Mapping[str, str] = SERVED,
        limits: Mapping[str, int] | None = None,
        redis: str | None = None,
        source: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        """`served` maps each protocol to the model id the server serves it as; `redis` is
        the URL of the store to keep streams in (default: the server's memory); `source`, a
        folder the `modelstream` package is imported from instead of the installed one;
        `settings`, more of the config's top-level settings, over these (a `models` list
        replaces the one `served` makes: build its entries with `model_entry`)."""
        config: dict[str, Any] = {
            "models": [
                model_entry(upstream_url, protocol, server_id)
                for protocol, server_id in served.items()
            ],
            "keys": ["$" + SERVER_KEY_ENV],
            # nothing is resumed here: finished streams go soon, so the store stays small
            "retain_seconds": 2,
            # the server records every turn it serves (docs/traces.md): into a throwaway file
            "traces": str(folder / "traces.sqlite") if traces else False,
        }
        if limits is not None:
            config["limits"] = dict(limits)
        config.update(settings or {})
        path = folder / "server.json"
        path.write_text(json.dumps(config))
        env = {**os.environ, UPSTREAM_KEY_ENV: UPSTREAM_KEY, SERVER_KEY_ENV: SERVER_KEY}
        env.pop("MODELSTREAM_TRACES_OTEL", None)
        if source is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
        serve = ["--config", str(path), "--port", "0", "--log-level", "warning"]
        if redis is not None:
            serve += ["--redis", redis]
        if profile is None:
            command = [sys.executable, "-m", "modelstream.server", *serve]
        else:
            command = [sys.executable, os.path.abspath(__file__), "--serve-profiled", str(profile)]
            command += ["--", *serve]
        self.profile = profile
        self.log: IO[bytes] = tempfile.TemporaryFile(dir=folder)  # noqa: SIM115 (close())
        self.process = subprocess.Popen(command, env=env, stdout=self.log, stderr=self.log)
        self.url = self._wait_for_url()

    def _wait_for_url(self, timeout: float = 30) -> str:
        marker = "listening on "
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.output()
            if marker in text:  # announced before uvicorn loads: wait until it answers
                url = text.split(marker, 1)[1].split()[0]
                try:
                    if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                        return url
                except httpx.HTTPError:
                    pass
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        output = self.output()
        self.close()
        raise RuntimeError(f"the server did not start:\n{output}")

    def output(self) -> str:
        return log_text(self.log)

    @property
    def pid(self) -> int:
        return self.process.pid

    def cpu(self) -> float:
        return process_cpu(self.pid)

    def rss(self) -> int:
        """Resident bytes of the server process now."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def start_profile(self) -> None:
        self.process.send_signal(signal.SIGUSR1)
        time.sleep(0.1)  # the idle server runs the handler at once; give it the moment

    def stop_profile(self) -> pstats.Stats:
        assert self.profile is not None
        self.process.send_signal(signal.SIGUSR2)
        deadline = time.monotonic() + 10
        while not self.profile.exists():  # written under another name, then renamed
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server wrote no profile:\n{self.output()}")
            time.sleep(0.02)
        return pstats.Stats(str(self.profile), stream=sys.stdout)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # graceful: exit status 0
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def serve_profiled(profile: str, argv: list[str]) -> int:
    """The child of `--profile`: `modelstream serve` with a cProfile toggled by signals
    (its handlers run on the main thread, the one uvicorn's event loop runs on)."""
    from modelstream.serving.command import main as serve

    profiler = cProfile.Profile()

    def start(signum: int, frame: object) -> None:
        profiler.enable()

    def stop(signum: int, frame: object) -> None:
        profiler.disable()
        profiler.dump_stats(profile + ".part")
        os.replace(profile + ".part", profile)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    return serve(argv)


# --- the clients -----------------------------------------------------------------------------


def modelstream_client_available() -> bool:
    """Whether this library has the `client_type="modelstream"` client yet."""
    try:
        AsyncClient("m", client_type="modelstream", base_url="http://127.0.0.1:9", api_key="k")
    except ConfigurationError:
        return False
    return True


@dataclass
class Timed:
    """A run and when (perf_counter) its first event arrived."""

    run: Run
    first: float


async def consume(client: AsyncClient, keep: list[Any] | None = None) -> Timed:
    """`AsyncClient.stream` iterated as a caller that hands events on: count, keep the last."""
    count = 0
    last: Any = None
    first = 0.0
    async with client.stream(PROMPT) as stream:
        async for event in stream:
            if not count:
                first = time.perf_counter()
            count += 1
            last = event
            if keep is not None:
                keep.append(event)
    return Timed(Run(count, last, stream.result), first)


async def consume_sse(
    http: httpx.AsyncClient, url: str, body: bytes, keep: list[Any] | None = None
) -> Timed:
    """The fallback relay client: httpx `aiter_raw`, `SSEDecoder`, `loads_event` per frame.
    Its `Run.result` is the text `.done` item (it has no accumulator)."""
    decoder = SSEDecoder()
    count = 0
    last: Any = None
    first = 0.0
    done_item: Any = None
    last_id: str | None = None
    finished = False
    headers = {"authorization": f"Bearer {SERVER_KEY}", "content-type": "application/json"}
    async with http.stream("POST", url, content=body, headers=headers) as response:
        if response.status_code != 200:
            await response.aread()
            raise RuntimeError(f"the server answered {response.status_code}: {response.text}")
        response_id = response.headers["x-response-id"]
        async for chunk in response.aiter_raw():
            for frame in decoder.feed(chunk):
                if frame.data == "[DONE]":
                    finished = True
                    break
                if frame.data.startswith('{"error"'):
                    raise RuntimeError(f"the stream ended with an error line: {frame.data}")
                event = loads_event(frame.data)
                if not count:
                    first = time.perf_counter()
                count += 1
                last = event
                last_id = frame.id
                items = event["content_items"]
                if items and items[0]["type"] == "text.done":
                    done_item = items[0]
                if keep is not None:
                    keep.append(event)
            if finished:
                break
    if not finished:
        raise RuntimeError("the stream ended without [DONE]")
    if last_id != f"{response_id}:{count}":
        raise RuntimeError(f"the last SSE id is {last_id!r} after {count} events")
    return Timed(Run(count, last, done_item), first)


def sse_problem(want: Expected, run: Run) -> str | None:
    """`ours_problem` for the fallback client, whose `result` is the text `.done` item."""
    last, done = run.last, run.result
    if last is None or last["event_type"] != "stop":
        return "the stream did not end with a stop"
    if last["finish_reason"] != want.body.finish_reason:
        return f"finish_reason {last['finish_reason']!r}, expected {want.body.finish_reason!r}"
    text = done.get("text") if isinstance(done, dict) else None
    if text != want.body.text:
        size = len(text) if isinstance(text, str) else None
        return f"final text of {size} characters, expected {len(want.body.text)}"
    return None


# --- measuring -------------------------------------------------------------------------------


@dataclass
class Best:
    """The minimum over the timed runs of each figure (each figure's own minimum)."""

    wall: float = float("inf")
    first: float = float("inf")  # request to first event
    client: float = float("inf")  # CPU seconds of this process
    server: float = float("inf")
    upstream: float = float("inf")

    def add(self, **sample: float) -> None:
        for name, value in sample.items():
            setattr(self, name, min(getattr(self, name), value))


@dataclass
class Case:
    protocol: str
    chunking: str
    client: str  # "modelstream" or "sse"
    fragments: int
    events: int = 0
    inproc: Best = field(default_factory=Best)
    relay: Best = field(default_factory=Best)
    problem: str | None = None

    @property
    def chunk(self) -> int | None:
        return bench_client.CHUNKINGS[self.chunking]

    @property
    def name(self) -> str:
        return f"{self.protocol} {self.chunking} {self.client}"

    @property
    def ratio(self) -> float:
        """Relay events/s over in-process events/s: the same events both ways."""
        return self.inproc.wall / self.relay.wall

    @property
    def cpu_ratio(self) -> float:
        """The same ratio if each party had a CPU of its own and nothing else ran: in-process
        CPU over the busiest relay party's (a bound, not a measurement)."""
        return self.inproc.client / max(self.relay.server, self.relay.client)


Stream = Callable[[list[Any] | None], Awaitable[Timed]]


class Bench:
    """Runs the cases against one emulator and one server."""

    def __init__(
        self, upstream: Upstream, server: RelayServer, reps: int, verbose: bool = False
    ) -> None:
        self.upstream = upstream
        self.server = server
        self.reps = reps
        self.verbose = verbose

    def queue(self, case: Case) -> None:
        self.upstream.queue(case.protocol, case.fragments, case.chunk)

    def direct_client(self, case: Case) -> AsyncClient:
        return AsyncClient(
            MODELS[case.protocol],
            api_key=UPSTREAM_KEY,
            base_url=self.upstream.url + bench_client.BASE_PATHS[case.protocol],
            client_type=case.protocol,
        )

    def relay_client(self, case: Case) -> AsyncClient | None:
        if case.client != "modelstream":
            return None
        return AsyncClient(
            SERVED[case.protocol],
            api_key=SERVER_KEY,
            base_url=self.server.url,
            client_type="modelstream",
        )

    def relay_stream(
        self, case: Case, relayed: AsyncClient | None, http: httpx.AsyncClient
    ) -> Stream:
        if relayed is not None:
            return lambda keep: consume(relayed, keep)
        url = self.server.url + "/v1/stream"
        body = dumps({"model": SERVED[case.protocol], "messages": PROMPT, "config": {}})
        return lambda keep: consume_sse(http, url, body, keep)

    async def timed(self, stream: Stream, best: Best) -> Run:
        """One timed run: wall clock, and every party's CPU meanwhile."""
        gc.collect()  # each run starts with the same heap: no collection debt from the last one
        server, upstream = self.server.cpu(), process_cpu(self.upstream.process.pid)
        client, start = own_cpu(), time.perf_counter()
        timed = await stream(None)
        wall = time.perf_counter() - start
        sample = {
            "wall": wall,
            "first": timed.first - start,
            "client": own_cpu() - client,
            "server": self.server.cpu() - server,
            "upstream": process_cpu(self.upstream.process.pid) - upstream,
        }
        best.add(**sample)
        if self.verbose:
            print("    " + "  ".join(f"{k} {v * 1e3:6.1f}" for k, v in sample.items()))
        return timed.run

    def check(self, case: Case, want: Expected, run: Run, relayed: bool) -> None:
        if relayed and case.client == "sse":
            problem = sse_problem(want, run)
        else:
            problem = ours_problem(want, run)
        if problem is None and case.events and run.events != case.events:
            problem = f"{run.events} events, the first in-process run had {case.events}"
        if problem is not None and case.problem is None:
            case.problem = ("relay: " if relayed else "in-process: ") + problem

    def measure(self, case: Case) -> Case:
        try:
            asyncio.run(self._measure(case))
        except (StreamError, httpx.HTTPError, RuntimeError) as exc:
            case.problem = case.problem or f"{type(exc).__name__}: {exc}"
        return case

    async def _measure(self, case: Case) -> None:
        want = bench_client.expected(case.protocol, case.fragments)
        relayed = self.relay_client(case)
        try:
            async with self.direct_client(case) as direct, httpx.AsyncClient(timeout=60) as http:
                streams: dict[str, Stream] = {
                    "in-process": lambda keep: consume(direct, keep),
                    "relay": self.relay_stream(case, relayed, http),
                }
                # Untimed: open the connections, check the whole event stream both ways.
                for name, stream in streams.items():
                    events: list[Any] = []
                    self.queue(case)
                    run = (await stream(events)).run
                    problem = stream_problem(want, events)
                    if problem is not None:
                        case.problem = f"{name}: {problem}"
                    self.check(case, want, run, name == "relay")
                    case.events = case.events or run.events
                del events
                for rep in range(self.reps):
                    if case.problem is not None:
                        return
                    order = ("in-process", "relay") if rep % 2 == 0 else ("relay", "in-process")
                    for name in order:
                        self.queue(case)
                        if self.verbose:
                            print(f"  {name}")
                        best = case.relay if name == "relay" else case.inproc
                        run = await self.timed(streams[name], best)
                        self.check(case, want, run, name == "relay")
        finally:
            if relayed is not None:
                await relayed.aclose()

    def profile(self, case: Case, top: int) -> None:
        """cProfile of one relay run in the server (which must be a profiled one), then of
        another in this process: separate runs, so one profiler does not slow the other party."""
        profiler = cProfile.Profile()

        async def run() -> pstats.Stats:
            relayed = self.relay_client(case)
            async with httpx.AsyncClient(timeout=60) as http:
                stream = self.relay_stream(case, relayed, http)
                self.queue(case)
                await stream(None)  # opens the connections and warms up, unprofiled
                self.queue(case)
                self.server.start_profile()
                await stream(None)
                stats = self.server.stop_profile()
                self.queue(case)
                profiler.enable()
                await stream(None)
                profiler.disable()
                if relayed is not None:
                    await relayed.aclose()
            return stats

        stats = asyncio.run(run())
        print(f"\n=== cProfile: the server, one relay run of {case.name}, top {top} by tottime")
        stats.strip_dirs().sort_stats("tottime").print_stats(top)
        print(f"=== cProfile: the relay client, {case.name}, top {top} by tottime")
        client = pstats.Stats(profiler, stream=sys.stdout)
        client.strip_dirs().sort_stats("tottime").print_stats(top)


# --- stages: the relay's per-event work, one step at a time, in this process ------------------


def stages(protocol: str, fragments: int, reps: int) -> None:
    """CPU of each step the relay adds, without the servers or the network: the same calls the
    server's producer and reader make per event, timed alone on the body's events (min of
    `reps`, `time.process_time`). Not a substitute for the wall-clock table: a split of it."""
    from modelstream import StreamDecoder
    from modelstream.server import wire
    from modelstream.server.metrics import ServerMetrics
    from modelstream.server.stores import MemoryStore
    from modelstream.traces.record import TurnRecorder

    body = synthetic.build(protocol, "text", fragments).data
    chunks = [body[i : i + 16 * 1024] for i in range(0, len(body), 16 * 1024)]
    events: list[Any] = []
    stored: list[bytes] = []
    relayed = b""
    batch = 80  # about the events of one 16 KiB upstream chunk: what a reader gets at once

    def decode() -> None:  # the upstream leg: in-process and the server's producer alike
        decoder = StreamDecoder(protocol)
        events[:] = [event for chunk in chunks for event in decoder.feed(chunk)]
        events.extend(decoder.end())

    def dumps_dropped() -> None:  # serialized and let go at once
        for event in events:
            dumps(event)

    def dumps_kept() -> None:  # serialized and kept, as the store keeps them
        stored[:] = [dumps(event) for event in events]

    def dumps_kept_copy() -> None:  # kept as exact-size copies
        stored[:] = [b"".join((dumps(event), b"")) for event in events]

    def store() -> None:
        async def append() -> None:
            memory = MemoryStore()
            await memory.create("resp_0")
            for seq, data in enumerate(stored, 1):
                await memory.append("resp_0", seq, data)

        asyncio.run(append())

    def frames() -> None:
        nonlocal relayed
        response_id = "resp_" + "0" * 32
        relayed = b"".join(
            wire.frames(response_id, list(enumerate(stored[i : i + batch], i + 1)))
            for i in range(0, len(stored), batch)
        )

    def observe() -> None:
        recorder = TurnRecorder(
            trace_id="t", model="m", client_type=protocol, provider=None, config={}, messages=[]
        )
        for event in events:
            recorder.observe(event)

    def metrics() -> None:
        counter = ServerMetrics().events
        for _ in events:
            counter.inc("anthropic")

    def client_sse() -> None:  # the fallback relay client, minus httpx
        decoder = SSEDecoder()
        for i in range(0, len(relayed), 64 * 1024):
            for frame in decoder.feed(relayed[i : i + 64 * 1024]):
                if frame.data != "[DONE]":
                    loads_event(frame.data)

    def client_modelstream() -> None:  # client_type="modelstream"'s decoder, minus httpx
        decoder = StreamDecoder("modelstream")
        for i in range(0, len(relayed), 64 * 1024):
            decoder.feed(relayed[i : i + 64 * 1024])
        decoder.feed(b"data: [DONE]\n\n")
        decoder.end()

    steps: list[tuple[str, Callable[[], None], str]] = [
        ("decode", decode, "StreamDecoder fed 16 KiB: both paths (server: its AsyncClient)"),
        ("dumps, dropped", dumps_dropped, "jsonwire.dumps of each event, result let go"),
        ("dumps, kept", dumps_kept, "the same, results kept (as the store keeps them)"),
        ("dumps, kept copy", dumps_kept_copy, "the same, kept as exact-size copies"),
        ("store.append", store, "MemoryStore.append of each (one event loop)"),
        ("wire.frames", frames, f"id: + data: frames, {batch} events a batch"),
        ("recorder.observe", observe, "the server's trace recorder, per event"),
        ("metrics", metrics, "events_total.inc per event"),
        ("client: sse", client_sse, "SSEDecoder + loads_event of the relayed wire"),
        ("client: modelstream", client_modelstream, "StreamDecoder('modelstream')"),
    ]
    print(f"\nstages: {protocol}, {fragments:,} chunks, CPU ms (min of {reps}), per event µs")
    for name, step, what in steps:
        best = float("inf")
        for _ in range(reps):
            if name == "dumps, kept copy":
                stored.clear()
            gc.collect()
            start = time.process_time()
            try:
                step()
            except Exception as exc:  # an internal API this split calls has changed
                print(f"  {name:<20} unavailable: {type(exc).__name__}: {exc}")
                break
            best = min(best, time.process_time() - start)
        else:
            per_event = best / max(len(events), 1) * 1e6
            print(f"  {name:<20} {best * 1e3:7.1f} {per_event:6.2f}  {what}")
        if name == "dumps, kept":
            stored.clear()  # the next step allocates its copies on a heap without them
    print(f"  (relayed wire {len(relayed):,} bytes for an upstream body of {len(body):,})")


# --- report ----------------------------------------------------------------------------------


def report(cases: list[Case]) -> int:
    header = (
        f"{'case':<38} {'events':>7} {'in-proc ev/s':>12} {'relay ev/s':>10} {'in-proc ms':>10} "
        f"{'relay ms':>8} {'ratio':>6}  target ≥{RATIO_TARGET:.1f}"
    )
    print(header)
    print("-" * len(header))
    status = 0
    for case in cases:
        if case.problem is not None:
            print(f"{case.name:<38} WRONG RESULT: {case.problem}")
            status = 2
            continue
        ok = case.ratio >= RATIO_TARGET
        status = status or (0 if ok else 1)
        print(
            f"{case.name:<38} {case.events:>7,} {case.events / case.inproc.wall:>12,.0f} "
            f"{case.events / case.relay.wall:>10,.0f} {case.inproc.wall * 1e3:>10.1f} "
            f"{case.relay.wall * 1e3:>8.1f} {case.ratio:>6.2f}  {'PASS' if ok else 'FAIL'}"
        )
    measured = [case for case in cases if case.problem is None]
    if measured:
        print(
            "\nwhere the time goes (min over the runs, ms): first event; CPU of each party "
            "(client = this process); cpu ratio = in-process client CPU / busiest relay party"
        )
        for case in measured:
            i, r = case.inproc, case.relay
            print(
                f"  {case.name:<36} in-process: first {i.first * 1e3:5.1f}, client "
                f"{i.client * 1e3:5.0f}, emulator {i.upstream * 1e3:4.0f} | relay: first "
                f"{r.first * 1e3:5.1f}, server {r.server * 1e3:5.0f}, client "
                f"{r.client * 1e3:5.0f}, emulator {r.upstream * 1e3:4.0f} | cpu ratio "
                f"{case.cpu_ratio:.2f}"
            )
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the size, 3 reps")
    parser.add_argument("--reps", type=int, help="timed repetitions (default 7, quick 3)")
    parser.add_argument(
        "--protocol",
        action="append",
        choices=SERVED,
        help="default: anthropic-messages, openai-chat",
    )
    parser.add_argument(
        "--chunking", action="append", choices=bench_client.CHUNKINGS, help="default: both"
    )
    parser.add_argument(
        "--client",
        action="append",
        choices=CLIENTS,
        help="the relay's client (default: modelstream, or sse while the library lacks it)",
    )
    parser.add_argument(
        "--no-traces", action="store_true", help="the server records no traces (default: it does)"
    )
    parser.add_argument(
        "--stages", action="store_true", help="then split the relay's per-event CPU by step"
    )
    parser.add_argument("--profile", action="store_true", help="cProfile one relay run per case")
    parser.add_argument("--top", type=int, default=30, help="rows of each profile")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every timed run")
    parser.add_argument("--serve-profiled", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("serve_args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_profiled:
        return serve_profiled(args.serve_profiled, args.serve_args)

    reps = args.reps or (3 if args.quick else 7)
    fragments = FRAGMENTS // 4 if args.quick else FRAGMENTS
    available = modelstream_client_available()
    clients = args.client or (["modelstream"] if available else ["sse"])
    if "modelstream" in clients and not available:
        parser.error('this library has no client_type="modelstream" client yet: use --client sse')
    traces = not args.no_traces
    with tempfile.TemporaryDirectory(prefix="bench-relay-") as tmp:
        folder = Path(tmp)
        upstream = Upstream()
        servers: list[RelayServer] = []
        try:
            server = RelayServer(upstream.url, folder, traces)
            servers.append(server)
            http_parser = "httptools" if loaded(server.pid, "httptools") else "h11"
            loop = "uvloop" if loaded(server.pid, "uvloop") else "asyncio"
            print(
                f"modelstream relay benchmark — Python {platform.python_version()}, "
                f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, {fragments:,} text "
                f"chunks, min of {reps} runs, wall clock\n"
                f"server: modelstream serve (uvicorn {version('uvicorn')}, HTTP parser "
                f"{http_parser}, {loop} loop), MemoryStore, traces {'on' if traces else 'off'}; "
                "relay client: "
                + ", ".join(
                    "modelstream = AsyncClient(client_type='modelstream')"
                    if c == "modelstream"
                    else "sse = fallback httpx + SSEDecoder + loads_event"
                    for c in clients
                )
            )
            bench = Bench(upstream, server, reps, args.verbose)
            cases: list[Case] = []
            for protocol in args.protocol or DEFAULT_PROTOCOLS:
                for chunking in args.chunking or DEFAULT_CHUNKINGS:
                    for client in clients:
                        case = Case(protocol, chunking, client, fragments)
                        print(f"  measuring {case.name}…", flush=True)
                        cases.append(bench.measure(case))
            print(f"  (load {os.getloadavg()[0]:.2f} at the end)\n")
            status = report(cases)
            if args.stages:
                for protocol in args.protocol or DEFAULT_PROTOCOLS:
                    stages(protocol, fragments, reps)
            if args.profile:
                server.close()
                for case in cases:
                    profile = folder / f"server-{len(servers)}.prof"
                    profiled = RelayServer(upstream.url, folder, traces, profile)
                    servers.append(profiled)
                    Bench(upstream, profiled, reps).profile(case, args.top)
                    profiled.close()
        except RuntimeError as exc:  # a party did not start
            print(f"error: {exc}", file=sys.stderr)
            return 2
        finally:
            for started in servers:
                started.close()
            upstream.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
