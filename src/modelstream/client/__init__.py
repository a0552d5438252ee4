"""The transport: `AsyncClient` and `Client` stream model turns over httpx.

    model ─► routing ─► credentials ─► encoder ─► HTTP (retries, timeouts) ─► decoder ─► events

`routing`, `credentials`, `prepare`, `retry`, `timeouts`, `http_errors` and `streams` hold every
decision as pure code; `async_client` and `sync_client` are the thin IO shells. The cloud
platforms (`Bedrock`, `Vertex`, `Azure`: their settings, paths and credentials) are units of
`modelstream.platforms`, which the client asks.
"""

from ..errors import StreamTimeoutError
from ..platforms.azure import Azure
from ..platforms.bedrock import Bedrock
from ..platforms.vertex import Vertex
from .async_client import AsyncClient, AsyncEventStream
from .retry import RetryNotice, RetryPolicy
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
    "RetryNotice",
    "RetryPolicy",
    "Route",
    "StreamTimeoutError",
    "Timeouts",
    "Vertex",
    "resolve_route",
    "route_for_model",
]
