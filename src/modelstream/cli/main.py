"""`modelstream` command line: `replay` a recorded response body, `check` an event file,
`chat` with a model, `demo` the whole stack against the loopback emulator, `emulate` it for
other programs, `serve` models, browse `traces`.

Exit status: 0 the stream stopped (or the file follows the grammar), 1 the stream ended in an
error (or the file breaks a rule), 2 bad usage or configuration, 130 interrupted (Ctrl-C).

Each command is its own module, wherever its layer is (`modelstream.serving.command` beside the
server it runs): its `add_command(subparsers)` adds its parser, help, examples and `run`, and it
imports the shared exit statuses and help formatting from `modelstream.console`, never this
package. Adding a command is its module and one line in `COMMANDS`.

Start-up is kept short: a command's module (and what it needs: the client, httpx, Rich,
Starlette) is imported only when that command runs or its `--help` is asked for. The other
commands are listed from `COMMANDS` alone.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module

from .. import __version__
from ..console.command_line import CommandParser
from ..console.exit_status import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_USAGE, UsageError
from ..console.helptext import HelpFormatter, examples


@dataclass(frozen=True)
class Command:
    """A subcommand: its one-line help (for the list of commands, which imports none of them)
    and the module whose `add_command(subparsers)` adds its parser, examples and `run`."""

    help: str
    module: str


COMMANDS = {
    "replay": Command("decode a recorded provider response body", "modelstream.cli.replay"),
    "check": Command(
        "validate a JSON-lines event file against the grammar", "modelstream.cli.check"
    ),
    "chat": Command("stream one turn from a model (needs its API key)", "modelstream.cli.chat"),
    "demo": Command(
        "stream one turn of each protocol from a local emulator (no key, no network)",
        "modelstream.cli.demo",
    ),
    "emulate": Command(
        "run the provider emulator on a port, for tests in any language",
        "modelstream.cli.emulate",
    ),
    "serve": Command(
        "serve configured models over HTTP as resumable streams", "modelstream.serving.command"
    ),
    "traces": Command("browse recorded traces", "modelstream.traces.command"),
    "keys": Command(
        "issue and manage virtual keys: models, rate limits, budgets",
        "modelstream.server.keys.command",
    ),
    "models": Command(
        "list the model catalogue: protocols, context window, list prices",
        "modelstream.cli.models",
    ),
    "playground": Command(
        "serve a chat page for the models of a server config", "modelstream.cli.playground"
    ),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, every other command is a placeholder that imports nothing."""
    parser = CommandParser(
        prog="modelstream",
        allow_abbrev=False,
        description="Decode LLM provider streams into one strict event grammar.",
        formatter_class=HelpFormatter,
        epilog=examples(
            "modelstream replay --sample",
            "modelstream demo",
            "ANTHROPIC_API_KEY=... modelstream chat -m claude-sonnet-4-5 Why is the sky blue",
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        if only is not None and name != only:
            commands.add_parser(name, help=command.help)
            continue
        import_module(command.module).add_command(commands)
    return parser


def _command_named(argv: Sequence[str]) -> str | None:
    """The subcommand on the command line (its first word not an option), when one is known:
    only it is built. Otherwise every command is (`--help` lists all, a typo is reported)."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return "" if argv else None  # `--version` / `--help` alone: no command's module


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    chosen = _command_named(arguments)
    args = build_parser(only=chosen).parse_args(arguments)
    try:
        status: int = args.run(args)
    except UsageError as exc:
        print(f"modelstream {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, and keep Python's exit-time flush
        # of stdout from failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return status


if __name__ == "__main__":
    sys.exit(main())
