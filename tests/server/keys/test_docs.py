"""docs/keys.md: every `modelstream keys` line of its shell examples parses with the command's
own parser (its `python` examples run in tests/docs/test_doc_examples.py)."""

from __future__ import annotations

import re
import shlex

import pytest

from modelstream.console.command_line import CommandParser
from modelstream.server.keys.command import add_command
from support import REPO

DOC = (REPO / "docs" / "keys.md").read_text()
SHELL = "\n".join(re.findall(r"```sh\n(.*?)```", DOC, flags=re.S)).replace("\\\n", " ")
LINES = [line.split("#")[0] for line in SHELL.splitlines() if line.startswith("modelstream keys")]


def test_the_guide_shows_every_keys_command() -> None:
    shown = {shlex.split(line)[2] for line in LINES}
    assert shown == {"create", "list", "show", "update", "revoke", "spend"}


@pytest.mark.parametrize("line", LINES)
def test_each_keys_command_line_of_the_guide_parses(line: str) -> None:
    parser = CommandParser(prog="modelstream")
    add_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(shlex.split(line)[1:])
    assert args.command == "keys" and args.keys_command
