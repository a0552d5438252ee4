"""The server's counters in the Prometheus text exposition format (version 0.0.4), written by
hand: three metric kinds are all it needs, and no dependency is worth that.

    modelstream_server_requests_total{route,outcome}     requests by how they ended
    modelstream_server_streams_in_flight                 upstream calls running now
    modelstream_server_time_to_first_event_seconds{model} histogram, request to first event
    modelstream_server_stream_duration_seconds{model}     histogram, request to end of stream
    modelstream_server_events_total{model}               events relayed
    modelstream_server_tokens_total{model,direction}     tokens in (cached + prompt) and out
    modelstream_server_cost_total{model,currency}        list-price cost of the served turns
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

Labels = tuple[str, ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(names: Sequence[str], values: Sequence[str], extra: str = "") -> str:
    parts = [f'{name}="{_escape(value)}"' for name, value in zip(names, values, strict=True)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Counter:
    """A monotonically growing number per label set."""

    kind = "counter"

    def __init__(self, name: str, help: str, labelnames: Sequence[str] = ()) -> None:
        self.name, self.help, self.labelnames = name, help, tuple(labelnames)
        self._values: dict[Labels, float] = {}

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        self._values[labels] = self._values.get(labels, 0.0) + amount

    def value(self, *labels: str) -> float:
        return self._values.get(labels, 0.0)

    def samples(self) -> list[str]:
        return [
            f"{self.name}{_labels(self.labelnames, labels)} {_number(value)}"
            for labels, value in sorted(self._values.items())
        ]


class Gauge(Counter):
    """A number that goes up and down."""

    kind = "gauge"

    def set(self, value: float, *labels: str) -> None:
        self._values[labels] = value

    def samples(self) -> list[str]:
        if not self._values and not self.labelnames:
            return [f"{self.name} 0"]
        return super().samples()


class Histogram:
    """Observations counted into cumulative buckets, with their sum and count."""

    kind = "histogram"

    def __init__(
        self,
        name: str,
        help: str,
        labelnames: Sequence[str] = (),
        buckets: Sequence[float] = LATENCY_BUCKETS,
    ) -> None:
        self.name, self.help, self.labelnames = name, help, tuple(labelnames)
        self.buckets = tuple(sorted(buckets))
        self._series: dict[Labels, tuple[list[int], list[float]]] = {}

    def observe(self, value: float, *labels: str) -> None:
        counts, total = self._series.setdefault(labels, ([0] * (len(self.buckets) + 1), [0.0]))
        counts[bisect.bisect_left(self.buckets, value)] += 1
        total[0] += value

    def samples(self) -> list[str]:
        lines = []
        for labels, (counts, total) in sorted(self._series.items()):
            running = 0
            for bound, count in zip((*self.buckets, math.inf), counts, strict=True):
                running += count
                le = f'le="{_number(bound)}"'
                lines.append(f"{self.name}_bucket{_labels(self.labelnames, labels, le)} {running}")
            lines.append(f"{self.name}_sum{_labels(self.labelnames, labels)} {_number(total[0])}")
            lines.append(f"{self.name}_count{_labels(self.labelnames, labels)} {running}")
        return lines


class ServerMetrics:
    """The metrics one server instance keeps (module docstring)."""

    def __init__(self) -> None:
        self.requests = Counter(
            "modelstream_server_requests_total",
            "Requests by route (stream, resume) and outcome (stop, error, cancelled, or why "
            "the request was refused).",
            ("route", "outcome"),
        )
        self.in_flight = Gauge(
            "modelstream_server_streams_in_flight", "Upstream calls running now."
        )
        self.time_to_first_event = Histogram(
            "modelstream_server_time_to_first_event_seconds",
            "Seconds from a stream request to its first event.",
            ("model",),
        )
        self.duration = Histogram(
            "modelstream_server_stream_duration_seconds",
            "Seconds from a stream request to the end of its stream.",
            ("model",),
        )
        self.events = Counter(
            "modelstream_server_events_total", "Events relayed, by model.", ("model",)
        )
        self.tokens = Counter(
            "modelstream_server_tokens_total",
            "Tokens by model and direction: in = cached + prompt, out = thoughts + response.",
            ("model", "direction"),
        )
        self.cost = Counter(
            "modelstream_server_cost_total",
            "What the served turns cost at the model catalogue's list prices, by model and "
            "currency (turns whose cost is unknown are not counted).",
            ("model", "currency"),
        )

        self.switches = Counter(
            "modelstream_server_deployment_switches_total",
            "Turns moved to another deployment before their first event, by served model, the "
            "deployment that failed, the one tried next and why.",
            ("model", "from", "to", "reason"),
        )
        self.cooldowns = Counter(
            "modelstream_server_deployment_cooldowns_total",
            "Times a deployment was set aside after failing (docs/routing.md#cooldowns).",
            ("deployment",),
        )
        self.deployment_turns = Counter(
            "modelstream_server_deployment_turns_total",
            "Turns by the deployment that answered them (or that the turn ended on).",
            ("deployment",),
        )
        self.deployment_tokens = Counter(
            "modelstream_server_deployment_tokens_total",
            "Tokens by deployment and direction (in = cached + prompt, out = thoughts + response).",
            ("deployment", "direction"),
        )
        self.deployment_cost = Counter(
            "modelstream_server_deployment_cost_total",
            "What the turns of each deployment cost at the catalogue's list prices.",
            ("deployment", "currency"),
        )

        self.key_turns = Counter(
            "modelstream_server_key_turns_total",
            "Turns charged to each virtual key (docs/keys.md), by key name and served model.",
            ("key", "model"),
        )
        self.key_tokens = Counter(
            "modelstream_server_key_tokens_total",
            "Tokens of each virtual key's turns, by direction (in = cached + prompt, out = "
            "thoughts + response).",
            ("key", "direction"),
        )
        self.key_cost = Counter(
            "modelstream_server_key_cost_total",
            "What each virtual key was charged: exact costs, fallback rates or held estimates.",
            ("key", "currency"),
        )
        self.key_refusals = Counter(
            "modelstream_server_key_refusals_total",
            "Turns of virtual keys refused before any upstream call, by key name and reason.",
            ("key", "reason"),
        )

    def render(self) -> str:
        lines: list[str] = []
        metrics: list[Counter | Histogram] = [
            self.requests,
            self.in_flight,
            self.time_to_first_event,
            self.duration,
            self.events,
            self.tokens,
            self.cost,
            self.switches,
            self.cooldowns,
            self.deployment_turns,
            self.deployment_tokens,
            self.deployment_cost,
            self.key_turns,
            self.key_tokens,
            self.key_cost,
            self.key_refusals,
        ]
        for metric in metrics:
            lines.append(f"# HELP {metric.name} {metric.help}")
            lines.append(f"# TYPE {metric.name} {metric.kind}")
            lines.extend(metric.samples())
        return "\n".join(lines) + "\n"
