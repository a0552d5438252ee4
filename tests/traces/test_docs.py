"""docs/traces.md: its `python` examples run as written, in order, in one folder; then its `sh`
commands run there through the installed `modelstream` command."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import REPO, missing

DOC = (REPO / "docs" / "traces.md").read_text()
BLOCKS = re.findall(r"```(python|sh)\n(.*?)```", DOC, flags=re.S)
COMMAND = Path(sys.executable).with_name("modelstream")


def test_the_traces_guide_has_runnable_examples_and_commands() -> None:
    kinds = [kind for kind, _ in BLOCKS]
    assert kinds.count("python") >= 4 and kinds.count("sh") >= 2


def test_every_example_and_command_of_the_traces_guide_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MODELSTREAM_TRACES", str(tmp_path / "default.sqlite3"))
    wired = subprocess.run([COMMAND, "traces", "--help"], capture_output=True).returncode == 0
    for index, (kind, code) in enumerate(BLOCKS, start=1):
        if kind == "python":
            namespace: dict[str, Any] = {}
            exec(compile(code, f"docs/traces.md example {index}", "exec"), namespace)
            assert capsys.readouterr().out.strip()
        elif wired:
            for line in code.strip().splitlines():
                run_command(shlex.split(line), tmp_path)
    assert (tmp_path / "traces.sqlite3").exists()
    assert not (tmp_path / "default.sqlite3").exists()  # every example named its file
    if not wired:
        missing("`modelstream traces` is not wired into the command line yet")


def run_command(argv: list[str], folder: Path) -> None:
    assert argv[:2] == ["modelstream", "traces"], argv
    if argv[2] == "serve":  # runs until stopped: check that it serves, then stop it
        process = subprocess.Popen(
            [COMMAND, *argv[1:], "--port", "0"], stdout=subprocess.PIPE, text=True, cwd=folder
        )
        try:
            assert process.stdout is not None
            assert process.stdout.readline().startswith("Trace viewer at http://127.0.0.1:")
        finally:
            process.terminate()
            process.wait(timeout=10)
        return
    done = subprocess.run([COMMAND, *argv[1:]], capture_output=True, text=True, cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "weather-lisbon" in done.stdout
