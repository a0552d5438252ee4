"""Traces: every turn recorded — its request, items, usage, status and timings — into SQLite
and optionally OpenTelemetry, and browsed with `modelstream traces serve` (docs/traces.md)."""

from .record import (
    ItemTiming,
    TraceSink,
    TraceSource,
    TraceTurn,
    TurnRecorder,
    TurnStatus,
    publish,
    record_turn,
    redact_config,
)
from .sinks import TracesOption, resolve_sinks
from .store import TraceLimits, TraceStore, TraceSummary, default_path

__all__ = [
    "ItemTiming",
    "TraceLimits",
    "TraceSink",
    "TraceSource",
    "TraceStore",
    "TraceSummary",
    "TraceTurn",
    "TracesOption",
    "TurnRecorder",
    "TurnStatus",
    "default_path",
    "publish",
    "record_turn",
    "redact_config",
    "resolve_sinks",
]
