"""One call, planned before anything is sent: route, credentials, the encoded request and its
headers. Everything that can be wrong with a call (unknown model, missing key, an unsupported
parameter, a malformed message) raises here, at `stream()` time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from ..protocols import encode_request, protocol_named
from ..types import Config, Message
from .auth import auth_headers
from .credentials import Endpoint, Secret, resolve_endpoint
from .routing import resolve_route


@dataclass(frozen=True)
class PreparedRequest:
    """The bytes of one HTTP request; the headers hold the key, so they stay out of the repr."""

    method: str
    url: str
    content: bytes
    headers: dict[str, str] = field(repr=False)


@dataclass(frozen=True)
class CallPlan:
    model: str
    endpoint: Endpoint
    request: PreparedRequest


def endpoint_for(
    model: str,
    *,
    client_type: str | None,
    base_url: str | None,
    api_key: Secret | None,
    env: Mapping[str, str],
) -> Endpoint:
    """Where a call for `model` goes and with which key; raises ConfigurationError."""
    route = resolve_route(model, client_type)
    return resolve_endpoint(
        route, base_url=base_url, api_key=api_key.reveal() if api_key else None, env=env
    )


def plan_call(
    model: str,
    messages: list[Message],
    config: Config | None,
    *,
    client_type: str | None,
    base_url: str | None,
    api_key: Secret | None,
    env: Mapping[str, str],
) -> CallPlan:
    """Route `model`, pick its key and base URL, and encode the request for its client type."""
    endpoint = endpoint_for(
        model, client_type=client_type, base_url=base_url, api_key=api_key, env=env
    )
    encoded = encode_request(endpoint.client_type, model, messages, config)
    headers = {
        "content-type": "application/json",
        "accept": protocol_named(endpoint.client_type).accept,
        **encoded.headers,
        **auth_headers(endpoint.client_type, endpoint.api_key),
    }
    request = PreparedRequest(
        method=encoded.method,
        url=endpoint.base_url + encoded.path,
        content=orjson.dumps(encoded.json),
        headers=headers,
    )
    return CallPlan(model, endpoint, request)
