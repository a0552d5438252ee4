"""`Admission`: what the server asks of a virtual key once per turn — `admit` before the turn
reaches a provider, `settle` when it has ended (or `release` when it never started).

The budget rule, with a bounded overshoot: a turn is admitted while `spent + held < budget` in
the key's current period, and then holds its cost estimate until it settles, when the hold is
dropped and the turn's exact cost is added to `spent`. Turns admitted before the budget was
reached may still finish past it, so the overshoot is at most what the turns in flight at that
moment cost beyond their estimates; no turn starts after it. A turn that never settles (its
process was killed) holds its estimate for `hold_seconds`, then no longer.

A turn whose cost is unknown (the model has no price, or the provider reported no usage) is
never counted as free: by `UnknownCostPolicy`, it is refused up front (`refuse`) or charged a
fallback rate per 1,000 tokens (`rate`); a settled turn with neither a cost nor tokens is
charged the estimate it held.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from ...web.refusals import Refusal
from .money import from_units, to_units
from .records import KeyRecord
from .refusals import refusal_for, unknown_cost
from .store import DEFAULT_HOLD_SECONDS, KeyStore, SpendRow, Ticket, turnaway_for_key
from .windows import MINUTE


@dataclass(frozen=True)
class UnknownCostPolicy:
    """What a turn of unknown cost is charged: refused up front, or `rate_per_1k` per 1,000
    tokens (its estimate at admission, its usage when it settles)."""

    mode: Literal["refuse", "rate"] = "refuse"
    rate_per_1k: Decimal | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("refuse", "rate"):
            raise ValueError(f"unknown_cost must be 'refuse' or 'rate', got {self.mode!r}")
        if self.rate_per_1k is not None and self.rate_per_1k < 0:
            raise ValueError("the unknown-cost rate must not be negative")
        if self.mode == "rate" and self.rate_per_1k is None:
            raise ValueError("unknown_cost = 'rate' needs a rate per 1,000 tokens")

    def charge(self, tokens: int) -> Decimal | None:
        """`tokens` at the fallback rate; None without one."""
        return None if self.rate_per_1k is None else self.rate_per_1k * tokens / 1000


class Admission:
    """Admits, settles and releases the turns of virtual keys in `store` (module docstring)."""

    def __init__(
        self,
        store: KeyStore,
        *,
        unknown_cost: UnknownCostPolicy | None = None,
        hold_seconds: float = DEFAULT_HOLD_SECONDS,
    ) -> None:
        if hold_seconds < MINUTE:
            raise ValueError(
                "hold_seconds must be at least 60: a turn holds its estimate while it runs"
            )
        self.store = store
        self.unknown_cost = unknown_cost or UnknownCostPolicy()
        self.hold_seconds = hold_seconds

    async def admit(
        self,
        secret: str,
        served_model: str,
        estimate: Decimal | None,
        tokens_estimate: int,
        now: float | None = None,
    ) -> Ticket:
        """A ticket for one turn of `served_model` on the key whose secret this is, or the
        `Refusal` (refusals.py) that says why not. `estimate`: what the turn may cost (None:
        unknown, see `UnknownCostPolicy`); `tokens_estimate`: its tokens, counted for `tpm`."""
        at = time.time() if now is None else now
        if estimate is None:
            estimate = self.unknown_cost.charge(tokens_estimate)
            if estimate is None:
                raise _unpriced(await self.store.by_secret(secret), served_model, at)
        answer = await self.store.reserve(
            secret, served_model, to_units(estimate), tokens_estimate, at, self.hold_seconds
        )
        if isinstance(answer, Ticket):
            return answer
        raise refusal_for(answer, served_model, at)

    async def settle(
        self,
        ticket: Ticket,
        cost: Decimal | None,
        *,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        now: float | None = None,
    ) -> Decimal:
        """Charge the turn: its exact `cost`, else its tokens at the fallback rate, else the
        estimate it held; the amount charged. Settling a ticket again charges nothing more."""
        known = None
        if input_tokens is not None or output_tokens is not None:
            known = (input_tokens or 0) + (output_tokens or 0)
        basis, charge = "priced", cost
        if charge is None and known is not None:
            basis, charge = "rate", self.unknown_cost.charge(known)
        if charge is None:
            basis, charge = "estimate", from_units(ticket.estimate_units)
        tokens = ticket.tokens_estimate if known is None else known
        if input_tokens is None or output_tokens is None:
            tokens = max(tokens, ticket.tokens_estimate)  # a part unknown: no fewer than guessed
        row = SpendRow(
            ticket_id=ticket.ticket_id,
            key_id=ticket.key_id,
            key_name=ticket.key_name,
            served_model=ticket.served_model,
            cost=charge,
            currency=ticket.currency,
            basis=basis,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            at=time.time() if now is None else now,
        )
        await self.store.settle(ticket, row, tokens)
        return charge

    async def release(self, ticket: Ticket) -> None:
        """Free what a turn that never reached a provider held (nothing is charged; its
        request still counts for `rpm`)."""
        await self.store.release(ticket)


def _unpriced(record: KeyRecord | None, served_model: str, now: float) -> Refusal:
    """Under `refuse`: the key's own refusal first (an unknown key is a 401, not a price
    problem), else the unknown-cost one."""
    turned = turnaway_for_key(record, served_model, now)
    if turned is not None:
        return refusal_for(turned, served_model, now)
    assert record is not None
    return unknown_cost(record, served_model)
