"""The server's settings, read from a TOML (or JSON) file: the model table, the bearer keys, the
limits and the resume timings (docs/server.md has the reference).

Secrets never sit in the file: every `api_key` and every entry of `keys` names an environment
variable (`"$NAME"` or `"${NAME}"`), read when the file is loaded; a literal is refused. Errors
name the setting and the variable, never a value.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from ..auth.secret import Secret
from ..client.prepare import endpoint_for
from ..client.routing import resolve_route
from ..errors import ConfigurationError
from ..platforms import REGISTRY as PLATFORMS
from ..platforms import PlatformSettings, listed, platform_named, platform_of
from ..protocols import protocol_named
from ..traces.store import TraceLimits
from ..web.hosts import allowed_name

_ENV_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}")
# a web page's origin: a scheme and a host, with an optional port and no path
_ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?/?")
_TOP_KEYS = {"models", "keys", "limits", "keepalive_seconds", "resume_grace_seconds"}
_TOP_KEYS |= {"retain_seconds", "traces", "trace_limits", "fidelity_key"}
_TOP_KEYS |= {
    "allowed_hosts",
    "cors_origins",
    "playground_session_seconds",
    "router",
    "virtual_keys",
}
_MODEL_KEYS = {"server_model_id", "model", "client_type", "base_url", "api_key"}
_MODEL_KEYS |= {"max_attempts", "idle_timeout_seconds", "allow_extra_body", "platform"}
_MODEL_KEYS |= {"allow_selectors", "deployment", "weight", "rpm", "tpm", "fallbacks"}
_MODEL_KEYS |= {"first_event_timeout_seconds"}


class ServerConfigError(ConfigurationError):
    """The server's config file is missing, unreadable or wrong; the message says where."""


@dataclass(frozen=True)
class ModelEntry:
    """One served model: the id clients send, and the upstream call it becomes."""

    server_model_id: str
    model: str  # the upstream model name
    provider: str  # from the route; shown as `owned_by` in /v1/models
    client_type: str | None = None
    base_url: str | None = None
    api_key: Secret | None = field(default=None, repr=False)
    api_key_env: str | None = None  # the variable the key was read from
    max_attempts: int = 3  # upstream attempts before the first event (RetryPolicy)
    idle_timeout_seconds: float = 60.0  # no upstream bytes for this long ends the stream
    # whether callers may send config.extra_body (never over a field the server writes)
    allow_extra_body: bool = True
    platform: PlatformSettings | None = None  # a cloud platform, with its settings
    # the protocol's `selectors` (a stored turn, an agent, a cached context) callers may send
    # in extra_body; none by default: they would reach state or models the operator did not pick
    allow_selectors: frozenset[str] = frozenset()
    # --- as one deployment of its served model (docs/routing.md) ---
    deployment: str = ""  # its name in headers, metrics and traces ("" until settings name it)
    weight: float = 1.0  # its share of the served model's turns among the deployments
    rpm: int | None = None  # turns it may start per minute (per process, or per Redis)
    tpm: int | None = None  # tokens it may use per minute
    # served model ids to try, in order, once every deployment of this one has failed
    fallbacks: tuple[str, ...] = ()
    # no first event this long after the call started: the next deployment is tried
    first_event_timeout_seconds: float | None = None


@dataclass(frozen=True)
class RouterSettings:
    """When a deployment that keeps failing is set aside (docs/routing.md#cooldowns)."""

    cooldown_failures: int = 3  # this many switchable failures ...
    cooldown_window_seconds: float = 60.0  # ... within this many seconds ...
    cooldown_seconds: float = 30.0  # ... set it aside this long (a 429's retry-after: as long)


@dataclass(frozen=True)
class ServedModel:
    """A served model id: its deployments, in config order, and the ids it falls back to."""

    server_model_id: str
    deployments: tuple[ModelEntry, ...]
    fallbacks: tuple[str, ...] = ()


@dataclass(frozen=True)
class VirtualKeySettings:
    """Virtual keys (`[virtual_keys]`, docs/keys.md): where they are, who may manage them over
    HTTP, and what a turn whose cost is unknown is charged."""

    # the SQLite file of the keys; None: `keys.default_path()`. A server on Redis (--redis)
    # keeps them in that Redis instead, under `redis_prefix`
    path: str | None = None
    redis_prefix: str | None = None  # None: the stream store's prefix + "keys:"
    admin_keys: tuple[Secret, ...] = field(default=(), repr=False)  # for /v1/admin/*
    # a turn of unknown cost: None refuses it; else this many units of money per 1,000 tokens
    unknown_cost_rate: Decimal | None = None
    hold_seconds: float = 600.0  # how long an unsettled turn holds its estimate
    default_max_tokens: int = 4096  # the output a turn without max_tokens is estimated at


