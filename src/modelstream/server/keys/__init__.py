"""Virtual keys (docs/keys.md): per-person keys with their own models, rate limits and a budget
in money, stored hashed, and the admission of each turn against them.

    store = SQLiteKeyStore()                      # or RedisKeyStore.from_url(url)
    record, secret = await store.create("alice", models=["claude"], budget="10.00")
    admission = Admission(store)
    ticket = await admission.admit(secret.reveal(), "claude", Decimal("0.02"), 2000)
    ...                                           # the turn runs
    await admission.settle(ticket, cost, input_tokens=..., output_tokens=...)

The modules, one job each: `records` (the record and its fields' rules), `secrets` (the secret
and its hash), `money` (exact amounts), `windows` (rate windows, budget periods), `times`
(dates and durations as written), `store` (the contract), `sqlite` and `redis` (the stores),
`refusals` (what a refused turn is told), `admission` (admit, settle), `command`
(`modelstream keys`). `RedisKeyStore` needs the `redis` package (the `server` extra) and is
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .admission import Admission, UnknownCostPolicy
from .records import KeyFieldError, KeyRecord
from .sqlite import SQLiteKeyStore, default_path
from .store import (
    KeyNotFoundError,
    KeyStore,
    NameTakenError,
    SpendRow,
    SpendTotal,
    Ticket,
    Turnaway,
)

if TYPE_CHECKING:
    from .redis import RedisKeyStore


def __getattr__(name: str) -> Any:
    if name == "RedisKeyStore":
        from .redis import RedisKeyStore

        return RedisKeyStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Admission",
    "KeyFieldError",
    "KeyNotFoundError",
    "KeyRecord",
    "KeyStore",
    "NameTakenError",
    "RedisKeyStore",
    "SQLiteKeyStore",
    "SpendRow",
    "SpendTotal",
    "Ticket",
    "Turnaway",
    "UnknownCostPolicy",
    "default_path",
]
