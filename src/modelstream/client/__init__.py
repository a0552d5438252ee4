"""The transport: `AsyncClient` and `Client` stream model turns over httpx.

    model ─► routing ─► credentials ─► encoder ─► HTTP (retries, timeouts) ─► decoder ─► events

`routing`, `platforms`, `credentials`, `prepare`, `retry`, `timeouts`, `http_errors` and `streams`
hold every decision as pure code; `async_client` and `sync_client` are the thin IO shells.
"""

from ..errors import StreamTimeoutError
from .async_client import AsyncClient, AsyncEventStream
from .platforms import Azure, Bedrock, Vertex
from .retry import RetryPolicy
from .routing import CLIENT_TYPE_ROUTES, ROUTES, Route, resolve_route, route_for_model
from .sync_client import Client, EventStream
from .timeouts import Timeouts

__all__ = [
    "CLIENT_TYPE_ROUTES",
    "ROUTES",
    "AsyncClient",
    "AsyncEventStream",
    "Azure",
    "Bedrock",
    "Client",
    "EventStream",
    "RetryPolicy",
    "Route",
    "StreamTimeoutError",
    "Timeouts",
    "Vertex",
    "resolve_route",
    "route_for_model",
]
