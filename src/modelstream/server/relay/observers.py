"""What the relay tells about its streams, to whoever counts them: an observer is called where
a count changes (a stream's start, its first event, its usage, each batch the store took, its
turn's result, its end), never per event on its own. The server's metrics (`StreamMetrics`)
and its cost total (`CostCounter`) are two observers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...results import FinalResponse, PartialResponse
from ...types import Usage
from ..metrics import ServerMetrics

if TYPE_CHECKING:
    from .attempts import Attempts, Switch


def token_split(usage: Usage) -> tuple[int | None, int | None]:
    """Input (cached + prompt) and output (thoughts + response) tokens of `usage`, each the sum
    of its known counts; None for a direction none of whose counts is known."""

    def total(first: int | None, second: int | None) -> int | None:
        return None if first is None and second is None else (first or 0) + (second or 0)

    return (
        total(usage.get("cached_tokens"), usage.get("prompt_tokens")),
        total(usage.get("thoughts_tokens"), usage.get("response_tokens")),
    )


class RelayObserver:
    """Each method does nothing here: an observer overrides those it counts. `model` is the
    served model id."""

    def stream_started(self, model: str) -> None:
        """A stream's producer started (its upstream call is planned, its store entry made)."""

    def first_event(self, model: str, seconds: float) -> None:
        """A stream's first event came, `seconds` after its request."""

    def usage(self, model: str, usage: Usage | None) -> None:
        """A stream's stop event came with its turn's `usage` (SPEC §2; counts may be None)."""

    def events_stored(self, model: str, count: int) -> None:
        """The store took `count` more events of a stream."""

    def turn_finished(self, model: str, result: FinalResponse | PartialResponse | None) -> None:
        """A stream's upstream turn ended and all its events are stored, without an error."""

    def stream_ended(self, model: str, outcome: str, seconds: float) -> None:
        """A stream ended (`outcome`: stop, error or cancelled), `seconds` after its request."""

    def switched(self, model: str, switch: Switch) -> None:
        """A stream's attempt failed before its first event and the next deployment is tried."""

    def answered(
        self,
        model: str,
        attempts: Attempts,
        usage: Usage | None,
        result: FinalResponse | PartialResponse | None,
    ) -> None:
        """A stream's attempts are over: `attempts.entry` is the deployment it ended on, with
        its stop event's `usage` (None without one) and its turn's `result`."""


class Observers(RelayObserver):
    """Several observers as one, called in order."""

    def __init__(self, observers: Sequence[RelayObserver]) -> None:
        self._observers = tuple(observers)

    def stream_started(self, model: str) -> None:
        for observer in self._observers:
            observer.stream_started(model)

    def first_event(self, model: str, seconds: float) -> None:
        for observer in self._observers:
            observer.first_event(model, seconds)

    def usage(self, model: str, usage: Usage | None) -> None:
        for observer in self._observers:
            observer.usage(model, usage)

    def events_stored(self, model: str, count: int) -> None:
        for observer in self._observers:
            observer.events_stored(model, count)

    def turn_finished(self, model: str, result: FinalResponse | PartialResponse | None) -> None:
        for observer in self._observers:
            observer.turn_finished(model, result)

    def stream_ended(self, model: str, outcome: str, seconds: float) -> None:
        for observer in self._observers:
            observer.stream_ended(model, outcome, seconds)

    def switched(self, model: str, switch: Switch) -> None:
        for observer in self._observers:
            observer.switched(model, switch)

    def answered(
        self,
        model: str,
        attempts: Attempts,
        usage: Usage | None,
        result: FinalResponse | PartialResponse | None,
    ) -> None:
        for observer in self._observers:
            observer.answered(model, attempts, usage, result)


class StreamMetrics(RelayObserver):
    """The streams' counts in the server's /metrics: in flight, time to first event, events,
    tokens, outcomes and durations."""

    def __init__(self, metrics: ServerMetrics) -> None:
        self.metrics = metrics

    def stream_started(self, model: str) -> None:
        self.metrics.in_flight.inc()

    def first_event(self, model: str, seconds: float) -> None:
        self.metrics.time_to_first_event.observe(seconds, model)

    def usage(self, model: str, usage: Usage | None) -> None:
        if not usage:
            return
        tokens_in, tokens_out = token_split(usage)
        self.metrics.tokens.inc(model, "in", amount=tokens_in or 0)
        self.metrics.tokens.inc(model, "out", amount=tokens_out or 0)

    def events_stored(self, model: str, count: int) -> None:
        self.metrics.events.inc(model, amount=count)

    def stream_ended(self, model: str, outcome: str, seconds: float) -> None:
        self.metrics.in_flight.inc(amount=-1)
        self.metrics.requests.inc("stream", outcome)
        self.metrics.duration.observe(seconds, model)


class CostCounter(RelayObserver):
    """What the served turns cost at the catalogue's list prices, in the server's /metrics
    (a turn whose cost is unknown is not counted)."""

    def __init__(self, metrics: ServerMetrics) -> None:
        self.metrics = metrics

    def turn_finished(self, model: str, result: FinalResponse | PartialResponse | None) -> None:
        cost = result.cost if result is not None else None
        total = cost.total if cost is not None else None
        if cost is not None and total is not None:
            self.metrics.cost.inc(model, cost.currency, amount=float(total))


class DeploymentMetrics(RelayObserver):
    """Per deployment in the server's /metrics: the turns it ended, their tokens and cost, the
    switches away from it and its cooldowns."""

    def __init__(self, metrics: ServerMetrics) -> None:
        self.metrics = metrics

    def switched(self, model: str, switch: Switch) -> None:
        self.metrics.switches.inc(model, switch.failed, switch.to, switch.reason)
        if switch.cooled:
            self.metrics.cooldowns.inc(switch.failed)

    def answered(
        self,
        model: str,
        attempts: Attempts,
        usage: Usage | None,
        result: FinalResponse | PartialResponse | None,
    ) -> None:
        entry = attempts.entry
        if entry is None:
            return
        self.metrics.deployment_turns.inc(entry.deployment)
        if usage:
            tokens_in, tokens_out = token_split(usage)
            self.metrics.deployment_tokens.inc(entry.deployment, "in", amount=tokens_in or 0)
            self.metrics.deployment_tokens.inc(entry.deployment, "out", amount=tokens_out or 0)
        cost = result.cost if result is not None else None
        total = cost.total if cost is not None else None
        if cost is not None and total is not None:
            self.metrics.deployment_cost.inc(entry.deployment, cost.currency, amount=float(total))
