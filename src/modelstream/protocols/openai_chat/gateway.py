"""OpenAI Chat Completions as a gateway wire: `POST /v1/chat/completions`, as OpenAI answers it.

The request decoder is `inbound.py`, the stream writer, non-stream body and error bodies are
`writer.py`; docs/gateway.md ("OpenAI Chat Completions") maps every field.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..common.gateway import GatewayRoute, GatewayWire
from .inbound import decode_request
from .writer import error_body, final_body, models_body, writer

ROUTES = (GatewayRoute("POST", "/v1/chat/completions", "generate"),)


def read_key(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """The key of `Authorization: Bearer <key>`, as the openai SDKs send it."""
    del query
    scheme, _, key = (headers.get("authorization") or "").strip().partition(" ")
    key = key.strip()
    return key if scheme.lower() == "bearer" and key else None


GATEWAY = GatewayWire(
    routes=ROUTES,
    read_key=read_key,
    decode_request=decode_request,
    writer=writer,
    final_body=final_body,
    error_body=error_body,
    models_body=models_body,
)

__all__ = ["GATEWAY", "ROUTES", "read_key"]