@dataclass(frozen=True)
class Limits:
    """Caps that keep one server's memory, connections and upstream spend bounded, and one
    caller from taking all of them (docs/server.md#limits-and-exposure)."""

    max_body_bytes: int = 4 * 1024 * 1024
    max_concurrent_streams: int = 64
    max_events_per_stream: int = 100_000
    max_store_bytes: int = 256 * 1024 * 1024
    # streams one bearer key may run at once; None: half of max_concurrent_streams when the
    # server has several keys, no cap of its own with one key or none (`limits.per_key_limit`)
    max_streams_per_key: int | None = None
    max_connections: int = 1024  # open client connections; past it one is answered 503, closed
    max_header_bytes: int = 64 * 1024  # a request's line and headers
    # from a connection's opening (a kept-alive one: its next request's first byte) to the end
    # of the request's headers
    header_timeout_seconds: float = 10.0
    body_timeout_seconds: float = 60.0  # from a request's headers' end to its body's end


@dataclass(frozen=True)
class ServerSettings:
    """Everything `create_app` needs."""

    models: tuple[ModelEntry, ...]
    keys: tuple[Secret, ...] = field(default=(), repr=False)
    key_envs: tuple[str, ...] = ()  # the variables the keys were read from
    limits: Limits = Limits()
    keepalive_seconds: float = 15.0
    resume_grace_seconds: float = 30.0
    retain_seconds: float = 300.0
    # where every served turn is recorded: a SQLite path, False for nowhere, None for the
    # default (MODELSTREAM_TRACES, else the user's data folder; docs/traces.md)
    traces: str | bool | None = None
    trace_limits: TraceLimits = field(default_factory=TraceLimits)  # what traces may hold
    # the key that seals fidelity crossing wires (docs/gateway.md); None: one per process,
    # so set it when several instances serve one client
    fidelity_key: Secret | None = field(default=None, repr=False)
    # Host names answered besides the loopback names and the bound address, where a Host is
    # checked (an open server; the playground): docs/server.md#host-names
    allowed_hosts: tuple[str, ...] = ()
    # the origins of web pages on other sites that may call the server from a browser (CORS:
    # docs/frontends.md); none by default, so a page elsewhere cannot read a stream
    cors_origins: tuple[str, ...] = ()
    playground_session_seconds: float = 12 * 3600.0  # a playground sign-in lasts this long
    router: RouterSettings = RouterSettings()
    virtual_keys: VirtualKeySettings | None = None  # None: no virtual keys, the `keys` only

    def __post_init__(self) -> None:
        if any(not entry.deployment for entry in self.models):  # made in code, not loaded
            object.__setattr__(self, "models", tuple(with_names(self.models)))

    @property
    def open(self) -> bool:
        """No bearer keys and no virtual keys: anyone who reaches the server may use it."""
        return not self.keys and self.virtual_keys is None

    def model(self, server_model_id: str) -> ModelEntry | None:
        """The served model's first deployment: what a request is checked against."""
        return next((m for m in self.models if m.server_model_id == server_model_id), None)

    @functools.cached_property
    def served(self) -> dict[str, ServedModel]:
        """The served model ids, in config order, each with its deployments."""
        return served_models(self.models)


def with_names(models: Sequence[ModelEntry]) -> list[ModelEntry]:
    """`models` with each unnamed deployment named: its `server_model_id` when it is the only
    one, else `<server_model_id>#<n>`, n counting from 1 within its id."""
    counts: dict[str, int] = {}
    for entry in models:
        counts[entry.server_model_id] = counts.get(entry.server_model_id, 0) + 1
    seen: dict[str, int] = {}
    named: list[ModelEntry] = []
    for entry in models:
        model_id = entry.server_model_id
        seen[model_id] = seen.get(model_id, 0) + 1
        if not entry.deployment:
            name = f"{model_id}#{seen[model_id]}" if counts[model_id] > 1 else model_id
            entry = dataclasses.replace(entry, deployment=name)
        named.append(entry)
    return named


