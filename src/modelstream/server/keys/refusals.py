"""What a turn refused by its virtual key is told: a `web.refusals.Refusal` (status, error
type, a message the caller can act on, `retry-after` where waiting helps), which every wire of
the server renders as its own error.

- 401 `AuthenticationError`: no key has this secret, or the key is revoked or expired (the
  message says which, and never repeats the secret).
- 403 `PermissionDeniedError`: the key may not use this model (the message lists those it may);
  403 `UnknownCostError`: the model has no price and the server refuses turns it cannot count.
- 429 `RateLimitError`: `rpm` or `tpm` reached; `retry-after` is the end of the minute window.
- 429 `BudgetExceededError`: the budget is spent. 429 rather than 402: the SDKs and agents
  (OpenAI's, Anthropic's, Claude Code, Codex) know 429 as "a limit, wait or stop", with a
  `retry-after` they honour, while 402 is a status none of them handles: they show it as an
  unknown error, or retry it blindly. The type tells a budget from a rate limit; `retry-after`
  is the period's end when the budget resets.
"""

from __future__ import annotations

import math

from ...web.refusals import Refusal
from .money import from_units, shown
from .records import KeyRecord
from .store import Turnaway
from .times import shown_duration, shown_time


def refusal_for(turnaway: Turnaway, served_model: str, now: float) -> Refusal:
    """The refusal `turnaway` is answered with."""
    record = turnaway.record
    if turnaway.reason == "unknown" or record is None:
        return _unauthorized(
            "unknown API key: no key of this server has this secret; check that it was copied "
            "whole, or ask an administrator for a key"
        )
    who = f"this key ({record.name!r}, {record.key_id})"
    if turnaway.reason == "revoked":
        assert record.revoked_at is not None
        return _unauthorized(
            f"{who} was revoked at {shown_time(record.revoked_at)}; ask an administrator for "
            "a new key"
        )
    if turnaway.reason == "expired":
        assert record.expires_at is not None
        return _unauthorized(
            f"{who} expired at {shown_time(record.expires_at)}; ask an administrator to extend "
            f"it (modelstream keys update {record.key_id} --expires 30d) or for a new key"
        )
    if turnaway.reason == "model":
        return Refusal(
            403,
            "PermissionDeniedError",
            f"{who} may not use the model {served_model!r}; it may use: "
            + ", ".join(record.models),
            outcome="forbidden",
            fields={"allowed_models": list(record.models)},
        )
    if turnaway.reason in ("rpm", "tpm"):
        return _rate_limited(turnaway, who, now)
    return _budget_exceeded(turnaway, record, who, now)


def unknown_cost(record: KeyRecord, served_model: str) -> Refusal:
    """A turn whose cost cannot be counted, under `unknown_cost = "refuse"`."""
    return Refusal(
        403,
        "UnknownCostError",
        f"the model {served_model!r} has no price in the catalogue, and this server refuses "
        f"turns whose cost it cannot count for its virtual keys ({record.name!r}); ask an "
        "administrator to add the model's price or to set a fallback rate (unknown_cost)",
        outcome="unknown_cost",
    )


def _unauthorized(message: str) -> Refusal:
    return Refusal(
        401,
        "AuthenticationError",
        message,
        outcome="unauthorized",
        headers={"www-authenticate": "Bearer"},
    )


def _rate_limited(turnaway: Turnaway, who: str, now: float) -> Refusal:
    assert turnaway.record is not None and turnaway.window_end is not None
    wait = _seconds_until(turnaway.window_end, now)
    if turnaway.reason == "rpm":
        limit = turnaway.record.rpm
        used = f"has made {turnaway.used:,} requests"
    else:
        limit = turnaway.record.tpm
        used = f"has used {turnaway.used:,} tokens"
    return Refusal(
        429,
        "RateLimitError",
        f"{who} {used} in this minute, its limit ({turnaway.reason} = {limit}); retry in "
        f"{shown_duration(wait)}",
        outcome="rate_limited",
        headers={"retry-after": str(wait)},
        fields={"limit": limit, "limit_kind": turnaway.reason, "retry_after": wait},
    )


def _budget_exceeded(turnaway: Turnaway, record: KeyRecord, who: str, now: float) -> Refusal:
    assert record.budget is not None
    spent, held = from_units(turnaway.used), from_units(turnaway.held)
    in_flight = (
        f", and {shown(held, record.currency)} more is held by turns in flight" if held else ""
    )
    period = f" this period ({_period_name(record)})" if record.budget_period is not None else ""
    headers: dict[str, str] = {}
    fields: dict[str, object] = {
        "budget": str(record.budget),
        "spent": str(spent),
        "held": str(held),
        "currency": record.currency,
    }
    if turnaway.window_end is not None:
        wait = _seconds_until(turnaway.window_end, now)
        when = f"it resets at {shown_time(turnaway.window_end)} (in {shown_duration(wait)})"
        headers["retry-after"] = str(wait)
        fields |= {"resets_at": turnaway.window_end, "retry_after": wait}
    else:
        when = (
            "it does not reset: ask an administrator to raise it "
            f"(modelstream keys update {record.key_id} --budget AMOUNT)"
        )
    return Refusal(
        429,
        "BudgetExceededError",
        f"{who} has reached its budget of {shown(record.budget, record.currency)}{period}: "
        f"{shown(spent, record.currency)} spent{in_flight}; {when}",
        outcome="budget_exceeded",
        headers=headers,
        fields=fields,
    )


def _period_name(record: KeyRecord) -> str:
    period = record.budget_period
    return period if isinstance(period, str) else f"every {shown_duration(float(period or 0))}"


def _seconds_until(end: float, now: float) -> int:
    return max(1, math.ceil(end - now))
