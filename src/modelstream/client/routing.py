"""Which client type, provider, base URL and credentials a model name goes to.

The table is the documentation: a model is routed by the longest prefix of its name (compared
case-insensitively) found in `ROUTES`. An explicit `client_type` overrides the model's client
type; the route then comes from the model if its client type agrees, else from
`CLIENT_TYPE_ROUTES` (the protocol's own provider).

`client_type="modelstream"` is a modelstream server (docs/server.md): it has no public endpoint,
so it needs `base_url=` (or `MODELSTREAM_BASE_URL`) and the server's bearer key (`api_key=` or
`MODELSTREAM_API_KEY`; an open server ignores the key, so any non-empty value does), and the
model is the server's `server_model_id`, never routed by its name.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..encoders import CLIENT_TYPES
from ..errors import ConfigurationError

OPENAI_BASE_URL = "https://api.openai.com/v1"
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
GEMINI_BASE_URL = "https://generativelanguage.googleapis.com"


@dataclass(frozen=True)
class Route:
    """Where requests for a family of models go, and which environment variables configure it."""

    client_type: str
    provider: str
    base_url: str  # the provider's public endpoint; encoders' paths are relative to it
    key_envs: tuple[str, ...]  # API-key variables, first one set wins
    base_url_env: str  # a base URL the provider's env key may also be sent to


_OPENAI = ("OPENAI_API_KEY",)
_GEMINI = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

# (model-name prefixes, route)
ROUTES: tuple[tuple[tuple[str, ...], Route], ...] = (
    (
        ("gpt-", "o1", "o3", "o4", "chatgpt-"),
        Route("openai-responses", "openai", OPENAI_BASE_URL, _OPENAI, "OPENAI_BASE_URL"),
    ),
    (
        ("text-embedding-",),
        Route("openai-embedding", "openai", OPENAI_BASE_URL, _OPENAI, "OPENAI_BASE_URL"),
    ),
    (
        ("claude-",),
        Route(
            "anthropic-messages",
            "anthropic",
            ANTHROPIC_BASE_URL,
            ("ANTHROPIC_API_KEY",),
            "ANTHROPIC_BASE_URL",
        ),
    ),
    (
        ("gemini-embedding-", "text-embedding-004"),
        Route("gemini-embedding", "google", GEMINI_BASE_URL, _GEMINI, "GEMINI_BASE_URL"),
    ),
    (
        ("gemini-",),
        Route("gemini-generate-content", "google", GEMINI_BASE_URL, _GEMINI, "GEMINI_BASE_URL"),
    ),
    (
        ("deepseek-",),
        Route(
            "openai-chat",
            "deepseek",
            "https://api.deepseek.com",
            ("DEEPSEEK_API_KEY",),
            "DEEPSEEK_BASE_URL",
        ),
    ),
    (
        ("glm-",),
        Route(
            "openai-chat", "zai", "https://api.z.ai/api/paas/v4", ("ZAI_API_KEY",), "ZAI_BASE_URL"
        ),
    ),
    (
        ("kimi-", "moonshot-"),
        Route(
            "openai-chat",
            "moonshot",
            "https://api.moonshot.ai/v1",
            ("MOONSHOT_API_KEY",),
            "MOONSHOT_BASE_URL",
        ),
    ),
    (
        ("qwen-", "qwq-"),
        Route(
            "openai-chat",
            "alibaba",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            ("DASHSCOPE_API_KEY",),
            "DASHSCOPE_BASE_URL",
        ),
    ),
    (
        ("minimax-",),  # MiniMax writes its ids "MiniMax-M2"; prefixes compare case-insensitively
        Route(
            "openai-chat",
            "minimax",
            "https://api.minimax.io/v1",
            ("MINIMAX_API_KEY",),
            "MINIMAX_BASE_URL",
        ),
    ),
)

# The route an explicit client type falls back to when the model's own route disagrees.
CLIENT_TYPE_ROUTES: dict[str, Route] = {
    "openai-chat": Route("openai-chat", "openai", OPENAI_BASE_URL, _OPENAI, "OPENAI_BASE_URL"),
    "openai-responses": Route(
        "openai-responses", "openai", OPENAI_BASE_URL, _OPENAI, "OPENAI_BASE_URL"
    ),
    "openai-embedding": Route(
        "openai-embedding", "openai", OPENAI_BASE_URL, _OPENAI, "OPENAI_BASE_URL"
    ),
    "anthropic-messages": Route(
        "anthropic-messages",
        "anthropic",
        ANTHROPIC_BASE_URL,
        ("ANTHROPIC_API_KEY",),
        "ANTHROPIC_BASE_URL",
    ),
    "gemini-generate-content": Route(
        "gemini-generate-content", "google", GEMINI_BASE_URL, _GEMINI, "GEMINI_BASE_URL"
    ),
    "gemini-embedding": Route(
        "gemini-embedding", "google", GEMINI_BASE_URL, _GEMINI, "GEMINI_BASE_URL"
    ),
    # no default endpoint: the base URL must be given
    "modelstream": Route(
        "modelstream", "modelstream", "", ("MODELSTREAM_API_KEY",), "MODELSTREAM_BASE_URL"
    ),
}


def route_for_model(model: str) -> Route | None:
    """The route of the longest matching prefix, or None for a model the table does not know."""
    name = model.lower()
    best: tuple[int, Route] | None = None
    for prefixes, route in ROUTES:
        for prefix in prefixes:
            if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), route)
    return best[1] if best else None


def resolve_route(model: str, client_type: str | None = None) -> Route:
    """The route for `model`, or for `client_type` when given; raises a ConfigurationError that
    says what to pass when neither is known."""
    if not model:
        raise ConfigurationError("no model given: pass model=... to the client or to the call")
    route = route_for_model(model)
    if client_type is None:
        if route is None:
            raise ConfigurationError(
                f"unknown model {model!r}: its name matches no routing prefix; pass "
                f"client_type=... (one of: {', '.join(CLIENT_TYPES)}) and base_url=... "
                "with api_key=... for the endpoint that serves it"
            )
        return route
    if client_type not in CLIENT_TYPE_ROUTES:
        raise ConfigurationError(
            f"unknown client type {client_type!r}; choose one of: {', '.join(CLIENT_TYPES)}"
        )
    if route is not None and route.client_type == client_type:
        return route
    return CLIENT_TYPE_ROUTES[client_type]
