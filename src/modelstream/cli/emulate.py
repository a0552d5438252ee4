"""`emulate`: the loopback provider emulator (`modelstream.testing.Emulator`) from a shell.

For tests written in other languages: start `modelstream emulate --port 0 --script replies.toml`,
read the URL from its first line of output, point the client under test at it, stop it with
SIGTERM (or Ctrl-C). The script format is `modelstream.testing.script` (docs/testing.md).
"""

from __future__ import annotations

import argparse
import signal
import threading
from typing import Any

from ..console.exit_status import EXIT_OK, UsageError
from ..console.helptext import command_parser, examples
from ..testing import Emulator
from ..testing.routes import emulated_protocols
from ..testing.script import ScriptError, load_script


def add_command(commands: Any) -> None:
    """Add `emulate` to the subcommands of the `modelstream` parser."""
    emulate = command_parser(
        commands,
        "emulate",
        help="run the provider emulator on a port, for tests in any language",
        description="Serve every emulated provider API on 127.0.0.1 until SIGTERM or Ctrl-C. "
        "The first line printed is `modelstream emulator at http://127.0.0.1:PORT`; then one "
        "line per protocol with the base URL its clients use. Requests are answered with the "
        "script's replies in order, then with an echo of the user's text (docs/testing.md). "
        "Exit status: 0 stopped, 2 bad usage or script.",
        epilog=examples(
            "modelstream emulate --port 8765",
            "modelstream emulate --port 0 --script replies.toml",
            "modelstream emulate --script replies.json & OPENAI_BASE_URL=... npm test",
        ),
    )
    emulate.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default 0: a free one)"
    )
    emulate.add_argument(
        "--script", metavar="FILE", help="the replies, a .json or .toml file (docs/testing.md)"
    )
    emulate.set_defaults(run=run_emulate)


def run_emulate(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be from 0 to 65535, got {args.port}")
    try:
        replies = load_script(args.script) if args.script is not None else []
    except ScriptError as exc:
        raise UsageError(str(exc)) from None
    stop = threading.Event()
    emulator = Emulator(port=args.port)
    try:
        emulator.start()
    except OSError as exc:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}") from None
    try:
        for scripted in replies:
            emulator.queue(scripted.reply, path=scripted.path)
        print(f"modelstream emulator at {emulator.url}", flush=True)
        for protocol in emulated_protocols():
            print(f"  {protocol:<24} {emulator.base_url(protocol)}", flush=True)
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        stop.wait()
    finally:
        emulator.stop()
    return EXIT_OK
