"""What a turn cost, from its usage and the catalogue's price (sans-IO: the turn's time, when
a price has peak hours, is given by the caller).

SPEC §2 usage splits input into `cached_tokens` (read from the cache) and `prompt_tokens` (not
served from it, cache writes included) and output into `thoughts_tokens` and
`response_tokens`. Each part is priced at its own rate: prompt tokens less the cache writes at
`input`, the writes at `cache_write`, cached tokens at `cached_input`, thoughts at `reasoning`
(where priced apart, else `output`) and the response at `output`. Unknown stays unknown: a part
whose token count is null, or whose tokens have no rate, has no cost, and then neither has the
turn — never zero. A part with no tokens costs nothing whatever its rate. Where the provider
reports no thought count beside a response count (it folds reasoning into the response), the
response carries them at the output rate. Providers that do not report cache writes are priced
as if none happened: their writes are billed as plain input.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from ..results import StreamMetadata, TurnCost
from ..types import Usage
from . import Catalogue, Peak, Price, default_catalogue

__all__ = ["TurnCost", "cost_of_turn", "turn_cost"]

_MILLION = Decimal(1_000_000)


def cost_of_turn(
    usage: Usage | None,
    price: Price,
    *,
    model: str = "",
    cache_write_tokens: int | None = None,
    at_ms: int | None = None,
) -> TurnCost:
    """The cost of one turn (module docstring); `at_ms` is when it ran, for peak hours."""
    if usage is None:
        return TurnCost(price.currency, None, None, None, None, None, model)
    cached = usage.get("cached_tokens")
    prompt = usage.get("prompt_tokens")
    thoughts = usage.get("thoughts_tokens")
    response = usage.get("response_tokens")
    writes = cache_write_tokens or 0
    rates = dict(price.rates)
    if (
        price.long_prompt is not None
        and (cached or 0) + (prompt or 0) > price.long_prompt.threshold
    ):
        rates = dict(price.long_prompt.rates)  # every token of the request, at the long rates
    multiplier = _peak_multiplier(price.peak, at_ms)
    reasoning_rate = rates.get("reasoning", rates.get("output"))
    if thoughts is None and "reasoning" not in rates and response is not None:
        thoughts = 0  # folded into the response, which is priced at the same rate

    def part(tokens: int | None, rate: Decimal | None) -> Decimal | None:
        if tokens is None:
            return None
        if tokens == 0:
            return Decimal(0)
        if rate is None or multiplier is None:
            return None
        return Decimal(tokens) * rate * multiplier / _MILLION

    uncached = None if prompt is None else max(prompt - writes, 0)
    return TurnCost(
        currency=price.currency,
        input=part(uncached, rates.get("input")),
        cached_input=part(cached, rates.get("cached_input")),
        cache_write=part(writes if prompt is not None else None, rates.get("cache_write")),
        reasoning=part(thoughts, reasoning_rate),
        output=part(response, rates.get("output")),
        model=model,
    )


def _peak_multiplier(peak: Peak | None, at_ms: int | None) -> Decimal | None:
    """The rates' multiplier at `at_ms`; None when the price has peak hours and the time is
    not known (the cost is then unknown)."""
    if peak is None:
        return Decimal(1)
    if at_ms is None:
        return None
    when = datetime.fromtimestamp(at_ms / 1000, UTC)
    in_hours = any(start <= when.hour < end for start, end in peak.hours_utc)
    return peak.multiplier if in_hours and when.isoweekday() in peak.weekdays else Decimal(1)


def turn_cost(
    usage: Usage | None, metadata: StreamMetadata, catalogue: Catalogue | None = None
) -> TurnCost | None:
    """The cost of a streamed turn by its model's catalogue price; None when the model is not
    in the catalogue or has no price (then the cost is unknown, not zero)."""
    entry = (catalogue or default_catalogue()).lookup(metadata.model or "")
    if entry is None or entry.price is None:
        return None
    return cost_of_turn(
        usage,
        entry.price,
        model=entry.id,
        cache_write_tokens=metadata.cache_write_tokens,
        at_ms=metadata.finished_at_ms,
    )
