"""Which API key goes to which base URL.

The rule that protects keys: a key read from the environment is sent only to the base URL it was
configured for, i.e. the route's default base URL or the URL in the route's base-URL variable
(e.g. `OPENAI_BASE_URL`). A caller who points the client elsewhere with `base_url=` must pass
`api_key=` too. Keys live in `Secret`, whose repr and str never show them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..auth.secret import Secret
from ..errors import ConfigurationError
from .routing import Route

__all__ = ["Endpoint", "Secret", "normalize_url", "resolve_endpoint"]


@dataclass(frozen=True)
class Endpoint:
    """Where one call goes: the route's facts plus the base URL and key chosen for it."""

    client_type: str
    provider: str
    base_url: str
    api_key: Secret
    key_source: str  # "argument" or the environment variable the key came from


def normalize_url(url: str) -> str:
    return url.strip().rstrip("/")


def resolve_endpoint(
    route: Route,
    *,
    base_url: str | None,
    api_key: str | None,
    env: Mapping[str, str],
) -> Endpoint:
    """The base URL and key for `route`, applying the env-key rule (module docstring)."""
    env_base = normalize_url(env.get(route.base_url_env, "") or "")
    configured = {normalize_url(route.base_url)} | ({env_base} if env_base else set())
    url = normalize_url(base_url) if base_url else (env_base or normalize_url(route.base_url))
    if not url:
        raise ConfigurationError(
            f"{route.client_type} has no default base URL: pass base_url=... "
            f"or set {route.base_url_env}"
        )
    if not url.startswith(("http://", "https://")):
        source = "base_url" if base_url else route.base_url_env
        raise ConfigurationError(f"{source} must be an http:// or https:// URL, got {url!r}")
    if api_key:
        return Endpoint(route.client_type, route.provider, url, Secret(api_key), "argument")
    found = next(((name, env[name]) for name in route.key_envs if env.get(name)), None)
    if found is None:
        names = " or ".join(route.key_envs)
        raise ConfigurationError(
            f"no API key for {route.provider} ({route.client_type}): set {names} "
            "or pass api_key=..."
        )
    name, value = found
    if url not in configured:
        raise ConfigurationError(
            f"base_url {url!r} is not the URL {name} is configured for "
            f"({' or '.join(sorted(configured))}); a key from the environment is never sent "
            "elsewhere, so pass api_key=... explicitly for this base URL"
        )
    return Endpoint(route.client_type, route.provider, url, Secret(value), name)
