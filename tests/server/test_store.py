"""The stream store contract (support/store_contract.py), run against every store kept in
memory: `store_factory` is parametrized by kind, so another such store joins by adding its factory
to `STORES`. server/test_redis.py runs the same contract against Redis."""

from __future__ import annotations

import pytest

from modelstream.server.stores import MemoryStore
from support.store_contract import StoreFactory, contract_tests

STORES: dict[str, StoreFactory] = {
    "memory": lambda max_events_per_stream=100, max_bytes=1 << 20: MemoryStore(
        max_events_per_stream=max_events_per_stream, max_bytes=max_bytes
    ),
}


@pytest.fixture(params=sorted(STORES))
def store_factory(request: pytest.FixtureRequest) -> StoreFactory:
    return STORES[request.param]


# Every test of the contract, collected here with this module's `store_factory`.
globals().update(contract_tests())
