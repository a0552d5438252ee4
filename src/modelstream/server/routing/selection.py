"""Picking among a served model's deployments: smooth weighted round-robin (each deployment's
share of the turns is its weight's share, and the picks are spread, not bunched), over the
deployments that are neither cooling down nor at their per-minute limits; on equal standing the
less busy one wins. Pure: the caller brings the standings and keeps the `Rotation`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..config import ModelEntry


@dataclass(frozen=True)
class Standing:
    """What the router knows of a deployment now."""

    cooling_seconds: float = 0.0  # left of its cooldown; 0: not cooling
    requests: int = 0  # turns started in this minute
    tokens: int = 0  # tokens used in this minute

    def at_limit(self, entry: ModelEntry) -> bool:
        return (entry.rpm is not None and self.requests >= entry.rpm) or (
            entry.tpm is not None and self.tokens >= entry.tpm
        )


@dataclass
class Rotation:
    """The current weights of smooth weighted round-robin, per deployment name."""

    current: dict[str, float] = field(default_factory=dict)

    def order(
        self,
        deployments: Sequence[ModelEntry],
        busy: Callable[[ModelEntry], int],
    ) -> list[ModelEntry]:
        """`deployments` in the order to try them: the pick first (its weight spent), then the
        rest by current weight, each tie to the less busy."""
        if len(deployments) <= 1:
            return list(deployments)
        total = 0.0
        for entry in deployments:
            self.current[entry.deployment] = self.current.get(entry.deployment, 0.0) + entry.weight
            total += entry.weight
        ranked = sorted(deployments, key=lambda e: (-self.current[e.deployment], busy(e)))
        self.current[ranked[0].deployment] -= total
        return ranked


def usable(
    deployments: Sequence[ModelEntry], standings: Mapping[str, Standing]
) -> tuple[list[ModelEntry], list[ModelEntry], list[ModelEntry]]:
    """`deployments` split into those free to take a turn, those cooling down (and not at a
    limit), and those at a per-minute limit, each in the order given."""
    free: list[ModelEntry] = []
    cooling: list[ModelEntry] = []
    limited: list[ModelEntry] = []
    for entry in deployments:
        standing = standings.get(entry.deployment, _IDLE)
        if standing.at_limit(entry):
            limited.append(entry)
        elif standing.cooling_seconds > 0:
            cooling.append(entry)
        else:
            free.append(entry)
    return free, cooling, limited


_IDLE = Standing()
