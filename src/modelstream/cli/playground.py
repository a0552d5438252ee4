"""`modelstream playground --config FILE [--open]`: the server with its chat page, announced.

It is `modelstream serve` (the same config, app and shutdown) plus a line naming the page's
URL. A config without keys makes an open server; here that needs `--open`, said on purpose,
since a playground is what people start on a laptop and forget. Binds 127.0.0.1 by default.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..console.exit_status import EXIT_USAGE
from ..console.helptext import command_parser, examples


def add_command(subparsers: Any) -> argparse.ArgumentParser:
    from ..serving.command import add_listen_arguments  # the server only when this command runs

    parser = command_parser(
        subparsers,
        "playground",
        epilog=examples(
            "modelstream playground --config server.toml",
            "modelstream playground --config local.toml --port 0 --open",
        ),
        help="serve a chat page for the models of a server config",
        description="Serve the models of a server config (docs/server.md) with the chat page "
        "at /playground/ (docs/playground.md). The page needs one of the config's keys; a "
        "config without keys is refused unless --open is given. Ctrl-C stops it.",
    )
    add_listen_arguments(parser)
    parser.add_argument(
        "--open",
        action="store_true",
        help="allow a config without keys: anyone who reaches the port may use its models",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=("debug", "info", "warning", "error"),
        help="server log level (default warning)",
    )
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from ..server.config import ServerConfigError, load_settings
    from ..serving.command import serve_settings

    try:
        settings = load_settings(args.config)
    except ServerConfigError as exc:
        return _usage(str(exc))
    if settings.open and not args.open:
        return _usage(
            f"{args.config} has no keys, so the playground would be open to anyone who reaches "
            'it: set keys = ["$VAR"] in the config, or pass --open to allow it'
        )

    def ready(url: str) -> None:
        print(f"modelstream playground: open {url}/playground/", file=sys.stderr, flush=True)

    return serve_settings(settings, args, command="playground", ready=ready)


def _usage(message: str) -> int:
    print(f"modelstream playground: error: {message}", file=sys.stderr)
    return EXIT_USAGE
