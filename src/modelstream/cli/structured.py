"""`chat --schema FILE.json`: the answer asked for in a JSON schema, shown as the object grows
(`stream.partial_objects`) and checked once at the end."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..bounded_json import JSONTooDeepError, loads
from ..client import AsyncClient
from ..console.exit_status import EXIT_FAILED, EXIT_OK, UsageError
from ..errors import StreamError, StructuredOutputError
from ..types import Config, Message


def schema_format(path: Path) -> dict[str, Any]:
    """The `response_format` of the schema in `path`, named after the file."""
    try:
        schema = loads(path.read_bytes())
    except OSError as exc:
        raise UsageError(f"cannot read the schema {path}: {exc.strerror or exc}") from None
    except (ValueError, JSONTooDeepError) as exc:
        raise UsageError(f"the schema {path} is not JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise UsageError(f"the schema {path} must be a JSON object (a JSON schema)")
    name = "".join(c if c.isalnum() or c in "_-" else "_" for c in path.stem)[:64] or "answer"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


async def render_structured(client: AsyncClient, messages: list[Message], config: Config) -> int:
    """Stream the turn, redrawing the partial object as it grows (on a terminal; elsewhere the
    final object only), then print the checked answer or say why it is not one."""
    from rich.console import Console
    from rich.json import JSON
    from rich.live import Live

    console = Console(highlight=False, markup=False, emoji=False)
    stream = client.stream(messages, config)
    try:
        async with stream:
            with Live(console=console, refresh_per_second=12, transient=True) as live:
                async for partial in stream.partial_objects:
                    live.update(JSON.from_data(partial.value))
            message = await stream.get_final_message()
    except StructuredOutputError as error:
        print(f"not an answer of the schema: {error}", file=sys.stderr)
        return EXIT_FAILED
    except StreamError as error:
        print(f"the turn did not finish: {error}", file=sys.stderr)
        return EXIT_FAILED
    console.print(JSON.from_data(message.parsed))
    return EXIT_OK
