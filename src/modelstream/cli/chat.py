"""`chat`: stream one turn from a real model to the terminal, through `AsyncClient`.

The key comes from the environment, as the client finds it (`ANTHROPIC_API_KEY`, …). With
`--base-url` the key must be named with `--api-key-env`: a provider's key from the environment
is never sent to another URL (docs/client.md, Credentials). A retry is said on stderr as it
starts (`429, retrying in 2.0 s (attempt 2/3)`), so a wait is never silent.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from ..client import AsyncClient, resolve_route, route_for_model
from ..client.retry import RetryNotice
from ..console.exit_status import EXIT_FAILED, EXIT_OK, UsageError
from ..console.helptext import command_parser, examples
from ..errors import (
    ConfigurationError,
    InvalidMessageError,
    ModelstreamError,
    UnsupportedParameterError,
)
from ..platforms import REGISTRY as PLATFORMS
from ..platforms import platform_of
from ..protocols import CLIENT_TYPES
from ..protocols.common.encoding import THINKING_LEVELS
from ..results import FinalResponse, PartialResponse, StreamMetadata
from ..types import Config, Message
from .live import render_turn
from .render import JsonlRenderer, PrettyRenderer, Renderer, pretty_console
from .structured import render_structured, schema_format

# What `stream()` raises before anything is sent: bad usage or configuration, exit status 2.
_BEFORE_SENDING = (ConfigurationError, UnsupportedParameterError, InvalidMessageError)


def add_command(commands: Any) -> None:
    """Add `chat` to the subcommands of the `modelstream` parser."""
    chat = command_parser(
        commands,
        "chat",
        help="stream one turn from a model (needs its API key)",
        description="Send one prompt to a model and stream the answer: thinking dimmed, text "
        "as it arrives, tool calls with their arguments, then usage, finish reason and timings. "
        "Exit status: 0 stopped, 1 stream error, 2 bad usage or configuration, 130 Ctrl-C.",
        epilog=examples(
            "modelstream chat -m claude-sonnet-4-5 Why is the sky blue",
            "git diff | modelstream chat -m gpt-5-mini --system 'Review this diff'",
            "modelstream chat -m gpt-5-mini --schema order.json 'The order in this mail: ...'",
        ),
    )
    chat.add_argument(
        "prompt",
        nargs="*",
        metavar="PROMPT",
        help="the user message, as the remaining words (after `--` when one starts with '-'); "
        'none or "-": read from stdin',
    )
    chat.add_argument("-m", "--model", required=True, help="e.g. claude-sonnet-4-5, gpt-5-mini")
    chat.add_argument(
        "--client-type",
        choices=CLIENT_TYPES,
        metavar="T",
        help=f"the protocol, when the model name does not say it: {', '.join(CLIENT_TYPES)}",
    )
    chat.add_argument(
        "--platform",
        choices=tuple(PLATFORMS),
        help="the cloud that serves the model, with its ambient credentials (docs/auth.md): "
        + ", ".join(
            f"{unit.title} ({unit.ambient.source})" if unit.ambient else unit.title
            for unit in PLATFORMS.values()
        ),
    )
    chat.add_argument(
        "--base-url",
        metavar="URL",
        help="send the request here instead of the provider's URL (needs --api-key-env)",
    )
    chat.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="the environment variable holding the API key (instead of the provider's own)",
    )
    chat.add_argument("--system", metavar="TEXT", help="the system prompt")
    chat.add_argument(
        "--thinking",
        choices=THINKING_LEVELS,
        metavar="LEVEL",
        help=f"reasoning effort: {', '.join(THINKING_LEVELS)}",
    )
    chat.add_argument("--max-tokens", type=_positive_int, metavar="N", help="the output limit")
    chat.add_argument(
        "--images",
        action="store_true",
        help="ask for images in the answer (config image_output; Gemini image models, Responses)",
    )
    chat.add_argument(
        "--voice",
        metavar="NAME",
        help="ask for a spoken answer in this voice (config speech_output: Gemini TTS, Chat audio)",
    )
    chat.add_argument(
        "--save-media",
        metavar="DIR",
        type=Path,
        help="write the answer's images and audio to files in DIR (raw PCM as .wav)",
    )
    chat.add_argument(
        "--schema",
        metavar="FILE",
        type=Path,
        help="ask for an answer of the JSON schema in FILE, shown as the object grows",
    )
    chat.add_argument(
        "--json",
        action="store_true",
        help="print the events as JSON lines, as `replay --format jsonl` does",
    )
    chat.set_defaults(run=run_chat)


def run_chat(args: argparse.Namespace) -> int:
    prompt = _prompt(args.prompt)
    base_url, api_key = _credentials(args, os.environ)
    config: Config = {}
    if args.system is not None:
        config["system_prompt"] = args.system
    if args.thinking is not None:
        config["thinking_level"] = args.thinking
    if args.max_tokens is not None:
        config["max_tokens"] = args.max_tokens
    if args.images:
        config["image_output"] = True
    if args.voice is not None:
        config["speech_output"] = {"voice": args.voice}
    if args.schema is not None:
        config["response_format"] = schema_format(args.schema)
    messages: list[Message] = [
        {"role": "user", "content_items": [{"type": "text.done", "text": prompt}]}
    ]
    return asyncio.run(_chat(args, messages, config, base_url=base_url, api_key=api_key))


async def _chat(
    args: argparse.Namespace,
    messages: list[Message],
    config: Config,
    *,
    base_url: str | None,
    api_key: str | None,
) -> int:
    try:
        client = AsyncClient(
            args.model,
            client_type=args.client_type,
            base_url=base_url,
            api_key=api_key,
            platform=args.platform,
            on_retry=_say_retry,
        )
    except _BEFORE_SENDING as error:
        raise UsageError(str(error)) from None
    async with client:
        route = resolve_route(args.model, args.client_type, platform_of(args.platform))
        # Another server than the provider's is named by its address, not the provider's name.
        where = httpx.URL(base_url).netloc.decode("ascii") if base_url else route.provider
        header = StreamMetadata(route.client_type, provider=where, model=args.model)
        if args.schema is not None and not args.json:
            try:
                return await render_structured(client, messages, config)
            except _BEFORE_SENDING as error:
                raise UsageError(str(error)) from None
        renderer: Renderer
        if args.json:
            renderer = JsonlRenderer(sys.stdout.buffer)
        else:
            renderer = PrettyRenderer(pretty_console(), args.model, route.client_type)
        try:
            result = await render_turn(client, messages, config, renderer, header)
        except _BEFORE_SENDING as error:
            raise UsageError(str(error)) from None
    if args.save_media is not None:
        _save_media(result, args.save_media)
    return EXIT_OK if isinstance(result, FinalResponse) else EXIT_FAILED


def _say_retry(notice: RetryNotice) -> None:
    """Say why nothing arrives yet, on stderr (stdout stays the answer, or its JSON lines)."""
    print(notice, file=sys.stderr, flush=True)


def _save_media(result: FinalResponse | PartialResponse, directory: Path) -> None:
    """Write the turn's media (a partial's too: what arrived is kept) and say where."""
    from .media import save_media

    items = result.message["content_items"] if isinstance(result, FinalResponse) else result.items
    stamp = time.strftime("%Y%m%d-%H%M%S")
    try:
        written = save_media(items, directory, stamp)
    except OSError as exc:
        raise UsageError(f"cannot write media to {directory}: {exc.strerror or exc}") from None
    for path in written:
        print(f"saved {path} ({path.stat().st_size:,} bytes)", file=sys.stderr)
    if not written:
        print(f"no images or audio in the answer: nothing saved to {directory}", file=sys.stderr)


def _prompt(words: list[str]) -> str:
    """The words joined by spaces; none or "-": standard input, unless it is a terminal."""
    if words and words != ["-"]:
        prompt = " ".join(words)
    elif sys.stdin is None or sys.stdin.isatty():
        raise UsageError(
            "give the prompt: modelstream chat -m MODEL Why is the sky blue (or pipe it in)"
        )
    else:
        prompt = sys.stdin.read()
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    return prompt


def _credentials(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The base URL and explicit key to give the client; None leaves the choice to it.

    Checked here, before the client, to say what to set in command-line terms."""
    if args.client_type is None and args.platform is None and route_for_model(args.model) is None:
        server = (
            ""
            if args.base_url
            else ", and --base-url with --api-key-env for the server that serves it"
        )
        raise UsageError(
            f"unknown model {args.model!r}: its name matches no routing prefix; pass "
            f"--client-type ({', '.join(CLIENT_TYPES)}){server}"
        )
    if args.api_key_env is not None:
        key = env.get(args.api_key_env)
        if not key:
            where = args.base_url or "the model's provider"
            raise UsageError(
                f"the environment variable {args.api_key_env} is not set: set it to the API key "
                f"for {where}"
            )
        return args.base_url, key
    if args.platform is not None:
        return args.base_url, None  # the platform's own credentials: the client finds them
    if args.base_url is not None:
        raise UsageError(
            "--base-url needs --api-key-env NAME, the environment variable holding the key for "
            "that URL (a provider's key from the environment is never sent to another URL)"
        )
    try:
        route = resolve_route(args.model, args.client_type)
    except ModelstreamError as error:
        raise UsageError(str(error)) from None
    if not any(env.get(name) for name in route.key_envs):
        raise UsageError(
            f"no API key for {route.provider} ({route.client_type}): set "
            f"{' or '.join(route.key_envs)}, or name another variable with --api-key-env"
        )
    return None, None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
