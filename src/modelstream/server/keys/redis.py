"""`RedisKeyStore`: virtual keys and their counters in Redis, shared exactly by every server
process that points at it.

Keys under the prefix (default `modelstream:keys:`); none holds a secret, only its SHA-256:

    id:<key_id>               hash   r (the record's JSON), v (its version), n (its name)
    hash:<sha256>, name:<n>   string the key id (lookup by secret, by name)
    ids                       zset   key id -> created_at (the listing's order)
    spent:<key_id>:<period>   string nano-units spent in a budget period (money.py)
    held:<key_id>             zset   ticket -> until (ms): the holds of turns in flight...
    holds:<key_id>            hash   ticket -> "period units tokens minute": ...and their sizes
    win:<key_id>:<minute>     hash   n (requests), t (tokens) of a rate window; expires
    settled:<ticket>          string a settled ticket, for a day: a settle replayed charges once
    spend                     stream one entry per settled turn, its row as JSON

Each atomic step is one Lua script. `reserve` reads the record first (its JSON is parsed and
its checks run in Python, store.turnaway_for_key), then runs the admission script with the
record's version: a record changed in between (revoked, a limit lowered) answers `stale` and
`reserve` starts again, so the script counts against the record as it is when it runs. Lua's
numbers are doubles: the counters stay below 2⁵³ (money.MAX_BUDGET), where doubles are exact.
Needs a standalone Redis ≥ 6.2, not Redis Cluster (a script builds its keys from the prefix).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Self

import orjson
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import EqualJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .money import to_units
from .records import KeyRecord
from .secrets import new_ticket_id, secret_hash
from .store import (
    DEFAULT_HOLD_SECONDS,
    KeyNotFoundError,
    KeyStore,
    NameTakenError,
    SpendRow,
    SpendRows,
    Ticket,
    Turnaway,
    turnaway_for_key,
)
from .windows import MINUTE, budget_window, minute_window

DEFAULT_PREFIX = "modelstream:keys:"
RETRIES = 3
MAX_CONNECTIONS = 16  # per store: admissions queue for a connection past it
POOL_WAIT_SECONDS = 10.0
WINDOW_TTL_SECONDS = 3 * MINUTE  # a rate window's counts outlive it long enough to settle
SPENT_KEPT_SECONDS = 35 * 86_400  # a finished period's total, kept past its end
SETTLED_TTL_SECONDS = 86_400
SPEND_PAGE = 1000

_INSERT = """
local P, id, hash, name = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.call('EXISTS', P .. 'name:' .. name) == 1 then return 'taken' end
redis.call('SET', P .. 'name:' .. name, id)
redis.call('SET', P .. 'hash:' .. hash, id)
redis.call('HSET', P .. 'id:' .. id, 'r', ARGV[5], 'v', 1, 'n', name)
redis.call('ZADD', P .. 'ids', ARGV[6], id)
return 'ok'
"""

_CHANGE = """
local P, id, version, new_name = ARGV[1], ARGV[2], ARGV[3], ARGV[5]
local rec = P .. 'id:' .. id
local current = redis.call('HMGET', rec, 'v', 'n')
if not current[1] then return 'gone' end
if current[1] ~= version then return 'stale' end
if current[2] ~= new_name then
  if redis.call('EXISTS', P .. 'name:' .. new_name) == 1 then return 'taken' end
  redis.call('DEL', P .. 'name:' .. current[2])
  redis.call('SET', P .. 'name:' .. new_name, id)
