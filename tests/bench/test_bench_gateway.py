"""Smoke test of bench/bench_gateway.py: a tiny run works and prints its columns.

The benchmark's targets are not the suite's pass/fail (a tiny run on a shared machine is all
noise), so exit status 1 (a target missed) passes here; 2 (a party failed) does not. A wire
whose gateway route is not served yet must be reported as unavailable, not crash the run.
"""

from __future__ import annotations

import os
import subprocess
import sys

from support import REPO


def run_gateway_benchmark(*args: str) -> str:
    """bench/bench_gateway.py with `args`, which must not fail to run; its output."""
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_gateway.py"), *args],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "PYTHONPATH": str(REPO / "bench")},
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout


def test_a_tiny_gateway_benchmark_prints_each_target_with_its_columns() -> None:
    output = run_gateway_benchmark(
        "--no-litellm", "--streams", "1", "--rounds", "1", "--wires", "stream,chat"
    )
    lines = output.splitlines()
    (header,) = [line for line in lines if line.startswith("target ")]
    for column in ("events", "cpu µs/ev", "×stream", "ttfe p50", "p99", "×floor", "errors"):
        assert column in header, header
    assert "rss MB before → 1st → last" in header
    rows = {line.split()[0]: line for line in lines[lines.index(header) + 1 :] if line[:1].strip()}
    # the byte relay and /v1/stream are always there: 1 stream of 103 upstream events each
    for name in ("floor", "stream"):
        row = rows[name].split()
        assert row[1] == "103", rows[name]
        assert 0 < float(row[2]) < 100_000  # CPU µs per event
        assert row[row.index("→") - 2] == "0"  # errors
    # the Chat wire: measured, or marked unavailable while its route does not answer yet
    chat = rows["chat"]
    assert chat.split()[1] == "103" or chat.split()[1] == "unavailable:", chat
    assert "litellm" not in rows