def served_models(models: Sequence[ModelEntry]) -> dict[str, ServedModel]:
    """`models` grouped by `server_model_id`; a model's fallbacks are its deployments' own, in
    order, each once."""
    grouped: dict[str, list[ModelEntry]] = {}
    for entry in models:
        grouped.setdefault(entry.server_model_id, []).append(entry)
    served: dict[str, ServedModel] = {}
    for model_id, entries in grouped.items():
        fallbacks = tuple(dict.fromkeys(f for entry in entries for f in entry.fallbacks))
        served[model_id] = ServedModel(model_id, tuple(entries), fallbacks)
    return served


def load_settings(path: str | Path, env: Mapping[str, str] | None = None) -> ServerSettings:
    """Settings from a `.toml` or `.json` file; raises `ServerConfigError`."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ServerConfigError(f"{path}: no such config file") from None
    except OSError as exc:
        raise ServerConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(raw)
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:  # JSON, TOML and UTF-8 errors alike
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise ServerConfigError(f"{path}: not valid {kind}: {exc}") from None
    if not isinstance(data, dict):
        raise ServerConfigError(f"{path}: the config must be a table (a JSON object)")
    try:
        return settings_from_mapping(data, os.environ if env is None else env)
    except ServerConfigError as exc:
        raise ServerConfigError(f"{path}: {exc}") from None


def settings_from_mapping(data: Mapping[str, Any], env: Mapping[str, str]) -> ServerSettings:
    """Settings from an already parsed config; raises `ServerConfigError`."""
    _no_unknown(data, _TOP_KEYS, "the config")
    models_raw = data.get("models")
    if not isinstance(models_raw, list) or not models_raw:
        raise ServerConfigError("'models' must be a non-empty list of model tables ([[models]])")
    models = _named_deployments(
        [_model(entry, f"models[{i}]", env) for i, entry in enumerate(models_raw)],
        [isinstance(entry, dict) and "max_attempts" in entry for entry in models_raw],
    )
    keys_raw = data.get("keys", [])
    if not isinstance(keys_raw, list):
        raise ServerConfigError("'keys' must be a list of \"$VARIABLE\" names")
    pairs = [_secret(value, f"keys[{i}]", env) for i, value in enumerate(keys_raw)]
    limits_raw = data.get("limits", {})
    if not isinstance(limits_raw, dict):
        raise ServerConfigError("'limits' must be a table")
    _no_unknown(limits_raw, set(Limits.__dataclass_fields__), "limits")
    limits = Limits(
        **{
            name: _number(limits_raw, name, 0, "limits", integer=not name.endswith("_seconds"))
            for name in Limits.__dataclass_fields__
            if name in limits_raw  # the others keep their defaults
        }
    )
    base = ServerSettings(models=models)
    return ServerSettings(
        models=models,
        keys=tuple(secret for _, secret in pairs),
        key_envs=tuple(name for name, _ in pairs),
        limits=limits,
        keepalive_seconds=_number(data, "keepalive_seconds", base.keepalive_seconds, "the config"),
        # a stream's first reader attaches just after it starts: a shorter grace would race it
        resume_grace_seconds=_number(
            data, "resume_grace_seconds", base.resume_grace_seconds, "the config", minimum=0.1
        ),
        retain_seconds=_number(
            data, "retain_seconds", base.retain_seconds, "the config", minimum=0
        ),
        traces=_traces(data),
        trace_limits=_trace_limits(data),
        fidelity_key=_fidelity_key(data, env),
        allowed_hosts=_allowed_hosts(data),
        cors_origins=_cors_origins(data),
        playground_session_seconds=_number(
            data, "playground_session_seconds", base.playground_session_seconds, "the config"
        ),
        router=_router(data),
        virtual_keys=_virtual_keys(data, env),
    )


def _named_deployments(
    models: list[ModelEntry], attempts_set: list[bool]
) -> tuple[ModelEntry, ...]:
    """Every deployment named (`with_names`) and checked: names unique, fallbacks served and
    not the model itself.

    A deployment with somewhere else to go makes one attempt unless its `max_attempts` says
    otherwise: the next deployment is tried at once, not after the retries' backoff."""
    counts: dict[str, int] = {}
    for entry in models:
        counts[entry.server_model_id] = counts.get(entry.server_model_id, 0) + 1
    has_fallbacks = {entry.server_model_id for entry in models if entry.fallbacks}
    named: list[ModelEntry] = []
    for entry, attempts in zip(with_names(models), attempts_set, strict=True):
        model_id = entry.server_model_id
        alternatives = counts[model_id] > 1 or model_id in has_fallbacks
        if alternatives and not attempts:
            entry = dataclasses.replace(entry, max_attempts=1)
        named.append(entry)
    seen: set[str] = set()
    for entry in named:
        if entry.deployment in seen:
            raise ServerConfigError(
                f"the deployment name {entry.deployment!r} appears twice; each [[models]] entry "
                'needs a name of its own (deployment = "...")'
            )
        seen.add(entry.deployment)
    served = served_models(named)
    for model in served.values():
        for fallback in model.fallbacks:
            if fallback == model.server_model_id:
                raise ServerConfigError(
                    f"{model.server_model_id!r} names itself in fallbacks; its other "
                    "deployments are tried before any fallback"
                )
            if fallback not in served:
                raise ServerConfigError(
                    f"{model.server_model_id!r} falls back to {fallback!r}, which is not a "
                    f"served model (served: {', '.join(served)})"
                )
    return tuple(named)


