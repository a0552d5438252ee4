"""Decode throughput: our CPU time against a floor of SSE splitting plus `orjson.loads`.

For each protocol and case (see `synthetic.py`) the body is built in memory, fed to
`modelstream.StreamDecoder` in network-sized slices, and timed with `time.process_time`. The
floor is the least any decoder must do with the same whole body: split it into SSE frames, take
each `data:` payload and `orjson.loads` it (for Bedrock's binary AWS event stream: split the
messages by their length prefix, check both CRC-32s of each as the format requires, and
`orjson.loads` each payload). Ours and the floor run
interleaved, several times; the minimum of each counts. Ours is driven like a streaming client:
it handles each event and keeps none (keeping 20,000 events is the caller's cost, not the
decoder's). Every run is checked (the last event is a `stop` with the expected finish reason; the
final message holds exactly the body's text or arguments), and an untimed first run checks that
the deltas join to them, so a broken decoder cannot look fast.

Targets: ours ≤ 2.0 × floor for every case, and linear cost: 8 × the fragments costs at most
9 × the time.

For the event stream the floor includes the two CRC checks (decided in issue 18: a decoder that
skipped them would not read the format), and the floor without them (`floor_eventstream`) is
printed beside it, so the cost of the checks stays in plain sight.

    .venv/bin/python bench/bench_decode.py            # full run (20,000 chunks, 5,000 fragments)
    .venv/bin/python bench/bench_decode.py --quick    # smoke run, a quarter of the sizes
    .venv/bin/python bench/bench_decode.py --protocol openai-chat --case text --profile

Exit status: 0 all targets met, 1 a target missed, 2 a decoder produced a wrong result.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import platform
import pstats
import struct
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

import synthetic
from modelstream import StreamDecoder
from modelstream.errors import StreamError
from modelstream.framing.sse import SSEDecoder
from modelstream.results import FinalResponse

RATIO_TARGET = 2.0
SCALE = 8
SCALE_TARGET = 9.0
SIZES = {"text": 20_000, "tool_call": 5_000}
NETWORK_CHUNK = 16 * 1024


# --- the two things timed --------------------------------------------------------------------


def floor(body: bytes) -> int:
    """The least work: split into SSE frames, `orjson.loads` each `data:` payload; for a binary
    AWS event stream, split messages by their length prefix, check both CRCs and `orjson.loads`
    each payload."""
    if is_eventstream(body):
        return floor_eventstream_checked(body)
    loads = orjson.loads
    frames = 0
    for frame in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        for line in frame.split(b"\n"):
            if line.startswith(b"data:") and line != b"data: [DONE]":
                loads(line[5:])
                frames += 1
    return frames


def floor_eventstream(body: bytes) -> int:
    """The event-stream floor without the CRC checks: printed beside the target, not the target."""
    loads, lengths = orjson.loads, _LENGTHS.unpack_from
    frames = pos = 0
    while pos < len(body):
        total, headers = lengths(body, pos)
        loads(body[pos + 12 + headers : pos + total - 4])
        pos += total
        frames += 1
    return frames


_LENGTHS = struct.Struct(">II")
_PRELUDE = struct.Struct(">III")


def floor_eventstream_checked(body: bytes) -> int:
    """The event-stream floor plus what the format requires of every decoder: the prelude CRC
    and the message CRC of each message checked (`zlib.crc32` over memoryview slices, no copy):
    the event stream's floor."""
    loads, prelude, crc32 = orjson.loads, _PRELUDE.unpack_from, zlib.crc32
    view = memoryview(body)
    frames = pos = 0
    while pos < len(body):
        total, headers, prelude_crc = prelude(body, pos)
        end = pos + total
        if crc32(view[pos : pos + 8]) != prelude_crc:
            raise ValueError(f"bad prelude CRC in message {frames}")
        if crc32(view[pos : end - 4]) != int.from_bytes(body[end - 4 : end], "big"):
            raise ValueError(f"bad message CRC in message {frames}")
        loads(body[pos + 12 + headers : end - 4])
        pos = end
        frames += 1
    return frames


