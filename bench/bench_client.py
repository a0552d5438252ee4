"""End-to-end client CPU: `AsyncClient` and `Client` over loopback HTTP against an httpx floor.

The emulator (`modelstream.testing.Emulator`) serves a synthetic 20,000-chunk text stream
(`synthetic.py`) from a child process, so none of its CPU is counted; this process measures its
own CPU (`time.process_time`: user + system time of every thread of the client process) while
it streams the body:

- **ours**: `AsyncClient.stream(...)` (or `Client.stream(...)`), iterating the events, counting
  them and keeping the last, as a streaming caller that hands each event on would.
- **floor**: the least an httpx user must do with the same response: httpx `AsyncClient`
  (or `Client`) `stream("POST", ...)`, `aiter_lines()` (`iter_lines()`) and `json.loads` of
  each `data:` line, nothing else.

Each client is built and its connection opened before anything is timed (an untimed first
request also checks that the delta events join to the body's text). Ours and the floor then run
interleaved, several times; the minimum of each counts. Every timed run is checked (ours: the
last event is a `stop` with the body's finish reason and the final message holds exactly its
text; floor: every `data:` frame was parsed and the last one is the body's), so a broken client
cannot look fast.

Target: ours ≤ 1.3 × floor for every case.

    .venv/bin/python bench/bench_client.py            # full run
    .venv/bin/python bench/bench_client.py --quick    # smoke run: a quarter of the size, 3 reps
    .venv/bin/python bench/bench_client.py --mode sync --chunking frame --stages --profile

Exit status: 0 all targets met, 1 a target missed, 2 a client produced a wrong result.
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
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import IO, Any, TypeVar

import httpx

import synthetic
from modelstream import AsyncClient, Client, Message, StreamDecoder
from modelstream.errors import StreamError
from modelstream.protocols import REGISTRY, encode_request
from modelstream.results import FinalResponse
from modelstream.testing import routes

RATIO_TARGET = 1.3
FRAGMENTS = 20_000
DEFAULT_PROTOCOLS = ("openai-chat", "anthropic-messages")
MODES = ("async", "sync")
# Bytes per HTTP chunk the emulator writes. 16 KiB is the largest TLS record a provider's
# server sends, and what a reader gets from a stream whose bytes arrive faster than it reads;
# "frame" writes one chunk per SSE frame, as a live stream at generation pace does, so every
# per-chunk cost (h11's chunk parsing, httpx's per-chunk layers, the client's own per-read work)
# is paid 20,000 times.
CHUNKINGS = {"16k": 16 * 1024, "frame": None}
PROMPT: list[Message] = [
    {"role": "user", "content_items": [{"type": "text.done", "text": "Write a long note."}]}
]
# A model of each protocol, and what a client's base URL adds to the emulator's (the registry's)
MODELS = {name: REGISTRY[name].example_model for name in synthetic.PROTOCOLS}
BASE_PATHS = {name: routes.base_path(name) for name in synthetic.PROTOCOLS}
API_KEY = "bench-key-not-secret"

T = TypeVar("T")


# --- the upstream: the emulator in a child process -------------------------------------------


def serve() -> int:
    """The child: an emulator that queues one reply per command line read from stdin.

    Protocol: it prints its URL; then for each line `PROTOCOL FRAGMENTS CHUNK` (CHUNK a byte
    count or `frame`) it queues that body and prints `queued`. End of input stops it.
    """
    from modelstream.testing import Emulator, Reply

    bodies: dict[tuple[str, int], bytes] = {}
    with Emulator() as emu:
        print(emu.url, flush=True)
        for line in sys.stdin:
            protocol, fragments, chunk = line.split()
            key = (protocol, int(fragments))
            if key not in bodies:
                bodies[key] = synthetic.build(protocol, "text", int(fragments)).data
            size = None if chunk == "frame" else int(chunk)
            emu.queue(
                Reply.body(bodies[key], chunk_size=size), path=request_path(protocol).split("?")[0]
            )
            print("queued", flush=True)
    return 0


class ChildEmulator:
    """A bench script's child (`script *args`): it prints its URL; an emulator then answers each
    line the parent writes with "queued" once the replies are queued."""

    def __init__(self, script: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url = self._read()

    def _read(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the child {self.process.args} ended before answering")
        return line.strip()

    def _ask(self, line: str) -> None:
        stdin: IO[str] | None = self.process.stdin
        assert stdin is not None
        stdin.write(line + "\n")
        stdin.flush()
        if self._read() != "queued":
            raise RuntimeError("the emulator did not queue the reply")

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Upstream(ChildEmulator):
    """The parent's handle on this file's child emulator: its URL, and queueing the next reply."""

    def __init__(self) -> None:
        super().__init__(__file__, "--serve")

    def queue(self, protocol: str, fragments: int, chunk: int | None) -> None:
        self._ask(f"{protocol} {fragments} {'frame' if chunk is None else chunk}")


# --- what a run must produce -----------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """What a correct run makes of the body, computed once, untimed."""

    body: synthetic.Body
    frames: int  # `data:` lines carrying JSON (not `[DONE]`)
    last_frame: Any  # the last of them, parsed


def expected(protocol: str, fragments: int) -> Expected:
    body = synthetic.build(protocol, "text", fragments)
    payloads = [
        line[5:]
        for line in body.data.decode().splitlines()
        if line.startswith("data:") and line != "data: [DONE]"
    ]
    return Expected(body, len(payloads), json.loads(payloads[-1]))


@dataclass
class Run:
    events: int
    last: Any  # ours: the last event; floor: the last parsed frame
    result: Any = None  # ours: the stream's result


def ours_problem(want: Expected, run: Run) -> str | None:
    """Why a timed run of ours is wrong, or None: cheap checks a broken client fails."""
    last, result = run.last, run.result
    if last is None or last["event_type"] != "stop" or not isinstance(result, FinalResponse):
        return f"the stream did not end with a stop (result: {result!r})"
    if last["finish_reason"] != want.body.finish_reason:
        return f"finish_reason {last['finish_reason']!r}, expected {want.body.finish_reason!r}"
    items: list[Any] = result.message["content_items"]
    text = items[0].get("text") if len(items) == 1 else None
    if text != want.body.text:
        size = len(text) if isinstance(text, str) else None
        return f"final text of {size} characters, expected {len(want.body.text)}"
    return None


def floor_problem(want: Expected, run: Run) -> str | None:
    if run.events != want.frames:
        return f"the floor parsed {run.events} frames, expected {want.frames}"
    if run.last != want.last_frame:
        return "the floor's last frame differs from the body's"
    return None


def stream_problem(want: Expected, events: list[Any]) -> str | None:
    """Why the text deltas do not join to the body's text, or None (the untimed check)."""
    streamed = "".join(
        item["text"]
        for event in events
        if event["event_type"] == "delta"
        for item in event["content_items"]
        if item["type"] == "text.delta"
    )
    if streamed != want.body.text:
        return f"text deltas join to {len(streamed)} characters, expected {len(want.body.text)}"
    return None


