"""`GET /healthz`: whether a new stream could start, for probes (no key needed)."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..stores import StoreError
from .state import ServerState

log = logging.getLogger("modelstream.server")


def health_routes(state: ServerState) -> list[Route]:
    """`GET /healthz`: 200 while the store serves, else 503 (docs/server.md)."""
    store, relay = state.store, state.relay

    async def healthz(request: Request) -> Response:
        try:
            await store.check()
        except StoreError as exc:  # the detail (an address) goes to the log, not to probes
            log.warning("health check: the %s store is unavailable: %s", store.kind, exc)
            health = {"kind": store.kind, "status": "unavailable"}
            body = {"status": "unavailable", "streams_in_flight": relay.in_flight, "store": health}
            return JSONResponse(body, 503)
        health = {"kind": store.kind, "status": "ok"}
        return JSONResponse({"status": "ok", "streams_in_flight": relay.in_flight, "store": health})

    return [Route("/healthz", healthz, methods=["GET"])]
