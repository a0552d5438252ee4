"""`modelstream traces`: browse recorded traces.

    modelstream traces serve [--db PATH] [--create] [--host 127.0.0.1] [--port 0]     the viewer
    modelstream traces list  [--db PATH] [--query TEXT] [--model NAME] [--key NAME]  a listing
                             [--json]

PATH defaults to $MODELSTREAM_TRACES, else the default trace file (docs/traces.md). A trace file
that does not exist is an error (exit status 2: a mistyped path must not look like "no traces"),
unless `--create` asks for an empty one. Also runs as `python -m modelstream.traces ...`.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from ..console.command_line import CommandParser
from ..console.counts import counted
from ..console.exit_status import EXIT_OK, EXIT_USAGE
from ..console.extras import report_missing_extra
from ..console.helptext import command_parser, examples
from .sinks import OFF_VALUES
from .store import TraceStore, default_path


def add_command(subparsers: Any) -> None:
    """Add `traces` (with `serve` and `list`) to a command line's subcommands."""
    traces = command_parser(
        subparsers,
        "traces",
        help="browse recorded traces",
        description="Browse the turns recorded in a trace file (docs/traces.md).",
        epilog=examples(
            "modelstream traces list",
            "modelstream traces serve --db ./traces.sqlite3",
            "modelstream traces list --json --query lisbon",
        ),
    )
    commands = traces.add_subparsers(dest="traces_command", required=True, metavar="COMMAND")
    serve = command_parser(
        commands,
        "serve",
        help="open the trace viewer web page",
        description="Serve the trace viewer: traces listed and searchable, each shown turn by "
        "turn, the list and the open trace updated as turns are recorded. Prints the URL to "
        "open. Exit status: 0 stopped, 2 no such trace file or bad usage.",
        epilog=examples(
            "modelstream traces serve",
            "modelstream traces serve --db ./traces.sqlite3 --create --port 0",
            "MODELSTREAM_TRACES=./traces.sqlite3 modelstream traces serve --port 9000",
        ),
    )
    _add_db(serve)
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    serve.add_argument(
        "--port", type=int, default=8377, help="port (default 8377; 0 picks a free one)"
    )
    serve.set_defaults(run=run)
    listing = command_parser(
        commands,
        "list",
        help="list traces, newest first",
        description="List the traces of a trace file, newest first: id, turns, last status, "
        "tokens (or 'usage unknown'), models, last turn's time, and the virtual key names when "
        "a listed trace has one. Exit status: 0 listed (even none), 2 no such trace file or "
        "bad usage.",
        epilog=examples(
            "modelstream traces list",
            "modelstream traces list --key alice --model claude --limit 10",
            "modelstream traces list --json | jq '.traces[].trace_id'",
        ),
    )
    _add_db(listing)
    listing.add_argument("--query", "-q", metavar="TEXT", help="a part of an id, message or item")
    listing.add_argument("--model", metavar="NAME", help="a part of a model name")
    listing.add_argument(
        "--key", metavar="NAME", help="the whole name of a virtual key (case-sensitive)"
    )
    listing.add_argument("--limit", type=int, default=50, metavar="N", help="at most N traces")
    listing.add_argument(
        "--json",
        action="store_true",
        help='print {"db": PATH, "traces": [...]}, as the viewer\'s /api/traces answers',
    )
    listing.set_defaults(run=run)


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="the trace file (default: $MODELSTREAM_TRACES, else "
        "~/.local/share/modelstream/traces.sqlite3)",
    )
    parser.add_argument(
        "--create",
        action="store_true",
        help="create an empty trace file if there is none (without it, a missing file is an error)",
    )


def db_path(arg: str | None) -> Path:
    """--db, else $MODELSTREAM_TRACES (unless it says off), else the default file."""
    if arg:
        return Path(arg)
    env = os.environ.get("MODELSTREAM_TRACES")
    if env and env.strip().lower() not in OFF_VALUES:
        return Path(env)
    return default_path()


def run(args: argparse.Namespace) -> int:
    if args.traces_command == "serve" and (missing := _missing_server_extra()) is not None:
        return report_missing_extra("traces serve", missing)
    store = TraceStore(db_path(args.db))
    try:
        if args.create:
            store.create()
        elif not store.exists():
            print(
                f"modelstream traces: no trace file at {store.path} ({_chosen_by(args.db)}); "
                "check the path, or pass --create to start an empty one",
                file=sys.stderr,
            )
            return EXIT_USAGE
        store.list_traces(limit=1)
    except OSError as exc:
        print(f"modelstream traces: cannot create {store.path}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.DatabaseError as exc:
        print(f"modelstream traces: {store.path} is not a trace file: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.traces_command == "list":
        return _list(store, args)
    return _serve(store, args.host, args.port)


def _missing_server_extra() -> ImportError | None:
    """Why the viewer cannot run here, if it cannot: asked before the trace file is touched."""
    try:
        import uvicorn  # noqa: F401

        from .viewer import create_app  # noqa: F401
    except ImportError as exc:
        return exc
    return None


def _chosen_by(arg: str | None) -> str:
    """Where the path came from, to say in an error."""
    if arg:
        return "given with --db"
    env = os.environ.get("MODELSTREAM_TRACES")
    if env and env.strip().lower() not in OFF_VALUES:
        return "from $MODELSTREAM_TRACES"
    return "the default; --db or $MODELSTREAM_TRACES name another"


def _list(store: TraceStore, args: argparse.Namespace) -> int:
    found = store.list_traces(text=args.query, model=args.model, key=args.key, limit=args.limit)
    if args.json:
        document = {"db": str(store.path), "traces": [trace.to_json() for trace in found]}
        sys.stdout.buffer.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
        return EXIT_OK
    if not found:
        filtered = args.query or args.model or args.key
        print(f"no traces in {store.path}" + (" match" if filtered else ""))
    # the key names come last, and only when a listed trace has one: the library's and a
    # static-key server's listings keep their six columns
    with_keys = any(trace.key_names for trace in found)
    for trace in found:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(trace.updated_at / 1000))
        keys = f"\t{','.join(trace.key_names)}" if with_keys else ""
        print(
            f"{trace.trace_id}\t{counted(trace.turns, 'turn')}\t{trace.last_status}\t"
            f"{trace.usage_text()}\t{','.join(trace.models)}\t{when}{keys}"
        )
    return EXIT_OK


def _serve(store: TraceStore, host: str, port: int) -> int:
    import uvicorn

    from .viewer import create_app
    from .viewer.app import LOOPBACK_HOSTS

    allowed = [*LOOPBACK_HOSTS, host]
    if _is_wildcard(host):
        allowed = ["*"]
        print(f"warning: listening on {host}: every machine that reaches it can read traces")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        print(
            f"modelstream traces serve: cannot listen on {host}:{port}: {exc.strerror}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    sock.listen(128)  # connections wait in the backlog until the server runs
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"Trace viewer at http://{shown}:{bound_port}/ reading {store.path}", flush=True)
    config = uvicorn.Config(
        create_app(store, allowed_hosts=allowed),
        log_level="warning",
        lifespan="off",
        # open pages hold a live-update stream each: stop without waiting for them to leave
        timeout_graceful_shutdown=1,
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        store.close()
    return EXIT_OK


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser(prog="modelstream", allow_abbrev=False)
    add_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["traces", *(sys.argv[1:] if argv is None else argv)])
    status: int = args.run(args)
    return status


__all__ = ["add_command", "db_path", "main", "run"]
