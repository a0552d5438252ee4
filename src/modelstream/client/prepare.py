"""One call, planned before anything is sent: route, credentials, the encoded request and its
headers. Everything that can be wrong with a call (unknown model, missing key, an unsupported
parameter, a malformed message) raises here, at `stream()` time.

The planned request holds no credentials: the call's signer adds them to each attempt as it is
sent (`StreamCall.request`), so a retry or a resume is signed afresh."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import orjson

from ..auth.signing import RequestSigner
from ..platforms import PlatformSettings, platform_for_provider
from ..protocols.common.encoding import ProviderRequest
from ..protocols.descriptor import Protocol
from ..types import Config, Message
from .credentials import AmbientSigners, Endpoint, Secret, resolve_endpoint
from .routing import resolve_route


@dataclass(frozen=True)
class PreparedRequest:
    """The bytes of one HTTP request, without credentials (the signer adds them per attempt)."""

    method: str
    url: str
    content: bytes
    headers: dict[str, str]


@dataclass(frozen=True)
class CallPlan:
    model: str
    endpoint: Endpoint
    request: PreparedRequest


def endpoint_for(
    model: str,
    *,
    client_type: str | Protocol | None,
    base_url: str | None,
    api_key: Secret | None,
    env: Mapping[str, str],
    signer: RequestSigner | None = None,
    platform: PlatformSettings | None = None,
    ambient: AmbientSigners | None = None,
) -> Endpoint:
    """Where a call for `model` goes and how it is signed; raises ConfigurationError."""
    route = resolve_route(model, client_type, platform)
    return resolve_endpoint(
        route,
        base_url=base_url,
        api_key=api_key.reveal() if api_key else None,
        env=env,
        signer=signer,
        platform=platform or platform_for_provider(route.provider),
        model=model,
        ambient=ambient,
    )


def plan_call(
    model: str,
    messages: list[Message],
    config: Config | None,
    *,
    client_type: str | Protocol | None,
    base_url: str | None,
    api_key: Secret | None,
    env: Mapping[str, str],
    signer: RequestSigner | None = None,
    platform: PlatformSettings | None = None,
    ambient: AmbientSigners | None = None,
) -> CallPlan:
    """Route `model`, pick its signer and base URL, and encode the request for its client type
    (on the platform's paths when it has one)."""
    endpoint = endpoint_for(
        model,
        client_type=client_type,
        base_url=base_url,
        api_key=api_key,
        env=env,
        signer=signer,
        platform=platform,
        ambient=ambient,
    )
    encoded = endpoint.protocol.encoder().encode(model, messages, config or {})
    if endpoint.platform is not None:
        encoded = _on_platform(endpoint.platform, endpoint.client_type, model, encoded)
    headers = {
        "content-type": "application/json",
        "accept": endpoint.protocol.accept,
        **encoded.headers,
    }
    request = PreparedRequest(
        method=encoded.method,
        url=endpoint.base_url + encoded.path,
        content=orjson.dumps(encoded.json),
        headers=headers,
    )
    return CallPlan(model, endpoint, request)


def _on_platform(
    platform: PlatformSettings, client_type: str, model: str, request: ProviderRequest
) -> ProviderRequest:
    """The request on the platform's paths (and body), by its rule for the protocol; as the
    protocol encoded it when the platform has none (Bedrock's own paths)."""
    rule = platform.unit.requests.get(client_type)
    return request if rule is None else rule(request, platform, model)
