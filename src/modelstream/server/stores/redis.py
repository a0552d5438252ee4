"""`RedisStore`: the stream log in Redis, shared by every server instance that points at it, so
that a resume can reach any instance behind a load balancer.

Theory of operation. Each stream is three keys under `{prefix}s:{response_id}`:

    :meta     hash     seq (last entry), done (0/1), left (ms: when the last reader left),
                       kept (1 once `expire` set the retention), owner (the hash of the key
                       that started the stream, never the key), lease (ms: until when the
                       producer is known to live)
    :events   stream   entry `<seq>-0` {d: data} per event; `<last>-1` {end: 1} marks finished
    :readers  zset     reader token -> lease end (ms), one member per open `read` iterator

A stream's name (`name_stream`: a conversation's last stream) is `{prefix}n:<name>`, a string
holding its response id, expiring with the name. Four keys under `{prefix}g:` are shared by all
streams: `bytes` (the total counted against
`max_bytes`), `sizes` (hash: bytes per stream), `finished` (zset by finish time: eviction order)
and `expiry` (zset by expiry time). Every operation is one op of the store's Lua script, so
the seq check, the caps and the accounting are atomic across processes, and every time is
Redis's `TIME`, so instances with skewed clocks agree.

The number of Redis connections does not grow with the number of streams (redis_io.py): the ops
of all streams queued in one event-loop tick go to Redis as one script call (appends and
heartbeats of a thousand streams: one round trip), and all the readers of a store wait in one
shared `XREAD BLOCK` over their streams' `:events`, each after its own cursor; the finished
marker's id sorts after the last entry, so a finish wakes them like an append does.
`append_many` stores a batch of consecutive entries in one op: all of them, or none.

Retention is Redis's own `PEXPIRE` on the three keys (exact: `exists` never sees a stream past
its time), mirrored in `g:expiry` so that the byte total is corrected lazily on the next
`create` or full `append`, as `MemoryStore` does. A running stream's keys expire too, at most
`orphan_seconds` after its producer's last append or `unread_seconds` (the relay asks every
second): a stream whose server died is forgotten, and its readers get `UnknownStreamError`
instead of waiting forever.

The producer holds a lease too, in `:meta`: `create`, every `append` and every `heartbeat`
(the relay sends one each second) extend it by `producer_lease_seconds`. A producer whose server
died, or that lost Redis mid-stream and could not finish its stream, stops renewing it; if Redis
then still has the stream (it came back with its data), a reader that finds the lease lapsed,
and keeps finding it so for half a lease more, at least 2 s (time for a live producer to renew
after an outage), raises `ProducerLostError` instead of waiting `orphan_seconds` on keep-alives,
and `finish_orphaned` ends the stream for every reader, atomically with the lapse.

A reader is attached while its lease is in `:readers`: `read` adds one, a task of this store
refreshes every open lease each `reader_lease_seconds / 3`, and leaving removes it and stamps
`left`. A reader whose process died stops refreshing; its lease lapses and counts as the time
it left. Hence `unread_seconds` answers the same in every process.

`from_url`'s client sends a command again when its connection broke before the reply came, so
a script call may run twice: an append of the entries just stored, with the same data, is
taken as that replay and succeeds once (any other repeat is still a `ValueError`), and `create`
of an existing empty running stream succeeds; the other ops are idempotent as they stand.

Needs a standalone Redis ≥ 6.2 (or one behind Sentinel), not Redis Cluster: one script call
touches many streams' keys. Use from one event loop per store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncGenerator, Coroutine, Iterator, Sequence
from typing import Any, Self
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import EqualJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..logs import stream_ref
from .base import (
    Entry,
    ProducerLostError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
    StreamStore,
    StreamTooLongError,
    UnknownStreamError,
)
from .memory import DEFAULT_MAX_BYTES, DEFAULT_MAX_EVENTS_PER_STREAM, ENTRY_OVERHEAD, MAX_BATCH
from .redis_io import Follower, OpBatcher, RawEntry

log = logging.getLogger("modelstream.server")

DEFAULT_PREFIX = "modelstream:"
DEFAULT_READER_LEASE_SECONDS = 10.0
DEFAULT_ORPHAN_SECONDS = 300.0
DEFAULT_PRODUCER_LEASE_SECONDS = 5.0
LAPSE_CONFIRM_SECONDS = 2.0  # at least this long (module docstring)
CHECK_SECONDS = 2.0  # how long /healthz waits for Redis to answer PING
# longest single XREAD BLOCK: below redis-py's default socket timeout (5 s), and how often an
# idle reader checks that its stream still exists
MAX_BLOCK_SECONDS = 1.0
RETRIES = 3  # sends again of a command whose connection broke (from_url's client)

# The one script of a store (OpBatcher in redis_io.py runs it): ARGV[1] prefix, [2] max events
# per stream, [3] max bytes, [4] bytes a new stream needs free, [5] orphan ms, [6] producer
# lease ms, [7] reader lease ms; then ops, each `code, response id, n, <n args>`. It answers
# one line per op, in order, of words separated by spaces, all in one string (RESP arrays cost
# far more to parse than bytes.split); an op that raised answers 'error <message>'. Keys are
# built from the prefix (other streams' too, when evicting), hence no Redis Cluster.
_SCRIPT = (
    f"local OVERHEAD = {ENTRY_OVERHEAD}\n"
    + """
