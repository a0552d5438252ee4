"""The npm front-end packages `.ci/run` installs into `.frontend/` (the AI SDK, AG-UI), and a
Node script run against them: the judge of the front-end wires."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from support import REPO, missing

FRONTEND = REPO / ".frontend" / "node_modules"  # installed by .ci/run


def run_node(script: str, stdin: Any, packages: tuple[str, ...], tmp_path: Path) -> Any:
    """Run `script` (CommonJS) in Node with `stdin` as JSON on its standard input, the
    front-end packages on its module path, and return what it printed, read as JSON."""
    node = shutil.which("node")
    if node is None or not all((FRONTEND / package).is_dir() for package in packages):
        missing(
            f"node and the npm packages {', '.join(packages)} are needed in {FRONTEND}: "
            f"npm install --prefix .frontend {' '.join(packages)}"
        )
    path = tmp_path / "judge.cjs"
    path.write_text(script)
    done = subprocess.run(
        [node, str(path)],
        input=json.dumps(stdin),
        capture_output=True,
        text=True,
        timeout=60,
        env={"NODE_PATH": str(FRONTEND), "PATH": str(Path(node).parent)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


__all__ = ["FRONTEND", "run_node"]
