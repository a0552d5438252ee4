"""`KeyLedger`: a virtual key's side of each turn — admitted before any upstream call with an
estimate held against its budget, settled at the end with the turn's exact cost (`keys.Admission`
says why the overshoot is bounded), or released when no upstream answered at all.

The estimate prices the request at the catalogue's rates of the deployment it was checked
against: its body's bytes / 4 as input tokens (a cheap, deliberately generous count), and its
`max_tokens`, else `default_max_tokens`, as output. A turn that reached an upstream is charged
what it cost: `FinalResponse.cost` or `PartialResponse.cost` (cached tokens at their own rate);
when that is unknown, the admission's policy decides (a fallback rate, else the estimate held),
never zero."""

from __future__ import annotations

import logging
import time
from decimal import Decimal

from ...catalogue import default_catalogue
from ...catalogue.cost import cost_of_turn
from ...results import FinalResponse, PartialResponse
from ...types import Usage
from ...web.refusals import Refusal
from ..callers import Caller
from ..config import ModelEntry, VirtualKeySettings
from ..keys import Admission, KeyStore, Ticket, UnknownCostPolicy
from ..metrics import ServerMetrics
from .observers import token_split

log = logging.getLogger("modelstream.server")


class KeyLedger:
    """Admits, settles and releases the turns of virtual keys (module docstring)."""

    def __init__(
        self, store: KeyStore, settings: VirtualKeySettings, metrics: ServerMetrics
    ) -> None:
        rate = settings.unknown_cost_rate
        policy = UnknownCostPolicy("refuse") if rate is None else UnknownCostPolicy("rate", rate)
        self.store = store
        self.admission = Admission(store, unknown_cost=policy, hold_seconds=settings.hold_seconds)
        self.settings = settings
        self.metrics = metrics

    async def admit(
        self, caller: Caller, entry: ModelEntry, max_tokens: object, body_size: int
    ) -> Ticket | None:
        """The turn's ticket (None for a caller without a virtual key), or the key's `Refusal`."""
        if caller.secret is None:
            return None
        estimate, tokens = self.estimate(entry, max_tokens, body_size)
        try:
            return await self.admission.admit(
                caller.secret.reveal(), entry.server_model_id, estimate, tokens
            )
        except Refusal as refusal:
            self.metrics.key_refusals.inc(caller.key_name or "", refusal.outcome)
            raise

    def estimate(
        self, entry: ModelEntry, max_tokens: object, body_size: int
    ) -> tuple[Decimal | None, int]:
        """What a turn is held at (None: its model has no price) and its tokens (module
        docstring)."""
        output = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else None
        tokens_in = max(1, body_size // 4)
        tokens_out = output or self.settings.default_max_tokens
        return _estimate(entry, tokens_in, tokens_out), tokens_in + tokens_out

    async def settle(
        self,
        ticket: Ticket,
        result: FinalResponse | PartialResponse | None,
        usage: Usage | None,
        answered: bool,
    ) -> None:
        """Charge the turn (`answered`: an upstream sent at least one event), else free what it
        held. A store that fails is logged, never raised: the caller's turn is over."""
        try:
            if not answered:
                await self.release(ticket)
                return
            cost = result.cost.total if result is not None and result.cost is not None else None
            tokens_in, tokens_out = token_split(usage) if usage else (None, None)
            charged = await self.admission.settle(
                ticket, cost, input_tokens=tokens_in, output_tokens=tokens_out
            )
        except Exception as exc:
            log.error("settling a turn of key %s failed: %s", ticket.key_id, type(exc).__name__)
            return
        name = ticket.key_name
        self.metrics.key_turns.inc(name, ticket.served_model)
        self.metrics.key_cost.inc(name, ticket.currency, amount=float(charged))
        if tokens_in:
            self.metrics.key_tokens.inc(name, "in", amount=tokens_in)
        if tokens_out:
            self.metrics.key_tokens.inc(name, "out", amount=tokens_out)

    async def release(self, ticket: Ticket) -> None:
        """Free what a turn that never reached a provider held (a refusal after admission)."""
        try:
            await self.admission.release(ticket)
        except Exception as exc:
            log.error("releasing a turn of key %s failed: %s", ticket.key_id, type(exc).__name__)

    async def aclose(self) -> None:
        await self.store.aclose()


def _estimate(entry: ModelEntry, tokens_in: int, tokens_out: int) -> Decimal | None:
    """The turn's cost at its model's list prices; None when the model has none."""
    info = default_catalogue().lookup(entry.model)
    if info is None or info.price is None:
        return None
    usage: Usage = {
        "cached_tokens": 0,
        "prompt_tokens": tokens_in,
        "thoughts_tokens": 0,
        "response_tokens": tokens_out,
    }
    return cost_of_turn(usage, info.price, at_ms=int(time.time() * 1000)).total
