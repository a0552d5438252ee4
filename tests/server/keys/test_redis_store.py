"""`RedisKeyStore` on a real redis-server: the key store contract, a secret that never reaches
Redis, and exact budgets and rate limits with two OS processes on one Redis."""

from __future__ import annotations

from decimal import Decimal

import pytest
import redis

from modelstream.server.keys import Admission, KeyStore
from modelstream.server.keys.redis import RedisKeyStore
from modelstream.server.keys.secrets import secret_hash
from support.keys import (
    MID_MINUTE,
    KeyStoreFactory,
    admitted,
    contract_tests,
    in_two_processes,
    run,
)

globals().update(contract_tests())


@pytest.fixture
def key_store_factory(redis_url: str, prefix: str) -> KeyStoreFactory:
    return lambda: RedisKeyStore.from_url(redis_url, prefix=prefix)


def everything_under(redis_url: str, prefix: str) -> bytes:
    """Every key name and value under `prefix`, as one blob of bytes."""
    blob = []
    with redis.Redis.from_url(redis_url) as client:
        for key in client.scan_iter(match=prefix + "*"):
            blob.append(key)
            kind = client.type(key)
            if kind == b"string":
                blob.append(client.get(key))
            elif kind == b"hash":
                blob += [part for pair in client.hgetall(key).items() for part in pair]
            elif kind == b"zset":
                blob += [member for member, _ in client.zrange(key, 0, -1, withscores=True)]
            elif kind == b"stream":
                blob += [value for _, fields in client.xrange(key) for value in fields.values()]
            elif kind == b"set":
                blob += list(client.smembers(key))
    return b"\n".join(blob)


def test_redis_holds_the_secrets_hash_and_never_the_secret(redis_url: str, prefix: str) -> None:
    async def body() -> str:
        store = RedisKeyStore.from_url(redis_url, prefix=prefix)
        _, secret = await store.create("alice", budget="5.00", rpm=5)
        admission = Admission(store)
        ticket = await admitted(admission, secret.reveal())
        await admission.settle(ticket, Decimal("0.01"))
        await admitted(admission, secret.reveal())  # one still held
        await store.aclose()
        return secret.reveal()

    secret = run(body)
    stored = everything_under(redis_url, prefix)
    assert secret_hash(secret).encode() in stored
    assert secret.encode() not in stored and secret[4:].encode() not in stored


def test_two_processes_on_one_redis_spend_exactly_the_budget(redis_url: str, prefix: str) -> None:
    secret = run(lambda: created(RedisKeyStore.from_url(redis_url, prefix=prefix), budget="50.00"))
    one = Decimal("1.00")
    results = in_two_processes(("redis", redis_url, prefix), secret, 100, estimate=one, cost=one)
    assert sum(admitted for admitted, _ in results) == 50
    assert all(admitted > 0 for admitted, _ in results)
    assert run(lambda: total_spent(RedisKeyStore.from_url(redis_url, prefix=prefix))) == Decimal(
        "50.00"
    )


def test_two_processes_on_one_redis_overshoot_by_at_most_the_turns_in_flight(
    redis_url: str, prefix: str
) -> None:
    secret = run(lambda: created(RedisKeyStore.from_url(redis_url, prefix=prefix), budget="50.00"))
    options = {"estimate": Decimal("0.25"), "cost": Decimal("1.00"), "in_flight": 5}
    in_two_processes(("redis", redis_url, prefix), secret, 100, **options)
    spent = run(lambda: total_spent(RedisKeyStore.from_url(redis_url, prefix=prefix)))
    assert Decimal(50) <= spent <= Decimal(50) + 2 * 5 * Decimal("1.00")


def test_two_processes_on_one_redis_admit_exactly_rpm_requests_in_a_window(
    redis_url: str, prefix: str
) -> None:
    secret = run(lambda: created(RedisKeyStore.from_url(redis_url, prefix=prefix), rpm=20))
    zero = Decimal(0)
    results = in_two_processes(
        ("redis", redis_url, prefix), secret, 30, estimate=zero, cost=zero, now=MID_MINUTE
    )
    assert sum(admitted for admitted, _ in results) == 20
    assert sum(refused for _, refused in results) == 40


async def created(store: KeyStore, **fields: object) -> str:
    _, secret = await store.create("alice", **fields)
    await store.aclose()
    return secret.reveal()


async def total_spent(store: KeyStore) -> Decimal:
    [total] = await store.spend()
    await store.aclose()
    return total.cost
