"""docs/models.md: its python example runs as written and prints what the page says; its TOML
example is a valid catalogue file; its `py` example compiles."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from modelstream.catalogue import load_catalogue
from support import REPO

DOC = (REPO / "docs" / "models.md").read_text()


def test_the_cost_example_runs_and_prints_the_cost_the_page_shows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (example,) = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)
    namespace: dict[str, Any] = {}
    exec(compile(example, "docs/models.md", "exec"), namespace)

    assert capsys.readouterr().out.strip() == "0.0138 USD claude-sonnet-4-5"


def test_the_override_example_is_a_valid_catalogue_file(tmp_path: Path) -> None:
    (toml,) = re.findall(r"```toml\n(.*?)```", DOC, flags=re.S)
    mine = tmp_path / "mine.toml"
    mine.write_text(toml)

    catalogue = load_catalogue([mine])

    sonnet = catalogue.lookup("claude-sonnet-5-5")
    assert sonnet is not None and sonnet.price is not None
    assert str(sonnet.price.rate("input")) == "1.6"
    assert catalogue.lookup("llama3.2") is not None


def test_the_provider_example_compiles() -> None:
    for example in re.findall(r"```py\n(.*?)```", DOC, flags=re.S):
        compile(example, "docs/models.md", "exec")
