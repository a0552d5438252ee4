"""OpenTelemetry export: one span per turn, following the GenAI semantic conventions
(span `"{gen_ai.operation.name} {gen_ai.request.model}"`, kind CLIENT, `gen_ai.*` attributes).

Needs the `otel` extra (`opentelemetry-api`); the spans go to whatever tracer provider the
application configured (none configured: the API's no-op provider drops them). Message contents
are not exported: the conventions make them opt-in, and the SQLite trace already holds them.
"""

from __future__ import annotations

from typing import Any

from .. import platforms, protocols
from ..errors import ConfigurationError
from ..protocols import REGISTRY
from .record import TraceTurn
from .store import token_counts


def _otel_provider(provider: str | None) -> str | None:
    """Our provider name, or the conventions' registry name where it spells it otherwise."""
    everyone = (*protocols.providers(), *platforms.providers())
    known = next((p for p in everyone if p.name == provider), None)
    if known is None or known.otel_name is None:
        return provider
    return known.otel_name


def span_name(turn: TraceTurn) -> str:
    return f"{operation_name(turn)} {turn.model}"


def operation_name(turn: TraceTurn) -> str:
    """The conventions' operation for the turn's protocol (e.g. Gemini's "generate_content")."""
    protocol = REGISTRY.get(turn.client_type)
    return protocol.otel_operation if protocol else "chat"


def span_attributes(turn: TraceTurn) -> dict[str, Any]:
    """The `gen_ai.*` (and `error.type`) attributes of a turn's span; unknown values are left
    out, never sent as zero."""
    provider = _otel_provider(turn.provider)
    input_tokens, output_tokens = token_counts(turn.usage)
    usage = turn.usage
    finish = turn.raw_finish_reason or turn.finish_reason
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": operation_name(turn),
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,  # the name before gen_ai.provider.name, still widely read
        "gen_ai.request.model": turn.model,
        "gen_ai.conversation.id": turn.trace_id,
        "gen_ai.response.model": turn.response_model,
        "gen_ai.response.id": turn.response_id,
        "gen_ai.response.finish_reasons": [finish] if finish else None,
        "gen_ai.usage.input_tokens": input_tokens,
        "gen_ai.usage.output_tokens": output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage["cached_tokens"] if usage else None,
        "gen_ai.usage.reasoning.output_tokens": usage["thoughts_tokens"] if usage else None,
        "modelstream.client_type": turn.client_type,
        "modelstream.source": turn.source,
        "modelstream.status": turn.status,
    }
    config = turn.config
    for key, attribute in (
        ("max_tokens", "gen_ai.request.max_tokens"),
        ("temperature", "gen_ai.request.temperature"),
        ("top_p", "gen_ai.request.top_p"),
        ("seed", "gen_ai.request.seed"),
        ("stop", "gen_ai.request.stop_sequences"),
    ):
        attributes[attribute] = config.get(key)
    ttfe = turn.timings.get("ttfe_ms")
    if ttfe is not None:
        attributes["gen_ai.response.time_to_first_chunk"] = round(ttfe / 1000, 6)
    if turn.status != "final":
        attributes["error.type"] = turn.status
    return {key: value for key, value in attributes.items() if value is not None}


class OtelExporter:
    """A trace sink that emits each turn as a span through the OpenTelemetry API."""

    def __init__(self, tracer_provider: Any = None) -> None:
        try:
            from opentelemetry import trace
        except ImportError:
            raise ConfigurationError(
                "OpenTelemetry export needs opentelemetry-api: pip install 'modelstream[otel]'"
            ) from None
        from .. import __version__

        self._trace = trace
        self._tracer = trace.get_tracer("modelstream", __version__, tracer_provider=tracer_provider)

    def __repr__(self) -> str:
        return "OtelExporter()"

    def append(self, turn: TraceTurn) -> None:
        """Emit the turn's span, timed from the turn's start to its end."""
        start_ns = turn.created_at * 1_000_000
        total_ms = turn.timings.get("total_ms", 0.0)
        span = self._tracer.start_span(
            span_name(turn),
            kind=self._trace.SpanKind.CLIENT,
            attributes=span_attributes(turn),
            start_time=start_ns,
        )
        if turn.status != "final":
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, turn.reason))
        span.end(end_time=start_ns + int(total_ms * 1_000_000))


__all__ = ["OtelExporter", "operation_name", "span_attributes", "span_name"]
