"""`Admission`: what a turn of unknown cost is charged under each policy (never 0), and the
periods and windows a key is counted in."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from modelstream.server.keys import Admission, SQLiteKeyStore, UnknownCostPolicy
from modelstream.server.keys.windows import budget_window, minute_window
from support.keys import admitted, refusal_of, run


def utc(*parts: int) -> float:
    return datetime(*parts, tzinfo=UTC).timestamp()  # type: ignore[misc]


def test_under_refuse_a_turn_of_unknown_cost_is_refused_before_it_starts(tmp_path: Path) -> None:
    async def body() -> None:
        store = SQLiteKeyStore(tmp_path / "keys.sqlite3")
        _, secret = await store.create("alice")
        admission = Admission(store)
        refusal = await refusal_of(admission.admit(secret.reveal(), "local-llama", None, 500))
        assert (refusal.status, refusal.error_type) == (403, "UnknownCostError")
        assert "'local-llama' has no price in the catalogue" in refusal.message
        unknown = await refusal_of(admission.admit("msk-nobody", "local-llama", None, 500))
        assert unknown.status == 401  # who you are comes before what the model costs
        assert await store.spend() == []
        await store.aclose()

    run(body)


def test_under_rate_unknown_costs_are_charged_per_thousand_tokens(tmp_path: Path) -> None:
    async def body() -> None:
        store = SQLiteKeyStore(tmp_path / "keys.sqlite3")
        _, secret = await store.create("alice", budget="1.00")
        policy = UnknownCostPolicy("rate", Decimal("0.002"))
        admission = Admission(store, unknown_cost=policy)
        ticket = await admission.admit(secret.reveal(), "local-llama", None, 500)
        assert ticket.estimate_units == 1_000_000  # 500 tokens at 0.002 per 1,000: 0.001
        charged = await admission.settle(ticket, None, input_tokens=1200, output_tokens=300)
        assert charged == Decimal("0.003")
        [row] = await store.spend_rows(None, None, None)
        assert (row.basis, row.cost, row.input_tokens) == ("rate", Decimal("0.003"), 1200)
        await store.aclose()

    run(body)


def test_a_turn_settled_with_neither_cost_nor_tokens_is_charged_its_estimate(
    tmp_path: Path,
) -> None:
    async def body() -> None:
        store = SQLiteKeyStore(tmp_path / "keys.sqlite3")
        _, secret = await store.create("alice")
        admission = Admission(store)
        ticket = await admitted(admission, secret.reveal(), estimate=Decimal("0.07"))
        assert await admission.settle(ticket, None) == Decimal("0.07")
        [row] = await store.spend_rows(None, None, None)
        assert (row.basis, row.cost) == ("estimate", Decimal("0.07"))
        await store.aclose()

    run(body)


def test_the_rate_policy_needs_a_rate() -> None:
    with pytest.raises(ValueError, match="needs a rate per 1,000 tokens"):
        UnknownCostPolicy("rate")
    with pytest.raises(ValueError, match="'refuse' or 'rate'"):
        UnknownCostPolicy("free")  # type: ignore[arg-type]


def test_rate_windows_are_whole_minutes() -> None:
    assert minute_window(utc(2027, 1, 1, 12, 30, 59)) == (
        utc(2027, 1, 1, 12, 30),
        utc(2027, 1, 1, 12, 31),
    )


def test_a_budget_period_counts_from_the_keys_creation() -> None:
    created = utc(2027, 1, 1, 9, 30)
    assert budget_window("daily", created, utc(2027, 1, 3, 9, 29)) == (
        utc(2027, 1, 2, 9, 30),
        utc(2027, 1, 3, 9, 30),
    )
    assert budget_window(3600, created, created + 7200) == (created + 7200, created + 10_800)
    assert budget_window(None, created, utc(2099, 1, 1)) == (0, None)


def test_a_monthly_period_ends_on_the_same_day_or_the_months_last() -> None:
    created = utc(2027, 1, 31, 10)
    assert budget_window("monthly", created, utc(2027, 2, 15)) == (created, utc(2027, 2, 28, 10))
    assert budget_window("monthly", created, utc(2027, 3, 1)) == (
        utc(2027, 2, 28, 10),
        utc(2027, 3, 31, 10),
    )
    assert budget_window("monthly", created, utc(2027, 12, 31, 11)) == (
        utc(2027, 12, 31, 10),
        utc(2028, 1, 31, 10),
    )
