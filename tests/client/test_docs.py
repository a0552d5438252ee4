"""docs/client.md: its `python` examples run as written against the emulator; its `py`
examples (real providers, real keys) at least compile."""

from __future__ import annotations

import re
from typing import Any

import pytest

from support import REPO

DOC = (REPO / "docs" / "client.md").read_text()
RUNNABLE = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)
PROVIDER_ONLY = re.findall(r"```py\n(.*?)```", DOC, flags=re.S)


def test_the_client_guide_has_runnable_and_provider_examples() -> None:
    assert len(RUNNABLE) >= 6 and len(PROVIDER_ONLY) >= 3


@pytest.mark.parametrize("index", range(len(RUNNABLE)))
def test_each_runnable_example_of_the_client_guide_runs_as_written(
    index: int, capsys: pytest.CaptureFixture[str]
) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(RUNNABLE[index], f"docs/client.md example {index + 1}", "exec"), namespace)
    if "print(" in RUNNABLE[index]:
        assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("index", range(len(PROVIDER_ONLY)))
def test_each_provider_example_of_the_client_guide_compiles(index: int) -> None:
    compile(PROVIDER_ONLY[index], f"docs/client.md provider example {index + 1}", "exec")
