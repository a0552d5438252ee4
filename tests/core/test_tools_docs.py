"""docs/tools.md runs as written and shows what it prints; the README's tool loop sends its
tool's definition."""

from __future__ import annotations

import ast
import re
from typing import Any

import pytest

from modelstream import tool
from support import REPO

DOC = (REPO / "docs" / "tools.md").read_text()
RUNNABLE = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)
README = (REPO / "README.md").read_text()


def run(code: str, name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(code, name, "exec"), namespace)
    return namespace


def test_the_tools_guide_has_runnable_examples() -> None:
    assert len(RUNNABLE) >= 2


@pytest.mark.parametrize("index", range(len(RUNNABLE)))
def test_each_example_of_the_tools_guide_runs_and_prints_what_it_says(
    index: int, capsys: pytest.CaptureFixture[str]
) -> None:
    code = RUNNABLE[index]
    run(code, f"docs/tools.md example {index + 1}")
    printed = capsys.readouterr().out.strip()
    assert printed
    said = [
        line[2:]
        for line in code.splitlines()
        if line.startswith("# ") and not line.startswith("# needs:")
    ]
    if said:  # the comments after the code are its output
        assert printed.splitlines() == said


def test_the_definition_the_guide_shows_is_the_one_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run(RUNNABLE[0], "docs/tools.md example 1")
    printed = ast.literal_eval(capsys.readouterr().out)
    shown = DOC.split("prints (wrapped here):", 1)[1].split("```text\n", 1)[1].split("```")[0]
    assert ast.literal_eval(shown) == printed


def test_the_readme_tool_loop_sends_the_definition_of_its_function_tool(
    capsys: pytest.CaptureFixture[str],
) -> None:
    section = README.split("### Conversations and the tool loop", 1)[1]
    code = re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]
    namespace = run(code, "README.md tool loop")
    definition = tool(namespace["get_weather"]).definition
    assert definition["parameters"]["required"] == ["city"]
    requests = namespace["emu"].requests
    assert len(requests) == 2  # the call, then its result: both offer the tool
    for request in requests:
        assert request.json["tools"] == [{"type": "function", **definition, "strict": False}]
    assert capsys.readouterr().out.splitlines()[:2] == [
        "It is 21 °C and sunny in Lisbon.",
        "get_weather",
    ]
