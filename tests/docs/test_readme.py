"""The README's examples run as written."""

from __future__ import annotations

import re

import pytest

from support import REPO

README = (REPO / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)
# `py` blocks talk to real providers (they need keys): they must at least compile
PROVIDER_BLOCKS = re.findall(r"```py\n(.*?)```", README, flags=re.S)


def test_the_readme_has_python_examples():
    assert len(PYTHON_BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_each_python_example_runs_as_written(index, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files (a trace file)
    exec(compile(PYTHON_BLOCKS[index], f"README.md example {index + 1}", "exec"), {})
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("index", range(len(PROVIDER_BLOCKS)))
def test_each_provider_example_compiles(index):
    compile(PROVIDER_BLOCKS[index], f"README.md provider example {index + 1}", "exec")


def test_the_set_up_section_gives_exactly_two_commands():
    section = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    assert len(commands) == 2
    install_and_run, run_tests = (c.strip() for c in commands)
    assert install_and_run.endswith("modelstream demo")
    ci = (REPO / ".ci" / "run").read_text()
    assert run_tests in ci