def is_eventstream(body: bytes) -> bool:
    return body[:1] == b"\x00"  # an event-stream message length, never the start of SSE text


@dataclass
class Run:
    decoder: StreamDecoder
    events: int
    last: Any  # the last event


def ours(protocol: str, chunks: list[bytes]) -> Run:
    """The whole pipeline, driven like a streaming client: handle each event, keep none."""
    decoder = StreamDecoder(protocol)
    count = 0
    last: Any = None
    for chunk in chunks:
        events = decoder.feed(chunk)
        if events:
            count += len(events)
            last = events[-1]
    events = decoder.end()
    if events:
        count += len(events)
        last = events[-1]
    return Run(decoder, count, last)


def ours_keeping_events(protocol: str, chunks: list[bytes]) -> tuple[list[Any], StreamDecoder]:
    """The same, keeping every event: for the full check of the event stream (untimed)."""
    decoder = StreamDecoder(protocol)
    events: list[Any] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    events += decoder.end()
    return events, decoder


def cpu_seconds(run: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()  # start each run with the same heap: no collection debt from the last one
    start = time.process_time()
    result = run()
    return time.process_time() - start, result


# --- correctness -----------------------------------------------------------------------------


def problem_with(body: synthetic.Body, run: Run) -> str | None:
    """Why a timed run's output is wrong, or None: cheap checks that a broken decoder fails."""
    last, result = run.last, run.decoder.result
    if last is None or last["event_type"] != "stop" or not isinstance(result, FinalResponse):
        return f"the last event is not a stop (error: {run.decoder.error!r})"
    if last["finish_reason"] != body.finish_reason:
        return f"finish_reason {last['finish_reason']!r}, expected {body.finish_reason!r}"
    items: list[Any] = result.message["content_items"]
    if len(items) != 1:
        return f"{len(items)} items in the final message, expected 1"
    item = items[0]
    if body.case == "text":
        if item.get("text") != body.text:
            return f"text of {len(item.get('text') or '')} characters, expected {len(body.text)}"
    elif item.get("name") != synthetic.TOOL_NAME or item.get("arguments") != body.arguments:
        return "the tool call's name or arguments differ from the body's"
    return None


def stream_problem(body: synthetic.Body, events: list[Any]) -> str | None:
    """Why the delta events do not add up to the body's text or arguments, or None."""
    deltas = [e["content_items"][0] for e in events if e["event_type"] == "delta"]
    if body.case == "text":
        streamed = "".join(item["text"] for item in deltas if item["type"] == "text.delta")
        if streamed != body.text:
            return f"text deltas join to {len(streamed)} characters, expected {len(body.text)}"
        return None
    joined = "".join(item["arguments"] for item in deltas if item["type"] == "tool_call.delta")
    try:
        streamed_arguments = orjson.loads(joined)
    except orjson.JSONDecodeError:
        return f"the argument deltas join to {len(joined)} characters that are not JSON"
    if streamed_arguments != body.arguments:
        return "the argument deltas join to other arguments than the body's"
    return None


def placeholder_reason(protocol: str) -> str | None:
    """Why the protocol cannot be measured yet (its decoder is a stub), or None."""
    body = synthetic.build(protocol, "text", 3)
    try:
        ours(protocol, [body.data])
    except StreamError as exc:
        if isinstance(exc.__cause__, NotImplementedError):
            return "decoder is a placeholder (raises NotImplementedError)"
    except NotImplementedError:
        return "decoder is a placeholder (raises NotImplementedError)"
    return None


# --- measuring -------------------------------------------------------------------------------


@dataclass
class Measurement:
    protocol: str
    case: str
    fragments: int
    events: int = 0
    ours: float = float("inf")
    floor: float = float("inf")
    small_fragments: int = 0
    ours_small: float = float("inf")
    floor_small: float = float("inf")
    unchecked_floor: float | None = None  # event stream only: the floor without its CRC checks
    problem: str | None = None

    @property
    def ratio(self) -> float:
        return self.ours / self.floor

    @property
    def scale(self) -> float:
        return self.ours / self.ours_small

    @property
    def floor_scale(self) -> float:
        return self.floor / self.floor_small


def slices(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def measure(protocol: str, case: str, fragments: int, reps: int, chunk: int) -> Measurement:
    big = synthetic.build(protocol, case, fragments)
    small = synthetic.build(protocol, case, max(fragments // SCALE, 5))
    result = Measurement(protocol, case, fragments)
    result.small_fragments = small.fragments
    big_chunks, small_chunks = slices(big.data, chunk), slices(small.data, chunk)

    def run_ours(body: synthetic.Body, chunks: list[bytes]) -> float:
        try:
            seconds, run = cpu_seconds(lambda: ours(protocol, chunks))
        except StreamError as exc:
            result.problem = f"{type(exc).__name__}: {exc}"
            return float("inf")
        result.problem = result.problem or problem_with(body, run)
        if body is big:
            result.events = run.events
        return seconds

    # An untimed round checks the whole event stream and warms caches before anything is timed.
    for body, chunks in ((big, big_chunks), (small, small_chunks)):
        try:
            events, _ = ours_keeping_events(protocol, chunks)
        except StreamError as exc:
            result.problem = f"{type(exc).__name__}: {exc}"
            return result
        result.problem = stream_problem(body, events)
        if result.problem is not None:
            return result
    floor(big.data)
    checked = is_eventstream(big.data)
    for _ in range(reps):
        result.ours = min(result.ours, run_ours(big, big_chunks))
        result.floor = min(result.floor, cpu_seconds(lambda: floor(big.data))[0])
        if checked:
            seconds = cpu_seconds(lambda: floor_eventstream(big.data))[0]
            result.unchecked_floor = min(result.unchecked_floor or seconds, seconds)
        result.ours_small = min(result.ours_small, run_ours(small, small_chunks))
        result.floor_small = min(result.floor_small, cpu_seconds(lambda: floor(small.data))[0])
        if result.problem is not None:
            break
    return result


def stages(protocol: str, case: str, fragments: int, reps: int, chunk: int) -> None:
    """Where the time goes, without cProfile's overhead: SSE, then JSON, then the rest."""
    body = synthetic.build(protocol, case, fragments)
    chunks = slices(body.data, chunk)

    def sse() -> None:
        decoder = SSEDecoder()
        for piece in chunks:
            decoder.feed(piece)
        decoder.end()

    def sse_json() -> None:
        decoder, loads = SSEDecoder(), orjson.loads
        for piece in chunks:
            for frame in decoder.feed(piece):
                if frame.data != "[DONE]":
                    loads(frame.data)
        decoder.end()

    best = [float("inf")] * 4
    for _ in range(reps):
        for n, run in enumerate(
            (lambda: floor(body.data), sse, sse_json, lambda: ours(protocol, chunks))
        ):
            best[n] = min(best[n], cpu_seconds(run)[0])
    low, split, json_, full = (seconds * 1e3 for seconds in best)
    print(
        f"  {protocol:<24} {case:<9} floor {low:6.1f} ms | ours {full:6.1f} ms = SSE {split:5.1f}"
        f" + JSON {json_ - split:5.1f} + adapter, assembler, events {full - json_:5.1f}"
    )


def profile(protocol: str, case: str, fragments: int, chunk: int, top: int) -> None:
    body = synthetic.build(protocol, case, fragments)
    chunks = slices(body.data, chunk)
    profiler = cProfile.Profile()
    profiler.enable()
    ours(protocol, chunks)
    profiler.disable()
    print(f"\n=== cProfile: {protocol} {case} ({fragments:,} fragments), top {top} by tottime")
    pstats.Stats(profiler, stream=sys.stdout).strip_dirs().sort_stats("tottime").print_stats(top)


# --- report ----------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def report(results: list[Measurement], skipped: dict[str, str]) -> int:
    header = (
        f"{'protocol':<24} {'case':<9} {'fragments':>9} {'events':>7} {'events/s':>11} "
        f"{'ours ms':>8} {'floor ms':>8} {'ratio':>6}  target ≤{RATIO_TARGET:.1f}"
    )
    print(header)
    print("-" * len(header))
    status = 0
    for m in results:
        if m.problem is not None:
            print(f"{m.protocol:<24} {m.case:<9} {m.fragments:>9,}  WRONG RESULT: {m.problem}")
            status = 2
            continue
        ok = m.ratio <= RATIO_TARGET
        status = status or (0 if ok else 1)
        print(
            f"{m.protocol:<24} {m.case:<9} {m.fragments:>9,} {m.events:>7,} "
            f"{m.events / m.ours:>11,.0f} {m.ours * 1e3:>8.1f} {m.floor * 1e3:>8.1f} "
            f"{m.ratio:>6.2f}  {verdict(ok)}"
        )
    for protocol, why in skipped.items():
        print(f"{protocol:<24} {'(all)':<9}  SKIPPED: {why}")
    checked = [m for m in results if m.problem is None and m.unchecked_floor is not None]
    if checked:
        print(
            "\nevent stream: its floor above checks both CRC-32s, as the format requires; "
            "without the checks (not the target):"
        )
        for m in checked:
            assert m.unchecked_floor is not None
            print(
                f"  {m.protocol:<24} {m.case:<9} floor {m.floor * 1e3:6.1f} ms, without CRCs "
                f"{m.unchecked_floor * 1e3:6.1f} ms (×{m.unchecked_floor / m.floor:.2f}); "
                f"ours ×{m.ours / m.unchecked_floor:.2f} of it"
            )
    print(f"\nlinearity: {SCALE}× the fragments must cost at most {SCALE_TARGET:.0f}× the time")
    for m in results:
        if m.problem is not None:
            continue
        ok = m.scale <= SCALE_TARGET
        status = status or (0 if ok else 1)
        print(
            f"  {m.protocol:<24} {m.case:<9} {m.small_fragments:>6,} → {m.fragments:>6,}: "
            f"ours ×{m.scale:.2f} (floor ×{m.floor_scale:.2f})  {verdict(ok)}"
        )
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the sizes, 3 reps")
    parser.add_argument("--reps", type=int, help="timed repetitions (default 5, quick 3)")
    parser.add_argument("--protocol", action="append", choices=synthetic.PROTOCOLS)
    parser.add_argument("--case", action="append", choices=synthetic.CASES)
    parser.add_argument("--chunk-size", type=int, default=NETWORK_CHUNK, help="bytes per feed")
    parser.add_argument("--profile", action="store_true", help="cProfile each selected case")
    parser.add_argument("--top", type=int, default=18, help="rows of each profile")
    parser.add_argument(
        "--stages", action="store_true", help="split each case's time into SSE, JSON and the rest"
    )
    args = parser.parse_args(argv)

    reps = args.reps or (3 if args.quick else 5)
    divisor = 4 if args.quick else 1
    protocols = args.protocol or list(synthetic.PROTOCOLS)
    cases = args.case or list(synthetic.CASES)
    print(
        f"modelstream decode benchmark — Python {platform.python_version()}, "
        f"orjson {orjson.__version__}, {args.chunk_size:,}-byte feeds, min of {reps} runs"
    )
    skipped: dict[str, str] = {}
    results: list[Measurement] = []
    for protocol in protocols:
        why = placeholder_reason(protocol)
        if why is not None:
            skipped[protocol] = why
            print(f"  skipping {protocol}: {why}", flush=True)
            continue
        for case in cases:
            fragments = SIZES[case] // divisor
            print(f"  measuring {protocol} {case} ({fragments:,})…", flush=True)
            results.append(measure(protocol, case, fragments, reps, args.chunk_size))
    print()
    status = report(results, skipped)
    if args.stages:
        print("\nstages (min of each, CPU ms):")
        for m in results:
            stages(m.protocol, m.case, m.fragments, reps, args.chunk_size)
    if args.profile:
        for m in results:
            profile(m.protocol, m.case, m.fragments, args.chunk_size, args.top)
    return status


if __name__ == "__main__":
    sys.exit(main())