def _router(data: Mapping[str, Any]) -> RouterSettings:
    """`[router]`: cooldown_failures, cooldown_window_seconds, cooldown_seconds."""
    raw = data.get("router", {})
    if not isinstance(raw, dict):
        raise ServerConfigError("'router' must be a table")
    _no_unknown(raw, set(RouterSettings.__dataclass_fields__), "router")
    defaults = RouterSettings()
    return RouterSettings(
        cooldown_failures=int(
            _number(raw, "cooldown_failures", defaults.cooldown_failures, "router", integer=True)
        ),
        cooldown_window_seconds=_number(
            raw, "cooldown_window_seconds", defaults.cooldown_window_seconds, "router"
        ),
        cooldown_seconds=_number(
            raw, "cooldown_seconds", defaults.cooldown_seconds, "router", minimum=0
        ),
    )


def _virtual_keys(data: Mapping[str, Any], env: Mapping[str, str]) -> VirtualKeySettings | None:
    """`[virtual_keys]`: path, redis_prefix, admin_keys, unknown_cost, hold_seconds,
    default_max_tokens. Its presence turns virtual keys on."""
    raw = data.get("virtual_keys")
    if raw is None:
        return None
    where = "virtual_keys"
    if not isinstance(raw, dict):
        raise ServerConfigError("'virtual_keys' must be a table ([virtual_keys])")
    known = {"path", "redis_prefix", "admin_keys", "unknown_cost", "hold_seconds"}
    _no_unknown(raw, known | {"default_max_tokens"}, where)
    admin_raw = raw.get("admin_keys", [])
    if not isinstance(admin_raw, list):
        raise ServerConfigError(f'{where}.admin_keys must be a list of "$VARIABLE" names')
    admins = [_secret(v, f"{where}.admin_keys[{i}]", env)[1] for i, v in enumerate(admin_raw)]
    defaults = VirtualKeySettings()
    return VirtualKeySettings(
        path=_text(raw, "path", where),
        redis_prefix=_text(raw, "redis_prefix", where),
        admin_keys=tuple(admins),
        unknown_cost_rate=_unknown_cost(raw.get("unknown_cost", "refuse"), where),
        hold_seconds=_number(raw, "hold_seconds", defaults.hold_seconds, where, minimum=60),
        default_max_tokens=int(
            _number(raw, "default_max_tokens", defaults.default_max_tokens, where, integer=True)
        ),
    )


def _unknown_cost(value: Any, where: str) -> Decimal | None:
    """ "refuse", or a fallback rate per 1,000 tokens written as a string ("0.002")."""
    if value == "refuse":
        return None
    try:
        rate = Decimal(value) if isinstance(value, str) else None
    except InvalidOperation:
        rate = None
    if rate is None or not rate.is_finite() or rate < 0:
        raise ServerConfigError(
            f'{where}.unknown_cost must be "refuse" or a rate per 1,000 tokens as a string, '
            f'e.g. "0.002" (in the catalogue\'s currency), got {value!r}'
        )
    return rate


def _fidelity_key(data: Mapping[str, Any], env: Mapping[str, str]) -> Secret | None:
    if data.get("fidelity_key") is None:
        return None
    name, secret = _secret(data["fidelity_key"], "fidelity_key", env)
    if len(secret.reveal().encode()) < 16:
        raise ServerConfigError(f"fidelity_key: {name} must hold at least 16 bytes (random)")
    return secret


