"""`replay`: decode a recorded provider response body (a file, stdin or a shipped sample)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..console.counts import counted
from ..console.exit_status import EXIT_FAILED, EXIT_OK, UsageError
from ..console.helptext import command_parser, examples
from ..errors import StreamError
from ..protocols import PROTOCOLS
from ..results import StreamMetadata
from ..stream import StreamDecoder
from .recognize import HEAD_BYTES, mismatch
from .render import JsonlRenderer, PrettyRenderer, Renderer, pretty_console
from .sources import DEFAULT_SAMPLE, ReplaySource, from_path, from_sample


def add_command(commands: Any) -> None:
    """Add `replay` to the subcommands of the `modelstream` parser."""
    replay = command_parser(
        commands,
        "replay",
        help="decode a recorded provider response body",
        description="Decode a recorded provider response body (SSE, or a binary AWS event "
        "stream) into events. Exit status: 0 stopped, 1 stream error, 2 bad usage.",
        epilog=examples(
            "modelstream replay --sample",
            "modelstream replay turn.sse --format jsonl > turn.jsonl",
            "curl -sN ... | modelstream replay - --protocol openai-chat",
        ),
    )
    replay.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="the response body; its protocol is --protocol, else the one in PATH.json (a "
        'sidecar holding {"protocol": ...}), else recognized from the body (said on stderr); '
        '"-" reads stdin',
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


def run_replay(args: argparse.Namespace) -> int:
    if args.sample is not None and args.path is not None:
        raise UsageError("give either PATH or --sample, not both")
    if args.sample is not None:
        source = from_sample(args.sample, args.protocol)
    elif args.path is not None:
        source = from_path(args.path, args.protocol)
    else:
        raise UsageError("give the PATH of a response body to replay, or --sample")
    if source.recognized:
        print(
            f"modelstream replay: {source.label} looks like {source.protocol} "
            "(pass --protocol to choose another)",
            file=sys.stderr,
        )
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
    """Feed the body to a decoder chunk by chunk and render what it returns.

    A body in which the decoder found nothing at all, and that is another protocol's or not of
    the protocol's framing, is bad usage (`UsageError`) rather than a failed stream."""
    decoder = StreamDecoder(
        source.protocol,
        lenient_tool_arguments=lenient_tool_arguments,
        lenient_frames=lenient_frames,
    )
    metadata = decoder.metadata
    head = bytearray()  # the first bytes, to say what the body is if nothing was found in it
    shown = 0
    try:
        for chunk in source.chunks():
            if len(head) < HEAD_BYTES:
                head += chunk[: HEAD_BYTES - len(head)]
            events = decoder.feed(chunk, now_ms=_now_ms())
            shown += len(events)
            renderer.events(events, metadata)
        renderer.events(decoder.end(now_ms=_now_ms()), metadata)
    except StreamError as error:
        wrong = mismatch(source.protocol, bytes(head)) if shown == 0 else None
        if wrong is not None:
            raise UsageError(f"{source.label}: {wrong}") from None
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
    lost = metadata.lost_frames
    if lost:
        print(
            f"modelstream replay: warning: {counted(lost, 'frame')} of the stream "
            f"{'was' if lost == 1 else 'were'} lost (not JSON, or missing from the event "
            "numbering) and skipped: this turn may miss content",
            file=sys.stderr,
        )


def _now_ms() -> int:
    return int(time.time() * 1000)
