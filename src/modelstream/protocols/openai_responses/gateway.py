"""The OpenAI Responses wire as the gateway serves it (SPEC §8, docs/gateway.md).

`POST /v1/responses` answers a turn (streamed when the body says `stream: true`);
`GET /v1/responses/{response_id}` answers a stored one: its final body, or with
`?stream=true&starting_after=N` its stream replayed through a fresh writer, the frames numbered
N and below dropped. The request decoder is inbound.py; the writer, the final body and the
error bodies are writer.py. `GET /v1/models` is the Chat wire's route (the same list shape as
`models_body` here).
"""

from __future__ import annotations

from ..common.gateway import GatewayRoute, GatewayWire, bearer_key
from .inbound import decode_request
from .writer import error_body, final_body, models_body, writer

ROUTES = (
    GatewayRoute("POST", "/v1/responses", "generate"),
    GatewayRoute("GET", "/v1/responses/{response_id}", "retrieve"),
)

GATEWAY = GatewayWire(
    routes=ROUTES,
    read_key=bearer_key,
    decode_request=decode_request,
    writer=writer,
    final_body=final_body,
    error_body=error_body,
    models_body=models_body,
)

__all__ = ["GATEWAY", "ROUTES"]