local prefix = ARGV[1]
local MAX_EVENTS, MAX_BYTES, NEW_BYTES = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ORPHAN, LEASE, READER_LEASE = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local BYTES, SIZES = prefix .. 'g:bytes', prefix .. 'g:sizes'
local FINISHED, EXPIRY = prefix .. 'g:finished', prefix .. 'g:expiry'
local t = redis.call('TIME')
local NOW = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- the stream the current op is about
local rid, META, EVENTS, READERS

local function use(id)
  rid = id
  local base = prefix .. 's:' .. id
  META, EVENTS, READERS = base .. ':meta', base .. ':events', base .. ':readers'
end

local function bytes()
  return tonumber(redis.call('GET', BYTES) or '0')
end

local function drop(id)
  local base = prefix .. 's:' .. id
  redis.call('DEL', base .. ':meta', base .. ':events', base .. ':readers')
  local size = tonumber(redis.call('HGET', SIZES, id) or '0')
  if size ~= 0 then redis.call('DECRBY', BYTES, size) end
  redis.call('HDEL', SIZES, id)
  redis.call('ZREM', FINISHED, id)
  redis.call('ZREM', EXPIRY, id)
end

-- forget the streams whose retention (or orphan time) ended
local function sweep()
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', EXPIRY, '-inf', NOW, 'LIMIT', 0, 256)) do
    drop(id)
  end
end

-- drop the oldest finished streams until `need` more bytes fit; false if they don't
local function evict(need)
  while bytes() + need > MAX_BYTES do
    local oldest = redis.call('ZRANGE', FINISHED, 0, 0)
    if #oldest == 0 then return false end
    drop(oldest[1])
  end
  return true
end

-- keep this stream for `ms` more
local function touch(ms)
  redis.call('PEXPIRE', META, ms)
  redis.call('PEXPIRE', EVENTS, ms)
  redis.call('PEXPIRE', READERS, ms)
  redis.call('ZADD', EXPIRY, NOW + ms, rid)
end

local function account(cost)
  redis.call('INCRBY', BYTES, cost)
  redis.call('HINCRBY', SIZES, rid, cost)
end

local ops = {}

-- create: owner
ops.c = function(i)
  sweep()
  local meta = redis.call('HMGET', META, 'seq', 'done')
  if meta[1] then
    -- an empty running stream is this create's replay (see ops.a); ids are random
    if meta[1] == '0' and meta[2] == '0' then return 'ok' end
    return 'exists'
  end
  if not evict(NEW_BYTES) then return 'full' end
  redis.call('DEL', EVENTS, READERS)
  redis.call('HSET', META, 'seq', 0, 'done', 0, 'left', NOW, 'kept', 0, 'owner', ARGV[i],
    'lease', NOW + LEASE)
  redis.call('HSET', SIZES, rid, 0)
  touch(ORPHAN)
  return 'ok'
end

