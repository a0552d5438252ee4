"""`modelstream traces`: browse recorded traces.

    modelstream traces serve [--db PATH] [--host 127.0.0.1] [--port 0]   the web viewer
    modelstream traces list  [--db PATH] [--query TEXT] [--model NAME]    a listing in the terminal

PATH defaults to $MODELSTREAM_TRACES, else the default trace file (docs/traces.md). Also runs
as `python -m modelstream.traces ...`.
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

from .sinks import OFF_VALUES
from .store import TraceStore, default_path

EXIT_OK, EXIT_USAGE = 0, 2


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `traces` (with `serve` and `list`) to a command line's subcommands."""
    traces = subparsers.add_parser(
        "traces",
        help="browse recorded traces",
        description="Browse the turns recorded in a trace file (docs/traces.md).",
    )
    commands = traces.add_subparsers(dest="traces_command", required=True, metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="open the trace viewer web page",
        description="Serve the trace viewer: traces listed and searchable, each shown turn by "
        "turn. Prints the URL to open.",
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
    listing = commands.add_parser("list", help="list traces, newest first")
    _add_db(listing)
    listing.add_argument("--query", "-q", metavar="TEXT", help="a part of an id, message or item")
    listing.add_argument("--model", metavar="NAME", help="a part of a model name")
    listing.add_argument("--limit", type=int, default=50, metavar="N", help="at most N traces")
    listing.set_defaults(run=run)


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="the trace file (default: $MODELSTREAM_TRACES, else "
        "~/.local/share/modelstream/traces.sqlite3)",
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
    store = TraceStore(db_path(args.db))
    try:
        store.list_traces(limit=1)
    except sqlite3.DatabaseError as exc:
        print(f"modelstream traces: {store.path} is not a trace file: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.traces_command == "list":
        return _list(store, args)
    return _serve(store, args.host, args.port)


def _list(store: TraceStore, args: argparse.Namespace) -> int:
    found = store.list_traces(text=args.query, model=args.model, limit=args.limit)
    if not found:
        print(f"no traces in {store.path}" + (" match" if args.query or args.model else ""))
    for trace in found:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(trace.updated_at / 1000))
        print(
            f"{trace.trace_id}\t{trace.turns} turns\t{trace.last_status}\t"
            f"{trace.total_tokens} tokens\t{','.join(trace.models)}\t{when}"
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
        create_app(store, allowed_hosts=allowed), log_level="warning", lifespan="off"
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
    parser = argparse.ArgumentParser(prog="modelstream")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["traces", *(sys.argv[1:] if argv is None else argv)])
    status: int = args.run(args)
    return status


__all__ = ["add_parser", "db_path", "main", "run"]
