"""Which credentials go to which base URL, as a signer (`modelstream.auth`).

The credentials are, first found wins: the caller's `signer=` (any `RequestSigner`), the
`api_key=` argument, the route's key variable (e.g. `ANTHROPIC_API_KEY`), then the credentials a
platform finds by itself (the AWS chain for Bedrock, Google ADC for Vertex AI). A key becomes
the route's signer (`Route.auth`: a bearer header, `x-api-key`, Azure's `api-key`, ...).

The rule that protects keys: credentials read from the environment (a key variable, the AWS
chain, ADC) are sent only to the base URL they were configured for, i.e. the route's default
base URL or the URL in the route's base-URL variable (e.g. `OPENAI_BASE_URL`). A caller who
points the client elsewhere with `base_url=` must pass `api_key=` or `signer=` too. Keys live in
`Secret`, whose repr and str never show them; signers mask theirs the same way.

`CredentialMasks` is what a client masks wherever its credentials may be echoed (a trace, a
tool's error text): its key, its signer, and the signer of every credential source a call used
(a key variable, the AWS chain, ADC), whose tokens are learned as they are minted.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..auth.secret import Secret
from ..auth.signing import RequestSigner
from ..errors import ConfigurationError
from ..platforms import PlatformSettings
from ..protocols.descriptor import Protocol
from .routing import Route

__all__ = [
    "AmbientSigners",
    "CredentialMasks",
    "Endpoint",
    "Secret",
    "normalize_url",
    "resolve_endpoint",
]

# A client's signers over ambient credentials, by platform settings: one chain or ADC per client,
# so its calls reuse resolved credentials and cached tokens instead of resolving them per call.
AmbientSigners = dict[PlatformSettings, RequestSigner]


@dataclass(frozen=True)
class Endpoint:
    """Where one call goes: the route's facts plus the base URL and signer chosen for it."""

    protocol: Protocol  # `client_type`'s descriptor: the call encodes and decodes by it
    provider: str
    base_url: str
    signer: RequestSigner
    key_source: str  # "argument", "signer", the key variable, or the ambient chain's name
    api_key: Secret | None = field(default=None, repr=False)  # the key, when the signer has one
    platform: PlatformSettings | None = None  # located: its region, project, ... filled in

    @property
    def client_type(self) -> str:
        """The protocol's name."""
        return self.protocol.name


class CredentialMasks:
    """Every credential a client holds, to mask as `***` where it is echoed (`redact`).

    The client's own `api_key=` and `signer=` are known from the start; a credential found per
    call (a key variable, the AWS chain, Google ADC) is learned from the call's endpoint. The
    signers are asked at each `redact`, so a token minted or refreshed since (an AWS session
    token, a Google access token) is masked too."""

    def __init__(self, api_key: Secret | None = None, signer: RequestSigner | None = None) -> None:
        self._api_key = api_key
        # the last signer of each key source: bounded by the sources, not by the calls
        self._signers: dict[str, RequestSigner] = {"signer": signer} if signer else {}
        self._lock = threading.Lock()

    def learn(self, endpoint: Endpoint) -> None:
        """Mask the credentials of a call's endpoint from now on."""
        with self._lock:
            self._signers[endpoint.key_source] = endpoint.signer

    def redact(self, text: str) -> str:
        """`text` with every credential masked where it stands as a whole token
        (`auth.secret.mask_secret`)."""
        with self._lock:
            signers = list(self._signers.values())
        if self._api_key is not None:
            text = self._api_key.redact(text)
        for signer in signers:
            text = signer.redact(text)
        return text

    def __repr__(self) -> str:
        return "CredentialMasks(***)"


def normalize_url(url: str) -> str:
    return url.strip().rstrip("/")


def resolve_endpoint(
    route: Route,
    *,
    base_url: str | None,
    api_key: str | None,
    env: Mapping[str, str],
    signer: RequestSigner | None = None,
    platform: PlatformSettings | None = None,
    model: str = "",
    ambient: AmbientSigners | None = None,
) -> Endpoint:
    """The base URL and signer for `route`, applying the env-credentials rule (module
    docstring); `platform` is the route's platform, whose unit locates its settings, gives its
    default URL and its ambient credentials; `ambient` keeps a client's signers over those
    from call to call."""
    unit, default = None, route.base_url
    if platform is not None:
        unit = platform.unit
        platform = unit.locate(platform, model, env, signer)
        default = unit.base_url(platform)
    default = normalize_url(default)
    env_base = normalize_url(env.get(route.base_url_env, "") or "")
    configured = {default} | ({env_base} if env_base else set())
    url = normalize_url(base_url) if base_url else (env_base or default)
    if not url:
        lacks = unit.no_url if unit else "no default base URL"
        also = f"{unit.url_from}, " if unit and unit.url_from else ""
        raise ConfigurationError(
            f"{route.client_type} ({route.provider}) has {lacks}: {also}pass base_url=... "
            f"or set {route.base_url_env}"
        )
    if not url.startswith(("http://", "https://")):
        source = "base_url" if base_url else route.base_url_env
        raise ConfigurationError(f"{source} must be an http:// or https:// URL, got {url!r}")
    if unit is not None and unit.region_from_url is not None:
        platform = unit.region_from_url(platform, url)

    def endpoint(chosen: RequestSigner, source: str, key: Secret | None = None) -> Endpoint:
        return Endpoint(route.protocol, route.provider, url, chosen, source, key, platform)

    if signer is not None:
        return endpoint(signer, "signer")
    if api_key:
        key = Secret(api_key)
        return endpoint(route.auth(key), "argument", key)
    found = next(((name, env[name]) for name in route.key_envs if env.get(name)), None)
    chain = None if found is not None else _ambient_signer(platform, ambient)
    if found is None and chain is None:
        names = " or ".join(route.key_envs) or "a key variable"
        also = f", or {unit.credentials_from}" if unit and unit.credentials_from else ""
        raise ConfigurationError(
            f"no API key for {route.provider} ({route.client_type}): set {names} "
            f"or pass api_key=...{also}"
        )
    source = found[0] if found is not None else chain[1] if chain else ""
    if url not in configured:
        raise ConfigurationError(
            f"base_url {url!r} is not the URL {source} is configured for "
            f"({' or '.join(sorted(u for u in configured if u))}); credentials from the "
            "environment are never sent elsewhere, so pass api_key=... (or signer=...) "
            "explicitly for this base URL"
        )
    if found is not None:
        key = Secret(found[1])
        return endpoint(route.auth(key), source, key)
    assert chain is not None
    return endpoint(chain[0], source)


def _ambient_signer(
    platform: PlatformSettings | None, cache: AmbientSigners | None
) -> tuple[RequestSigner, str] | None:
    """The signer over the credentials the platform finds by itself, and where from; None: it
    has none (Azure's Entra ID needs the caller's token provider, as `signer=`). Nothing is
    resolved here: the chain or ADC is read when the first request is signed."""
    ambient = platform.unit.ambient if platform is not None else None
    if platform is None or ambient is None:
        return None
    if cache is None:
        return ambient.signer_for(platform), ambient.source
    if platform not in cache:
        cache[platform] = ambient.signer_for(platform)
    return cache[platform], ambient.source
