"""docs/media.md: its examples run as written against the emulator."""

from __future__ import annotations

import re
from typing import Any

import pytest

from support import REPO

DOC = (REPO / "docs" / "media.md").read_text()
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)


def test_the_media_guide_has_its_examples() -> None:
    assert len(EXAMPLES) == 2


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_each_media_example_runs_and_prints(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(EXAMPLES[index], f"docs/media.md example {index + 1}", "exec"), namespace)
    printed = capsys.readouterr().out
    assert ("image/png 72 bytes" in printed) if index == 0 else ("0.2 s of speech" in printed)
