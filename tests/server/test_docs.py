"""docs/server.md: its `python` examples run as written against the emulator, its config example
loads, and its shell commands use only options `modelstream serve` has."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from modelstream.server import load_settings
from modelstream.serving.command import add_command
from support import REPO

DOC = (REPO / "docs" / "server.md").read_text()
RUNNABLE = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)
TOML = re.findall(r"```toml\n(.*?)```", DOC, flags=re.S)
SHELL = re.findall(r"```sh\n(.*?)```", DOC, flags=re.S)


def test_the_server_guide_has_runnable_config_and_shell_examples() -> None:
    assert len(RUNNABLE) >= 2 and len(TOML) == 1 and len(SHELL) >= 3


@pytest.mark.parametrize("index", range(len(RUNNABLE)))
def test_each_runnable_example_of_the_server_guide_runs_as_written(
    index: int, capsys: pytest.CaptureFixture[str]
) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(RUNNABLE[index], f"docs/server.md example {index + 1}", "exec"), namespace)
    assert capsys.readouterr().out.strip()


def test_the_config_example_loads_with_its_variables_set(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text(TOML[0])
    env = {"MODELSTREAM_SERVER_KEY": "k1", "ANTHROPIC_API_KEY": "k2", "OPENAI_API_KEY": "k3"}

    settings = load_settings(path, env)

    assert [m.server_model_id for m in settings.models] == ["claude", "fast"]
    assert not settings.open


def test_the_serve_commands_of_the_guide_parse() -> None:
    parser = argparse.ArgumentParser(prog="modelstream")
    add_command(parser.add_subparsers(dest="command"))
    commands = [
        line.strip()
        for block in SHELL
        for line in block.splitlines()
        if line.strip().startswith(("modelstream serve", "python -m modelstream.server"))
    ]
    commands += re.findall(r"`(python -m modelstream\.server [^`]*)`", DOC)

    assert commands
    for command in commands:
        words = shlex.split(command)
        args = words[2:] if words[0] == "modelstream" else words[3:]
        parser.parse_args(["serve", *args])