# --- the four things timed -------------------------------------------------------------------


async def ours_async(client: AsyncClient, keep: list[Any] | None = None) -> Run:
    count = 0
    last: Any = None
    async with client.stream(PROMPT) as stream:
        async for event in stream:
            count += 1
            last = event
            if keep is not None:
                keep.append(event)
    return Run(count, last, stream.result)


def ours_sync(client: Client, keep: list[Any] | None = None) -> Run:
    count = 0
    last: Any = None
    with client.stream(PROMPT) as stream:
        for event in stream:
            count += 1
            last = event
            if keep is not None:
                keep.append(event)
    return Run(count, last, stream.result)


async def floor_async(http: httpx.AsyncClient, url: str, request: bytes) -> Run:
    """httpx `aiter_lines` and `json.loads` of each `data:` line, nothing else."""
    loads = json.loads
    frames = 0
    last: Any = None
    async with http.stream("POST", url, content=request) as response:
        async for line in response.aiter_lines():
            if line.startswith("data:") and line != "data: [DONE]":
                last = loads(line[5:])
                frames += 1
    return Run(frames, last)


def floor_sync(http: httpx.Client, url: str, request: bytes) -> Run:
    """httpx `iter_lines` and `json.loads` of each `data:` line, nothing else."""
    loads = json.loads
    frames = 0
    last: Any = None
    with http.stream("POST", url, content=request) as response:
        for line in response.iter_lines():
            if line.startswith("data:") and line != "data: [DONE]":
                last = loads(line[5:])
                frames += 1
    return Run(frames, last)


# For `--stages` only: httpx's raw read alone, then with our decoder but without the client.


