"""`modelstream replay` on a body with one corrupted frame: a stream error by default, and with
`--lenient-frames` a stopped turn that warns it lost content (issue 7 item 1). Run as a real
subprocess on the shipped sample, corrupted in a temporary copy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import REPO

SAMPLE = REPO / "src/modelstream/samples/anthropic-tool-call.sse"


def corrupted_sample(tmp_path: Path) -> Path:
    """The sample with its first argument fragment's JSON cut short (its last brace gone)."""
    frames = SAMPLE.read_bytes().split(b"\n\n")
    index = next(i for i, frame in enumerate(frames) if b"input_json_delta" in frame)
    brace = frames[index].rindex(b"}")
    frames[index] = frames[index][:brace] + frames[index][brace + 1 :]
    path = tmp_path / "broken.sse"
    path.write_bytes(b"\n\n".join(frames))
    return path


def replay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "modelstream.cli.main", "replay", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_replay_of_a_corrupted_frame_ends_in_a_malformed_frame_error(tmp_path: Path) -> None:
    path = corrupted_sample(tmp_path)
    result = replay(str(path), "--protocol", "anthropic-messages", "--format", "jsonl")

    assert result.returncode == 1
    last = json.loads(result.stdout.splitlines()[-1])
    assert last["error"]["type"] == "MalformedFrameError"
    assert last["error"]["partial_status"] == "incomplete"
    events = [json.loads(line) for line in result.stdout.splitlines()[:-1]]
    assert not any(e["event_type"] == "stop" for e in events)


def test_replay_with_lenient_frames_stops_and_warns_that_content_was_lost(
    tmp_path: Path,
) -> None:
    path = corrupted_sample(tmp_path)
    args = [str(path), "--protocol", "anthropic-messages", "--lenient-frames"]
    args.append("--lenient-tool-arguments")  # the lost fragment leaves arguments unparseable

    pretty = replay(*args)
    jsonl = replay(*args, "--format", "jsonl")

    assert pretty.returncode == 0 and jsonl.returncode == 0
    warning = "warning: 1 frame of the stream was lost"
    assert warning in pretty.stderr and warning in jsonl.stderr
    assert "1 frame skipped: content may be missing" in pretty.stdout
    assert json.loads(jsonl.stdout.splitlines()[-1])["event_type"] == "stop"
