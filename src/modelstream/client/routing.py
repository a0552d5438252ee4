"""Which protocol, provider, base URL and credentials a model name goes to.

The routes come from the protocol registry (`modelstream.protocols`): each protocol's descriptor
lists the model-name prefixes that choose it and the provider they go to. A model is routed by the
longest prefix of its name (compared case-insensitively). An explicit `client_type` overrides the
model's protocol; the route then comes from the model if its protocol agrees, else from the
model's own provider if the catalogue says that provider serves the model over that protocol
(`grok-4.3` over `openai-responses` stays on xAI), else from the protocol's own provider
(`CLIENT_TYPE_ROUTES`).

With `platform=` (a cloud platform's settings, whose unit in `modelstream.platforms` says what
it serves) the provider is the platform's, and the protocol is `client_type`, else the model's
own if the platform serves it, else the platform's default (the first it serves). A model whose
route goes to a platform's provider (a Bedrock model id) reaches that platform by itself.

`client_type="modelstream"` is a modelstream server (docs/server.md): it has no public endpoint,
so it needs `base_url=` (or `MODELSTREAM_BASE_URL`) and the server's bearer key (`api_key=` or
`MODELSTREAM_API_KEY`; an open server ignores the key, so any non-empty value does), and the
model is the server's `server_model_id`, never routed by its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ..catalogue import default_catalogue
from ..errors import ConfigurationError
from ..platforms import PlatformSettings
from ..protocols import CLIENT_TYPES, REGISTRY, protocol_named, providers
from ..protocols.descriptor import Protocol, Provider, SignerFactory


@dataclass(frozen=True)
class Route:
    """Where requests for a family of models go, and which environment variables configure it."""

    protocol: Protocol  # the descriptor: the call encodes and decodes by it
    provider: str
    base_url: str  # the provider's public endpoint; encoders' paths are relative to it
    key_envs: tuple[str, ...]  # API-key variables, first one set wins
    base_url_env: str  # a base URL the provider's env key may also be sent to
    auth: SignerFactory  # the signer an API key becomes: the provider's, else the protocol's

    @property
    def client_type(self) -> str:
        """The protocol's name."""
        return self.protocol.name

    @classmethod
    def to(cls, protocol: Protocol, provider: Provider) -> Route:
        return cls(
            protocol,
            provider.name,
            provider.base_url,
            provider.key_envs,
            provider.base_url_env,
            provider.auth or protocol.auth,
        )


# (model-name prefixes, route), read from the registry
ROUTES: tuple[tuple[tuple[str, ...], Route], ...] = tuple(
    (route.prefixes, Route.to(protocol, route.provider))
    for protocol in REGISTRY.values()
    for route in protocol.routes
)

# The route an explicit client type falls back to when the model's own route disagrees.
CLIENT_TYPE_ROUTES: Mapping[str, Route] = MappingProxyType(
    {name: Route.to(protocol, protocol.provider) for name, protocol in REGISTRY.items()}
)

# Every provider the registry reaches, by name: a model's provider over another protocol.
_PROVIDERS: Mapping[str, Provider] = MappingProxyType({p.name: p for p in providers()})


def route_for_model(model: str) -> Route | None:
    """The route of the longest matching prefix, or None for a model the table does not know."""
    name = model.lower()
    best: tuple[int, Route] | None = None
    for prefixes, route in ROUTES:
        for prefix in prefixes:
            if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), route)
    return best[1] if best else None


def resolve_route(
    model: str,
    client_type: str | Protocol | None = None,
    platform: PlatformSettings | None = None,
) -> Route:
    """The route for `model`, or for `client_type` when given; raises a ConfigurationError that
    says what to pass when neither is known."""
    if not model:
        raise ConfigurationError("no model given: pass model=... to the client or to the call")
    route = route_for_model(model)
    if platform is not None:
        return _platform_route(platform, route, client_type)
    if client_type is None:
        if route is None:
            raise ConfigurationError(
                f"unknown model {model!r}: its name matches no routing prefix; pass "
                f"client_type=... (one of: {', '.join(CLIENT_TYPES)}) and base_url=... "
                "with api_key=... for the endpoint that serves it"
            )
        return route
    protocol = protocol_named(client_type, what="client type")
    if route is not None and route.protocol is protocol:
        return route
    own = _own_provider_over(model, route, protocol)
    if own is not None:
        return own
    if REGISTRY.get(protocol.name) is protocol:
        return CLIENT_TYPE_ROUTES[protocol.name]
    return Route.to(protocol, protocol.provider)  # a protocol passed as its descriptor


def _own_provider_over(model: str, route: Route | None, protocol: Protocol) -> Route | None:
    """The model's own provider over `protocol`, when the catalogue lists that provider serving
    the model over it; None otherwise (the protocol's own provider is then the route)."""
    provider = _PROVIDERS.get(route.provider) if route is not None else None
    if provider is None:
        return None
    entry = default_catalogue().lookup(model)
    if entry is None or entry.provider != provider.name or protocol.name not in entry.protocols:
        return None
    return Route.to(protocol, provider)


def _platform_route(
    platform: PlatformSettings, route: Route | None, client_type: str | Protocol | None
) -> Route:
    unit = platform.unit
    served = unit.serves
    if client_type is None:
        client_type = route.client_type if route and route.client_type in served else served[0]
    protocol = protocol_named(client_type, what="client type")
    if protocol.name not in served:
        raise ConfigurationError(
            f"{unit.name} does not serve client type {protocol.name!r}; it serves "
            f"{', '.join(served)}"
        )
    return Route.to(protocol, unit.provider)
