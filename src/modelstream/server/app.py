"""The HTTP shell: `create_app` assembles the routes of each surface (`routes/`) over one
`StreamRelay` (`relay/`), with the error handlers, the lifespan and the `Host` check.

    POST /v1/stream                    a new stream (SPEC §7), `X-Response-Id` header
    GET  /v1/streams/{response_id}     resume: `Last-Event-ID: <response_id>:<seq>` or ?after=
    GET  /v1/models                    served model ids, OpenAI list shape
    GET  /healthz                      health (503 while the store is unavailable), no key needed
    GET  /metrics                      Prometheus text, no key needed
    /v1/admin/keys, /v1/admin/spend    virtual keys (docs/keys.md), with [virtual_keys] only
    ...                                the gateway's wires (docs/gateway.md)

The app serves nothing else; what `modelstream serve` adds (the playground at /playground) is
mounted from above through `routes` (`modelstream.serving`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from ..protocols import REGISTRY, frontends
from ..web.hosts import HostPolicy, host_checked
from ..web.keys import BearerKeys
from ..web.refusals import Refusal, not_found
from .callers import Callers
from .config import ServerSettings, VirtualKeySettings
from .keys import KeyStore, SQLiteKeyStore
from .logs import hide_response_ids
from .metrics import ServerMetrics
from .relay import CostCounter, DeploymentMetrics, KeyLedger, StreamMetrics, StreamRelay
from .routes.admin import admin_routes
from .routes.gateway import Gateway
from .routes.health import health_routes
from .routes.metrics import metrics_routes
from .routes.models import model_routes
from .routes.state import ServerState
from .routes.streams import stream_routes
from .routing import RouterState
from .stores import MemoryStore, StreamStore, redis_of
from .wire import DEPLOYMENT_HEADER, RESPONSE_ID_HEADER

# the response headers a page on another origin may read (`cors_origins`): the stream's id (its
# resume handle), the deployment that answered, a refusal's retry-after, and the wires' own
_WIRES = [*(p.gateway for p in REGISTRY.values() if p.gateway), *frontends().values()]
EXPOSED_HEADERS = (
    RESPONSE_ID_HEADER,
    DEPLOYMENT_HEADER,
    "retry-after",
    *sorted({name for wire in _WIRES for name in wire.stream_headers}),
)

log = logging.getLogger("modelstream.server")


def create_app(
    settings: ServerSettings,
    *,
    store: StreamStore | None = None,
    router_state: RouterState | None = None,
    key_store: KeyStore | None = None,
    bound_host: str | None = None,
    routes: Sequence[BaseRoute] = (),
) -> Starlette:
    """The server as an ASGI app; `store` defaults to a `MemoryStore` sized by the limits,
    `router_state` (cooldowns, per-minute counts) to the store's Redis, if it has one, else to
    this process's memory. `key_store`: the virtual keys' store, with `[virtual_keys]` (None:
    the store's Redis, if it has one, else the configured SQLite file).
    `bound_host`: the address it listens on, for the `Host` check (None: a loopback one).
    `routes`: more routes, after the server's own (a `Mount` of another app)."""
    if store is None:
        store = MemoryStore(
            max_events_per_stream=settings.limits.max_events_per_stream,
            max_bytes=settings.limits.max_store_bytes,
        )
    metrics = ServerMetrics()
    observers = [StreamMetrics(metrics), CostCounter(metrics), DeploymentMetrics(metrics)]
    virtual = settings.virtual_keys
    ledger = None
    if virtual is not None:
        key_store = key_store or _key_store(virtual, store)
        ledger = KeyLedger(key_store, virtual, metrics)
    relay = StreamRelay(settings, store, observers, router_state, ledger)
    state = ServerState(
        settings, store, relay, metrics, Callers(BearerKeys(settings.keys), key_store)
    )
    gateway = Gateway(state)
    own = [
        *stream_routes(state),
        *model_routes(state, gateway.shared),
        *health_routes(state),
        *metrics_routes(state),
    ]
    if virtual is not None and key_store is not None:
        limits = settings.limits
        own += admin_routes(
            key_store,
            BearerKeys(virtual.admin_keys),
            max_body_bytes=limits.max_body_bytes,
            body_timeout_seconds=limits.body_timeout_seconds,
        )
    app = Starlette(
        routes=[*own, *gateway.routes(taken=frozenset(r.path for r in own)), *routes],
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
        lifespan=_lifespan(state),
    )
    if state.keys.open:  # DNS rebinding (docs/server.md#host-names); with keys, a page has none
        hosts = HostPolicy.for_listener(bound_host, settings.allowed_hosts)
        app.add_middleware(host_checked, hosts=hosts, exempt=("/healthz", "/metrics"))
    if settings.cors_origins:  # outermost: a browser's preflight is answered before the rest
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["*"],  # the key's header and the SDKs' own; never cookies
            expose_headers=list(EXPOSED_HEADERS),
            max_age=600,
        )
    app.state.relay = relay
    app.state.metrics = metrics
    app.state.store = store
    return app


def _key_store(settings: VirtualKeySettings, store: StreamStore) -> KeyStore:
    """The virtual keys beside the streams: in the store's Redis when it has one (every process
    behind it shares them), else in the SQLite file."""
    found = redis_of(store)
    if found is None:
        return SQLiteKeyStore(settings.path)
    from .keys.redis import RedisKeyStore  # the redis package is there: the store uses it

    client, prefix = found
    return RedisKeyStore(client, prefix=settings.redis_prefix or f"{prefix}keys:")


def _lifespan(state: ServerState) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state.relay.open()
        if state.keys.open:
            log.warning(
                "no keys configured: this server is OPEN, anyone who can reach it may stream "
                'from its models on the upstream keys; set keys = ["$VAR", ...] to require one'
            )
        try:
            yield
        finally:
            await state.relay.aclose()
            await state.store.aclose()

    return lifespan


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code in (404, 405):
        refusal = not_found(
            f"no route for {request.method} {request.url.path}; this server serves "
            "POST /v1/stream, GET /v1/streams/{response_id}, GET /v1/models, GET /healthz "
            "and GET /metrics"
        )
    else:
        refusal = Refusal(exc.status_code, "HTTPError", str(exc.detail), outcome="http_error")
    return JSONResponse(refusal.body(), refusal.status)


async def _server_error(request: Request, exc: Exception) -> Response:
    path = hide_response_ids(request.url.path)
    log.error("unhandled %s on %s %s", type(exc).__name__, request.method, path)
    body = {"error": {"type": "InternalServerError", "message": "the server failed"}}
    return JSONResponse(body, 500)
