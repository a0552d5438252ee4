"""`modelstream` command line: `replay` a recorded response body, `check` an event file,
`chat` with a model, `demo` the whole stack against the loopback emulator.

Exit status: 0 the stream stopped (or the file follows the grammar), 1 the stream ended in an
error (or the file breaks a rule), 2 bad usage or configuration, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from .. import __version__
from ..errors import StreamError
from ..protocols import PROTOCOLS
from ..results import StreamMetadata
from ..server import command as serve_command
from ..stream import StreamDecoder
from ..traces import command as traces_command
from . import chat, demo
from .check import EventFileViolation, check_lines
from .exit_status import EXIT_BROKEN_PIPE, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from .render import JsonlRenderer, PrettyRenderer, Renderer, pretty_console
from .sources import DEFAULT_SAMPLE, ReplaySource, UsageError, from_path, from_sample


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modelstream",
        description="Decode LLM provider streams into one strict event grammar.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    replay = commands.add_parser(
        "replay",
        help="decode a recorded provider response body",
        description="Decode a recorded provider response body (SSE, or a binary AWS event "
        "stream) into events. Exit status: 0 stopped, 1 stream error, 2 bad usage.",
    )
    replay.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="the response body; its protocol is read from PATH.json (a sidecar holding "
        '{"protocol": ...}) unless --protocol is given; "-" reads stdin',
    )
    replay.add_argument(
        "--sample",
        nargs="?",
        const=DEFAULT_SAMPLE,
        metavar="NAME",
        help=f"replay a sample shipped with modelstream instead of PATH (default {DEFAULT_SAMPLE})",
    )
    replay.add_argument("--protocol", metavar="P", help=f"one of: {', '.join(PROTOCOLS)}")
    replay.add_argument(
        "--format",
        choices=("pretty", "jsonl"),
        default="pretty",
        help="pretty: for people (default); jsonl: one SPEC JSON event per line",
    )
    replay.add_argument(
        "--lenient-tool-arguments",
        action="store_true",
        help="recover malformed tool call arguments instead of failing (noted in diagnostics)",
    )
    replay.add_argument(
        "--lenient-frames",
        action="store_true",
        help="skip data frames that are not JSON (and gaps in numbered events) instead of "
        "failing; the turn may then miss content, and a warning says so",
    )
    replay.set_defaults(run=run_replay)

    check = commands.add_parser(
        "check",
        help="validate a JSON-lines event file against the grammar",
        description="Validate a JSON-lines event file (as written by `replay --format jsonl`). "
        "Exit status: 0 valid, 1 a rule is broken, 2 bad usage.",
    )
    check.add_argument("path", metavar="PATH", help="the event file")
    check.set_defaults(run=run_check)
    chat.add_command(commands)
    demo.add_command(commands)
    serve_command.add_parser(commands)
    traces_command.add_parser(commands)
    return parser


def run_replay(args: argparse.Namespace) -> int:
    if args.sample is not None and args.path is not None:
        raise UsageError("give either PATH or --sample, not both")
    if args.sample is not None:
        source = from_sample(args.sample, args.protocol)
    elif args.path is not None:
        source = from_path(args.path, args.protocol)
    else:
        raise UsageError("give the PATH of a response body to replay, or --sample")
    renderer: Renderer
    if args.format == "jsonl":
        renderer = JsonlRenderer(sys.stdout.buffer)
    else:
        renderer = PrettyRenderer(pretty_console(), source.label, source.protocol)
    return replay(
        source,
        renderer,
        lenient_tool_arguments=args.lenient_tool_arguments,
        lenient_frames=args.lenient_frames,
    )


def replay(
    source: ReplaySource,
    renderer: Renderer,
    *,
    lenient_tool_arguments: bool,
    lenient_frames: bool = False,
) -> int:
    """Feed the body to a decoder chunk by chunk and render what it returns."""
    decoder = StreamDecoder(
        source.protocol,
        lenient_tool_arguments=lenient_tool_arguments,
        lenient_frames=lenient_frames,
    )
    metadata = decoder.metadata
    try:
        for chunk in source.chunks():
            renderer.events(decoder.feed(chunk, now_ms=_now_ms()), metadata)
        renderer.events(decoder.end(now_ms=_now_ms()), metadata)
    except StreamError as error:
        renderer.failed(error, metadata)
        _warn_lost(metadata)
        return EXIT_FAILED
    except BrokenPipeError:
        raise  # our reader went away, see main()
    except OSError as exc:
        raise UsageError(f"cannot read {source.label}: {exc.strerror or exc}") from None
    renderer.stopped(metadata)
    _warn_lost(metadata)
    return EXIT_OK


def _warn_lost(metadata: StreamMetadata) -> None:
    """Say on stderr, whatever the format, that --lenient-frames skipped content."""
    if metadata.lost_frames:
        print(
            f"modelstream replay: warning: {metadata.lost_frames} frame(s) of the stream were "
            "lost (not JSON, or missing from the event numbering) and skipped: this turn may "
            "miss content",
            file=sys.stderr,
        )


def run_check(args: argparse.Namespace) -> int:
    try:
        with open(args.path, "rb") as lines:
            report = check_lines(lines)
    except FileNotFoundError:
        raise UsageError(f"no such file: {args.path} (give a JSON-lines event file)") from None
    except OSError as exc:
        raise UsageError(f"cannot read {args.path}: {exc.strerror or exc}") from None
    except EventFileViolation as violation:
        print(f"{args.path}: {violation}")
        return EXIT_FAILED
    if report.error_type is not None:
        print(f"ok: {report.events} events, ended by error {report.error_type}")
    else:
        print(f"ok: {report.events} events, finish reason {report.finish_reason}")
    return EXIT_OK


def _now_ms() -> int:
    return int(time.time() * 1000)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
