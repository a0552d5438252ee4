"""`modelstream serve --config FILE [--host H] [--port P]`: run the server with uvicorn.

Exposes `add_command(subparsers)` for the `modelstream` command and `run(args)`; `python -m
modelstream.server` runs the same command on its own. It serves `serving.create_app`: the
server's app with the chat page. Starlette and uvicorn are imported only
when the server runs, so the rest of the CLI works without the `server` extra.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any

from ..catalogue import CatalogueError, default_catalogue
from ..console.command_line import CommandParser
from ..console.exit_status import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from ..console.extras import report_missing_extra
from ..console.helptext import command_parser, examples
from ..errors import ModelstreamError
from ..server.config import ServerConfigError, ServerSettings, load_settings
from ..server.logs import hide_response_ids_in_access_log
from ..server.stores import StreamStore

GRACEFUL_SHUTDOWN_SECONDS = 5


def add_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add `serve` to the `modelstream` subcommands."""
    parser = command_parser(
        subparsers,
        "serve",
        epilog=examples(
            "modelstream serve --config server.toml",
            "modelstream serve --config server.toml --port 0 --redis redis://localhost:6379/0",
        ),
        help="serve configured models over HTTP as resumable streams",
        description="Serve the models of a config file over HTTP (POST /v1/stream, resumable "
        "with GET /v1/streams/{id}); see docs/server.md. Ctrl-C or SIGTERM stop it gracefully. "
        "Exit status: 0 after a graceful shutdown, 2 bad config or usage.",
    )
    add_listen_arguments(parser)
    parser.add_argument(
        "--redis",
        metavar="URL",
        help="keep streams in this Redis (redis://host:6379/0, or $VAR to read the URL from "
        "that environment variable), so that every instance sharing it can serve a resume; "
        "default: in this process's memory",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="server log level (default info)",
    )
    parser.set_defaults(run=run)
    return parser


def add_listen_arguments(parser: argparse.ArgumentParser) -> None:
    """What `serve` and `playground` both take: the config, and where to listen."""
    parser.add_argument(
        "--config", required=True, metavar="FILE", help="the server config (.toml or .json)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8000, help="port to bind; 0 picks a free one (default 8000)"
    )


def run(args: argparse.Namespace) -> int:
    """Load the config, bind, announce, serve until interrupted."""
    try:
        settings = load_settings(args.config)
    except ServerConfigError as exc:
        return _usage(str(exc))
    return serve_settings(settings, args)


def serve_settings(
    settings: ServerSettings,
    args: argparse.Namespace,
    *,
    command: str = "serve",
    ready: Callable[[str], None] | None = None,
) -> int:
    """Bind `args.host:args.port`, announce, serve `settings` until interrupted: `serve`, and
    `playground` (which says where its page is through `ready(url)`)."""
    try:
        import uvicorn

        from ..server.limits import connection_protocol
        from .app import create_app  # the server with the playground

        protocol = connection_protocol(settings.limits)
    except ImportError as exc:
        return report_missing_extra(command, exc)
    try:  # the price list every finished stream is costed with: a bad file stops us here
        default_catalogue()
    except CatalogueError as exc:
        return _usage(str(exc), command)
    try:
        sock = _bind(args.host, args.port)
    except OSError as exc:
        return _usage(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", command)
    store, store_url = None, None
    if getattr(args, "redis", None):
        try:
            store, store_url = _redis_store(args.redis, settings)
        except ImportError as exc:
            sock.close()
            return _usage(
                f"--redis needs the 'redis' package ({exc.name} is missing): "
                "pip install 'modelstream[server]'",
                command,
            )
        except (ModelstreamError, ValueError) as exc:
            sock.close()
            return _usage(str(exc), command)
    host, port = sock.getsockname()[:2]
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    url = _url(host, port)
    _announce(settings, url)
    if store_url is not None:
        print(f"modelstream serve: streams are kept in Redis at {store_url}", file=sys.stderr)
    if ready is not None:
        ready(url)
    config = uvicorn.Config(
        create_app(settings, store=store, bound_host=host),
        # uvicorn's protocol with deadlines for headers, a bound on open connections and on
        # header bytes, none of which uvicorn has (limits.connection_protocol says why)
        http=protocol,
        log_level=args.log_level,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        proxy_headers=False,
    )
    hide_response_ids_in_access_log()  # uvicorn set up its loggers in Config()
    try:
        _server_class()(config).run(sockets=[sock])
    except KeyboardInterrupt:  # a second Ctrl-C during the shutdown
        return EXIT_INTERRUPTED
    return EXIT_OK


def _redis_store(url: str, settings: ServerSettings) -> tuple[StreamStore, str]:
    """A `RedisStore` sized by the limits, once a Redis answers at `url` (or raise), and the
    URL to show (without its password)."""
    from ..server.stores.redis import RedisStore, check_reachable, redacted_url

    if url.startswith("$"):  # keep a password out of the command line (and `ps`)
        name = url.removeprefix("$").removeprefix("{").removesuffix("}")
        url = os.environ.get(name, "")
        if not url:
            raise ServerConfigError(f"--redis: the environment variable {name} is not set")
    check_reachable(url)
    store = RedisStore.from_url(
        url,
        max_events_per_stream=settings.limits.max_events_per_stream,
        max_bytes=settings.limits.max_store_bytes,
    )
    return store, redacted_url(url)


def _server_class() -> type[Any]:
    import uvicorn

    class GracefulServer(uvicorn.Server):
        """uvicorn's server, except that a stop signal is not raised again after the graceful
        shutdown (uvicorn does, to die by it): the exit status is then 0 whether the signal
        was SIGINT or SIGTERM, and whatever disposition the process inherited for it."""

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True  # a second Ctrl-C: stop waiting for open streams
            else:
                self.should_exit = True

    return GracefulServer


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)  # connections queue from now on, so the announced URL works at once
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _announce(settings: ServerSettings, url: str) -> None:
    models = ", ".join(settings.served)  # each served model once, however many deployments
    print(f"modelstream serve: listening on {url} (models: {models})", file=sys.stderr)
    if settings.open:
        print(
            "modelstream serve: WARNING: no keys configured, this server is OPEN: anyone who can "
            f"reach {url} may stream from its models on your upstream keys. Set "
            'keys = ["$VAR"] in the config to require a bearer key.',
            file=sys.stderr,
        )
    elif settings.key_envs:
        names = ", ".join(settings.key_envs)
        print(f"modelstream serve: clients must send a bearer key ({names})", file=sys.stderr)
    if settings.virtual_keys is not None:
        print(
            "modelstream serve: virtual keys are accepted (docs/keys.md); manage them with "
            "`modelstream keys` or /v1/admin/keys",
            file=sys.stderr,
        )
    sys.stderr.flush()


def _usage(message: str, command: str = "serve") -> int:
    print(f"modelstream {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m modelstream.server`: the `serve` command on its own."""
    parser = CommandParser(prog="modelstream", allow_abbrev=False)
    add_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["serve", *(sys.argv[1:] if argv is None else argv)])
    try:
        status: int = args.run(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return status
