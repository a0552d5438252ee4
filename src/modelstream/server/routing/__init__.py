"""Which upstream serves a turn: a served model's deployments picked by weight, its fallbacks
after them, and the deployments set aside for a while because they keep failing
(docs/routing.md).

    ServedModel ─► Router.plan ─► candidates, in order ─► relay.attempts tries each in turn
                       ▲                                          │ switchable failure
                       └──────── RouterState (cooldowns, per-minute counts) ◄──┘

`selection` and `switching` are pure; `state` keeps what several processes must agree on, in
memory or in Redis."""

from .router import Router
from .state import MemoryRouterState, RedisRouterState, RouterState, shared_state
from .switching import switch_reason

__all__ = [
    "MemoryRouterState",
    "RedisRouterState",
    "Router",
    "RouterState",
    "shared_state",
    "switch_reason",
]