async def read_async(http: httpx.AsyncClient, url: str, request: bytes) -> Run:
    size = 0
    async with http.stream("POST", url, content=request) as response:
        async for chunk in response.aiter_raw():
            size += len(chunk)
    return Run(size, None)


def read_sync(http: httpx.Client, url: str, request: bytes) -> Run:
    size = 0
    with http.stream("POST", url, content=request) as response:
        for chunk in response.iter_raw():
            size += len(chunk)
    return Run(size, None)


async def decode_async(http: httpx.AsyncClient, url: str, request: bytes, protocol: str) -> Run:
    decoder = StreamDecoder(protocol)
    count = 0
    last: Any = None
    async with http.stream("POST", url, content=request) as response:
        async for chunk in response.aiter_raw():
            for event in decoder.feed(chunk):
                count += 1
                last = event
    for event in decoder.end():
        count += 1
        last = event
    return Run(count, last, decoder.result)


def decode_sync(http: httpx.Client, url: str, request: bytes, protocol: str) -> Run:
    decoder = StreamDecoder(protocol)
    count = 0
    last: Any = None
    with http.stream("POST", url, content=request) as response:
        for chunk in response.iter_raw():
            for event in decoder.feed(chunk):
                count += 1
                last = event
    for event in decoder.end():
        count += 1
        last = event
    return Run(count, last, decoder.result)


def floor_request(protocol: str) -> bytes:
    """The streaming request body ours sends (the floor sends it as is)."""
    return json.dumps(encode_request(protocol, MODELS[protocol], PROMPT).json).encode()


def request_path(protocol: str) -> str:
    """The emulator path (with query) a request of `protocol` goes to."""
    return BASE_PATHS[protocol] + encode_request(protocol, MODELS[protocol], PROMPT).path


def cpu(run: Callable[[], T]) -> tuple[float, T]:
    gc.collect()  # each run starts with the same heap: no collection debt from the last one
    start = time.process_time()
    result = run()
    return time.process_time() - start, result


async def cpu_async(run: Callable[[], Awaitable[T]]) -> tuple[float, T]:
    gc.collect()
    start = time.process_time()
    result = await run()
    return time.process_time() - start, result


# --- measuring -------------------------------------------------------------------------------


@dataclass
class Case:
    mode: str
    protocol: str
    chunking: str
    fragments: int
    events: int = 0
    ours: float = float("inf")
    floor: float = float("inf")
    problem: str | None = None

    @property
    def chunk(self) -> int | None:
        return CHUNKINGS[self.chunking]

    @property
    def ratio(self) -> float:
        return self.ours / self.floor

    @property
    def name(self) -> str:
        return f"{self.mode} {self.protocol} {self.chunking}"


