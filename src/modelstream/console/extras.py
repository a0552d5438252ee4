"""What a command says when an optional extra it needs is not installed: one line naming the
missing package and the `pip install` that adds it, exit status 2 (`serve`, `playground`,
`traces serve`)."""

from __future__ import annotations

import sys

from .exit_status import EXIT_USAGE


def report_missing_extra(command: str, missing: ImportError, extra: str = "server") -> int:
    """Say on stderr that `command` needs `extra` (`missing` is the failed import); EXIT_USAGE."""
    package = (missing.name or "a module").partition(".")[0]  # what pip installs
    print(
        f"modelstream {command}: error: the {command} command needs the '{extra}' extra "
        f"({package} is missing): pip install 'modelstream[{extra}]'",
        file=sys.stderr,
    )
    return EXIT_USAGE
