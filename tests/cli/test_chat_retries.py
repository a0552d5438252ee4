"""`modelstream chat` says each retry on stderr as it starts, run as a real subprocess against
the loopback emulator; stdout stays the answer (or its JSON lines)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time

from modelstream.testing import Reply, Turn
from support.cli import KEY, KEY_VAR, chat_args, command, environment


def run_chat(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args),
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(**{KEY_VAR: KEY}),
    )


def test_chat_says_a_429_retry_on_stderr_with_its_wait_and_attempt(emu):
    emu.queue(Reply.status(429, retry_after=0.2), Reply.turn(Turn.text("Hello after a wait.")))
    result = run_chat(*chat_args(emu, "anthropic-messages"))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == ["429, retrying in 0.2 s (attempt 2/3)"]
    assert "Hello after a wait." in result.stdout.splitlines()
    assert "retrying" not in result.stdout
    assert [request.status for request in emu.requests] == [429, 200]


def test_chat_json_says_retries_on_stderr_and_keeps_stdout_json_lines(emu):
    emu.queue(Reply.status(503), Reply.status(429, retry_after=0.1), Reply.turn(Turn.text("ok")))
    result = run_chat(*chat_args(emu, "openai-chat", "--json"))
    assert result.returncode == 0, result.stderr
    first, second = result.stderr.splitlines()
    assert first.startswith("503, retrying in ") and first.endswith(" s (attempt 2/3)")
    assert second == "429, retrying in 0.1 s (attempt 3/3)"
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[-1]["event_type"] == "stop"


def test_the_retry_line_comes_as_the_wait_starts_not_after_it(emu):
    emu.queue(Reply.status(429, retry_after=3), Reply.turn(Turn.text("ok")))
    process = subprocess.Popen(
        command(*chat_args(emu, "anthropic-messages")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(**{KEY_VAR: KEY}),
    )
    assert process.stderr is not None
    try:
        said = b""
        deadline = time.monotonic() + 20
        while b"\n" not in said:
            assert time.monotonic() < deadline, said
            if select.select([process.stderr], [], [], 0.1)[0]:
                said += os.read(process.stderr.fileno(), 65536)
        assert said.decode() == "429, retrying in 3.0 s (attempt 2/3)\n"
        assert len(emu.requests) == 1  # the wait is still on: no second attempt yet
    finally:
        process.communicate(timeout=30)
    assert process.returncode == 0
    assert len(emu.requests) == 2
