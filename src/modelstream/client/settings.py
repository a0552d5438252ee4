"""What `Client` and `AsyncClient` share before any IO: their settings, the checks made at
construction, and turning one call into a `CallPlan` and a `StreamCall`.

Settings are values (`timeouts=30`, `retry=5`, `retry=False`): each is turned into its object
here, at construction, so a wrong type fails now with a `TypeError` naming the parameter rather
than deep inside the first call that needs it. A call may override the timeouts and retries
(`timeout=`, `max_retries=`) for itself."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, cast

from ..auth.signing import RequestSigner
from ..errors import ConfigurationError, InvalidConfigError
from ..messages import Prompt, as_messages
from ..platforms import REGISTRY, PlatformOption, is_platform, platform_of, settings_listed
from ..protocols.common.config_rules import RULES, check_config, unknown_key
from ..protocols.descriptor import Protocol
from ..traces.record import TurnRecorder
from ..traces.sinks import TracesOption, close_sinks, owns_sinks, resolve_sinks
from ..types import Config
from .credentials import AmbientSigners, CredentialMasks, Secret
from .model_list import ModelListCall
from .prepare import CallPlan, endpoint_for, plan_call
from .retry import RetryOption, RetryPolicy, retry_policy_from, with_max_retries
from .streams import StreamCall
from .timeouts import Timeouts, TimeoutsOption, timeouts_from


class ClientSettings:
    """The settings of a client; the IO shells subclass it."""

    def __init__(
        self,
        model: str | None,
        *,
        api_key: str | None,
        base_url: str | None,
        client_type: str | Protocol | None,
        timeouts: TimeoutsOption | None,
        retry: RetryOption | None,
        timeout: TimeoutsOption | None = None,
        max_retries: int | None = None,
        lenient_tool_arguments: bool,
        lenient_frames: bool,
        random: Callable[[], float],
        traces: TracesOption = None,
        signer: RequestSigner | None = None,
        platform: PlatformOption = None,
    ) -> None:
        for name, value in (
            ("model", model),
            ("api_key", api_key),
            ("base_url", base_url),
        ):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__}")
        if client_type is not None and not isinstance(client_type, str | Protocol):
            raise TypeError(
                "client_type must be a str (a protocol's name) or a Protocol, got "
                f"{type(client_type).__name__}"
            )
        _check_options(random=random, traces=traces, signer=signer, platform=platform)
        self.model = model
        self.base_url = base_url
        self.client_type = client_type
        if timeout is not None:  # the SDKs' name for the same setting
            if timeouts is not None:
                raise TypeError(
                    "pass timeout= or timeouts=, not both: they are one setting (a number of "
                    "seconds, a Timeouts, or False)"
                )
            timeouts = timeouts_from(timeout, "timeout")
        self.timeouts = timeouts_from(Timeouts() if timeouts is None else timeouts, "timeouts")
        self.retry = retry_policy_from(RetryPolicy() if retry is None else retry, "retry")
        if max_retries is not None:  # the SDKs' name: retries after the first attempt
            self.retry = with_max_retries(self.retry, max_retries)
        self.lenient_tool_arguments = _flag(lenient_tool_arguments, "lenient_tool_arguments")
        self.lenient_frames = _flag(lenient_frames, "lenient_frames")
        self._api_key = Secret(api_key) if api_key else None
        self._signer = signer
        self.platform = platform_of(platform)
        self._ambient: AmbientSigners = {}  # AWS-chain / ADC signers, reused by every call
        self._masks = CredentialMasks(self._api_key, signer)  # what `redact` masks
        self._random = random
        # Where turns with a config["trace_id"] are recorded (docs/traces.md); opened lazily.
        self._trace_sinks = resolve_sinks(traces, os.environ)
        self._owns_trace_sinks = owns_sinks(traces)
        if model:  # fail at construction, not at the first call, on a model or key problem
            endpoint_for(model, **self._route_options())

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, client_type={self._client_type_name!r}, "
            f"base_url={self.base_url!r}, platform={self.platform!r})"
        )

    @property
    def _client_type_name(self) -> str | None:
        client_type = self.client_type
        return client_type.name if isinstance(client_type, Protocol) else client_type

    def redact(self, text: str) -> str:
        """`text` with every credential this client holds masked as `***`: its key, or its
        signer's secrets (AWS keys and session tokens, access tokens minted so far)."""
        return self._masks.redact(text)

    def _model_list(self, model: str | None) -> ModelListCall:
        """The paging of the models endpoint that `model`'s route (or the client's) reaches."""
        chosen = model or self.model
        if not chosen and self.client_type is None:
            raise ConfigurationError(
                "list_models() needs a model or a client_type to know which API to ask"
            )
        endpoint = endpoint_for(chosen or "", **self._route_options())
        return ModelListCall.for_endpoint(endpoint, chosen)

    def _route_options(self) -> dict[str, Any]:
        """What routing a call (or a models listing) needs of the client's settings."""
        return {
            "client_type": self.client_type,
            "base_url": self.base_url,
            "api_key": self._api_key,
            "env": os.environ,
            "signer": self._signer,
            "platform": self.platform,
            "ambient": self._ambient,
        }

    def _prepare(
        self,
        model: str | None,
        prompt: Prompt,
        config: Config | None,
        timeout: TimeoutsOption | None = None,
        max_retries: int | None = None,
        config_keys: Mapping[str, Any] | None = None,
    ) -> tuple[CallPlan, StreamCall]:
        """Route, pick the key and encode now, so configuration errors raise before any IO.
        `config_keys` are config keys given as keyword arguments (`max_tokens=5`)."""
        from ..structured.output import config_with_output_type
        from ..tools import config_with_tool_definitions  # not imported by a CLI that needs none

        messages = as_messages(prompt)
        config = with_config_keys(config, config_keys)
        check_call_config(config)  # every key and value, before function tools are described
        config = config_with_tool_definitions(config)  # function tools → their definitions
        config, output = config_with_output_type(config)  # a class → its json_schema
        timeouts = self.timeouts if timeout is None else timeouts_from(timeout, "timeout")
        retry = self.retry if max_retries is None else with_max_retries(self.retry, max_retries)
        plan = plan_call(model or self.model or "", messages, config, **self._route_options())
        self._masks.learn(plan.endpoint)
        trace_id = (config or {}).get("trace_id")
        recorder = None
        if isinstance(trace_id, str) and trace_id and self._trace_sinks:
            recorder = TurnRecorder(
                trace_id=trace_id,
                model=plan.model,
                client_type=plan.endpoint.client_type,
                provider=plan.endpoint.provider,
                config=config,
                messages=messages,
                redact=self.redact,  # asked when the turn ends: tokens minted by then too
            )
        call = StreamCall(
            protocol=plan.endpoint.protocol,
            provider=plan.endpoint.provider,
            model=plan.model,
            url=plan.request.url,
            signer=plan.endpoint.signer,
            retry=retry,
            timeouts=timeouts,
            lenient_tool_arguments=self.lenient_tool_arguments,
            lenient_frames=self.lenient_frames,
            random=self._random,
            trace=recorder,
            trace_sinks=self._trace_sinks,
        )
        call.output = output  # what the answer is read into (`stream.partial_objects`, parsed)
        return plan, call

    def _close_traces(self) -> None:
        if self._owns_trace_sinks:
            close_sinks(self._trace_sinks)


