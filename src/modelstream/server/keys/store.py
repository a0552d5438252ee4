"""`KeyStore`: the contract every store of virtual keys keeps (SQLite: sqlite.py, Redis:
redis.py), and the values that cross it.

Theory of operation. A store holds each key's record under its id, its name and the SHA-256 of
its secret (never the secret), and four kinds of counters, each changed only inside one atomic
step (an IMMEDIATE transaction, a Lua script), so several processes on one store count exactly:

- per key and budget period, the nano-units spent (money.py);
- per key, the holds of the turns in flight: `(period, estimate, tokens, minute)` by ticket,
  each with an expiry, so a turn whose process died stops holding budget after `hold_seconds`;
- per key and one-minute window, the requests and the tokens (estimated at `reserve`,
  corrected at `settle`);
- the spend rows, one per settled turn, which `spend` adds up.

`reserve` is the whole admission in one step: the key's checks (`turnaway_for_key`), then
`rpm` (requests < limit), `tpm` (tokens < limit) and the budget (spent + held < budget); only
when all pass does it count the request, the tokens and the hold. `settle` drops the hold and
adds the charge, once per ticket (a settle sent twice charges once).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from ...auth.secret import Secret
from .records import KeyFieldError, KeyRecord, checked_fields
from .secrets import KEY_ID_PREFIX, new_key_id, new_secret, secret_hash

Reason = Literal["unknown", "revoked", "expired", "model", "rpm", "tpm", "budget"]
DEFAULT_HOLD_SECONDS = 600.0  # how long an unsettled turn holds its estimate


class KeyNotFoundError(LookupError):
    """No key has this id or name."""

    def __init__(self, key: str) -> None:
        super().__init__(f"no key has the id or name {key!r}; `modelstream keys list` lists them")
        self.key = key


class NameTakenError(KeyFieldError):
    """Another key has this name already."""

    def __init__(self, name: str) -> None:
        super().__init__(f"a key named {name!r} exists already; names are unique")
        self.name = name


@dataclass(frozen=True)
class Ticket:
    """An admitted turn: what `settle` needs to charge it and to free what it holds."""

    ticket_id: str
    key_id: str
    key_name: str
    served_model: str
    currency: str
    period_start: int  # the budget period it is charged to (windows.budget_window)
    period_end: int | None  # when that period ends (None: never)
    minute: int  # the rate window it was counted in (windows.minute_window)
    estimate_units: int  # nano-units held until it settles
    tokens_estimate: int
    admitted_at: float


@dataclass(frozen=True)
class Turnaway:
    """Why `reserve` did not admit a turn, with the facts its refusal states: for `rpm` and
    `tpm` the requests or tokens counted in the window (`used`) and its end; for `budget` the
    nano-units spent in the period (`used`), those held by turns in flight (`held`) and the
    period's end (None: it never resets)."""

    reason: Reason
    record: KeyRecord | None = None
    used: int = 0
    held: int = 0
    window_end: float | None = None


@dataclass(frozen=True)
class SpendRow:
    """One settled turn. `basis` says how its cost was known: `priced` (the catalogue's price
    of its usage), `rate` (the configured fallback rate per 1,000 tokens) or `estimate` (the
    amount held at admission, when neither was known)."""

    ticket_id: str
    key_id: str
    key_name: str
    served_model: str
    cost: Decimal
    currency: str
    basis: str
    input_tokens: int | None
    output_tokens: int | None
    at: float


@dataclass(frozen=True)
class SpendTotal:
    """The spend of one key on one served model over a report's span."""

    key_id: str
    key_name: str
    served_model: str
    currency: str
    cost: Decimal
    turns: int
    input_tokens: int
    output_tokens: int

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "cost": str(self.cost)}


# the method `KeyStore.list` hides the builtin inside the class: its later annotations use these
SpendRows = list[SpendRow]
SpendTotals = list[SpendTotal]


def turnaway_for_key(record: KeyRecord | None, served_model: str, now: float) -> Turnaway | None:
    """The refusals that depend on the record alone: unknown, revoked, expired, model."""
    if record is None:
        return Turnaway("unknown")
    status = record.status(now)
    if status != "active":
        return Turnaway("revoked" if status == "revoked" else "expired", record)
    if not record.allows(served_model):
        return Turnaway("model", record)
    return None


