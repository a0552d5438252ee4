"""What `Client` and `AsyncClient` share before any IO: their settings, the checks made at
construction, and turning one call into a `CallPlan` and a `StreamCall`."""

from __future__ import annotations

import os
from collections.abc import Callable

from ..auth.signing import RequestSigner
from ..traces.record import TurnRecorder
from ..traces.sinks import TracesOption, close_sinks, owns_sinks, resolve_sinks
from ..types import Config, Message
from .credentials import Secret
from .platforms import AmbientSigners, PlatformOption, platform_of
from .prepare import CallPlan, endpoint_for, plan_call
from .retry import RetryPolicy
from .streams import StreamCall
from .timeouts import Timeouts


class ClientSettings:
    """The settings of a client; the IO shells subclass it."""

    def __init__(
        self,
        model: str | None,
        *,
        api_key: str | None,
        base_url: str | None,
        client_type: str | None,
        timeouts: Timeouts | None,
        retry: RetryPolicy | None,
        lenient_tool_arguments: bool,
        lenient_frames: bool,
        random: Callable[[], float],
        traces: TracesOption = None,
        signer: RequestSigner | None = None,
        platform: PlatformOption = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.client_type = client_type
        self.timeouts = timeouts or Timeouts()
        self.retry = retry or RetryPolicy()
        self.lenient_tool_arguments = lenient_tool_arguments
        self.lenient_frames = lenient_frames
        self._api_key = Secret(api_key) if api_key else None
        self._signer = signer
        self.platform = platform_of(platform)
        self._ambient: AmbientSigners = {}  # AWS-chain / ADC signers, reused by every call
        self._random = random
        # Where turns with a config["trace_id"] are recorded (docs/traces.md); opened lazily.
        self._trace_sinks = resolve_sinks(traces, os.environ)
        self._owns_trace_sinks = owns_sinks(traces)
        if model:  # fail at construction, not at the first call, on a model or key problem
            endpoint_for(
                model,
                client_type=client_type,
                base_url=base_url,
                api_key=self._api_key,
                env=os.environ,
                signer=signer,
                platform=self.platform,
                ambient=self._ambient,
            )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, client_type={self.client_type!r}, "
            f"base_url={self.base_url!r}, platform={self.platform!r})"
        )

    def _prepare(
        self, model: str | None, messages: list[Message], config: Config | None
    ) -> tuple[CallPlan, StreamCall]:
        """Route, pick the key and encode now, so configuration errors raise before any IO."""
        from ..tools import config_with_tool_definitions  # not imported by a CLI that needs none

        config = config_with_tool_definitions(config)  # function tools → their definitions
        plan = plan_call(
            model or self.model or "",
            messages,
            config,
            client_type=self.client_type,
            base_url=self.base_url,
            api_key=self._api_key,
            env=os.environ,
            signer=self._signer,
            platform=self.platform,
            ambient=self._ambient,
        )
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
                secrets=(plan.endpoint.api_key.reveal(),) if plan.endpoint.api_key else (),
            )
        call = StreamCall(
            protocol=plan.endpoint.client_type,
            provider=plan.endpoint.provider,
            model=plan.model,
            url=plan.request.url,
            signer=plan.endpoint.signer,
            retry=self.retry,
            timeouts=self.timeouts,
            lenient_tool_arguments=self.lenient_tool_arguments,
            lenient_frames=self.lenient_frames,
            random=self._random,
            trace=recorder,
            trace_sinks=self._trace_sinks,
        )
        return plan, call

    def _close_traces(self) -> None:
        if self._owns_trace_sinks:
            close_sinks(self._trace_sinks)
