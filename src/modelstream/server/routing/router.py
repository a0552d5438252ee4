"""`Router`: the candidates of one turn, in the order to try them, and what each attempt's
failure teaches the router (module docstring of the package)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ...errors import StreamError
from ...web.refusals import Refusal
from ..config import ModelEntry, ServedModel
from .selection import Rotation, usable
from .state import RouterState, seconds_to_next_minute
from .switching import cooldown_hint, switch_reason


@dataclass(frozen=True)
class Plan:
    """A turn's candidates: the primary's deployments by pick, then each fallback's; those
    cooling down come after every free one (a last resort, never skipped for good)."""

    candidates: tuple[ModelEntry, ...]


class Router:
    """Plans turns over the served models and remembers their deployments' failures."""

    def __init__(
        self,
        served: Mapping[str, ServedModel],
        state: RouterState,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.served = served
        self.state = state
        self.clock = clock
        self._rotations: dict[str, Rotation] = {}
        # whether a model's chain needs the shared state at all: a lone deployment with no
        # limits and no fallbacks plans as it did before there was a router
        self._simple = {
            model_id: len(model.deployments) == 1
            and not model.fallbacks
            and not _limited(model.deployments[0])
            for model_id, model in served.items()
        }

    async def plan(self, model_id: str, busy: Callable[[ModelEntry], int]) -> Plan:
        """The candidates of a turn of `model_id` (a served id); a 429 `Refusal` when every one
        of them is at its per-minute limit."""
        model = self.served[model_id]
        if self._simple[model_id]:
            return Plan(model.deployments)
        rotation = self._rotations.setdefault(model_id, Rotation())
        chain = rotation.order(model.deployments, busy)
        for fallback in model.fallbacks:
            others = self.served[fallback].deployments
            chain += sorted(others, key=lambda e: (-e.weight, busy(e)))
        now = self.clock()
        standings = await self.state.standings([entry.deployment for entry in chain], now)
        free, cooling, _limited_now = usable(chain, standings)
        if not free and not cooling:
            wait = max(1, round(seconds_to_next_minute(now)))
            raise Refusal(
                429,
                "RateLimitError",
                f"every deployment of {model_id!r} (and of its fallbacks) is at its per-minute "
                f"limit (rpm/tpm); retry in {wait} s",
                outcome="deployments_at_limit",
                headers={"retry-after": str(wait)},
            )
        return Plan(tuple(free + cooling))

    async def started(self, entry: ModelEntry) -> None:
        """An attempt on `entry` begins (counted against its rpm)."""
        if entry.rpm is not None:
            await self.state.started(entry.deployment, self.clock())

    async def used(self, entry: ModelEntry, tokens: int) -> None:
        """The turn on `entry` used `tokens` (counted against its tpm)."""
        if entry.tpm is not None and tokens > 0:
            await self.state.used(entry.deployment, tokens, self.clock())

    async def failed(self, entry: ModelEntry, error: StreamError) -> tuple[str | None, bool]:
        """An attempt on `entry` failed before its first event: why it moves the turn on (None:
        it does not), and whether the deployment now cools down."""
        reason = switch_reason(error)
        if reason is None:
            return None, False
        cooled = await self.state.failed(entry.deployment, self.clock(), cooldown_hint(error))
        return reason, cooled


def _limited(entry: ModelEntry) -> bool:
    return entry.rpm is not None or entry.tpm is not None