def add_spend(rows: list[SpendRow]) -> list[SpendTotal]:
    """Rows added up by key and served model, in the order of key name then model."""
    totals: dict[tuple[str, str], list[Any]] = {}
    for row in rows:
        slot = totals.setdefault(
            (row.key_id, row.served_model), [row.key_name, row.currency, Decimal(0), 0, 0, 0]
        )
        slot[0] = row.key_name  # the latest name, if the key was renamed
        slot[2] += row.cost
        slot[3] += 1
        slot[4] += row.input_tokens or 0
        slot[5] += row.output_tokens or 0
    found = [
        SpendTotal(key_id, name, model, currency, cost, turns, tokens_in, tokens_out)
        for (key_id, model), (name, currency, cost, turns, tokens_in, tokens_out) in totals.items()
    ]
    return sorted(found, key=lambda total: (total.key_name, total.served_model))


class KeyStore(ABC):
    """Virtual keys and their counters (module docstring). Every method is atomic on its own."""

    async def create(
        self, name: str, /, *, now: float | None = None, **fields: Any
    ) -> tuple[KeyRecord, Secret]:
        """A new key and its secret: the only time the secret exists outside the caller's
        hands. `fields` are the record's (records.CREATABLE); raises `KeyFieldError`."""
        checked = checked_fields({"name": name, **fields}, creating=True)
        record = KeyRecord(
            key_id=new_key_id(), created_at=time.time() if now is None else now, **checked
        )
        secret = new_secret()
        await self._insert(record, secret_hash(secret.reveal()))
        return record, secret

    async def by_secret(self, secret: str) -> KeyRecord | None:
        return await self._by_hash(secret_hash(secret))

    async def get(self, key: str) -> KeyRecord | None:
        """The key with this id (`vk_...`) or, else, this name."""
        return await self._by_id(key) if key.startswith(KEY_ID_PREFIX) else await self._by_name(key)

    async def update(self, key: str, /, **changes: Any) -> KeyRecord:
        """The key with `changes` applied (records.CHANGEABLE); raises `KeyFieldError`,
        `NameTakenError`, `KeyNotFoundError`."""
        checked = checked_fields(changes, creating=False)
        return await self._change(await self._id_of(key), lambda record: record.changed(checked))

    async def revoke(self, key: str, *, now: float | None = None) -> KeyRecord:
        """Refuse the key from now on, on every process that shares the store (a revoked key
        stays listed, with its spend)."""
        at = time.time() if now is None else now

        def revoked(record: KeyRecord) -> KeyRecord:
            return record if record.revoked_at is not None else record.changed({"revoked_at": at})

        return await self._change(await self._id_of(key), revoked)

    async def _id_of(self, key: str) -> str:
        record = await self.get(key)
        if record is None:
            raise KeyNotFoundError(key)
        return record.key_id

    @abstractmethod
    async def list(self) -> list[KeyRecord]:
        """Every key, revoked and expired ones too, oldest first."""

    @abstractmethod
    async def reserve(
        self,
        secret: str,
        served_model: str,
        estimate_units: int,
        tokens_estimate: int,
        now: float,
        hold_seconds: float = DEFAULT_HOLD_SECONDS,
    ) -> Ticket | Turnaway:
        """Admit a turn or say why not, in one atomic step (module docstring)."""

    @abstractmethod
    async def settle(self, ticket: Ticket, row: SpendRow, tokens: int) -> bool:
        """Drop the ticket's hold, charge `row.cost`, count `tokens` for the ticket's window
        instead of its estimate, append `row`; False when the ticket was settled already."""

    @abstractmethod
    async def release(self, ticket: Ticket) -> None:
        """Drop the hold of a turn that never reached a provider, charging nothing."""

    @abstractmethod
    async def spend_rows(
        self, key_id: str | None, start: float | None, end: float | None
    ) -> SpendRows:
        """The spend rows of one key (or all) settled in `[start, end)`."""

    async def spend(
        self,
        key: str | None = None,
        model: str | None = None,
        start: float | None = None,
        end: float | None = None,
    ) -> SpendTotals:
        """Spend settled in `[start, end)`, by key and served model; `key` an id or a name."""
        key_id = await self._id_of(key) if key is not None else None
        rows = await self.spend_rows(key_id, start, end)
        return add_spend([row for row in rows if model is None or row.served_model == model])

    @abstractmethod
    async def aclose(self) -> None: ...

    # --- what each store implements ---------------------------------------------------------

    @abstractmethod
    async def _insert(self, record: KeyRecord, hashed: str) -> None:
        """Store a new record under its id, name and hash; `NameTakenError` if the name is."""

    @abstractmethod
    async def _by_hash(self, hashed: str) -> KeyRecord | None: ...

    @abstractmethod
    async def _by_id(self, key_id: str) -> KeyRecord | None: ...

    @abstractmethod
    async def _by_name(self, name: str) -> KeyRecord | None: ...

    @abstractmethod
    async def _change(self, key_id: str, change: Callable[[KeyRecord], KeyRecord]) -> KeyRecord:
        """Replace a record by `change(record)` atomically (a new name checked unique)."""
