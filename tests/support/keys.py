"""The virtual-key store contract (server/keys/store.py) as test functions that ask for a
`key_store_factory` fixture: server/keys/test_sqlite_store.py collects them against SQLite,
server/keys/test_redis_store.py against Redis. Also what those tests run in other processes
(`turns_in_a_process`, `admits_in_a_process`), started with `in_two_processes`, and `run`.

The amounts are chosen so that the decimals are exact: an estimate and a cost of 1.00 against a
budget of 50.00 admits exactly 50 turns, whatever their order.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from decimal import Decimal
from typing import Any

import pytest

from modelstream.server.keys import (
    Admission,
    KeyFieldError,
    KeyStore,
    NameTakenError,
    SQLiteKeyStore,
    Ticket,
)
from modelstream.web.refusals import Refusal

KeyStoreFactory = Callable[[], KeyStore]
# a time inside one rate window, away from its edges: tests that count rpm pass it as `now`
MID_MINUTE = (int(time.time()) // 60) * 60 + 30.0
StoreSpec = tuple[str, ...]  # ("sqlite", path) or ("redis", url, prefix)


def run(test: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(test())


def contract_tests() -> dict[str, Callable[..., None]]:
    """Every test of the contract, by name, for a test module's namespace."""
    return {name: test for name, test in globals().items() if name.startswith("test_")}


def store_from(spec: StoreSpec) -> KeyStore:
    """A store for `spec`, in this process (for the worker processes too)."""
    if spec[0] == "sqlite":
        return SQLiteKeyStore(spec[1])
    from modelstream.server.keys.redis import RedisKeyStore

    return RedisKeyStore.from_url(spec[1], prefix=spec[2])


async def admitted(admission: Admission, secret: str, model: str = "claude", **kw: Any) -> Ticket:
    return await admission.admit(secret, model, kw.pop("estimate", Decimal("1.00")), 100, **kw)


async def refusal_of(awaitable: Awaitable[Any]) -> Refusal:
    with pytest.raises(Refusal) as refused:
        await awaitable
    return refused.value


# --- turns in flight, in this process or another ------------------------------------------


async def turns(
    store: KeyStore,
    secret: str,
    count: int,
    *,
    estimate: Decimal,
    cost: Decimal,
    in_flight: int | None = None,
    now: float | None = None,
) -> tuple[int, int]:
    """`count` turns at once (at most `in_flight` between admit and settle): each admitted one
    runs a few milliseconds, then settles at `cost`. The admitted and refused counts."""
    admission = Admission(store)
    gate = asyncio.Semaphore(in_flight or count)
    results = {"admitted": 0, "refused": 0}

    async def turn() -> None:
        async with gate:
            try:
                ticket = await admission.admit(secret, "claude", estimate, 100, now)
            except Refusal:
                results["refused"] += 1
                return
            results["admitted"] += 1
            await asyncio.sleep(random.uniform(0, 0.01))
            await admission.settle(ticket, cost, input_tokens=60, output_tokens=40, now=now)

    await asyncio.gather(*(turn() for _ in range(count)))
    return results["admitted"], results["refused"]


def turns_in_a_process(
    spec: StoreSpec, secret: str, count: int, start_at: float, options: dict[str, Any]
) -> tuple[int, int]:
    """`turns` in a process of its own, from `start_at` on (so both processes race)."""

    async def body() -> tuple[int, int]:
        store = store_from(spec)
        await store.list()  # connected before the start
        await asyncio.sleep(max(start_at - time.time(), 0))
        try:
            return await turns(store, secret, count, **options)
        finally:
            await store.aclose()

    return asyncio.run(body())