class Bench:
    """Runs the cases against one upstream."""

    def __init__(self, upstream: Upstream, reps: int) -> None:
        self.upstream = upstream
        self.reps = reps
        self._expected: dict[tuple[str, int], Expected] = {}

    def expected(self, case: Case) -> Expected:
        key = (case.protocol, case.fragments)
        if key not in self._expected:
            self._expected[key] = expected(case.protocol, case.fragments)
        return self._expected[key]

    def base_url(self, protocol: str) -> str:
        return self.upstream.url + BASE_PATHS[protocol]

    def floor_url(self, protocol: str) -> str:
        return self.upstream.url + request_path(protocol)

    def queue(self, case: Case) -> None:
        self.upstream.queue(case.protocol, case.fragments, case.chunk)

    def check(self, case: Case, want: Expected, ours: Run | None, floor: Run | None) -> None:
        if ours is not None:
            case.problem = case.problem or ours_problem(want, ours)
            if case.events and ours.events != case.events:
                case.problem = case.problem or (
                    f"{ours.events} events, the untimed run had {case.events}"
                )
        if floor is not None:
            case.problem = case.problem or floor_problem(want, floor)

    def measure(self, case: Case) -> Case:
        try:
            if case.mode == "async":
                asyncio.run(self._measure_async(case))
            else:
                self._measure_sync(case)
        except (StreamError, httpx.HTTPError) as exc:
            case.problem = f"{type(exc).__name__}: {exc}"
        return case

    async def _measure_async(self, case: Case) -> None:
        want = self.expected(case)
        url, request = self.floor_url(case.protocol), floor_request(case.protocol)
        async with (
            AsyncClient(
                MODELS[case.protocol],
                api_key=API_KEY,
                base_url=self.base_url(case.protocol),
                client_type=case.protocol,
            ) as client,
            httpx.AsyncClient(timeout=60) as http,
        ):
            # Untimed: open both connections, check the whole event stream and warm up.
            events: list[Any] = []
            self.queue(case)
            first = await ours_async(client, events)
            case.problem = stream_problem(want, events) or ours_problem(want, first)
            case.events = first.events
            del events
            self.queue(case)
            self.check(case, want, None, await floor_async(http, url, request))
            for rep in range(self.reps):
                if case.problem is not None:
                    return
                for which in ("ours", "floor") if rep % 2 == 0 else ("floor", "ours"):
                    self.queue(case)
                    if which == "ours":
                        seconds, run = await cpu_async(lambda: ours_async(client))
                        self.check(case, want, run, None)
                        case.ours = min(case.ours, seconds)
                    else:
                        seconds, run = await cpu_async(lambda: floor_async(http, url, request))
                        self.check(case, want, None, run)
                        case.floor = min(case.floor, seconds)

    def _measure_sync(self, case: Case) -> None:
        want = self.expected(case)
        url, request = self.floor_url(case.protocol), floor_request(case.protocol)
        with (
            Client(
                MODELS[case.protocol],
                api_key=API_KEY,
                base_url=self.base_url(case.protocol),
                client_type=case.protocol,
            ) as client,
            httpx.Client(timeout=60) as http,
        ):
            events: list[Any] = []
            self.queue(case)
            first = ours_sync(client, events)
            case.problem = stream_problem(want, events) or ours_problem(want, first)
            case.events = first.events
            del events
            self.queue(case)
            self.check(case, want, None, floor_sync(http, url, request))
            for rep in range(self.reps):
                if case.problem is not None:
                    return
                for which in ("ours", "floor") if rep % 2 == 0 else ("floor", "ours"):
                    self.queue(case)
                    if which == "ours":
                        seconds, run = cpu(lambda: ours_sync(client))
                        self.check(case, want, run, None)
                        case.ours = min(case.ours, seconds)
                    else:
                        seconds, run = cpu(lambda: floor_sync(http, url, request))
                        self.check(case, want, None, run)
                        case.floor = min(case.floor, seconds)

    def stages(self, case: Case) -> None:
        """Where the CPU goes, without cProfile's overhead: httpx's raw read, plus our decoder
        (`StreamDecoder` fed each raw chunk), plus the client around it; and the floor."""
        want = self.expected(case)
        url, request = self.floor_url(case.protocol), floor_request(case.protocol)
        options: dict[str, Any] = {
            "api_key": API_KEY,
            "base_url": self.base_url(case.protocol),
            "client_type": case.protocol,
        }
        best: dict[str, float] = {}
        problems: list[str | None] = []

        def keep(name: str, seconds: float, run: Run) -> None:
            best[name] = min(best.get(name, float("inf")), seconds)
            if name in ("decoder", "ours"):
                problems.append(ours_problem(want, run))

        if case.mode == "async":

            async def measure() -> None:
                async with (
                    AsyncClient(MODELS[case.protocol], **options) as client,
                    httpx.AsyncClient(timeout=60) as http,
                ):
                    runs: dict[str, Callable[[], Awaitable[Run]]] = {
                        "read": lambda: read_async(http, url, request),
                        "decoder": lambda: decode_async(http, url, request, case.protocol),
                        "ours": lambda: ours_async(client),
                        "floor": lambda: floor_async(http, url, request),
                    }
                    for rep in range(self.reps + 1):  # the first round is untimed
                        for name, run in runs.items():
                            self.queue(case)
                            seconds, result = await cpu_async(run)
                            if rep:
                                keep(name, seconds, result)

            asyncio.run(measure())
        else:
            with (
                Client(MODELS[case.protocol], **options) as client,
                httpx.Client(timeout=60) as http,
            ):
                sync_runs: dict[str, Callable[[], Run]] = {
                    "read": lambda: read_sync(http, url, request),
                    "decoder": lambda: decode_sync(http, url, request, case.protocol),
                    "ours": lambda: ours_sync(client),
                    "floor": lambda: floor_sync(http, url, request),
                }
                for rep in range(self.reps + 1):
                    for name, sync_run in sync_runs.items():
                        self.queue(case)
                        seconds, result = cpu(sync_run)
                        if rep:
                            keep(name, seconds, result)
        problem = next((p for p in problems if p is not None), None)
        if problem is not None:
            print(f"  {case.name:<36} WRONG RESULT: {problem}")
            return
        read, decoder, ours, floor = (best[k] * 1e3 for k in ("read", "decoder", "ours", "floor"))
        print(
            f"  {case.name:<36} read {read:6.1f} + decoder {decoder - read:6.1f} "
            f"+ client {ours - decoder:5.1f} = ours {ours:6.1f} | floor {floor:6.1f} "
            f"(read + lines and json.loads {floor - read:6.1f})"
        )

    def profile(self, case: Case, top: int) -> None:
        """cProfile of one run of ours, client side only (the emulator is another process)."""
        profiler = cProfile.Profile()
        base_url = self.base_url(case.protocol)
        if case.mode == "async":

            async def run() -> None:
                async with AsyncClient(
                    MODELS[case.protocol],
                    api_key=API_KEY,
                    base_url=base_url,
                    client_type=case.protocol,
                ) as client:
                    self.queue(case)
                    await ours_async(client)  # opens the connection, untimed
                    self.queue(case)
                    profiler.enable()
                    await ours_async(client)
                    profiler.disable()

            asyncio.run(run())
        else:
            with Client(
                MODELS[case.protocol],
                api_key=API_KEY,
                base_url=base_url,
                client_type=case.protocol,
            ) as client:
                self.queue(case)
                ours_sync(client)
                self.queue(case)
                profiler.enable()
                ours_sync(client)
                profiler.disable()
        print(f"\n=== cProfile: {case.name} ({case.fragments:,} chunks), top {top} by tottime")
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.strip_dirs().sort_stats("tottime").print_stats(top)