-- append: first seq, then the entries (all stored, or none)
ops.a = function(i, n)
  local meta = redis.call('HMGET', META, 'seq', 'done', 'kept')
  if not meta[1] then return 'unknown' end
  if meta[2] == '1' then return 'finished' end
  local last, first, count = tonumber(meta[1]), tonumber(ARGV[i]), n - 1
  local final = first + count - 1
  if final == last and first > 0 then
    -- redis-py sends a command again when the connection broke before its reply: the same
    -- entries again are that replay, already stored
    local stored = redis.call('XRANGE', EVENTS, first .. '-0', last .. '-0')
    local same = #stored == count
    for k = 1, count do
      if not same then break end
      local fields = stored[k][2]
      same = fields[1] == 'd' and fields[2] == ARGV[i + k]
    end
    if same then return 'ok' end
  end
  if first ~= last + 1 then return 'gap ' .. (last + 1) end
  if final > MAX_EVENTS then return 'too_long' end
  local cost = 0
  for k = 1, count do cost = cost + string.len(ARGV[i + k]) + OVERHEAD end
  if bytes() + cost > MAX_BYTES then
    sweep()
    if redis.call('EXISTS', META) == 0 then return 'unknown' end
    if not evict(cost) then return 'full' end
  end
  for k = 1, count do
    redis.call('XADD', EVENTS, (first + k - 1) .. '-0', 'd', ARGV[i + k])
  end
  redis.call('HSET', META, 'seq', final, 'lease', NOW + LEASE)
  account(cost)
  -- renew a running stream's keys once half its orphan time is used (not on every append)
  if meta[3] ~= '1' and (first == 1 or redis.call('PTTL', META) < ORPHAN / 2) then
    touch(ORPHAN)
  end
  return 'ok'
end

-- finish: '1' when a terminal entry follows, the terminal entry, '1' to finish only a stream
-- whose producer's lease lapsed. Answers 'ended' when this op finished the stream.
ops.f = function(i)
  local meta = redis.call('HMGET', META, 'seq', 'done', 'lease')
  if not meta[1] then return 'unknown' end
  local last = tonumber(meta[1])
  if meta[2] ~= '1' then
    if ARGV[i + 2] == '1' and not (meta[3] and tonumber(meta[3]) < NOW) then
      return 'alive ' .. last
    end
    if ARGV[i] == '1' then
      last = last + 1
      redis.call('XADD', EVENTS, last .. '-0', 'd', ARGV[i + 1])
      redis.call('HSET', META, 'seq', last)
      account(string.len(ARGV[i + 1]) + OVERHEAD)
    end
    redis.call('XADD', EVENTS, last .. '-1', 'end', '1')
    redis.call('HSET', META, 'done', 1)
    redis.call('ZADD', FINISHED, NOW, rid)
    local ttl = redis.call('PTTL', META)
    if ttl > 0 then redis.call('PEXPIRE', EVENTS, ttl) end
    return 'ended ' .. last
  end
  return 'ok ' .. last
end

-- lapsed: 'unknown', or how many ms ago the running stream's producer lease ended (0 while
-- it runs, or once the stream finished)
ops.p = function()
  local meta = redis.call('HMGET', META, 'seq', 'done', 'lease')
  if not meta[1] then return 'unknown' end
  if meta[2] == '1' or not meta[3] then return 'ok 0' end
  return 'ok ' .. math.max(0, NOW - tonumber(meta[3]))
end

-- expire: ms to keep the stream
ops.e = function(i)
  if redis.call('EXISTS', META) == 0 then return 'unknown' end
  local ms = math.max(0, tonumber(ARGV[i]))
  if ms == 0 then
    drop(rid)
    return 'ok'
  end
  redis.call('HSET', META, 'kept', 1)
  touch(ms)
  return 'ok'
end

-- attach: reader token
ops.t = function(i)
  local meta = redis.call('HMGET', META, 'seq', 'done')
  if not meta[1] then return 'unknown' end
  redis.call('ZADD', READERS, NOW + READER_LEASE, ARGV[i])
  local ttl = redis.call('PTTL', META)
  if ttl > 0 then redis.call('PEXPIRE', READERS, ttl) end
  return 'ok ' .. meta[1] .. ' ' .. meta[2]
