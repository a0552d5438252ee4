"""`GET /metrics`: the server's counters in Prometheus text (`..metrics`), no key needed."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from ..metrics import CONTENT_TYPE
from .state import ServerState


def metrics_routes(state: ServerState) -> list[Route]:
    """`GET /metrics`."""
    metrics = state.metrics

    async def metrics_text(request: Request) -> Response:
        return PlainTextResponse(metrics.render(), media_type=CONTENT_TYPE)

    return [Route("/metrics", metrics_text, methods=["GET"])]
