"""Whole-process replay: `modelstream replay --format jsonl FILE > /dev/null` against a floor.

Each case is a synthetic text body (`synthetic.py`, `--chunks` text chunks, 100,000 by default)
written to a temporary file with no sidecar, as a recording is found: `replay` recognizes its
protocol, decodes it and writes one JSON line per event. The floor (`replay_floor.py`) is another
Python process, importing nothing but `orjson`, that reads the same file in the same pieces and
`orjson.loads` then `orjson.dumps` each payload, writing the lines out: SSE frames split on the
blank line; for Bedrock's binary AWS event stream, messages split by their length prefix with
both CRC-32s of each checked (the checks the format requires). Both are timed as whole processes
(start-up, imports, reading, writing) by their CPU (user + system, from `os.wait4`), interleaved,
`--runs` times each; the minimum of each counts. An untimed first run of each checks the output
(as many lines as the body has events decoded in-process, a `stop` last) and leaves the
children's bytecode cached, as an installed package has it.

    .venv/bin/python bench/bench_replay.py                        # 5 protocols, 100,000 chunks
    .venv/bin/python bench/bench_replay.py --quick                # 10,000 chunks, 3 runs
    .venv/bin/python bench/bench_replay.py --protocol openai-chat --runs 9
    .venv/bin/python bench/bench_replay.py --compare /tmp/before/src   # A/B against another tree

Target: ours ≤ 2.0 × the floor for every body. Exit status: 0 every target met, 1 one missed,
2 a replay failed or wrote a wrong output.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import orjson

import synthetic
from modelstream import StreamDecoder

RATIO_TARGET = 2.0
DEFAULT_PROTOCOLS = (
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "gemini-generate-content",
    "bedrock-converse-stream",
)
BENCH = Path(__file__).resolve().parent
THIS_TREE = "this"
OTHER_TREE = "compare"


# --- timing whole processes -------------------------------------------------------------------


@dataclass
class Timed:
    cpu: float  # user + system seconds of the child
    status: int
    stderr: str


def timed(command: list[str], env: dict[str, str], stdout: int | None = None) -> Timed:
    """Run `command` to its end; its CPU time as the kernel counted it."""
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL if stdout is None else stdout,
            stderr=errors,
        )
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        text = errors.read().decode("utf-8", "replace")
    return Timed(usage.ru_utime + usage.ru_stime, process.returncode, text)


def environment(source: str | None) -> dict[str, str]:
    """The children's environment; with `source`, modelstream is imported from that folder.
    Bytecode is written (a package installed by pip has it; compiling every module on every
    start is not what a user's replay pays)."""
    dropped = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    env = {key: value for key, value in os.environ.items() if key not in dropped}
    if source is not None:
        env["PYTHONPATH"] = source
    return env


def replay_command(path: Path) -> list[str]:
    return [sys.executable, "-m", "modelstream", "replay", "--format", "jsonl", str(path)]


def floor_command(path: Path) -> list[str]:
    return [sys.executable, str(BENCH / "replay_floor.py"), str(path)]


# --- a case -------------------------------------------------------------------------------------


@dataclass
class Case:
    protocol: str
    path: Path
    events: int  # what a correct replay writes: the body's events, decoded in-process
    floor: list[float] = field(default_factory=list)
    ours: dict[str, list[float]] = field(default_factory=dict)  # by tree
    problem: str | None = None

    def best(self, tree: str) -> float:
        return min(self.ours[tree])

    def ratio(self, tree: str) -> float:
        return self.best(tree) / min(self.floor)

    def pair_ratios(self, tree: str) -> list[float]:
        """Each run of ours over the floor run after it: how much the ratio moves."""
        return [o / f for o, f in zip(self.ours[tree], self.floor, strict=True)]


def write_case(protocol: str, chunks: int, folder: Path) -> Case:
    body = synthetic.build(protocol, "text", chunks)
    suffix = ".bin" if body.data[:1] == b"\x00" else ".sse"
    path = folder / f"{protocol}-{chunks}{suffix}"
    path.write_bytes(body.data)
    decoder = StreamDecoder(protocol)
    events = len(decoder.feed(body.data)) + len(decoder.end())
    return Case(protocol, path, events)


def check_output(case: Case, env: dict[str, str], tree: str) -> str | None:
    """Why a replay of the case's body is wrong, or None: an untimed run that keeps its output."""
    with tempfile.TemporaryFile() as out:
        done = timed(replay_command(case.path), env, stdout=out.fileno())
        out.seek(0)
        lines = out.read().splitlines()
    if done.status != 0:
        return f"{tree}: exit status {done.status}: {done.stderr.strip()[-300:]}"
    if len(lines) != case.events:
        return f"{tree}: {len(lines):,} lines, expected {case.events:,}"
    if orjson.loads(lines[-1]).get("event_type") != "stop":
        return f"{tree}: the last line is not a stop: {lines[-1][:200]!r}"
    return None


def measure(case: Case, runs: int, trees: dict[str, dict[str, str]]) -> None:
    for tree, env in trees.items():
        case.problem = case.problem or check_output(case, env, tree)
        case.ours[tree] = []
    floor_env = environment(None)
    floor = timed(floor_command(case.path), floor_env)
    if floor.status != 0:
        case.problem = case.problem or f"floor: exit status {floor.status}: {floor.stderr[-300:]}"
    if case.problem is not None:
        return
    for _ in range(runs):
        for tree, env in trees.items():
            done = timed(replay_command(case.path), env)
            if done.status != 0:
                case.problem = f"{tree}: exit status {done.status}: {done.stderr[-300:]}"
                return
            case.ours[tree].append(done.cpu)
        case.floor.append(timed(floor_command(case.path), floor_env).cpu)


# --- report -------------------------------------------------------------------------------------


def report(cases: list[Case], trees: list[str], compare: str | None) -> int:
    header = (
        f"{'protocol':<24} {'tree':<8} {'events':>8} {'ours ms':>8} {'floor ms':>8} "
        f"{'ratio':>6} {'each run':>11}  target ≤{RATIO_TARGET:.1f}"
    )
    print(header)
    print("-" * len(header))
    status = 0
    for case in cases:
        if case.problem is not None:
            print(f"{case.protocol:<24} WRONG RESULT: {case.problem}")
            status = 2
            continue
        for tree in trees:
            ratio = case.ratio(tree)
            pairs = case.pair_ratios(tree)
            verdict = ""
            if tree == THIS_TREE:
                verdict = "PASS" if ratio <= RATIO_TARGET else "FAIL"
                status = status or (0 if ratio <= RATIO_TARGET else 1)
            print(
                f"{case.protocol:<24} {tree:<8} {case.events:>8,} {case.best(tree) * 1e3:>8.0f} "
                f"{min(case.floor) * 1e3:>8.0f} {ratio:>6.2f} "
                f"{min(pairs):>5.2f}–{max(pairs):<5.2f}  {verdict}"
            )
    if compare is not None:
        print(f"\ncompare: this tree's replay CPU over {compare}'s (min of each, same runs)")
        for case in cases:
            if case.problem is None:
                ratio = case.best(THIS_TREE) / case.best(OTHER_TREE)
                print(f"  {case.protocol:<24} ×{ratio:.3f}")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, help="text chunks per body (default 100,000)")
    parser.add_argument("--runs", type=int, help="timed runs of each (default 5, quick 3)")
    parser.add_argument("--quick", action="store_true", help="10,000 chunks, 3 runs")
    parser.add_argument(
        "--protocol", action="append", help=f"repeatable (default: {', '.join(DEFAULT_PROTOCOLS)})"
    )
    parser.add_argument(
        "--compare", metavar="SRC", help="also time the replay of modelstream imported from SRC"
    )
    args = parser.parse_args(argv)
    if args.compare is not None:
        if not Path(args.compare, "modelstream").is_dir():
            parser.error(f"--compare: no modelstream package in {args.compare}")
        args.compare = str(Path(args.compare).resolve())
    unknown = set(args.protocol or ()) - set(synthetic.PROTOCOLS)
    if unknown:
        parser.error(f"--protocol: no synthetic body for {', '.join(sorted(unknown))}")
    chunks = args.chunks or (10_000 if args.quick else 100_000)
    runs = args.runs or (3 if args.quick else 5)
    protocols = args.protocol or list(DEFAULT_PROTOCOLS)
    trees = {THIS_TREE: environment(None)}
    if args.compare is not None:
        trees[OTHER_TREE] = environment(args.compare)
    print(
        f"modelstream replay benchmark — Python {platform.python_version()}, orjson "
        f"{orjson.__version__}, {chunks:,}-chunk text bodies, whole processes' CPU, "
        f"min of {runs} runs; load average {os.getloadavg()[0]:.1f}"
    )
    cases: list[Case] = []
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as folder:
        for protocol in protocols:
            print(f"  measuring {protocol}…", flush=True)
            case = write_case(protocol, chunks, Path(folder))
            measure(case, runs, trees)
            cases.append(case)
    print()
    return report(cases, list(trees), args.compare)


if __name__ == "__main__":
    sys.exit(main())
