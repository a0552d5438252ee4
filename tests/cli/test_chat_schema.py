"""`modelstream chat --schema FILE.json`, run as a real subprocess against the emulator: the
schema is sent as the protocol's structured output and the checked answer is printed; an
answer that does not fit says why and exits 1."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from modelstream.testing import Emulator, Reply, Turn
from support.cli import KEY, KEY_VAR, chat_args, run_cli

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
}


def test_chat_schema_sends_the_schema_and_prints_the_checked_answer(
    emu: Emulator, tmp_path: Path
) -> None:
    path = tmp_path / "weather.json"
    path.write_text(json.dumps(SCHEMA))
    emu.queue(Reply.turn(Turn.text('{"city": "Lisbon", "celsius": 21.5}'), fragment_size=3))

    result = run_cli(*chat_args(emu, "openai-chat", "--schema", str(path)), **{KEY_VAR: KEY})

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"city": "Lisbon", "celsius": 21.5}
    sent = orjson.loads(emu.requests[0].body)["response_format"]
    assert sent == {"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA}}


def test_chat_schema_says_why_an_answer_does_not_fit(emu: Emulator, tmp_path: Path) -> None:
    path = tmp_path / "weather.json"
    path.write_text(json.dumps(SCHEMA))
    emu.queue(Reply.turn(Turn.text('{"city": "Lisbon"}')))

    result = run_cli(*chat_args(emu, "anthropic-messages", "--schema", str(path)), **{KEY_VAR: KEY})

    assert result.returncode == 1
    assert "not an answer of the schema" in result.stderr and "celsius" in result.stderr


def test_chat_schema_names_a_file_that_is_no_schema(emu: Emulator, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("[1, 2")

    result = run_cli(*chat_args(emu, "openai-chat", "--schema", str(path)), **{KEY_VAR: KEY})

    assert result.returncode == 2
    assert "bad.json is not JSON" in result.stderr
    assert emu.requests == []