def _allowed_hosts(data: Mapping[str, Any]) -> tuple[str, ...]:
    value = data.get("allowed_hosts", [])
    listed = value if isinstance(value, list) else [None]
    names = [allowed_name(v) if isinstance(v, str) else None for v in listed]
    if None in names:
        raise ServerConfigError(
            "'allowed_hosts' must be a list of host names or addresses, without a scheme or a "
            'port, e.g. ["proxy.example"] ("*" answers any)'
        )
    return tuple(name for name in names if name is not None)


def _cors_origins(data: Mapping[str, Any]) -> tuple[str, ...]:
    value = data.get("cors_origins", [])
    listed = value if isinstance(value, list) else [None]
    origins = [v.rstrip("/") for v in listed if isinstance(v, str) and _ORIGIN.fullmatch(v)]
    if len(origins) != len(listed):
        raise ServerConfigError(
            "'cors_origins' must be a list of page origins, each a scheme and a host with an "
            'optional port and no path, e.g. ["https://chat.example.com", "http://localhost:5173"]'
        )
    return tuple(origins)


def _traces(data: Mapping[str, Any]) -> str | bool | None:
    value = data.get("traces")
    if value is None or value is False:
        return None if value is None else False
    if isinstance(value, str) and value:
        return value
    raise ServerConfigError("'traces' must be a path to a SQLite file, or false to record nothing")


def _trace_limits(data: Mapping[str, Any]) -> TraceLimits:
    """`[trace_limits]`: max_turn_bytes, max_total_bytes, max_age_days; `false` lifts the
    last two."""
    raw = data.get("trace_limits", {})
    if not isinstance(raw, dict):
        raise ServerConfigError("'trace_limits' must be a table")
    known = set(TraceLimits.__dataclass_fields__)
    _no_unknown(raw, known, "trace_limits")
    defaults = TraceLimits()
    values: dict[str, Any] = {}
    for name in sorted(known):
        if raw.get(name) is False and name != "max_turn_bytes":
            values[name] = None
        elif name in raw:
            integer = name != "max_age_days"
            values[name] = _number(
                raw, name, getattr(defaults, name), "trace_limits", integer=integer
            )
    return TraceLimits(**values)


def _model(raw: Any, where: str, env: Mapping[str, str]) -> ModelEntry:
    if not isinstance(raw, dict):
        raise ServerConfigError(f"{where} must be a table")
    _no_unknown(raw, _MODEL_KEYS, where)
    server_model_id = _text(raw, "server_model_id", where, required=True)
    assert server_model_id is not None
    if not _MODEL_ID.fullmatch(server_model_id):
        raise ServerConfigError(
            f"{where}.server_model_id {server_model_id!r} must be 1-128 characters of letters, "
            "digits and ._:/@+- (starting with a letter or digit)"
        )
    model = _text(raw, "model", where, required=True)
    assert model is not None
    client_type = _text(raw, "client_type", where)
    base_url = _text(raw, "base_url", where)
    key_env, api_key = (None, None)
    if raw.get("api_key") is not None:
        key_env, api_key = _secret(raw["api_key"], f"{where}.api_key", env)
    defaults = ModelEntry("", "", "")
    try:
        platform = _platform(raw.get("platform"))
        route = resolve_route(model, client_type, platform)
        provider = route.provider
        # the same checks a client makes: a known route, a key, the environment-key rule
        endpoint_for(
            model,
            client_type=client_type,
            base_url=base_url,
            api_key=api_key,
            env=env,
            platform=platform,
        )
    except ConfigurationError as exc:
        raise ServerConfigError(f"{where} ({server_model_id!r}): {exc}") from None
    return ModelEntry(
        server_model_id=server_model_id,
        model=model,
        provider=provider,
        client_type=client_type,
        base_url=base_url,
        api_key=api_key,
        api_key_env=key_env,
        max_attempts=int(_number(raw, "max_attempts", defaults.max_attempts, where, integer=True)),
        idle_timeout_seconds=_number(
            raw, "idle_timeout_seconds", defaults.idle_timeout_seconds, where
        ),
        allow_extra_body=_flag(raw, "allow_extra_body", defaults.allow_extra_body, where),
        platform=platform,
        allow_selectors=_selectors(raw, route.client_type, where),
        deployment=_text(raw, "deployment", where) or "",
        weight=float(_number(raw, "weight", defaults.weight, where)),
        rpm=_optional_count(raw, "rpm", where),
        tpm=_optional_count(raw, "tpm", where),
        fallbacks=_fallbacks(raw, where),
        first_event_timeout_seconds=(
            None
            if raw.get("first_event_timeout_seconds") is None
            else float(_number(raw, "first_event_timeout_seconds", 0, where))
        ),
    )


