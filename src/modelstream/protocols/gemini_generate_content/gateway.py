"""The gateway's Gemini generateContent wire (SPEC §8): the routes google-genai calls, its key,
and the inbound decoder and writers of `inbound.py` and `writer.py`.

Starlette matches a path parameter followed by a literal suffix (`{model}:generateContent`):
the parameter takes `[^/]+` and backtracks to the colon, so `gemini-2.5-flash:generateContent`
gives `model` = `gemini-2.5-flash`.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..common.gateway import GatewayRoute, GatewayWire
from .inbound import decode_request
from .writer import count_tokens_body, error_body, final_body, models_body, writer

STREAM_ROUTE = GatewayRoute(
    "POST", "/{version}/models/{model}:streamGenerateContent", "generate", stream=True
)
GENERATE_ROUTE = GatewayRoute(
    "POST", "/{version}/models/{model}:generateContent", "generate", stream=False
)
COUNT_TOKENS_ROUTE = GatewayRoute("POST", "/{version}/models/{model}:countTokens", "count_tokens")
MODELS_ROUTE = GatewayRoute("GET", "/{version}/models", "models")


def read_key(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """`x-goog-api-key` (google-genai's header), else the `key` query parameter (REST)."""
    return headers.get("x-goog-api-key") or query.get("key") or None


GATEWAY = GatewayWire(
    routes=(STREAM_ROUTE, GENERATE_ROUTE, COUNT_TOKENS_ROUTE, MODELS_ROUTE),
    read_key=read_key,
    decode_request=decode_request,
    writer=writer,
    final_body=final_body,
    error_body=error_body,
    models_body=models_body,
    count_tokens_body=count_tokens_body,
)

__all__ = [
    "COUNT_TOKENS_ROUTE",
    "GATEWAY",
    "GENERATE_ROUTE",
    "MODELS_ROUTE",
    "STREAM_ROUTE",
    "read_key",
]