def _check_options(*, random: object, traces: object, signer: object, platform: object) -> None:
    """The settings given as objects: a wrong type is named now (an unknown platform *name*
    stays a ConfigurationError, from `platform_of`)."""
    if not callable(random):
        raise TypeError(f"random must be a function returning a float in [0, 1), got {random!r}")
    if not (traces is None or isinstance(traces, bool | str | os.PathLike) or _is_sinks(traces)):
        raise TypeError(
            "traces must be a trace file path, True/False, a TraceStore or a list of trace "
            f"sinks (objects with .append), got {type(traces).__name__}"
        )
    if signer is not None and not callable(getattr(signer, "sign", None)):
        raise TypeError(f"signer must be a RequestSigner (with .sign), got {type(signer).__name__}")
    if platform is not None and not (isinstance(platform, str) or is_platform(platform)):
        names = ", ".join(repr(name) for name in REGISTRY)
        raise TypeError(
            f"platform must be {names}, or {settings_listed()}, got {type(platform).__name__}"
        )


def _is_sinks(value: object) -> bool:
    sinks = value if isinstance(value, list | tuple) else [value]
    return all(callable(getattr(sink, "append", None)) for sink in sinks)


def check_call_config(config: object) -> None:
    """Raise `InvalidConfigError` for a config a call cannot send (config_rules.py): a key that
    is not a config key, or a value no provider takes. Python functions may stand in `tools`."""
    check_config(config, functions=True)


# A call's own keyword parameters, which a misspelt keyword argument may have meant too.
CALL_PARAMETERS = ("config", "model", "timeout", "max_retries")


def with_config_keys(config: Config | None, keys: Mapping[str, Any] | None) -> Config | None:
    """`config` with the keys a call gave as keyword arguments; a key given both ways is a
    TypeError, as Python says of an argument given twice, and a keyword that is no config key
    is refused with the key or parameter it most likely meant."""
    if not keys:
        return config
    for key in keys:
        if key not in RULES:
            raise InvalidConfigError(key, unknown_key(key, CALL_PARAMETERS), path=f"config.{key}")
    if config is not None and not isinstance(config, Mapping):
        return config  # the config checks say what a config must be
    both = sorted(set(config or {}) & set(keys))
    if both:
        raise TypeError(
            f"config key {', '.join(repr(key) for key in both)} given both in config and as a "
            "keyword argument: pass it once"
        )
    return cast(Config, {**(config or {}), **keys})


def _flag(value: object, parameter: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{parameter} must be True or False, got {type(value).__name__}")
    return value
