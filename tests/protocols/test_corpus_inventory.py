"""The corpus the tests replay is all there: the number of captures of every protocol is pinned,
so a capture lost in a checkout fails here instead of thinning out the parametrized tests, and
`.ci/run` refuses to start without the corpus at all."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from support import REPO, require_corpus

# Captures per protocol folder, as the corpus README states them.
CAPTURES = {
    "openai-chat": 22,
    "openai-responses": 16,
    "anthropic-messages": 15,
    "gemini-generate-content": 31,
    "gemini-interactions": 12,
    "bedrock-converse-stream": 18,
}
NOT_PROTOCOLS = {"LICENSES"}


def body_suffix(protocol: str) -> str:
    """Bedrock's body is a binary AWS event stream; every other protocol's is SSE."""
    return ".bin" if protocol == "bedrock-converse-stream" else ".sse"


def test_every_protocol_folder_of_the_corpus_has_a_pinned_count() -> None:
    corpus = require_corpus()
    folders = {path.name for path in corpus.iterdir() if path.is_dir()} - NOT_PROTOCOLS
    assert folders == set(CAPTURES)


@pytest.mark.parametrize(("protocol", "count"), CAPTURES.items())
def test_each_protocol_has_its_captures_each_with_its_sidecar(protocol: str, count: int) -> None:
    folder = require_corpus() / protocol
    bodies = {path.stem for path in folder.glob("*" + body_suffix(protocol))}
    sidecars = {path.stem for path in folder.glob("*.json")}

    assert len(bodies) == count
    assert sidecars == bodies  # no body without its sidecar, no sidecar without its body
    for name in sorted(sidecars):
        assert json.loads((folder / f"{name}.json").read_text())["protocol"] == protocol, name


def test_the_corpus_readme_states_the_pinned_counts() -> None:
    readme = (require_corpus() / "README.md").read_text()
    (summary,) = re.findall(r"^\d+ captures .*$", readme, flags=re.M)
    stated = dict(re.findall(r"([a-z-]+): (\d+)[,.]", summary))
    assert {protocol: int(count) for protocol, count in stated.items()} == CAPTURES


# --- .ci/run without the corpus -------------------------------------------------------------

STUB = """#!/bin/sh
echo "$(basename "$0") CI=${CI:-} $*" >> "$CALLS"
"""
# A python3 that makes the venv the README's command expects, of stubs that only log.
PYTHON3_STUB = (
    STUB
    + """mkdir -p .venv/bin
for tool in pip pytest python ruff mypy; do cp "$0" ".venv/bin/$tool"; done
sed -i '/^mkdir/,$d' .venv/bin/*
"""
)


def run_ci(tmp_path: Path, *, with_corpus: bool) -> tuple[subprocess.CompletedProcess[str], str]:
    """`.ci/run` of this checkout, copied into a clone of its own under `tmp_path` (with or
    without `../shared/corpus` beside it), run with stub tools that only log their calls and no
    CI variable; returns the run and the calls."""
    clone = tmp_path / "clone"
    (clone / ".ci").mkdir(parents=True)
    shutil.copy(REPO / ".ci" / "run", clone / ".ci" / "run")
    if with_corpus:
        (tmp_path / "shared" / "corpus").mkdir(parents=True)
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("apt-get", "chromium", "redis-server", "python3"):
        stub = tools / name
        stub.write_text(PYTHON3_STUB if name == "python3" else STUB)
        stub.chmod(0o755)
    calls = tmp_path / "calls"
    calls.touch()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "MODELSTREAM_CORPUS")}
    env.update(PATH=f"{tools}:{env.get('PATH', '/usr/bin:/bin')}", CALLS=str(calls))
    run = subprocess.run(
        ["bash", str(clone / ".ci" / "run")], capture_output=True, text=True, env=env, timeout=60
    )
    return run, calls.read_text()


def test_ci_run_without_the_corpus_fails_at_once_with_one_line_and_installs_nothing(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    run, calls = run_ci(tmp_path, with_corpus=False)

    assert run.returncode != 0
    assert time.monotonic() - started < 10
    (line,) = run.stderr.splitlines()
    assert "corpus is missing" in line and str(tmp_path / "shared" / "corpus") in line
    assert calls == ""  # no apt-get, no venv, no pip


def test_ci_run_with_the_corpus_runs_the_tests_as_ci_even_when_ci_is_unset(
    tmp_path: Path,
) -> None:
    run, calls = run_ci(tmp_path, with_corpus=True)

    assert run.returncode == 0, run.stderr
    assert calls.splitlines() == [
        "python3 CI=true -m venv .venv",
        "pip CI=true install -q -e .[test]",
        "pytest CI=true ",
        "python CI=true scripts/generate_sync.py --check",
        "ruff CI=true check src tests bench scripts",
        "ruff CI=true format --check src tests bench scripts",
        "mypy CI=true ",
    ]
