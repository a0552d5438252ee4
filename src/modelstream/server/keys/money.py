"""Amounts of money as the stores count them: whole nano-units (10⁻⁹ of the currency).

Both stores add and compare integers, never floats: SQLite's INTEGER and Redis's INCRBY are
exact 64-bit integers, and Redis's Lua compares them as doubles, which are exact up to 2⁵³ — so
every budget up to `MAX_BUDGET` (about 9 million) is compared exactly. A cost with more than
nine decimals is rounded up to the next nano-unit in the counters (the spend rows keep the exact
`Decimal`), so a counter may run ahead of the true spend by less than 10⁻⁹ per turn, never behind.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal

UNITS_PER_CURRENCY_UNIT = 10**9
MAX_BUDGET = Decimal(2**53 // UNITS_PER_CURRENCY_UNIT)  # 9,007,199: exact in Lua's doubles


def to_units(amount: Decimal) -> int:
    """`amount` in nano-units, rounded up (a charge is never counted short)."""
    return int((amount * UNITS_PER_CURRENCY_UNIT).to_integral_value(rounding=ROUND_CEILING))


def from_units(units: int) -> Decimal:
    return Decimal(units) / UNITS_PER_CURRENCY_UNIT


def shown(amount: Decimal, currency: str) -> str:
    """`12.34 USD`: at least two decimals, and every decimal a small cost needs."""
    text = format(amount.normalize(), "f")
    whole, _, decimals = text.partition(".")
    return f"{whole}.{decimals.ljust(2, '0')} {currency}"