def in_two_processes(
    spec: StoreSpec, secret: str, count: int, **options: Any
) -> list[tuple[int, int]]:
    """`turns_in_a_process` in two OS processes at once, each `count` turns."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        start_at = time.time() + 3  # time for both interpreters to start
        jobs = [
            pool.submit(turns_in_a_process, spec, secret, count, start_at, options)
            for _ in range(2)
        ]
        return [job.result(timeout=120) for job in jobs]


# --- the contract ---------------------------------------------------------------------------


def test_a_new_key_is_found_by_its_secret_id_and_name(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        record, secret = await store.create("alice", models=["claude"], rpm=60, now=1000.0)
        assert secret.reveal().startswith("msk-") and len(secret.reveal()) >= 36
        assert record.key_id.startswith("vk_") and len(record.key_id) == 15
        assert record.created_at == 1000.0
        assert await store.by_secret(secret.reveal()) == record
        assert await store.get(record.key_id) == record
        assert await store.get("alice") == record
        assert await store.by_secret(secret.reveal() + "x") is None
        assert await store.get("bob") is None
        assert [r.key_id for r in await store.list()] == [record.key_id]
        await store.aclose()

    run(body)


def test_names_are_unique_when_created_and_when_renamed(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        await store.create("alice")
        await store.create("bob")
        with pytest.raises(NameTakenError, match="a key named 'alice' exists already"):
            await store.create("alice")
        with pytest.raises(NameTakenError):
            await store.update("bob", name="alice")
        renamed = await store.update("bob", name="robert")
        assert await store.get("robert") == renamed
        assert await store.get("bob") is None
        await store.create("bob")  # the old name is free again
        await store.aclose()

    run(body)


def test_an_update_changes_the_fields_it_names_and_refuses_unknown_ones(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        record, _ = await store.create("alice", rpm=10, metadata={"team": "search"})
        changed = await store.update(
            record.key_id, rpm=None, tpm=5000, budget="2.50", budget_period="weekly"
        )
        assert (changed.rpm, changed.tpm, changed.budget) == (None, 5000, Decimal("2.50"))
        assert changed.budget_period == "weekly" and changed.metadata == {"team": "search"}
        assert await store.get(record.key_id) == changed
        with pytest.raises(KeyFieldError, match="unknown field 'limit'; the known fields are"):
            await store.update(record.key_id, limit=3)
        with pytest.raises(KeyFieldError, match="'rpm' must be a whole number"):
            await store.update(record.key_id, rpm=0)
        await store.aclose()

    run(body)


def test_a_revoked_key_is_refused_at_once_by_another_store_on_the_same_data(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        one, other = key_store_factory(), key_store_factory()
        record, secret = await one.create("alice")
        await admitted(Admission(other), secret.reveal())  # `other` has seen the key
        await one.revoke("alice")
        refusal = await refusal_of(admitted(Admission(other), secret.reveal()))
        assert refusal.status == 401 and refusal.error_type == "AuthenticationError"
        assert f"this key ('alice', {record.key_id}) was revoked at" in refusal.message
        assert secret.reveal() not in refusal.message
        await one.aclose()
        await other.aclose()

    run(body)


def test_an_expired_key_and_an_unknown_secret_are_401s_that_say_which(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        _, secret = await store.create("alice", expires_at="2030-01-01T00:00:00Z")
        admission = Admission(store)
        before = 1893456000.0 - 1  # a second before 2030
        await admitted(admission, secret.reveal(), now=before)
        expired = await refusal_of(admitted(admission, secret.reveal(), now=before + 1))
        assert expired.status == 401
        assert "expired at 2030-01-01 00:00 UTC" in expired.message
        unknown = await refusal_of(admitted(admission, "msk-not-a-key-of-this-server"))
        assert unknown.status == 401 and unknown.message.startswith("unknown API key")
        assert "msk-not-a-key" not in unknown.message
        await store.aclose()

    run(body)


def test_a_model_outside_the_keys_list_is_a_403_naming_the_allowed_ones(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        _, secret = await store.create("alice", models=["claude", "fast"])
        admission = Admission(store)
        await admitted(admission, secret.reveal(), "fast")
        refusal = await refusal_of(admitted(admission, secret.reveal(), "gpt-5"))
        assert refusal.status == 403
        assert "may not use the model 'gpt-5'; it may use: claude, fast" in refusal.message
        await store.aclose()

    run(body)


def test_rpm_admits_that_many_requests_per_minute_then_says_when_to_retry(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        _, secret = await store.create("alice", rpm=3)
        admission = Admission(store)
        for _ in range(3):
            await admitted(admission, secret.reveal(), now=MID_MINUTE)
        refusal = await refusal_of(admitted(admission, secret.reveal(), now=MID_MINUTE + 10))
        assert (refusal.status, refusal.error_type) == (429, "RateLimitError")
        assert refusal.headers["retry-after"] == "20" and refusal.fields["retry_after"] == 20
        assert "has made 3 requests in this minute, its limit (rpm = 3)" in refusal.message
        await admitted(admission, secret.reveal(), now=MID_MINUTE + 31)  # the next window
        await store.aclose()

    run(body)


def test_tpm_counts_the_estimate_then_the_tokens_the_turn_used(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        _, secret = await store.create("alice", tpm=1000)
        admission = Admission(store)
        first = await admission.admit(secret.reveal(), "claude", Decimal(0), 900, MID_MINUTE)
        await admission.settle(first, Decimal(0), input_tokens=100, output_tokens=50)
        # 150 used (not the 900 guessed), so 850 more fit under 1,000; then nothing does
        second = await admission.admit(secret.reveal(), "claude", Decimal(0), 850, MID_MINUTE)
        refusal = await refusal_of(
            admission.admit(secret.reveal(), "claude", Decimal(0), 10, MID_MINUTE)
        )
        assert "has used 1,000 tokens in this minute, its limit (tpm = 1000)" in refusal.message
        await admission.release(second)  # its 800 no longer count
        await admission.admit(secret.reveal(), "claude", Decimal(0), 10, MID_MINUTE)
        await store.aclose()

    run(body)


def test_a_turn_is_admitted_while_spent_plus_held_is_under_the_budget(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        _, secret = await store.create("alice", budget="1.00")
        admission = Admission(store)
        held = [await admitted(admission, secret.reveal(), estimate=Decimal("0.40")) for _ in "ab"]
        await admitted(admission, secret.reveal(), estimate=Decimal("0.40"))  # 0.80 < 1.00
        refusal = await refusal_of(admitted(admission, secret.reveal()))  # 1.20 held
        assert (refusal.status, refusal.error_type) == (429, "BudgetExceededError")
        assert "1.20 USD more is held by turns in flight" in refusal.message
        for ticket in held:
            await admission.settle(ticket, Decimal("0.10"))
        # 0.20 spent, 0.40 held: admitted again
        await admitted(admission, secret.reveal(), estimate=Decimal("0.40"))
        await store.aclose()

    run(body)


def test_a_turn_that_never_settles_stops_holding_budget_after_the_hold_time(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        _, secret = await store.create("alice", budget="1.00")
        admission = Admission(store, hold_seconds=120)
        await admitted(admission, secret.reveal(), now=MID_MINUTE)  # its process dies
        refused = await refusal_of(admitted(admission, secret.reveal(), now=MID_MINUTE + 119))
        assert refused.error_type == "BudgetExceededError"
        await admitted(admission, secret.reveal(), now=MID_MINUTE + 121)
        await store.aclose()

    run(body)


def test_a_spent_budget_names_spend_budget_and_reset_then_resets_with_its_period(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        created = 1_800_000_000.0  # 2027-01-15 08:00 UTC
        _, secret = await store.create("alice", budget="2.00", budget_period="daily", now=created)
        admission = Admission(store)
        ticket = await admitted(admission, secret.reveal(), now=created + 10)
        assert await admission.settle(ticket, Decimal("2.25"), now=created + 20) == Decimal("2.25")
        refusal = await refusal_of(admitted(admission, secret.reveal(), now=created + 3600))
        assert refusal.message.endswith(
            "has reached its budget of 2.00 USD this period (daily): 2.25 USD spent; it resets "
            "at 2027-01-16 08:00 UTC (in 23 h)"
        )
        assert refusal.headers["retry-after"] == str(86_400 - 3600)
        assert refusal.fields["spent"] == "2.25" and refusal.fields["budget"] == "2.00"
        await admitted(admission, secret.reveal(), now=created + 86_400)  # a new day
        await store.aclose()

    run(body)


def test_a_settled_ticket_is_charged_once(key_store_factory: KeyStoreFactory) -> None:
    async def body() -> None:
        store = key_store_factory()
        _, secret = await store.create("alice", budget="10.00")
        admission = Admission(store)
        ticket = await admitted(admission, secret.reveal())
        await admission.settle(ticket, Decimal("3.00"))
        await admission.settle(ticket, Decimal("3.00"))
        [total] = await store.spend()
        assert (total.cost, total.turns) == (Decimal("3.00"), 1)
        await store.aclose()

    run(body)


def test_spend_is_added_up_by_key_and_model_within_the_span(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        _, alice = await store.create("alice")
        _, bob = await store.create("bob")
        admission = Admission(store)
        for secret, model, cost, at in (
            (alice, "claude", "0.10", 1000.0),
            (alice, "claude", "0.0000015", 2000.0),
            (alice, "fast", "0.20", 2000.0),
            (bob, "claude", "1.00", 3000.0),
        ):
            ticket = await admitted(admission, secret.reveal(), model)
            await admission.settle(ticket, Decimal(cost), input_tokens=10, output_tokens=5, now=at)
        totals = {(t.key_name, t.served_model): t for t in await store.spend()}
        assert totals["alice", "claude"].cost == Decimal("0.1000015")
        assert totals["alice", "claude"].turns == 2
        assert totals["alice", "claude"].input_tokens == 20
        assert sorted(totals) == [("alice", "claude"), ("alice", "fast"), ("bob", "claude")]
        only = await store.spend(key="alice", model="claude", start=1500.0, end=2500.0)
        assert [(t.cost, t.turns) for t in only] == [(Decimal("0.0000015"), 1)]
        assert [t.key_name for t in await store.spend(start=2500.0)] == ["bob"]
        await store.aclose()

    run(body)


def test_200_concurrent_turns_with_exact_estimates_spend_exactly_the_budget(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> tuple[int, int, Decimal]:
        store = key_store_factory()
        _, secret = await store.create("alice", budget="50.00")
        one = Decimal("1.00")
        admitted, refused = await turns(store, secret.reveal(), 200, estimate=one, cost=one)
        [total] = await store.spend()
        await store.aclose()
        return admitted, refused, total.cost

    assert run(body) == (50, 150, Decimal("50.00"))


def test_200_concurrent_turns_that_cost_more_than_estimated_overshoot_by_at_most_those_in_flight(
    key_store_factory: KeyStoreFactory,
) -> None:
    in_flight, cost = 10, Decimal("1.00")

    async def body() -> Decimal:
        store = key_store_factory()
        _, secret = await store.create("alice", budget="50.00")
        await turns(
            store, secret.reveal(), 200, estimate=Decimal("0.25"), cost=cost, in_flight=in_flight
        )
        [total] = await store.spend()
        await store.aclose()
        return total.cost

    spent = run(body)
    assert Decimal(50) <= spent <= Decimal(50) + in_flight * cost


def test_no_repr_of_a_store_a_record_or_a_ticket_shows_the_secret(
    key_store_factory: KeyStoreFactory,
) -> None:
    async def body() -> None:
        store = key_store_factory()
        record, secret = await store.create("alice")
        ticket = await admitted(Admission(store), secret.reveal())
        shown = " ".join(map(repr, (store, record, ticket, secret, (record, secret))))
        assert secret.reveal() not in shown and secret.reveal()[4:] not in shown
        await store.aclose()

    run(body)
