"""The AI SDK's UI message stream, as a front-end wire of the server (docs/frontends.md): a
React `useChat` page (or any `DefaultChatTransport`) streams a turn from `modelstream serve`,
and its reconnect replays the chat's running or just finished stream.

    POST /v1/stream/ai-sdk                   a turn (`inbound.py`), answered as the UI message
                                             stream (`writer.py`)
    GET  /v1/stream/ai-sdk/{chat_id}/stream  the transport's reconnect: the chat's last stream
                                             from its start, or 204 when it has none

Only the server answers in it: no provider speaks it, so it has no upstream half.
"""

from __future__ import annotations

from ..common.gateway import GatewayRoute, GatewayWire, bearer_key
from .inbound import decode_request
from .writer import STREAM_HEADERS, error_body, final_body, writer

NAME = "ai-sdk-ui"
ROUTES = (
    GatewayRoute("POST", "/v1/stream/ai-sdk", "generate", stream=True),
    GatewayRoute("GET", "/v1/stream/ai-sdk/{conversation}/stream", "reconnect"),
)

GATEWAY = GatewayWire(
    routes=ROUTES,
    read_key=bearer_key,
    decode_request=decode_request,
    writer=writer,
    final_body=final_body,
    error_body=error_body,
    stream_headers=STREAM_HEADERS,
)

__all__ = ["GATEWAY", "NAME", "ROUTES"]
