"""What the server's routes share: one `ServerState` per app (`..app.create_app`)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ...web.keys import BearerKeys
from ...web.refusals import Refusal, unauthorized
from ..config import ServerSettings
from ..metrics import ServerMetrics
from ..relay import StreamRelay
from ..stores import StreamStore


@dataclass(frozen=True)
class ServerState:
    """The settings, the store, the relay, the metrics and the keys of one server app."""

    settings: ServerSettings
    store: StreamStore
    relay: StreamRelay
    metrics: ServerMetrics
    keys: BearerKeys

    def caller(self, request: Request) -> str | None:
        """The caller's key hash (`BearerKeys.holder`; None on an open server), or a 401."""
        authorization = request.headers.get("authorization")
        if not self.keys.allows(authorization):
            raise unauthorized()
        return self.keys.holder(authorization)

    def refused(self, route: str, refusal: Refusal) -> Response:
        """The answer to a refused request, counted under `route` in /metrics."""
        self.metrics.requests.inc(route, refusal.outcome)
        return JSONResponse(refusal.body(), refusal.status, headers=refusal.headers)
