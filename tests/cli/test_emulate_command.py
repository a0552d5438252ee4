"""`modelstream emulate`: the emulator started from a shell, as a test in another language would
start it, answering with the replies of a JSON or TOML script; streamed from over real HTTP."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from modelstream import Client, ProviderError
from modelstream.client import RetryPolicy
from modelstream.testing.script import ScriptError, script_replies
from support import REPO
from support.cli import command, emulate_script, environment

TOML_SCRIPT = """
# answered in order; then every request gets the default echo
[[replies]]
text = "Hello from a TOML script."

[[replies]]
finish = "tool_call"
usage = { prompt_tokens = 21, response_tokens = 9 }
items = [
  { thinking = "The user wants the weather.", signature = "c2ln" },
  { tool_call = "get_weather", arguments = { city = "Lisbon" }, id = "call_1" },
]

[[replies]]
status = 429
retry_after = 1
"""


@contextmanager
def emulating(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`modelstream emulate ARGS` in a subprocess: the URL it prints first, and the process."""
    process = subprocess.Popen(
        command("emulate", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        found = re.fullmatch(r"modelstream emulator at (http://127\.0\.0\.1:\d+)\n", first)
        if found is None:
            process.kill()
            pytest.fail(f"emulate did not start: {first!r} {process.communicate()[1]}")
        yield found.group(1), process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=10)


def test_a_toml_script_is_streamed_over_http_in_order_then_the_default_echo(
    tmp_path: Path,
) -> None:
    script = tmp_path / "replies.toml"
    script.write_text(TOML_SCRIPT)

    with emulating("--port", "0", "--script", str(script)) as (url, process):
        # What a program in any language does: POST, read the SSE body.
        with httpx.stream(
            "POST",
            f"{url}/v1/chat/completions",
            json={
                "model": "gpt-4o",
                "stream": True,
                "messages": [{"role": "user", "content": "hi"}],
            },
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            body = b"".join(response.iter_bytes()).decode()
        texts = [
            choice["delta"].get("content") or ""
            for line in body.splitlines()
            if line.startswith("data: {")
            for choice in json.loads(line[6:])["choices"]
        ]
        assert "".join(texts) == "Hello from a TOML script."
        assert body.rstrip().endswith("data: [DONE]")

        with Client(
            "claude-sonnet-4-5",
            api_key="test-key",
            base_url=url,
            retry=RetryPolicy(max_attempts=1),
        ) as client:
            message = client.complete(
                [{"role": "user", "content_items": [{"type": "text.done", "text": "weather?"}]}]
            )
            kinds = [item["type"] for item in message["content_items"]]
            assert kinds == ["thinking.done", "tool_call.done"]
            call = message["content_items"][1]
            assert (call["name"], call["arguments"]) == ("get_weather", {"city": "Lisbon"})  # type: ignore[typeddict-item]

            with pytest.raises(ProviderError) as refused:
                client.complete(
                    [{"role": "user", "content_items": [{"type": "text.done", "text": "again"}]}]
                )
            assert refused.value.status == 429

            echo = client.complete(
                [{"role": "user", "content_items": [{"type": "text.done", "text": "ping"}]}]
            )
            assert [item["text"] for item in echo["content_items"]] == ["echo: ping"]  # type: ignore[typeddict-item]
        assert stop(process) == 0


def test_a_json_script_on_a_chosen_port_with_a_reply_kept_for_one_path(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"path": "/v1/messages", "text": "only for Anthropic"},
                    {"text": "for anyone", "delay": 0.001, "chunk_size": 7},
                ]
            }
        )
    )
    with emulating("--port", str(port), "--script", str(script)) as (url, process):
        assert url == f"http://127.0.0.1:{port}"
        with Client("gpt-4o", api_key="k", base_url=f"{url}/v1") as openai:
            first = openai.complete(
                [{"role": "user", "content_items": [{"type": "text.done", "text": "hi"}]}]
            )
        with Client("claude-sonnet-4-5", api_key="k", base_url=url) as anthropic:
            second = anthropic.complete(
                [{"role": "user", "content_items": [{"type": "text.done", "text": "hi"}]}]
            )
        assert [item["text"] for item in first["content_items"]] == ["for anyone"]  # type: ignore[typeddict-item]
        assert [item["text"] for item in second["content_items"]] == ["only for Anthropic"]  # type: ignore[typeddict-item]
        assert stop(process) == 0


@pytest.mark.parametrize(
    ("content", "suffix", "says"),
    [
        (
            '{"replies": [{"text": "hi", "colour": "red"}]}',
            ".json",
            "reply 1: unknown key 'colour'",
        ),
        ('{"replies": [{"status": 429, "text": "x"}]}', ".json", "reply 1 needs exactly one of"),
        ("[[replies]]\ntext = 3\n", ".toml", "reply 1: text must be a string"),
        ("[[replies]\n", ".toml", "is not valid TOML"),
        ('{"replies": [{"items": [{"tool": "x"}]}]}', ".json", "reply 1, item 1 is one of"),
        ('{"replies": [{"text": "a", "finish": "done"}]}', ".json", "finish must be one of"),
    ],
)
def test_a_bad_script_is_refused_with_one_line_naming_the_reply(
    tmp_path: Path, content: str, suffix: str, says: str
) -> None:
    script = tmp_path / f"replies{suffix}"
    script.write_text(content)

    result = emulate_script(script)

    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and says in result.stderr


def test_script_replies_builds_the_same_replies_as_python_would() -> None:
    from modelstream.testing import Reply, Text, Thinking, ToolCall, Turn

    (turn, status, body) = script_replies(
        {
            "replies": [
                {
                    "items": [
                        {"thinking": "hm", "signature": "s"},
                        {"text": "ok"},
                        {"tool_call": "f", "arguments": {"a": 1}, "id": "c"},
                    ],
                    "finish": "tool_call",
                    "delay": 0.5,
                },
                {"status": 503, "retry_after": 2, "path": "/v1/responses"},
                {"body": "data: {}\n\n", "content_type": "text/event-stream"},
            ]
        }
    )
    expected = Turn(
        items=[Thinking("hm", signature="s"), Text("ok"), ToolCall("f", {"a": 1}, id="c")],
        finish="tool_call",
    )
    assert turn.reply == Reply.turn(expected, delay=0.5) and turn.path is None
    assert status.reply == Reply.status(503, retry_after=2) and status.path == "/v1/responses"
    assert body.reply == Reply.body("data: {}\n\n", content_type="text/event-stream")
    with pytest.raises(ScriptError, match=r'a script is \{"replies": \[\.\.\.\]\}'):
        script_replies([{"text": "a list, not a script"}])


def test_the_script_shown_in_the_testing_guide_is_a_valid_script() -> None:
    import tomllib

    guide = (REPO / "docs" / "testing.md").read_text()
    (block,) = re.findall(r"```toml\n(.*?)```", guide, flags=re.S)
    replies = script_replies(tomllib.loads(block))
    assert [r.reply.code for r in replies] == [200, 200, 429, 200, 200]
    assert replies[3].reply.error_document == 500
    assert replies[4].path == "/v1/messages"
