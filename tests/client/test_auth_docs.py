"""docs/auth.md and docs/requests-bedrock.md: their `python` examples run as written (no
network); `py` examples, which need real credentials or other packages, at least compile."""

from __future__ import annotations

import re

import pytest

from support import REPO

DOCS = REPO / "docs"
PAGES = ["auth.md", "requests-bedrock.md"]


def blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (DOCS / page).read_text(), re.S)


@pytest.mark.parametrize(
    ("page", "index"), [(p, i) for p in PAGES for i in range(len(blocks(p, "python")))]
)
def test_the_python_examples_run_as_written(page: str, index: int) -> None:
    exec(compile(blocks(page, "python")[index], f"docs/{page} example {index + 1}", "exec"), {})


@pytest.mark.parametrize(
    ("page", "index"), [("auth.md", i) for i in range(len(blocks("auth.md", "py")))]
)
def test_the_examples_that_need_credentials_compile(page: str, index: int) -> None:
    compile(blocks(page, "py")[index], f"docs/{page} credentials example {index + 1}", "exec")
