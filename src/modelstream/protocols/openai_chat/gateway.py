"""OpenAI Chat Completions as a gateway wire: `POST /v1/chat/completions`, as OpenAI answers it.

The request decoder is `inbound.py`, the stream writer, non-stream body and error bodies are
`writer.py`; docs/gateway.md ("OpenAI Chat Completions") maps every field.
"""

from __future__ import annotations

from ..common.gateway import GatewayRoute, GatewayWire, bearer_key
from .inbound import decode_request
from .writer import error_body, final_body, models_body, writer

ROUTES = (GatewayRoute("POST", "/v1/chat/completions", "generate"),)


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