def _optional_count(raw: Mapping[str, Any], key: str, where: str) -> int | None:
    if raw.get(key) is None:
        return None
    return int(_number(raw, key, 0, where, integer=True))


def _fallbacks(raw: Mapping[str, Any], where: str) -> tuple[str, ...]:
    value = raw.get("fallbacks", [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ServerConfigError(
            f'{where}.fallbacks must be a list of served model ids, e.g. ["claude-backup"]'
        )
    return tuple(dict.fromkeys(value))


def _selectors(raw: Mapping[str, Any], client_type: str, where: str) -> frozenset[str]:
    """`allow_selectors`: names among the upstream protocol's `selectors` (a typo is an error,
    not a field that stays refused for no visible reason)."""
    value = raw.get("allow_selectors", [])
    known = protocol_named(client_type).selectors
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ServerConfigError(
            f"{where}.allow_selectors must be a list of field names (for {client_type}: "
            f"{', '.join(known) or 'none'})"
        )
    unknown = [name for name in value if name not in known]
    if unknown:
        raise ServerConfigError(
            f"{where}.allow_selectors: {unknown[0]!r} is not a field that selects a model, agent "
            f"or stored state on {client_type} (those are: {', '.join(known) or 'none'})"
        )
    return frozenset(value)


def _platform(value: Any) -> PlatformSettings | None:
    """`platform = "vertex"`, or a table naming it with its settings:
    `platform = { name = "vertex", project = "p", location = "us-east5" }`."""
    if value is None or isinstance(value, str):
        return platform_of(value)
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        names = listed(f'"{name}"' for name in PLATFORMS)
        raise ConfigurationError(
            f"platform must be {names}, or a table with name = one of them and the platform's "
            "settings"
        )
    settings = {key: item for key, item in value.items() if key != "name"}
    kind = platform_named(value["name"]).settings
    known = {field.name for field in dataclasses.fields(kind)}
    _no_unknown(settings, known, f"platform {value['name']!r}")
    wrong = sorted(key for key, item in settings.items() if not isinstance(item, str))
    if wrong:
        raise ConfigurationError(f"platform {value['name']!r}: {', '.join(wrong)} must be strings")
    platform: PlatformSettings = kind(**settings)
    return platform


def _secret(value: Any, where: str, env: Mapping[str, str]) -> tuple[str, Secret]:
    """The variable named by `value` and its value; a literal is refused without echoing it."""
    match = _ENV_REF.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ServerConfigError(
            f'{where} must name an environment variable, as "$NAME" or "${{NAME}}"; '
            "a literal key is refused so that keys never sit in config files"
        )
    name = match.group(1) or match.group(2)
    secret = env.get(name, "")
    if not secret:
        raise ServerConfigError(f"{where}: the environment variable {name} is not set (or empty)")
    return name, Secret(secret)


def _text(raw: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise ServerConfigError(f"{where}.{key} is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise ServerConfigError(f"{where}.{key} must be a non-empty string")
    return value


def _flag(raw: Mapping[str, Any], key: str, default: bool, where: str) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ServerConfigError(f"{where}: {key} must be true or false, got {value!r}")
    return value


def _number(
    raw: Mapping[str, Any],
    key: str,
    default: float,
    where: str,
    *,
    integer: bool = False,
    minimum: float | None = None,
) -> Any:
    value: Any = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        kind = "an integer" if integer else "a number"
        raise ServerConfigError(f"{where}: {key} must be {kind}, got {value!r}")
    if minimum is not None and float(value) < minimum:
        raise ServerConfigError(f"{where}: {key} must be at least {minimum:g}, got {value!r}")
    if minimum is None and float(value) <= 0:
        raise ServerConfigError(f"{where}: {key} must be positive, got {value!r}")
    return value


def _no_unknown(raw: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ServerConfigError(
            f"{where} has unknown setting(s) {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(sorted(known))}"
        )
