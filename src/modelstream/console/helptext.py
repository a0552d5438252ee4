"""What every `modelstream` command's `--help` shares: descriptions wrapped to the terminal, and
the examples that end each page kept as written."""

from __future__ import annotations

import argparse
from typing import Any

EXAMPLES = "examples:"


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that the examples block keeps its lines."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(EXAMPLES):
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)


def examples(*lines: str) -> str:
    """An epilog listing example command lines (two or three, each `# what it does` above it)."""
    return "\n".join([EXAMPLES, *(f"  {line}" for line in lines)])


def command_parser(
    commands: Any, name: str, *, epilog: str, **options: Any
) -> argparse.ArgumentParser:
    """A subcommand parser with the shared formatter and its examples. Its flags are taken
    whole, never abbreviated: a near miss is named with the nearest flag instead
    (`console.command_line`), and a flag added later cannot change what an old line means."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name, epilog=epilog, formatter_class=HelpFormatter, allow_abbrev=False, **options
    )
    return parser
