"""What the server's routes share: one `ServerState` per app (`..app.create_app`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ...web.refusals import Refusal, unauthorized
from ..callers import Caller, Callers
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
    keys: Callers

    async def caller(self, request: Request) -> Caller:
        """The caller (`Callers.identify`: its key hash is None on an open server), or a 401."""
        found = await self.keys.identify(request.headers.get("authorization"), time.time())
        if found is None:
            raise unauthorized()
        return found

    def refused(self, route: str, refusal: Refusal) -> Response:
        """The answer to a refused request, counted under `route` in /metrics."""
        self.metrics.requests.inc(route, refusal.outcome)
        return JSONResponse(refusal.body(), refusal.status, headers=refusal.headers)
