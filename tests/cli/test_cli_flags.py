"""A flag a command does not know is named by that command, with its nearest flag, in one line
and exit status 2 (issue 20 item 8): every command and subcommand, the program itself, and the
entry points that run one command on its own. Flags are taken whole, never abbreviated. Run as
real subprocesses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import environment, run_cli


def last_line(result: subprocess.CompletedProcess[str]) -> str:
    return result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["chat", "-m", "gpt-5-mini", "--max-token", "5", "Hello"],
            "modelstream chat: error: unknown flag --max-token; did you mean --max-tokens?",
        ),
        (
            ["replay", "--sample", "--formt", "jsonl"],
            "modelstream replay: error: unknown flag --formt; did you mean --format?",
        ),
        (
            ["demo", "--fsat"],
            "modelstream demo: error: unknown flag --fsat; did you mean --fast?",
        ),
        (
            ["emulate", "--scrpit", "replies.toml"],
            "modelstream emulate: error: unknown flag --scrpit; did you mean --script?",
        ),
        (
            ["models", "--provder", "anthropic"],
            "modelstream models: error: unknown flag --provder; did you mean --provider?",
        ),
        (
            ["playground", "--config", "server.toml", "--opne"],
            "modelstream playground: error: unknown flag --opne; did you mean --open?",
        ),
        (
            ["traces", "list", "--jsno"],
            "modelstream traces list: error: unknown flag --jsno; did you mean --json?",
        ),
        (
            ["traces", "serve", "--prot", "0"],
            "modelstream traces serve: error: unknown flag --prot; did you mean --port?",
        ),
    ],
    ids=[
        "chat",
        "replay",
        "demo",
        "emulate",
        "models",
        "playground",
        "traces list",
        "traces serve",
    ],
)
def test_an_unknown_flag_is_named_with_the_nearest_flag_of_its_command(
    args: list[str], said: str
) -> None:
    result = run_cli(*args)

    assert result.returncode == 2
    assert last_line(result) == said
    assert result.stdout == ""


def test_a_mistyped_required_flag_is_named_rather_than_said_to_be_missing() -> None:
    result = run_cli("serve", "--confg", "server.toml")

    assert result.returncode == 2
    assert last_line(result) == (
        "modelstream serve: error: unknown flag --confg; did you mean --config?"
    )


def test_a_flag_given_with_its_value_is_named_without_the_value() -> None:
    result = run_cli("chat", "-m", "gpt-5-mini", "--max-token=5", "Hello")

    assert result.returncode == 2
    assert last_line(result).endswith("unknown flag --max-token; did you mean --max-tokens?")


def test_a_flag_nothing_is_near_says_where_the_flags_are_listed() -> None:
    result = run_cli("check", "--colour", "events.jsonl")

    assert result.returncode == 2
    assert last_line(result) == (
        "modelstream check: error: unknown flag --colour; modelstream check --help lists its flags"
    )


def test_a_flag_of_the_program_itself_is_named_by_the_program() -> None:
    result = run_cli("--verison")

    assert result.returncode == 2
    assert (
        last_line(result) == "modelstream: error: unknown flag --verison; did you mean --version?"
    )


def test_a_flag_is_not_abbreviated() -> None:
    result = run_cli("replay", "--sample", "--form", "jsonl")

    assert result.returncode == 2
    assert last_line(result) == (
        "modelstream replay: error: unknown flag --form; did you mean --format?"
    )


def test_words_after_a_double_dash_are_not_flags(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "modelstream.cli.main", "check", "--", "--events.jsonl"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=environment(),
    )

    assert result.returncode == 2
    assert "no such file: --events.jsonl" in result.stderr
    assert "unknown flag" not in result.stderr


def test_an_extra_word_that_is_not_a_flag_is_named_by_its_command() -> None:
    result = run_cli("check", "first.jsonl", "second.jsonl")

    assert result.returncode == 2
    assert last_line(result) == "modelstream check: error: unrecognized arguments: second.jsonl"


@pytest.mark.parametrize(
    ("module", "args", "said"),
    [
        (
            "modelstream.server",
            ["--confg", "server.toml"],
            "modelstream serve: error: unknown flag --confg; did you mean --config?",
        ),
        (
            "modelstream.traces",
            ["list", "--jsno"],
            "modelstream traces list: error: unknown flag --jsno; did you mean --json?",
        ),
    ],
)
def test_the_entry_points_of_one_command_name_an_unknown_flag_too(
    module: str, args: list[str], said: str
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
    )

    assert result.returncode == 2
    assert last_line(result) == said