# --- report ----------------------------------------------------------------------------------


def report(cases: list[Case]) -> int:
    header = (
        f"{'case':<36} {'events':>7} {'events/s':>10} {'ours ms':>8} {'floor ms':>9} "
        f"{'ratio':>6}  target ≤{RATIO_TARGET:.1f}"
    )
    print(header)
    print("-" * len(header))
    status = 0
    for case in cases:
        if case.problem is not None:
            print(f"{case.name:<36} WRONG RESULT: {case.problem}")
            status = 2
            continue
        ok = case.ratio <= RATIO_TARGET
        status = status or (0 if ok else 1)
        print(
            f"{case.name:<36} {case.events:>7,} {case.events / case.ours:>10,.0f} "
            f"{case.ours * 1e3:>8.1f} {case.floor * 1e3:>9.1f} {case.ratio:>6.2f}  "
            f"{'PASS' if ok else 'FAIL'}"
        )
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the size, 3 reps")
    parser.add_argument("--reps", type=int, help="timed repetitions (default 5, quick 3)")
    parser.add_argument(
        "--protocol", action="append", choices=synthetic.PROTOCOLS, help="default: chat, anthropic"
    )
    parser.add_argument("--mode", action="append", choices=MODES)
    parser.add_argument("--chunking", action="append", choices=CHUNKINGS)
    parser.add_argument(
        "--stages", action="store_true", help="split each case's CPU into read, decoder, client"
    )
    parser.add_argument("--profile", action="store_true", help="cProfile ours in each case")
    parser.add_argument("--top", type=int, default=20, help="rows of each profile")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve()

    reps = args.reps or (3 if args.quick else 5)
    fragments = FRAGMENTS // 4 if args.quick else FRAGMENTS
    print(
        f"modelstream client benchmark — Python {platform.python_version()}, "
        f"httpx {httpx.__version__}, {fragments:,} text chunks, min of {reps} runs; "
        "client-process CPU only (the emulator runs in a child process)"
    )
    upstream = Upstream()
    bench = Bench(upstream, reps)
    cases: list[Case] = []
    try:
        for mode in args.mode or MODES:
            for protocol in args.protocol or DEFAULT_PROTOCOLS:
                for chunking in args.chunking or CHUNKINGS:
                    case = Case(mode, protocol, chunking, fragments)
                    print(f"  measuring {case.name}…", flush=True)
                    cases.append(bench.measure(case))
        print()
        status = report(cases)
        if args.stages:
            print("\nstages (min of each, CPU ms):")
            for case in cases:
                bench.stages(case)
        if args.profile:
            for case in cases:
                bench.profile(case, args.top)
    finally:
        upstream.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