end
redis.call('HSET', rec, 'r', ARGV[4], 'v', tonumber(version) + 1, 'n', new_name)
return 'ok'
"""

# ARGV: prefix, key id, version, rpm, tpm, budget units ('' for none), period, minute,
# estimate units, tokens, ticket, hold until (ms), now (ms), hold keys' ttl (ms)
_RESERVE = """
local P, id = ARGV[1], ARGV[2]
if redis.call('HGET', P .. 'id:' .. id, 'v') ~= ARGV[3] then return {'stale'} end
local rpm, tpm, budget = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local period, minute, ticket = ARGV[7], ARGV[8], ARGV[11]
local held, holds = P .. 'held:' .. id, P .. 'holds:' .. id
if redis.call('HEXISTS', holds, ticket) == 1 then return {'ok'} end  -- a replayed call
local win = P .. 'win:' .. id .. ':' .. minute
local counts = redis.call('HMGET', win, 'n', 't')
local requests, tokens = tonumber(counts[1]) or 0, tonumber(counts[2]) or 0
if rpm and requests >= rpm then return {'rpm', requests} end
if tpm and tokens >= tpm then return {'tpm', tokens} end
local lapsed = redis.call('ZRANGEBYSCORE', held, '-inf', ARGV[13])
if #lapsed > 0 then
  redis.call('HDEL', holds, unpack(lapsed))
  redis.call('ZREMRANGEBYSCORE', held, '-inf', ARGV[13])
end
if budget then
  local spent = tonumber(redis.call('GET', P .. 'spent:' .. id .. ':' .. period)) or 0
  local reserved = 0
  for _, hold in ipairs(redis.call('HVALS', holds)) do
    local p, units = string.match(hold, '^(%S+) (%S+)')
    if p == period then reserved = reserved + tonumber(units) end
  end
  if spent + reserved >= budget then return {'budget', spent, reserved} end
end
redis.call('HINCRBY', win, 'n', 1)
redis.call('HINCRBY', win, 't', ARGV[10])
redis.call('EXPIRE', win, WINDOW_TTL)
redis.call('ZADD', held, ARGV[12], ticket)
redis.call('HSET', holds, ticket, period .. ' ' .. ARGV[9] .. ' ' .. ARGV[10] .. ' ' .. minute)
redis.call('PEXPIRE', held, ARGV[14])
redis.call('PEXPIRE', holds, ARGV[14])
return {'ok'}
""".replace("WINDOW_TTL", str(WINDOW_TTL_SECONDS))

_CORRECT_TOKENS = """
local function correct_tokens(win, delta)
  if delta ~= 0 and redis.call('EXISTS', win) == 1 then
    if redis.call('HINCRBY', win, 't', delta) < 0 then redis.call('HSET', win, 't', 0) end
  end
end
"""

# ARGV: prefix, key id, ticket, period, minute, charge units, token delta, spent ttl ('' none),
# the row's JSON
_SETTLE = (
    _CORRECT_TOKENS
    + """
local P, id, ticket = ARGV[1], ARGV[2], ARGV[3]
if not redis.call('SET', P .. 'settled:' .. ticket, 1, 'NX', 'EX', SETTLED_TTL) then
  return 0
end
redis.call('ZREM', P .. 'held:' .. id, ticket)
redis.call('HDEL', P .. 'holds:' .. id, ticket)
local spent = P .. 'spent:' .. id .. ':' .. ARGV[4]
redis.call('INCRBY', spent, ARGV[6])
if ARGV[8] ~= '' then redis.call('EXPIRE', spent, ARGV[8]) end
correct_tokens(P .. 'win:' .. id .. ':' .. ARGV[5], tonumber(ARGV[7]))
redis.call('XADD', P .. 'spend', '*', 'row', ARGV[9])
return 1
""".replace("SETTLED_TTL", str(SETTLED_TTL_SECONDS))
)

# ARGV: prefix, key id, ticket, minute, tokens estimate
_RELEASE = (
    _CORRECT_TOKENS
    + """
local P, id, ticket = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HDEL', P .. 'holds:' .. id, ticket) == 1 then
  redis.call('ZREM', P .. 'held:' .. id, ticket)
  correct_tokens(P .. 'win:' .. id .. ':' .. ARGV[4], -tonumber(ARGV[5]))
