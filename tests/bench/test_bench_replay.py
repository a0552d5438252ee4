"""Smoke test of bench/bench_replay.py and its floor (bench/replay_floor.py).

The benchmark's target is not the suite's pass/fail (a tiny run on a shared machine is all
noise), so exit status 1 (a target missed) passes here; 2 (a replay failed or wrote a wrong
output) does not. The floor must do the work it stands for: every payload loaded and dumped,
and for the AWS event stream both CRC-32s checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from support import REPO

BENCH = REPO / "bench"


def bench_environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(BENCH)}


def synthetic_body(protocol: str, chunks: int) -> bytes:
    """A body of bench/synthetic.py, built in a child so the suite does not import bench/."""
    code = (
        "import sys, synthetic; "
        f"sys.stdout.buffer.write(synthetic.build({protocol!r}, 'text', {chunks}).data)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        timeout=60,
        env=bench_environment(),
        check=True,
    )
    return done.stdout


def run_floor(path: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, str(BENCH / "replay_floor.py"), str(path)],
        capture_output=True,
        timeout=60,
        check=False,
    )


def test_a_tiny_replay_benchmark_prints_each_body_with_its_ratio() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "bench_replay.py"),
            *("--chunks", "300", "--runs", "1"),
            *("--protocol", "openai-chat", "--protocol", "bedrock-converse-stream"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=bench_environment(),
        check=False,
    )

    assert done.returncode in (0, 1), done.stdout + done.stderr
    lines = done.stdout.splitlines()
    (header,) = [line for line in lines if line.startswith("protocol ")]
    for column in ("events", "ours ms", "floor ms", "ratio", "each run", "target ≤2.0"):
        assert column in header, header
    rows = {line.split()[0]: line.split() for line in lines[lines.index(header) + 2 :] if line}
    assert set(rows) == {"openai-chat", "bedrock-converse-stream"}, done.stdout
    for row in rows.values():
        assert row[1] == "this" and row[2] == "302"  # 300 deltas, the .done, the stop
        assert float(row[5]) > 0 and row[-1] in ("PASS", "FAIL")


def test_the_sse_floor_writes_every_data_payload_loaded_and_dumped(tmp_path: Path) -> None:
    body = synthetic_body("openai-chat", 50)
    path = tmp_path / "chat.sse"
    path.write_bytes(body)
    payloads = [
        line[len(b"data: ") :]
        for line in body.split(b"\n")
        if line.startswith(b"data: ") and line != b"data: [DONE]"
    ]

    done = run_floor(path)

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [orjson.dumps(orjson.loads(p)) for p in payloads]


def test_the_event_stream_floor_checks_both_crcs(tmp_path: Path) -> None:
    body = bytearray(synthetic_body("bedrock-converse-stream", 20))
    path = tmp_path / "bedrock.bin"
    path.write_bytes(body)
    whole = run_floor(path)
    body[40] ^= 0xFF  # a header byte of the first message: its message CRC no longer holds
    path.write_bytes(body)

    broken = run_floor(path)

    assert whole.returncode == 0 and len(whole.stdout.splitlines()) > 20
    assert broken.returncode != 0 and b"bad message CRC in message 0" in broken.stderr
