"""The calls a newcomer types first (scripts/newcomer_calls.py, issue 20 items 1-3) work as
written, run as a script the way scripts/newcomer.sh runs it in a fresh venv."""

from __future__ import annotations

import subprocess
import sys

from support import REPO

SCRIPT = REPO / "scripts" / "newcomer_calls.py"


def test_the_newcomer_calls_run_against_the_emulator(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "newcomer calls: ok"


def test_the_newcomer_script_runs_the_readme_commands_as_written():
    script = (REPO / "scripts" / "newcomer.sh").read_text()
    readme = (REPO / "README.md").read_text()
    assert "grep -m1" in script and "README.md" in script  # read from the README, not copied
    assert (
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/modelstream demo"
        in readme
    )
    assert (
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/pytest"
        in readme
    )
