"""Where a client's traced turns go: its `traces=` argument, else the environment.

    traces=False                      nothing is recorded
    traces=None (default)             $MODELSTREAM_TRACES (a path, or "off"), else the default
                                      file (store.default_path()); plus OpenTelemetry spans when
                                      $MODELSTREAM_TRACES_OTEL is 1
    traces="path" or a PathLike       that SQLite file
    traces=sink or [sink, ...]        those sinks (TraceStore, OtelExporter, your own)

Only turns whose config has a `trace_id` are recorded. A trace file opened here is bounded by
`limits`, else by the `MODELSTREAM_TRACES_MAX_*` variables (`TraceLimits.from_env`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Union

from .record import TraceSink
from .store import TraceLimits, TraceStore

TracesOption = Union[TraceSink, Sequence[TraceSink], str, "os.PathLike[str]", bool, None]

OFF_VALUES = frozenset({"", "0", "off", "false", "no", "none"})


def resolve_sinks(
    option: TracesOption, env: Mapping[str, str], *, limits: TraceLimits | None = None
) -> list[TraceSink]:
    """The sinks a client records its traced turns into (module docstring)."""
    if option is False:
        return []
    if limits is None:
        limits = TraceLimits.from_env(env)
    if option is None or option is True:
        sinks: list[TraceSink] = []
        spec = env.get("MODELSTREAM_TRACES")
        if spec is None or spec.strip().lower() not in OFF_VALUES:
            sinks.append(TraceStore(spec or None, limits=limits))
        if env.get("MODELSTREAM_TRACES_OTEL", "").strip().lower() not in OFF_VALUES:
            from .otel import OtelExporter

            sinks.append(OtelExporter())
        return sinks
    if isinstance(option, str | os.PathLike):
        return [TraceStore(option, limits=limits)]
    if isinstance(option, Sequence):
        return [sink for sink in option if not isinstance(sink, str)]
    return [option]


def owns_sinks(option: TracesOption) -> bool:
    """Whether `resolve_sinks(option)` opened its sinks itself (so the client closes them)."""
    return option is None or option is True or isinstance(option, str | os.PathLike)


def close_sinks(sinks: Sequence[TraceSink]) -> None:
    for sink in sinks:
        close = getattr(sink, "close", None)
        if callable(close):
            close()


__all__ = ["TracesOption", "close_sinks", "owns_sinks", "resolve_sinks"]
