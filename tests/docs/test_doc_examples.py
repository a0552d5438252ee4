"""Every `python` block of README.md and docs/*.md runs as written, alone, from an empty folder.

Each block runs as its own `python` process (this interpreter) in a fresh temporary folder, with a
home and data folder of its own (so nothing it records lands in yours, and the test checks that
nothing was recorded there), no provider keys or modelstream settings in its environment, and a
time limit. A block that needs something says so in its opening comment lines:

    # needs: redis                a redis-server: the test starts one and sets $REDIS_URL
    # needs: server extra         the packages of modelstream's `server` extra (any extra)
    # needs: anthropic            an installed package, by its pip name (one that is not
                                  modelstream's dependency: an SDK, pytest, an OTel SDK)
    # needs: OPENAI_API_KEY       that variable, passed on when it is set (skipped when not)
    # fragment                    deliberately not runnable (its prose says why): only compiled

Several needs are separated by commas. `py` blocks call real providers with real keys: they
are compiled only.
"""

from __future__ import annotations

import importlib.metadata
import itertools
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from support import REPO, missing

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
TIME_LIMIT_S = 60  # each block takes under a few seconds; this is for a machine under load
# What an example must not inherit: provider keys and credentials, and modelstream's own
# settings (a trace file, a catalogue, a server URL), so each runs as on a fresh machine.
INHERITED_SECRET = re.compile(
    r"(_API_KEY|_KEY|_TOKEN|_SECRET|_PASSWORD|_CREDENTIALS)$"
    r"|^(MODELSTREAM_|AWS_|AZURE_|GOOGLE_|CLOUDSDK_|OPENAI_|ANTHROPIC_|GEMINI_|DEEPSEEK_|REDIS_URL$)"
)


@dataclass(frozen=True)
class Example:
    """One fenced block of a document, named by its file and the line of its opening fence."""

    where: str
    code: str

    @property
    def opening_comments(self) -> list[str]:
        lines = self.code.splitlines()
        return [line.strip() for line in itertools.takewhile(lambda x: x.startswith("#"), lines)]

    @property
    def needs(self) -> list[str]:
        markers = (re.fullmatch(r"#\s*needs:\s*(.+)", line) for line in self.opening_comments)
        return [need.strip() for m in markers if m for need in m.group(1).split(",")]

    @property
    def is_fragment(self) -> bool:
        return any(re.match(r"#\s*fragment\b", line) for line in self.opening_comments)


def examples(language: str) -> list[Example]:
    fence = re.compile(rf"^```{language}\n(.*?)^```", flags=re.S | re.M)
    found = []
    for document in DOCUMENTS:
        text = document.read_text()
        for block in fence.finditer(text):
            line = text.count("\n", 0, block.start()) + 1
            found.append(Example(f"{document.relative_to(REPO)}:{line}", block.group(1)))
    return found


RUNNABLE = examples("python")
PROVIDER_ONLY = examples("py")


def test_the_docs_have_python_examples_and_few_fragments() -> None:
    assert len(RUNNABLE) >= 60
    fragments = [example.where for example in RUNNABLE if example.is_fragment]
    assert len(fragments) <= 3, f"most examples must run as written: {fragments}"


@pytest.mark.parametrize("example", RUNNABLE, ids=[e.where for e in RUNNABLE])
def test_each_python_example_runs_alone_and_records_nothing_in_the_data_folder(
    example: Example, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    compile(example.code, example.where, "exec")
    if example.is_fragment:
        return  # compiled is all a fragment promises
    home, data, folder = tmp_path / "home", tmp_path / "data", tmp_path / "work"
    for made in (home, data, folder):
        made.mkdir()
    env = {name: value for name, value in os.environ.items() if not INHERITED_SECRET.search(name)}
    env |= {"HOME": str(home), "XDG_DATA_HOME": str(data), "PYTHONDONTWRITEBYTECODE": "1"}
    env |= provide(example.needs, request)

    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-c", example.code],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIME_LIMIT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{example.where} still ran after {TIME_LIMIT_S} s")
    elapsed = time.monotonic() - started

    assert done.returncode == 0, f"{example.where} failed ({elapsed:.1f} s):\n{done.stderr}"
    if "print(" in example.code:
        assert done.stdout.strip(), f"{example.where} printed nothing"
    # a server or client that records traces was given a file of its own (tempfile or ./)
    for data_folder in (data / "modelstream", home / ".local" / "share" / "modelstream"):
        assert not data_folder.exists(), f"{example.where} wrote {list(data_folder.iterdir())}"


@pytest.mark.parametrize("example", PROVIDER_ONLY, ids=[e.where for e in PROVIDER_ONLY])
def test_each_provider_example_compiles(example: Example) -> None:
    compile(example.code, example.where, "exec")


def provide(needs: list[str], request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment an example's `# needs:` asks for; skips (fails under CI) when the
    machine lacks it, and skips when a key it names is not set."""
    env: dict[str, str] = {}
    for need in needs:
        if need == "redis":
            env["REDIS_URL"] = request.getfixturevalue("redis_url")  # support.redis_server
        elif need.endswith(" extra"):
            require_extra(need.removesuffix(" extra"))
        elif need.isupper():
            if not os.environ.get(need):
                pytest.skip(f"needs ${need}, which is not set")
            env[need] = os.environ[need]
        elif not installed(need):
            missing(f"{need} is not installed (pip install {need})")
    return env


def installed(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def require_extra(extra: str) -> None:
    """Skip (fail under CI) unless every package of modelstream's `extra` is installed."""
    wanted = [
        requirement
        for line in importlib.metadata.requires("modelstream") or []
        if (requirement := Requirement(line)).marker is not None
        and requirement.marker.evaluate({"extra": extra})
    ]
    assert wanted, f"modelstream has no {extra!r} extra"
    if not all(installed(requirement.name) for requirement in wanted):
        missing(f"the {extra} extra is not installed (pip install 'modelstream[{extra}]')")
