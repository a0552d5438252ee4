"""The HTTP shell: Starlette routes over `StreamRelay`. Every decision lives in the modules
beside it; this file checks, in order, key → body size → JSON → model → messages/config →
capacity, and turns a refusal into its status and `{"error": {...}}` body.

    POST /v1/stream                    a new stream (SPEC §7), `X-Response-Id` header
    GET  /v1/streams/{response_id}     resume: `Last-Event-ID: <response_id>:<seq>` or ?after=
    GET  /v1/models                    served model ids, OpenAI list shape
    GET  /healthz                      health (503 while the store is unavailable), no key needed
    GET  /metrics                      Prometheus text, no key needed
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route

from ..errors import ModelstreamError
from ..hosts import HostPolicy, host_checked
from ..playground import create_playground
from ..protocols.common.fidelity_seal import FidelitySeal
from . import wire
from .auth import BearerKeys
from .config import ModelEntry, ServerSettings
from .errors import Refusal, bad_input, not_found, unauthorized, unexpected_shape
from .gateway import Gateway
from .limits import off_loop, read_body
from .logs import hide_response_ids
from .metrics import CONTENT_TYPE, ServerMetrics
from .request_policy import check_upstream_request
from .responses import EventStreamResponse
from .stores import MemoryStore, StoreError, StreamStore
from .streams import StreamRelay

log = logging.getLogger("modelstream.server")

_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def create_app(
    settings: ServerSettings, *, store: StreamStore | None = None, bound_host: str | None = None
) -> Starlette:
    """The server as an ASGI app; `store` defaults to a `MemoryStore` sized by the limits.
    `bound_host`: the address it listens on, for the `Host` check (None: a loopback one)."""
    if store is None:
        store = MemoryStore(
            max_events_per_stream=settings.limits.max_events_per_stream,
            max_bytes=settings.limits.max_store_bytes,
        )
    metrics = ServerMetrics()
    relay = StreamRelay(settings, store, metrics)
    keys = BearerKeys(settings.keys)
    hosts = HostPolicy.for_listener(bound_host, settings.allowed_hosts)
    key = settings.fidelity_key
    seal = FidelitySeal(key.reveal().encode()) if key is not None else FidelitySeal.random()
    gateway = Gateway(settings, relay, keys, metrics, seal)
    gateway_routes = gateway.routes(taken=frozenset({"/v1/models"}))

    def refused(route: str, refusal: Refusal) -> Response:
        metrics.requests.inc(route, refusal.outcome)
        return JSONResponse(refusal.body(), refusal.status, headers=refusal.headers)

    def check_key(request: Request) -> str | None:
        """The caller's key hash (`BearerKeys.holder`; None on an open server), or a 401."""
        authorization = request.headers.get("authorization")
        if not keys.allows(authorization):
            raise unauthorized()
        return keys.holder(authorization)

    async def post_stream(request: Request) -> Response:
        with relay.arrival():
            return await start_stream(request)

    def checked_call(body: bytes, caller: str | None) -> tuple[wire.StreamRequest, ModelEntry]:
        """The stream request of a body, its model, and the upstream policy's checks: no IO,
        so a large body runs it in a worker thread (`off_loop`)."""
        call = replace(wire.parse_stream_request(body), caller=caller)
        entry = settings.model(call.model)
        if entry is None:
            raise not_found(
                f"the model {call.model!r} is not served here; GET /v1/models lists "
                "the models this server serves",
                outcome="unknown_model",
            )
        check_upstream_request(entry, call.messages, call.config)
        return call, entry

    async def start_stream(request: Request) -> Response:
        try:
            caller = check_key(request)
            body = await read_body(
                request, settings.limits.max_body_bytes, settings.limits.body_timeout_seconds
            )
            try:
                call, entry = await off_loop(len(body), checked_call, body, caller)
                response_id = await relay.start(entry, call, len(body))
            except ModelstreamError as exc:  # messages or config the upstream cannot take
                raise bad_input(exc) from None
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                # an encoder met a shape it does not expect: still the request's fault (JSON
                # nested too deep for Python's recursion never gets here: wire.json_object)
                raise unexpected_shape(exc) from None
        except Refusal as refusal:
            return refused("stream", refusal)
        return EventStreamResponse(
            relay.sse(response_id, 0), {**_SSE_HEADERS, wire.RESPONSE_ID_HEADER: response_id}
        )

    async def resume_stream(request: Request) -> Response:
        response_id = request.path_params["response_id"]
        try:
            caller = check_key(request)
            after = wire.parse_resume_point(
                response_id, request.headers.get("last-event-id"), request.query_params.get("after")
            )
            # another key's stream is "not found" too: a resume never tells a stream exists
            if not wire.is_response_id(response_id) or not await relay.readable_by(
                response_id, caller or ""
            ):
                raise not_found(
                    f"no stream {response_id!r}: it never existed, or it finished more than "
                    f"{settings.retain_seconds:g} s ago (retain_seconds)"
                )
        except Refusal as refusal:
            return refused("resume", refusal)
        metrics.requests.inc("resume", "resumed")
        return EventStreamResponse(
            relay.sse(response_id, after), {**_SSE_HEADERS, wire.RESPONSE_ID_HEADER: response_id}
        )

    async def list_models(request: Request) -> Response:
        shared = await gateway.shared(request)  # another API's list at this path (its header)
        if shared is not None:
            return shared
        try:
            check_key(request)
        except Refusal as refusal:
            return refused("models", refusal)
        data = [
            {"id": m.server_model_id, "object": "model", "owned_by": m.provider}
            for m in settings.models
        ]
        return JSONResponse({"object": "list", "data": data})

    async def healthz(request: Request) -> Response:
        """200 while the store serves, else 503: no new stream could start (docs/server.md)."""
        try:
            await store.check()
        except StoreError as exc:  # the detail (an address) goes to the log, not to probes
            log.warning("health check: the %s store is unavailable: %s", store.kind, exc)
            health = {"kind": store.kind, "status": "unavailable"}
            body = {"status": "unavailable", "streams_in_flight": relay.in_flight, "store": health}
            return JSONResponse(body, 503)
        health = {"kind": store.kind, "status": "ok"}
        return JSONResponse({"status": "ok", "streams_in_flight": relay.in_flight, "store": health})

    async def metrics_text(request: Request) -> Response:
        return PlainTextResponse(metrics.render(), media_type=CONTENT_TYPE)

    async def http_error(request: Request, exc: Exception) -> Response:
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

    async def server_error(request: Request, exc: Exception) -> Response:
        path = hide_response_ids(request.url.path)
        log.error("unhandled %s on %s %s", type(exc).__name__, request.method, path)
        body = {"error": {"type": "InternalServerError", "message": "the server failed"}}
        return JSONResponse(body, 500)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        relay.open()
        if keys.open:
            log.warning(
                "no keys configured: this server is OPEN, anyone who can reach it may stream "
                'from its models on the upstream keys; set keys = ["$VAR", ...] to require one'
            )
        try:
            yield
        finally:
            await relay.aclose()
            await store.aclose()

    app = Starlette(
        routes=[
            Route("/v1/stream", post_stream, methods=["POST"]),
            Route("/v1/streams/{response_id}", resume_stream, methods=["GET"]),
            Route("/v1/models", list_models, methods=["GET"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics_text, methods=["GET"]),
            *gateway_routes,
            Mount("/playground", create_playground(settings, hosts)),
        ],
        exception_handlers={HTTPException: http_error, Exception: server_error},
        lifespan=lifespan,
    )
    if keys.open:  # DNS rebinding; with keys, such a page lacks one (docs/server.md#host-names)
        app.add_middleware(host_checked, hosts=hosts, exempt=("/healthz", "/metrics"))
    app.state.relay = relay
    app.state.metrics = metrics
    app.state.store = store
    return app
