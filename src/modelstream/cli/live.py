"""Stream one turn through a client into a renderer: the loop `chat` and `demo` share."""

from __future__ import annotations

import asyncio

from ..client import AsyncClient
from ..errors import StreamError
from ..results import FinalResponse, PartialResponse, StreamMetadata
from ..types import Config, Message
from .render import Renderer


async def render_turn(
    client: AsyncClient,
    messages: list[Message],
    config: Config,
    renderer: Renderer,
    header: StreamMetadata,
) -> FinalResponse | PartialResponse:
    """The turn's result, rendered as it streams. A stream error is rendered and its partial
    returned; cancellation (Ctrl-C) is rendered and re-raised, after the response is closed.

    `header` holds what is known before the first byte (protocol, provider, model), shown at
    once: the client's stream metadata is complete only once the turn has ended.
    """
    stream = client.stream(messages, config)  # configuration errors raise here, before IO
    renderer.started(header)
    try:
        async with stream:
            async for event in stream:
                renderer.events([event], header)
    except StreamError as error:
        partial = error.partial
        renderer.failed(error, partial.metadata if partial is not None else header)
        if partial is None:  # every error the client raises carries one (docs/client.md)
            raise
        return partial
    except asyncio.CancelledError:
        result = stream.result  # leaving `async with` closed the response: the partial
        if isinstance(result, PartialResponse):
            renderer.cancelled(result)
        raise
    result = stream.result
    assert isinstance(result, FinalResponse)  # the loop ended without an error: `stop` came
    renderer.stopped(result.metadata)
    return result
