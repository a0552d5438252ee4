"""`GET /v1/models`: the served model ids, in the OpenAI list shape (another API's list at this
path, chosen by its header, is the gateway's: `Gateway.shared`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...web.refusals import Refusal
from .state import ServerState

SharedRoute = Callable[[Request], Awaitable[Response | None]]


def model_routes(state: ServerState, shared: SharedRoute) -> list[Route]:
    """`GET /v1/models`; `shared` answers first when the request is another API's (else None)."""

    async def list_models(request: Request) -> Response:
        answer = await shared(request)  # another API's list at this path (its header)
        if answer is not None:
            return answer
        try:
            await state.caller(request)
        except Refusal as refusal:
            return state.refused("models", refusal)
        data = [
            {"id": m.server_model_id, "object": "model", "owned_by": m.provider}
            for m in state.settings.models
        ]
        return JSONResponse({"object": "list", "data": data})

    return [Route("/v1/models", list_models, methods=["GET"])]
