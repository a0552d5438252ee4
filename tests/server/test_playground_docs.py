"""docs/playground.md: its `python` example runs as written against the emulator and prints what
the comments say, its config example loads, and its shell commands use only options
`modelstream playground` has."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from modelstream.cli.playground import add_command
from modelstream.server import load_settings
from support import REPO

DOC = (REPO / "docs" / "playground.md").read_text()
RUNNABLE = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)
TOML = re.findall(r"```toml\n(.*?)```", DOC, flags=re.S)
SHELL = re.findall(r"```sh\n(.*?)```", DOC, flags=re.S)


def test_the_example_signs_in_stops_a_stream_and_prices_a_turn(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (example,) = RUNNABLE
    exec(compile(example, "docs/playground.md example", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["401", "200", "{'stopped': True}"]
    assert '"type":"StreamCancelledError"' in lines[3] and '"reason":"stopped"' in lines[3]
    assert lines[4:] == ["True", "0.0081 USD"]  # 1200 × 3 / 1e6 + 300 × 15 / 1e6


def test_the_config_example_loads_with_its_variables_set(tmp_path: Path) -> None:
    (config,) = TOML
    path = tmp_path / "server.toml"
    path.write_text(config)
    env = {"MODELSTREAM_SERVER_KEY": "k1", "ANTHROPIC_API_KEY": "k2", "OPENAI_API_KEY": "k3"}
    settings = load_settings(path, env)
    assert [m.server_model_id for m in settings.models] == ["claude", "fast"]
    assert not settings.open


def test_the_shell_commands_of_the_guide_parse() -> None:
    parser = argparse.ArgumentParser(prog="modelstream")
    add_command(parser.add_subparsers(dest="command"))
    commands = [
        line.strip()
        for block in SHELL
        for line in block.splitlines()
        if line.strip().startswith("modelstream playground")
    ]
    commands += re.findall(r"`(modelstream playground [^`]*)`", DOC)
    assert commands
    for command in commands:
        args: Any = parser.parse_args(shlex.split(command)[1:])
        assert args.config == "server.toml"
