"""`demo`: the whole stack with no key and no network.

The loopback emulator (`modelstream.testing.Emulator`) plays each provider on 127.0.0.1; one
scripted turn per protocol (thinking with a signature, text, a tool call) is streamed through
`AsyncClient` over real HTTP and rendered as it arrives, like `chat` renders a real model.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from rich.console import Console
from rich.text import Text

from ..client import AsyncClient
from ..console.exit_status import EXIT_FAILED, EXIT_OK
from ..console.helptext import command_parser, examples
from ..protocols import REGISTRY
from ..results import FinalResponse, StreamMetadata
from ..testing import Emulator, Reply, Thinking, ToolCall, Turn
from ..testing import Text as TextItem
from ..testing.routes import emulated_protocols
from ..types import Config, Message, ToolSchema
from .live import render_turn
from .render import PrettyRenderer, pretty_console

# (client type, model): every streaming protocol the emulator serves, each asked for by name
# (`client_type=`), so one that no model name routes to (gemini-interactions) is shown too.
PROTOCOL_MODELS = tuple(
    (name, REGISTRY[name].example_model) for name in emulated_protocols(embedding=False)
)
QUESTION = "What's the weather in Lisbon right now?"
WEATHER_TOOL: ToolSchema = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
# An opaque token, like the ones providers attach to thinking so it can be sent back verbatim.
SIGNATURE = "RWRlbW8tc2lnbmF0dXJlOiB0aGlua2luZyBhYm91dCBMaXNib24gd2VhdGhlcg=="
ANSWER = Turn(
    items=[
        Thinking(
            "Current weather in Lisbon: I can't know it offhand, so call get_weather.",
            signature=SIGNATURE,
        ),
        TextItem("Let me look up the current weather in Lisbon."),
        ToolCall("get_weather", {"city": "Lisbon", "unit": "celsius"}, id="call_lisbon_weather"),
    ]
)
PACE_S = 0.015  # between SSE frames: slow enough to watch the text grow
DEMO_KEY = "demo-key"  # explicit, so no key from the environment is read or sent


def add_command(commands: Any) -> None:
    """Add `demo` to the subcommands of the `modelstream` parser."""
    demo = command_parser(
        commands,
        "demo",
        help="stream one turn of each protocol from a local emulator (no key, no network)",
        description="Start the loopback emulator and stream one turn of each protocol through "
        "AsyncClient over real HTTP on 127.0.0.1. Needs no API key and no network.",
        epilog=examples("modelstream demo", "modelstream demo --fast | less -R"),
    )
    demo.add_argument("--fast", action="store_true", help="do not pace the streams")
    demo.set_defaults(run=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    return asyncio.run(demo(pretty_console(), pace=0.0 if args.fast else PACE_S))


async def demo(console: Console, *, pace: float) -> int:
    """Stream the scripted answer in every protocol; EXIT_OK when each turn ended with `stop`."""
    _intro(console)
    messages: list[Message] = [
        {"role": "user", "content_items": [{"type": "text.done", "text": QUESTION}]}
    ]
    config: Config = {
        "system_prompt": "You are a helpful assistant. Use the tools you are given.",
        "max_tokens": 4096,
        "thinking_level": "medium",
        "tools": [WEATHER_TOOL],
    }
    status = EXIT_OK
    async with Emulator() as emu:
        for client_type, model in PROTOCOL_MODELS:
            emu.queue(Reply.turn(ANSWER, delay=pace))
            async with AsyncClient(
                model, client_type=client_type, base_url=emu.base_url(client_type), api_key=DEMO_KEY
            ) as client:
                console.print()
                renderer = PrettyRenderer(console, client_type, client_type, summary="line")
                header = StreamMetadata(client_type, model=model)
                result = await render_turn(client, messages, config, renderer, header)
            if not isinstance(result, FinalResponse):
                status = EXIT_FAILED
    _outro(console, status)
    return status


def _intro(console: Console) -> None:
    console.print(Text("modelstream demo", style="bold"), soft_wrap=True)
    console.print(
        Text(
            f"A loopback emulator on 127.0.0.1 speaks {len(PROTOCOL_MODELS)} streaming "
            "protocols (no key, no network); AsyncClient streams one answer in each over real "
            "HTTP.",
            style="dim",
        ),
        soft_wrap=True,
    )
    console.print()
    question = Text("question ", style="bold")
    question.append(QUESTION)
    question.append(f"  (tools: {WEATHER_TOOL['name']})", style="dim")
    console.print(question, soft_wrap=True)


def _outro(console: Console, status: int) -> None:
    console.print()
    if status != EXIT_OK:
        console.print(Text("A turn did not finish: see its error above.", style="bold red"))
        return
    console.print(
        Text(
            f"{len(PROTOCOL_MODELS)} wire formats, one event grammar. With a key, stream a real "
            "model the same way:",
        ),
        soft_wrap=True,
    )
    console.print(Text('  ANTHROPIC_API_KEY=... modelstream chat -m claude-sonnet-4-5 "Hello"'))