end
return 1
"""
)


class RedisKeyStore(KeyStore):
    """The keys in the Redis that `client` talks to, under `prefix` (module docstring). The
    client must return bytes (`decode_responses=False`, redis-py's default)."""

    def __init__(
        self, client: aioredis.Redis, *, prefix: str = DEFAULT_PREFIX, owns_client: bool = False
    ) -> None:
        self.prefix = prefix
        self._client = client
        self._owns_client = owns_client
        self._insert_script = client.register_script(_INSERT)
        self._change_script = client.register_script(_CHANGE)
        self._reserve_script = client.register_script(_RESERVE)
        self._settle_script = client.register_script(_SETTLE)
        self._release_script = client.register_script(_RELEASE)

    @classmethod
    def from_url(cls, url: str, *, prefix: str = DEFAULT_PREFIX) -> Self:
        """A store on a connection pool of its own, of at most `MAX_CONNECTIONS`: a command
        waits for a free connection rather than failing. A command whose connection broke is
        sent again (up to 3 times): every script is safe to run twice."""
        retry = Retry(EqualJitterBackoff(cap=0.5, base=0.05), RETRIES)
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=MAX_CONNECTIONS,
            timeout=POOL_WAIT_SECONDS,
            retry=retry,
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
        )
        return cls(aioredis.Redis.from_pool(pool), prefix=prefix, owns_client=True)

    def __repr__(self) -> str:
        return f"RedisKeyStore(prefix={self.prefix!r})"

    # --- the contract -----------------------------------------------------------------------

    async def list(self) -> list[KeyRecord]:
        ids = await self._client.zrange(self.prefix + "ids", 0, -1)
        if not ids:
            return []
        async with self._client.pipeline(transaction=False) as pipe:
            for key_id in ids:
                pipe.hget(self.prefix + "id:" + _text(key_id), "r")
            found = await pipe.execute()
        return [_record(raw) for raw in found if raw is not None]

    async def reserve(
        self,
        secret: str,
        served_model: str,
        estimate_units: int,
        tokens_estimate: int,
        now: float,
        hold_seconds: float = DEFAULT_HOLD_SECONDS,
    ) -> Ticket | Turnaway:
        hashed = secret_hash(secret)
        ticket_id = new_ticket_id()
        while True:
            key_id = await self._id_under("hash:" + hashed)
            found = await self._versioned(key_id) if key_id else None
            record = found[0] if found else None
            turned = turnaway_for_key(record, served_model, now)
            if turned is not None:
                return turned
            assert found is not None and record is not None
            minute, minute_end = minute_window(now)
            period_start, period_end = budget_window(record.budget_period, record.created_at, now)
            reply = await self._reserve_script(
                args=[
                    self.prefix,
                    record.key_id,
                    found[1],
                    _optional(record.rpm),
                    _optional(record.tpm),
                    "" if record.budget is None else to_units(record.budget),
                    period_start,
                    minute,
                    estimate_units,
                    tokens_estimate,
                    ticket_id,
                    math.ceil((now + hold_seconds) * 1000),
                    math.floor(now * 1000),
                    math.ceil(hold_seconds * 2000),
                ]
            )
            verdict = reply[0].decode()
            if verdict == "stale":
                continue  # the record changed since we read it: check it again
            if verdict == "rpm" or verdict == "tpm":
                return Turnaway(verdict, record, int(reply[1]), window_end=minute_end)
            if verdict == "budget":
                return Turnaway("budget", record, int(reply[1]), int(reply[2]), period_end)
            return Ticket(
                ticket_id=ticket_id,
                key_id=record.key_id,
                key_name=record.name,
                served_model=served_model,
                currency=record.currency,
                period_start=period_start,
                period_end=period_end,
                minute=minute,
                estimate_units=estimate_units,
                tokens_estimate=tokens_estimate,
                admitted_at=now,
            )

    async def settle(self, ticket: Ticket, row: SpendRow, tokens: int) -> bool:
        keep = ""  # a budget that never resets keeps its total for good
        if ticket.period_end is not None:
            keep = str(max(int(ticket.period_end - row.at), 0) + SPENT_KEPT_SECONDS)
        reply = await self._settle_script(
            args=[
                self.prefix,
                ticket.key_id,
                ticket.ticket_id,
                ticket.period_start,
                ticket.minute,
                to_units(row.cost),
                tokens - ticket.tokens_estimate,
                keep,
                orjson.dumps(_row_json(row)),
            ]
        )
        return bool(reply)

    async def release(self, ticket: Ticket) -> None:
        await self._release_script(
            args=[
                self.prefix,
                ticket.key_id,
                ticket.ticket_id,
                ticket.minute,
                ticket.tokens_estimate,
            ]
        )

    async def spend_rows(
        self, key_id: str | None, start: float | None, end: float | None
    ) -> SpendRows:
        rows: SpendRows = []
        after = "-"
        while True:
            page = await self._client.xrange(self.prefix + "spend", after, "+", count=SPEND_PAGE)
            page = page or []
            for _, fields in page:
                row = _row(orjson.loads((fields or {})[b"row"]))
                if (
                    (key_id is None or row.key_id == key_id)
                    and (start is None or row.at >= start)
                    and (end is None or row.at < end)
                ):
                    rows.append(row)
            if len(page) < SPEND_PAGE:
                return rows
            after = "(" + _text(page[-1][0])

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    # --- records ----------------------------------------------------------------------------

    async def _insert(self, record: KeyRecord, hashed: str) -> None:
        reply = await self._insert_script(
            args=[
                self.prefix,
                record.key_id,
                hashed,
                record.name,
                orjson.dumps(record.to_json()),
                record.created_at,
            ]
        )
        if reply == b"taken":
            raise NameTakenError(record.name)

    async def _by_hash(self, hashed: str) -> KeyRecord | None:
        key_id = await self._id_under("hash:" + hashed)
        return await self._by_id(key_id) if key_id else None

    async def _by_id(self, key_id: str) -> KeyRecord | None:
        raw = await self._client.hget(self.prefix + "id:" + key_id, "r")
        return _record(raw) if raw is not None else None

    async def _by_name(self, name: str) -> KeyRecord | None:
        key_id = await self._id_under("name:" + name)
        return await self._by_id(key_id) if key_id else None

    async def _change(self, key_id: str, change: Callable[[KeyRecord], KeyRecord]) -> KeyRecord:
        while True:
            found = await self._versioned(key_id)
            if found is None:
                raise KeyNotFoundError(key_id)
            record, version = found
            changed = change(record)
            reply = await self._change_script(
                args=[
                    self.prefix,
                    key_id,
                    version,
                    orjson.dumps(changed.to_json()),
                    changed.name,
                ]
            )
            if reply == b"ok":
                return changed
            if reply == b"taken":
                raise NameTakenError(changed.name)
            if reply == b"gone":
                raise KeyNotFoundError(key_id)
            # stale: changed by another process since we read it; apply ours to theirs

    async def _versioned(self, key_id: str) -> tuple[KeyRecord, str] | None:
        raw, version = await self._client.hmget(self.prefix + "id:" + key_id, ["r", "v"])
        if raw is None or version is None:
            return None
        return _record(raw), _text(version)

    async def _id_under(self, lookup: str) -> str | None:
        """The key id stored under `hash:<sha256>` or `name:<name>`."""
        key_id = await self._client.get(self.prefix + lookup)
        return None if key_id is None else _text(key_id)


def _optional(limit: int | None) -> str | int:
    return "" if limit is None else limit


def _text(value: object) -> str:
    """A reply's bytes as text (the client returns bytes)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _record(raw: bytes | str) -> KeyRecord:
    return KeyRecord.from_json(orjson.loads(raw))


def _row_json(row: SpendRow) -> dict[str, Any]:
    return {**row.__dict__, "cost": str(row.cost)}


def _row(data: dict[str, Any]) -> SpendRow:
    return SpendRow(**{**data, "cost": Decimal(data["cost"])})