end

-- leave: reader token
ops.l = function(i)
  redis.call('ZREM', READERS, ARGV[i])
  if redis.call('EXISTS', META) == 1 then redis.call('HSET', META, 'left', NOW) end
  return 'ok'
end

-- refresh: reader token (its stream's lease, while the stream lives)
ops.r = function(i)
  local ttl = redis.call('PTTL', META)
  if ttl > 0 then
    redis.call('ZADD', READERS, NOW + READER_LEASE, ARGV[i])
    redis.call('PEXPIRE', READERS, ttl)
  end
  return 'ok'
end

-- unread: '0' for a question, '1' for the producer's heartbeat, which renews its lease and
-- keeps the running stream's keys from expiring
ops.u = function(i)
  local meta = redis.call('HMGET', META, 'left', 'done', 'kept')
  if not meta[1] then return 'unknown' end
  local left = tonumber(meta[1])
  local lapsed = redis.call('ZRANGEBYSCORE', READERS, '-inf', NOW, 'WITHSCORES')
  if #lapsed > 0 then
    for k = 2, #lapsed, 2 do left = math.max(left, tonumber(lapsed[k])) end
    redis.call('ZREMRANGEBYSCORE', READERS, '-inf', NOW)
    redis.call('HSET', META, 'left', left)
  end
  if meta[2] ~= '1' and ARGV[i] == '1' then
    redis.call('HSET', META, 'lease', NOW + LEASE)
    if meta[3] ~= '1' then touch(ORPHAN) end
  end
  if redis.call('ZCARD', READERS) > 0 then return 'attached' end
  return 'unread ' .. math.max(0, NOW - left)
end

-- owner: 'ok <owner in hex>', 'unknown' for an unknown stream
ops.o = function()
  local meta = redis.call('HMGET', META, 'seq', 'owner')
  if not meta[1] then return 'unknown' end
  return 'ok ' .. string.gsub(meta[2] or '', '.', function(c)
    return string.format('%02x', string.byte(c))
  end)
end

-- exists
ops.x = function()
  return 'ok ' .. redis.call('EXISTS', META)
end

-- wake: the response id is a follower's wake stream (redis_io.py), which it waits on too
ops.w = function()
  redis.call('XADD', rid, 'MAXLEN', 1, '*', 'w', 1)
  redis.call('PEXPIRE', rid, 60000)
  return 'ok'
end

local replies, i = {}, 8
while i <= #ARGV do
  local op, n = ops[ARGV[i]], tonumber(ARGV[i + 2])
  if op == ops.w then rid = ARGV[i + 1] else use(ARGV[i + 1]) end
  local ok, reply = pcall(op, i + 3, n)
  if not ok then
    local message = type(reply) == 'table' and (reply.err or '?') or tostring(reply)
    reply = 'error ' .. string.gsub(message, '\\n', ' ')
  end
  replies[#replies + 1] = reply
  i = i + 3 + n
end
return table.concat(replies, '\\n')
"""
)


class RedisStore(StreamStore):
    """The stream store in Redis (module docstring)."""

    kind = "redis"

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        max_events_per_stream: int = DEFAULT_MAX_EVENTS_PER_STREAM,
        max_bytes: int = DEFAULT_MAX_BYTES,
        reader_lease_seconds: float = DEFAULT_READER_LEASE_SECONDS,
        orphan_seconds: float = DEFAULT_ORPHAN_SECONDS,
        producer_lease_seconds: float = DEFAULT_PRODUCER_LEASE_SECONDS,
        owns_client: bool = False,
    ) -> None:
        """`client` must return bytes (`decode_responses=False`, redis-py's default); the
        store closes it in `aclose` only when `owns_client`."""
        if client.connection_pool.connection_kwargs.get("decode_responses"):
            raise ValueError("RedisStore needs a client with decode_responses=False")
        if min(reader_lease_seconds, orphan_seconds, producer_lease_seconds) <= 0:
            raise ValueError(
                "reader_lease_seconds, orphan_seconds and producer_lease_seconds must be positive"
            )
        self.client = client
        self.prefix = prefix
        self.max_events_per_stream = max_events_per_stream
        self.max_bytes = max_bytes
        self.reader_lease_seconds = reader_lease_seconds
        self.orphan_seconds = orphan_seconds
        self.producer_lease_seconds = producer_lease_seconds
        self._owns_client = owns_client
        self._ops = OpBatcher(client, _SCRIPT, self._script_header, _store_error)
        # this store's own wake stream: random, so that instances never wake each other
        wake_key = f"{prefix}w:{secrets.token_hex(8)}"
        self._follower = Follower(
            client,
            wake_key,
            lambda: self._submit_quietly(b"w", wake_key),
            _store_error,
            block_seconds=MAX_BLOCK_SECONDS,
            count=MAX_BATCH,
        )
        self._leases: dict[str, str] = {}  # token -> response id, one per open reader
        self._refresher: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Self:
        """A store on its own connection pool, e.g. `RedisStore.from_url("redis://host:6379/0",
        max_bytes=...)`; `options` are the constructor's keyword arguments. A command whose
        connection broke is sent again, up to 3 times within about a second (module docstring)."""
        retry = Retry(EqualJitterBackoff(cap=0.5, base=0.05), RETRIES)
        # both: redis-py before 6 retries only the errors named in retry_on_error
        client = aioredis.Redis.from_url(
            url, retry=retry, retry_on_error=[RedisConnectionError, RedisTimeoutError]
        )
        return cls(client, owns_client=True, **options)

    @property
    def _orphan_ms(self) -> int:
        return max(1, round(self.orphan_seconds * 1000))

    @property
    def _lapse_confirm_seconds(self) -> float:
        """How long a reader watches a lapsed lease before it takes the producer as lost:
        longer than a live producer takes to renew after Redis comes back (it renews every
        second)."""
        return max(self.producer_lease_seconds / 2, LAPSE_CONFIRM_SECONDS)

    def _script_header(self) -> list[Any]:
        return [
            self.prefix,
            self.max_events_per_stream,
            self.max_bytes,
            self.max_bytes // 16,
            self._orphan_ms,
            max(1, round(self.producer_lease_seconds * 1000)),
            max(1, round(self.reader_lease_seconds * 1000)),
        ]

    # --- the contract -----------------------------------------------------------------------

    async def create(self, response_id: str, owner: str = "") -> None:
        reply = await self._op(b"c", response_id, owner)
        if reply[0] == b"exists":
            raise ValueError(f"stream {response_id!r} already exists")
        if reply[0] == b"full":
            raise StoreFullError(self.max_bytes)

    async def append(self, response_id: str, seq: int, data: bytes) -> None:
        await self.append_many(response_id, seq, (data,))

    async def append_many(self, response_id: str, first_seq: int, entries: Sequence[bytes]) -> None:
        if not entries:
            return
        reply = await self._op(b"a", response_id, first_seq, *entries)
        status = reply[0]
        if status == b"ok":
            return
        if status == b"unknown":
            raise UnknownStreamError(response_id)
        if status == b"finished":
            raise ValueError(f"stream {response_id!r} is finished; nothing may be appended")
        if status == b"gap":
            raise ValueError(
                f"stream {response_id!r}: expected seq {int(reply[1])}, got {first_seq}"
            )
        if status == b"too_long":
            raise StreamTooLongError(self.max_events_per_stream)
        raise StoreFullError(self.max_bytes)

    async def finish(self, response_id: str, terminal: bytes | None = None) -> int:
        has_terminal = b"0" if terminal is None else b"1"
        reply = await self._op(b"f", response_id, has_terminal, terminal or b"", b"0")
        if reply[0] == b"unknown":
            raise UnknownStreamError(response_id)
        return int(reply[1])

    async def finish_orphaned(self, response_id: str, terminal: bytes) -> bool:
        reply = await self._op(b"f", response_id, b"1", terminal, b"1")
        if reply[0] == b"unknown":
            raise UnknownStreamError(response_id)
        return bool(reply[0] == b"ended")

    async def read(
        self, response_id: str, after_seq: int, *, idle_timeout: float
    ) -> AsyncGenerator[list[Entry], None]:
        token = secrets.token_hex(8)
        reply = await self._op(b"t", response_id, token)
        if reply[0] == b"unknown":
            raise UnknownStreamError(response_id)
        self._leases[token] = response_id
        self._start_refresher()
        # start at or before the last entry, so the finished marker (at `<last>-1`) is read
        # even when after_seq is past the end
        start = min(max(after_seq, 0), int(reply[1]))
        key = f"{self.prefix}s:{response_id}:events".encode()
        subscription = self._follower.subscribe(key, (start, 0))
        try:
            loop = asyncio.get_running_loop()
            idle_since = quiet_since = loop.time()
            lapsed_since: float | None = None  # when it first saw the producer's lease lapsed
            while True:
                if subscription.entries:
                    batch, finished = _entries(
                        self._follower.take(subscription, MAX_BATCH), after_seq
                    )
                    if batch:
                        yield batch
                        idle_since = loop.time()
                    if finished:
                        return
                    quiet_since, lapsed_since = loop.time(), None
                    continue
                if subscription.error is not None:
                    raise subscription.error
                now = loop.time()
                wait = min(idle_since + idle_timeout, quiet_since + MAX_BLOCK_SECONDS) - now
                if wait > 0:
                    await subscription.wait(wait)
                    continue
                if now - idle_since >= idle_timeout:
                    yield []
                    idle_since = loop.time()
                    continue
                # nothing for a while: does the stream still exist, does its producer live?
                quiet_since = now
                lapsed = await self._lapsed_seconds(response_id)  # or UnknownStreamError
                if not lapsed:
                    lapsed_since = None
                elif lapsed_since is None:
                    lapsed_since = loop.time()
                elif loop.time() - lapsed_since >= self._lapse_confirm_seconds:
                    raise ProducerLostError(response_id, lapsed)
        finally:
            self._follower.unsubscribe(subscription)
            del self._leases[token]
            # in a task of its own: under anyio a cancelled response's every await is cancelled
            # again, and the reader must still leave (else it counts until its lease lapses)
            leaving = self._in_background(self._leave_quietly(response_id, token))
            await asyncio.shield(leaving)

    async def exists(self, response_id: str) -> bool:
        reply = await self._op(b"x", response_id)
        return reply[1] == b"1"

    async def owner(self, response_id: str) -> str | None:
        reply = await self._op(b"o", response_id)
        if reply[0] == b"unknown":
            return None
        return bytes.fromhex(reply[1].decode("ascii")).decode("utf-8", "replace")

    async def unread_seconds(self, response_id: str) -> float | None:
        return await self._ask_unread(response_id, b"0")

    async def heartbeat(self, response_id: str) -> float | None:
        return await self._ask_unread(response_id, b"1")

    async def _ask_unread(self, response_id: str, renew: bytes) -> float | None:
        reply = await self._op(b"u", response_id, renew)
        if reply[0] == b"unknown":
            return None
        if reply[0] == b"attached":
            return 0.0
        return int(reply[1]) / 1000

    async def expire(self, response_id: str, seconds: float) -> None:
        reply = await self._op(b"e", response_id, max(0, round(seconds * 1000)))
        if reply[0] == b"unknown":
            raise UnknownStreamError(response_id)

    async def name_stream(self, name: str, response_id: str, seconds: float) -> None:
        """The name in Redis (`{prefix}n:<name>`), so every process behind it finds it."""
        with _store_errors():
            await self.client.set(
                self._name_key(name), response_id, px=max(1, round(seconds * 1000))
            )

    async def named_stream(self, name: str) -> str | None:
        with _store_errors():
            found = await self.client.get(self._name_key(name))
        if isinstance(found, bytes):
            return found.decode("ascii", "replace")
        return found

    def _name_key(self, name: str) -> str:
        return f"{self.prefix}n:{name}"

    async def check(self) -> None:
        try:
            async with asyncio.timeout(CHECK_SECONDS):
                with _store_errors():
                    await self.client.ping()
        except TimeoutError:
            raise StoreUnavailableError(
                f"the Redis store did not answer PING within {CHECK_SECONDS:g} s"
            ) from None

    async def aclose(self) -> None:
        """Stop reading and refreshing leases (open readers lapse), send what is queued, and
        close the client if it is ours."""
        if self._refresher is not None:
            self._refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresher
            self._refresher = None
        await self._follower.aclose()
        if self._background:
            await asyncio.wait(self._background, timeout=5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._ops.drain(), 5)
        if self._owns_client:
            await self.client.aclose()

    # --- Redis ------------------------------------------------------------------------------

    async def _op(self, code: bytes, response_id: str, *args: Any) -> list[bytes]:
        """One op of the store's script on this stream, sent with the others of this tick: its
        reply's words."""
        line: bytes = await self._ops.submit(code, response_id, args)
        if line.startswith(b"error "):
            message = line.removeprefix(b"error ").decode("utf-8", "replace")
            raise StoreError(f"the Redis store failed: {message}")
        return line.split(b" ")

    def _submit_quietly(self, code: bytes, response_id: str, *args: Any) -> None:
        """An op nobody waits for (a follower's wake): its failure is only logged."""

        async def send() -> None:
            try:
                await self._op(code, response_id, *args)
            except StoreError as exc:
                log.warning("waking the Redis reader loop failed: %s", exc)

        self._in_background(send())

    def _in_background(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def _lapsed_seconds(self, response_id: str) -> float:
        """Seconds since a running stream's producer lease ended, 0 while it lasts."""
        reply = await self._op(b"p", response_id)
        if reply[0] == b"unknown":
            raise UnknownStreamError(response_id)  # expired, or its server died long ago
        return int(reply[1]) / 1000

    async def _leave_quietly(self, response_id: str, token: str) -> None:
        """Remove a reader's lease and stamp when it left; if Redis fails, the lease lapses."""
        try:
            await self._op(b"l", response_id, token)
        except StoreError as exc:
            log.warning(
                "stream %s: removing a reader's lease failed: %s", stream_ref(response_id), exc
            )

    def _start_refresher(self) -> None:
        if self._refresher is None or self._refresher.done():
            self._refresher = asyncio.get_running_loop().create_task(self._refresh_leases())

    async def _refresh_leases(self) -> None:
        """Renew the lease of every open reader until none is open: all in one batch."""
        while self._leases:
            await asyncio.sleep(self.reader_lease_seconds / 3)
            renewals = [self._op(b"r", rid, token) for token, rid in list(self._leases.items())]
            for result in await asyncio.gather(*renewals, return_exceptions=True):
                if isinstance(result, Exception):  # the leases may lapse; the next round tries
                    log.warning("renewing reader leases in Redis failed: %s", result)
                    break


def _entries(raw: list[RawEntry], after_seq: int) -> tuple[list[Entry], bool]:
    """The entries past `after_seq` of raw stream entries, and whether the finished marker
    came (it is the last entry of a stream)."""
    batch: list[Entry] = []
    for entry_id, fields in raw:
        data = fields.get(b"d")
        if data is None:  # the finished marker
            return batch, True
        seq = int(entry_id.split(b"-", 1)[0])
        if seq > after_seq:
            batch.append((seq, data))
    return batch, False


def _store_error(exc: RedisError) -> StoreError:
    """Everything a store raises is a `StoreError` (stores/base.py)."""
    if isinstance(exc, (RedisConnectionError, RedisTimeoutError)):  # BusyLoadingError too
        return StoreUnavailableError(f"the Redis store failed: {type(exc).__name__}: {exc}")
    return StoreError(f"the Redis store failed: {type(exc).__name__}: {exc}")


@contextlib.contextmanager
def _store_errors() -> Iterator[None]:
    try:
        yield
    except RedisError as exc:
        raise _store_error(exc) from exc


def check_reachable(url: str, *, timeout: float = 5.0) -> None:
    """Raise `StoreError` unless a Redis answers PING at `url`: for a server's start, so that a
    wrong URL stops it before it listens. The message shows the URL without its password."""
    try:
        with redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout) as c:
            c.ping()
    except (RedisError, ValueError, OSError) as exc:
        raise StoreError(f"cannot reach Redis at {redacted_url(url)}: {exc}") from None


def redacted_url(url: str) -> str:
    """The URL with its password masked: what may appear in logs and messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
