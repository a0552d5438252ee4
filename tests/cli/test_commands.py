"""The `modelstream` command, run as a real subprocess on the shipped sample and corpus captures.

Expected values are read from the wire files (the sample's and the captures' `data:` lines),
not from our output.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from modelstream import GrammarChecker
from modelstream.jsonwire import dumps, loads_event
from support import REPO, require_corpus
from support.cli import run_cli

SAMPLE = REPO / "src" / "modelstream" / "samples" / "anthropic-tool-call.sse"
PROTOCOL = "anthropic-messages"
WIRE_GROWING = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "input_json_delta": "partial_json",
}


def capture(name: str) -> Path:
    return require_corpus() / PROTOCOL / f"{name}.sse"


def wire_events(path: Path) -> list[dict[str, Any]]:
    """The JSON payloads of an Anthropic body, read independently of modelstream."""
    return [
        json.loads(line[len("data:") :])
        for line in path.read_text().splitlines()
        if line.startswith("data:")
    ]


def wire_block(path: Path, index: int) -> tuple[dict[str, Any], str]:
    """A content block's start and the join of its deltas' growing field."""
    start: dict[str, Any] = {}
    parts: list[str] = []
    for event in wire_events(path):
        if event.get("index") != index:
            continue
        if event["type"] == "content_block_start":
            start = event["content_block"]
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            if delta["type"] in WIRE_GROWING:
                parts.append(delta[WIRE_GROWING[delta["type"]]])
    return start, "".join(parts)


def jsonl_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stdout.splitlines() if line]


def done_items(lines: list[str]) -> list[dict[str, Any]]:
    return [
        dict(item)
        for line in lines
        for item in loads_event(line).get("content_items", [])
        if item["type"].endswith(".done")
    ]


# --- replay --format jsonl -----------------------------------------------------------------


def test_jsonl_replay_of_the_sample_is_a_grammar_valid_stream_ending_in_stop():
    result = run_cli("replay", "--sample", "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    checker = GrammarChecker()
    for line in jsonl_lines(result):
        checker.feed(loads_event(line))
    checker.end()


def test_jsonl_lines_round_trip_through_loads_event_byte_for_byte():
    result = run_cli("replay", "--sample", "--format", "jsonl")
    lines = jsonl_lines(result)
    assert lines
    for line in lines:
        assert dumps(loads_event(line)).decode() == line


def test_jsonl_replay_of_the_sample_carries_its_thinking_text_and_tool_call():
    thinking_start, thinking = wire_block(SAMPLE, 0)
    _, text = wire_block(SAMPLE, 1)
    tool_start, arguments = wire_block(SAMPLE, 2)
    signature = next(
        e["delta"]["signature"]
        for e in wire_events(SAMPLE)
        if e.get("delta", {}).get("type") == "signature_delta"
    )
    items = done_items(jsonl_lines(run_cli("replay", "--sample", "--format", "jsonl")))
    assert items == [
        {"type": "thinking.done", "thinking": thinking, "fidelity": {"signature": signature}},
        {"type": "text.done", "text": text},
        {
            "type": "tool_call.done",
            "tool_call_id": tool_start["id"],
            "name": tool_start["name"],
            "arguments": json.loads(arguments),
        },
    ]
    assert thinking_start["type"] == "thinking"


def test_jsonl_stop_event_carries_the_sample_usage_and_tool_call_finish_reason():
    wire = wire_events(SAMPLE)
    start_usage = wire[0]["message"]["usage"]
    final = next(e for e in wire if e["type"] == "message_delta")
    stop = loads_event(jsonl_lines(run_cli("replay", "--sample", "--format", "jsonl"))[-1])
    assert final["delta"]["stop_reason"] == "tool_use"
    assert stop["finish_reason"] == "tool_call"
    assert stop["usage_metadata"] == {
        "cached_tokens": start_usage["cache_read_input_tokens"],
        "prompt_tokens": start_usage["input_tokens"] + start_usage["cache_creation_input_tokens"],
        "thoughts_tokens": None,
        "response_tokens": final["usage"]["output_tokens"],
    }


def test_jsonl_events_are_stamped_with_the_wall_clock_in_milliseconds():
    before = int(time.time() * 1000)
    lines = jsonl_lines(run_cli("replay", "--sample", "--format", "jsonl"))
    after = int(time.time() * 1000)
    stamps = [loads_event(line)["created_at"] for line in lines]
    assert all(before <= stamp <= after for stamp in stamps)


def test_a_corpus_capture_is_decoded_with_the_protocol_from_its_sidecar():
    path = capture("anthropicsdk-tool-use")
    assert json.loads(path.with_suffix(".json").read_text())["protocol"] == PROTOCOL
    tool_start, arguments = wire_block(path, 1)
    result = run_cli("replay", str(path), "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    call = done_items(jsonl_lines(result))[-1]
    assert call["name"] == tool_start["name"] == "get_weather"
    assert call["arguments"] == json.loads(arguments)


def test_a_capture_cut_off_mid_tool_arguments_ends_with_an_error_line_and_exit_status_1():
    path = capture("anthropicsdk-incomplete-partial-json")
    tool_start, _ = wire_block(path, 1)
    result = run_cli("replay", str(path), "--format", "jsonl")
    assert result.returncode == 1
    *events, last = jsonl_lines(result)
    error = json.loads(last)["error"]
    assert error["type"] == "ToolCallArgumentParseError"
    assert error["name"] == tool_start["name"]
    assert error["tool_call_id"] == tool_start["id"]
    assert error["partial_status"] == "failed"
    assert error["cut_off"] is True  # the real capture stops with max_tokens inside the call
    assert "the output limit (max_tokens) was reached" in error["message"]
    checker = GrammarChecker()
    for line in events:
        checker.feed(loads_event(line))
    assert not checker.stopped
    assert [item["type"] for item in done_items(events)] == ["text.done"]


def test_lenient_tool_arguments_recover_the_cut_off_call_and_stop_with_length():
    path = capture("anthropicsdk-incomplete-partial-json")
    stop_reason = next(e for e in wire_events(path) if e["type"] == "message_delta")["delta"]
    result = run_cli("replay", str(path), "--format", "jsonl", "--lenient-tool-arguments")
    assert result.returncode == 0, result.stderr
    lines = jsonl_lines(result)
    assert stop_reason["stop_reason"] == "max_tokens"
    assert loads_event(lines[-1])["finish_reason"] == "length"
    call = done_items(lines)[-1]
    assert call["type"] == "tool_call.done"
    assert call["arguments"]["filename"] == "taxes.txt"


def test_stdin_replay_with_a_protocol_gives_the_same_events_as_the_file(tmp_path):
    body = SAMPLE.read_bytes()
    piped = run_cli("replay", "-", "--protocol", PROTOCOL, "--format", "jsonl", stdin=body)
    from_file = run_cli("replay", "--sample", "--format", "jsonl")
    assert piped.returncode == 0, piped.stderr

    def without_time(lines: list[str]) -> list[dict[str, Any]]:
        return [{**json.loads(line), "created_at": 0} for line in lines]

    assert without_time(jsonl_lines(piped)) == without_time(jsonl_lines(from_file))


def test_a_copied_body_uses_a_sidecar_written_beside_it(tmp_path):
    body = tmp_path / "turn.sse"
    shutil.copyfile(capture("vercel-anthropic-text"), body)
    (tmp_path / "turn.json").write_text(json.dumps({"protocol": PROTOCOL}))
    result = run_cli("replay", str(body), "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    assert loads_event(jsonl_lines(result)[-1])["event_type"] == "stop"


def test_protocol_option_decodes_a_body_that_has_no_sidecar(tmp_path):
    body = tmp_path / "turn.sse"
    shutil.copyfile(capture("vercel-anthropic-text"), body)
    result = run_cli("replay", str(body), "--protocol", PROTOCOL, "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    assert loads_event(jsonl_lines(result)[-1])["finish_reason"] == "stop"


# --- bad usage -----------------------------------------------------------------------------


def _unrecognizable(tmp_path: Path) -> list[str]:
    body = tmp_path / "notes.txt"
    body.write_text("shopping list\n- milk\n- bread\n")
    return ["replay", str(body)]


def _bad_sidecar(tmp_path: Path) -> list[str]:
    body = tmp_path / "turn.sse"
    shutil.copyfile(SAMPLE, body)
    (tmp_path / "turn.json").write_text('{"protocol": "carrier-pigeon"}')
    return ["replay", str(body)]


@pytest.mark.parametrize(
    ("make_args", "hint"),
    [
        (lambda tmp: ["replay", str(tmp / "missing.sse")], "no such file"),
        (lambda tmp: ["replay", "--sample", "--protocol", "carrier-pigeon"], "use one of"),
        (_unrecognizable, "cannot tell which protocol notes.txt speaks: pass --protocol"),
        (_bad_sidecar, "use one of"),
        (lambda tmp: ["replay", "--sample", "no-such-sample"], "the samples are"),
        (lambda tmp: ["replay", "-"], "cannot tell which protocol <stdin> speaks"),
        (lambda tmp: ["replay", str(SAMPLE), "--sample"], "not both"),
        (lambda tmp: ["replay"], "or --sample"),
        (lambda tmp: ["check", str(tmp / "missing.jsonl")], "no such file"),
    ],
    ids=[
        "missing-file",
        "unknown-protocol",
        "no-protocol-no-sidecar-unrecognizable",
        "sidecar-unknown-protocol",
        "unknown-sample",
        "empty-stdin-without-protocol",
        "path-and-sample",
        "nothing-to-replay",
        "check-missing-file",
    ],
)
def test_bad_usage_exits_2_with_one_line_on_stderr_saying_what_to_do(tmp_path, make_args, hint):
    result = run_cli(*make_args(tmp_path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert hint in result.stderr


def test_version_prints_the_installed_package_version():
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"modelstream {importlib.metadata.version('modelstream')}"


# --- replay --format pretty ----------------------------------------------------------------


def test_pretty_replay_of_the_sample_shows_text_tool_call_and_finish_reason():
    _, text = wire_block(SAMPLE, 1)
    tool_start, _ = wire_block(SAMPLE, 2)
    result = run_cli("replay", "--sample")
    assert result.returncode == 0, result.stderr
    assert text in result.stdout
    assert tool_start["name"] in result.stdout
    assert tool_start["id"] in result.stdout
    assert "tool_call" in result.stdout and "tool_use" in result.stdout


def test_pretty_replay_shows_the_thinking_and_the_skipped_ping():
    _, thinking = wire_block(SAMPLE, 0)
    result = run_cli("replay", "--sample")
    assert thinking in result.stdout
    assert "ping" in result.stdout


def test_pretty_output_to_a_pipe_has_no_terminal_escape_codes():
    result = run_cli("replay", "--sample")
    assert result.stdout
    assert "\x1b[" not in result.stdout


def test_pretty_output_does_not_hard_wrap_text_on_a_narrow_terminal():
    _, text = wire_block(SAMPLE, 1)
    assert len(text) > 40
    result = run_cli("replay", "--sample", COLUMNS="40")
    assert text in result.stdout.splitlines()


def test_pretty_replay_of_a_failed_stream_names_the_error_and_the_partial_status():
    path = capture("anthropicsdk-incomplete-partial-json")
    _, text = wire_block(path, 0)
    result = run_cli("replay", str(path))
    assert result.returncode == 1
    assert text in result.stdout
    assert "ToolCallArgumentParseError" in result.stdout
    assert "failed" in result.stdout
    assert "the output limit cut the call: raise max_tokens" in result.stdout
    assert "--lenient-tool-arguments" not in result.stdout


def test_the_installed_console_script_replays_the_sample():
    script = Path(sys.executable).parent / "modelstream"
    if not script.exists():
        pytest.skip(f"no console script at {script} (package not installed in this venv)")
    result = subprocess.run([str(script), "replay", "--sample"], capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert b"get_forecast" in result.stdout


# --- check ---------------------------------------------------------------------------------


def write_replay(tmp_path: Path, *args: str) -> tuple[Path, list[str]]:
    result = run_cli("replay", *args, "--format", "jsonl")
    events = tmp_path / "events.jsonl"
    events.write_text(result.stdout)
    return events, jsonl_lines(result)


def test_check_accepts_replay_output_and_reports_the_count_and_finish_reason(tmp_path):
    events, lines = write_replay(tmp_path, "--sample")
    result = run_cli("check", str(events))
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == f"ok: {len(lines)} events, finish reason tool_call"


def test_check_accepts_a_stream_that_ends_with_an_error_line(tmp_path):
    events, lines = write_replay(tmp_path, str(capture("anthropicsdk-incomplete-partial-json")))
    result = run_cli("check", str(events))
    assert result.returncode == 0, result.stdout
    assert f"ok: {len(lines) - 1} events" in result.stdout
    assert "ToolCallArgumentParseError" in result.stdout


def _event(item: dict[str, Any] | None = None, **fields: Any) -> str:
    event = {
        "role": "assistant",
        "event_type": "delta",
        "content_items": [item] if item else [],
        "usage_metadata": None,
        "finish_reason": None,
        "created_at": 1,
    }
    event.update(fields)
    return json.dumps(event)


def test_check_names_the_line_and_rule_where_two_groups_interleave(tmp_path):
    events = tmp_path / "bad.jsonl"
    call = {"type": "tool_call.delta", "tool_call_id": "call_1", "name": "f", "arguments": "{}"}
    events.write_text(
        "\n".join(
            [
                _event({"type": "text.delta", "text": "Hel"}),
                _event(call),
                _event({"type": "text.done", "text": "Hel"}),
            ]
        )
    )
    result = run_cli("check", str(events))
    assert result.returncode == 1
    assert "line 2: rule 2:" in result.stdout
    assert "tool_call.delta came while a text group was open" in result.stdout


def test_check_rejects_an_error_line_after_the_stop_event(tmp_path):
    events, _ = write_replay(tmp_path, "--sample")
    error = json.dumps({"error": {"type": "ProviderError", "message": "late"}})
    events.write_text(events.read_text() + error + "\n")
    result = run_cli("check", str(events))
    assert result.returncode == 1
    assert "rule 5" in result.stdout


def test_check_reports_a_stream_with_no_stop_and_no_error(tmp_path):
    events = tmp_path / "open.jsonl"
    events.write_text(_event({"type": "text.delta", "text": "Hel"}) + "\n")
    result = run_cli("check", str(events))
    assert result.returncode == 1
    assert "end of file: rule 4" in result.stdout


def test_check_exits_2_on_a_line_that_is_not_json(tmp_path):
    events = tmp_path / "broken.jsonl"
    events.write_text(_event({"type": "text.delta", "text": "Hel"}) + "\n{not json\n")
    result = run_cli("check", str(events))
    assert result.returncode == 2
    assert "line 2 is not JSON" in result.stderr


# --- docs/cli.md ---------------------------------------------------------------------------

DOC_EXAMPLE = re.compile(r"```sh\n(.*?)```\s*(?:```text\n(.*?)```)?", re.S)


def test_the_shell_examples_in_the_cli_doc_run_as_written(tmp_path):
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "modelstream").exists():
        pytest.skip(f"no console script in {bin_dir} (package not installed in this venv)")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    examples = DOC_EXAMPLE.findall((REPO / "docs" / "cli.md").read_text())
    assert len(examples) >= 4
    for script, shown in examples:
        result = subprocess.run(
            ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        expected_status = 1 if "interleaved" in script else 0
        assert result.returncode == expected_status, (script, result.stderr)
        if shown:
            assert shown.strip() in result.stdout, script
