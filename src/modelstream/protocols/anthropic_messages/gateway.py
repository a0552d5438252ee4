"""Anthropic Messages as a gateway wire (SPEC §8): the server answers Claude's SDKs and agents.

Routes: `POST /v1/messages` (the body's `stream` decides) and `POST /v1/messages/count_tokens`
(the same decoder without max_tokens / stream; answered `{"input_tokens": N}`, see
`writer.count_tokens_body`). The key comes as `x-api-key` (the SDKs' `api_key`) or
`Authorization: Bearer` (`auth_token`); `anthropic-version` is accepted whatever its value and
`anthropic-beta` goes to an Anthropic upstream only. The request decoder is `inbound.py`, the
stream writer, final body and error bodies `writer.py`.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..common.gateway import GatewayRoute, GatewayWire, bearer_key
from .inbound import decode_request
from .writer import (
    AnthropicStreamWriter,
    count_tokens_body,
    error_body,
    final_body,
    models_body,
)

ROUTES = (
    GatewayRoute("POST", "/v1/messages", "generate"),
    GatewayRoute("POST", "/v1/messages/count_tokens", "count_tokens"),
    # OpenAI's path: answered in Anthropic's shape when the SDK's version header says so
    GatewayRoute("GET", "/v1/models", "models", header="anthropic-version"),
)


def read_key(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """`x-api-key`, else the token of `Authorization: Bearer …`; None when neither is sent."""
    return headers.get("x-api-key") or bearer_key(headers, query)


GATEWAY = GatewayWire(
    routes=ROUTES,
    read_key=read_key,
    decode_request=decode_request,
    writer=AnthropicStreamWriter,
    final_body=final_body,
    error_body=error_body,
    models_body=models_body,
    count_tokens_body=count_tokens_body,
)

__all__ = ["GATEWAY", "ROUTES", "read_key"]
