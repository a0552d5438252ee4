"""`RedisStore`: the stream log in Redis, shared by every server instance that points at it, so
that a resume can reach any instance behind a load balancer.

Theory of operation. Each stream is three keys under `{prefix}s:{response_id}`:

    :meta     hash     seq (last entry), done (0/1), left (ms: when the last reader left),
                       kept (1 once `expire` set the retention), owner (the hash of the key
                       that started the stream, never the key), lease (ms: until when the
                       producer is known to live)
    :events   stream   entry `<seq>-0` {d: data} per event; `<last>-1` {end: 1} marks finished
    :readers  zset     reader token -> lease end (ms), one member per open `read` iterator

and four keys under `{prefix}g:` are shared by all streams: `bytes` (the total counted against
`max_bytes`), `sizes` (hash: bytes per stream), `finished` (zset by finish time: eviction order)
and `expiry` (zset by expiry time). Every change is one Lua script, so the seq check, the caps
and the accounting are atomic across processes, and every time is Redis's `TIME`, so instances
with skewed clocks agree. Readers wait with `XREAD BLOCK` on `:events` after their cursor; the
finished marker's id sorts after the last entry, so a finish wakes them like an append does.

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
a script may run twice: `append` of the entry just stored, with the same data, is
taken as that replay and succeeds once (any other repeat is still a `ValueError`), and `create`
of an existing empty running stream succeeds; the other scripts are idempotent as they stand.

Needs a standalone Redis ≥ 6.2 (or one behind Sentinel), not Redis Cluster: the scripts touch
other streams' keys when they evict. Use from one event loop per store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncGenerator, Iterator
from typing import Any, Self
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import EqualJitterBackoff
from redis.commands.core import AsyncScript
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

# Shared by every script. KEYS: 1 meta, 2 events, 3 readers, 4 g:bytes, 5 g:sizes,
# 6 g:finished, 7 g:expiry. ARGV[1] prefix, ARGV[2] response id, then the script's own.
# Other streams' keys (eviction, expiry) are built from the prefix, hence no Redis Cluster.
_LIBRARY = (
    f"local OVERHEAD = {ENTRY_OVERHEAD}\n"
    + """
local prefix, rid = ARGV[1], ARGV[2]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function bytes()
  return tonumber(redis.call('GET', KEYS[4]) or '0')
end

local function drop(id)
  local base = prefix .. 's:' .. id
  redis.call('DEL', base .. ':meta', base .. ':events', base .. ':readers')
  local size = tonumber(redis.call('HGET', KEYS[5], id) or '0')
  if size ~= 0 then redis.call('DECRBY', KEYS[4], size) end
  redis.call('HDEL', KEYS[5], id)
  redis.call('ZREM', KEYS[6], id)
  redis.call('ZREM', KEYS[7], id)
end

-- forget the streams whose retention (or orphan time) ended
local function sweep(now)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now, 'LIMIT', 0, 256)) do
    drop(id)
  end
end

-- drop the oldest finished streams until `need` more bytes fit; false if they don't
local function evict(need, max)
  while bytes() + need > max do
    local oldest = redis.call('ZRANGE', KEYS[6], 0, 0)
    if #oldest == 0 then return false end
    drop(oldest[1])
  end
  return true
end

-- keep this stream for `ms` more
local function touch(now, ms)
  redis.call('PEXPIRE', KEYS[1], ms)
  redis.call('PEXPIRE', KEYS[2], ms)
  redis.call('PEXPIRE', KEYS[3], ms)
  redis.call('ZADD', KEYS[7], now + ms, rid)
end

local function add(seq, data)
  local cost = string.len(data) + OVERHEAD
  redis.call('XADD', KEYS[2], seq .. '-0', 'd', data)
  redis.call('HSET', KEYS[1], 'seq', seq)
  redis.call('INCRBY', KEYS[4], cost)
  redis.call('HINCRBY', KEYS[5], rid, cost)
end
"""
)

# ARGV[3] max_bytes, ARGV[4] bytes a new stream needs free, ARGV[5] orphan ms, ARGV[6] owner,
# ARGV[7] producer lease ms
_CREATE = """
local now = now_ms()
sweep(now)
local meta = redis.call('HMGET', KEYS[1], 'seq', 'done')
if meta[1] then
  -- an empty running stream is this create's replay (see _APPEND); ids are random
  if meta[1] == '0' and meta[2] == '0' then return 'ok' end
  return 'exists'
end
if not evict(tonumber(ARGV[4]), tonumber(ARGV[3])) then return 'full' end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'seq', 0, 'done', 0, 'left', now, 'kept', 0, 'owner', ARGV[6],
  'lease', now + tonumber(ARGV[7]))
redis.call('HSET', KEYS[5], rid, 0)
touch(now, tonumber(ARGV[5]))
return 'ok'
"""

# ARGV[3] seq, ARGV[4] data, ARGV[5] max events, ARGV[6] max bytes, ARGV[7] orphan ms,
# ARGV[8] producer lease ms
_APPEND = """
local meta = redis.call('HMGET', KEYS[1], 'seq', 'done', 'kept')
if not meta[1] then return {'unknown'} end
if meta[2] == '1' then return {'finished'} end
local last, seq = tonumber(meta[1]), tonumber(ARGV[3])
if seq == last and seq > 0 then
  -- redis-py sends a command again when the connection broke before its reply: the same
  -- entry again is that replay, already stored
  local stored = redis.call('XRANGE', KEYS[2], seq .. '-0', seq .. '-0')
  if #stored == 1 and stored[1][2][2] == ARGV[4] then return {'ok'} end
end
if seq ~= last + 1 then return {'gap', last + 1} end
if last >= tonumber(ARGV[5]) then return {'too_long'} end
local cost, max = string.len(ARGV[4]) + OVERHEAD, tonumber(ARGV[6])
if bytes() + cost > max then
  sweep(now_ms())
  if redis.call('EXISTS', KEYS[1]) == 0 then return {'unknown'} end
  if not evict(cost, max) then return {'full'} end
end
add(seq, ARGV[4])
redis.call('HSET', KEYS[1], 'lease', now_ms() + tonumber(ARGV[8]))
-- renew a running stream's keys once half its orphan time is used (not on every append)
local orphan = tonumber(ARGV[7])
if meta[3] ~= '1' and (seq == 1 or redis.call('PTTL', KEYS[1]) < orphan / 2) then
  touch(now_ms(), orphan)
end
return {'ok'}
"""

# ARGV[3] '1' when ARGV[4] is a terminal entry, ARGV[5] '1' to finish only a stream whose
# producer's lease lapsed. Answers 'ended' when this call finished the stream.
_FINISH = """
local meta = redis.call('HMGET', KEYS[1], 'seq', 'done', 'lease')
if not meta[1] then return {'unknown'} end
local last = tonumber(meta[1])
if meta[2] ~= '1' then
  if ARGV[5] == '1' and not (meta[3] and tonumber(meta[3]) < now_ms()) then
    return {'alive', last}
  end
  if ARGV[3] == '1' then
    last = last + 1
    add(last, ARGV[4])
  end
  redis.call('XADD', KEYS[2], last .. '-1', 'end', '1')
  redis.call('HSET', KEYS[1], 'done', 1)
  redis.call('ZADD', KEYS[6], now_ms(), rid)
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
  return {'ended', last}
end
return {'ok', last}
"""

# What a reader with nothing new asks: 'unknown', or how many ms ago the running stream's
# producer lease ended (0 while it runs, or once the stream finished)
_LAPSED = """
local meta = redis.call('HMGET', KEYS[1], 'seq', 'done', 'lease')
if not meta[1] then return {'unknown'} end
if meta[2] == '1' or not meta[3] then return {'ok', 0} end
return {'ok', math.max(0, now_ms() - tonumber(meta[3]))}
"""

# ARGV[3] ms to keep the stream
_EXPIRE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'unknown' end
local now, ms = now_ms(), math.max(0, tonumber(ARGV[3]))
if ms == 0 then
  drop(rid)
  return 'ok'
end
redis.call('HSET', KEYS[1], 'kept', 1)
touch(now, ms)
return 'ok'
"""

# ARGV[3] token, ARGV[4] lease ms
_ATTACH = """
local meta = redis.call('HMGET', KEYS[1], 'seq', 'done')
if not meta[1] then return {'unknown'} end
redis.call('ZADD', KEYS[3], now_ms() + tonumber(ARGV[4]), ARGV[3])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
return {'ok', tonumber(meta[1]), tonumber(meta[2])}
"""

# ARGV[3] token
_LEAVE = """
redis.call('ZREM', KEYS[3], ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'left', now_ms()) end
return 'ok'
"""

# ARGV[3] orphan ms, ARGV[4] producer lease ms: '0' for a question, else the producer's
# heartbeat, which renews its lease and keeps the running stream's keys from expiring.
_UNREAD = """
local meta = redis.call('HMGET', KEYS[1], 'left', 'done', 'kept')
if not meta[1] then return {'unknown'} end
local now, left = now_ms(), tonumber(meta[1])
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'WITHSCORES')
if #lapsed > 0 then
  for i = 2, #lapsed, 2 do left = math.max(left, tonumber(lapsed[i])) end
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  redis.call('HSET', KEYS[1], 'left', left)
end
if meta[2] ~= '1' and ARGV[4] ~= '0' then
  redis.call('HSET', KEYS[1], 'lease', now + tonumber(ARGV[4]))
  if meta[3] ~= '1' then touch(now, tonumber(ARGV[3])) end
end
if redis.call('ZCARD', KEYS[3]) > 0 then return {'attached'} end
return {'unread', math.max(0, now - left)}
"""

# ARGV[3] lease ms, then pairs (response id, token): the open readers of this store
_REFRESH = """
local now, lease = now_ms(), tonumber(ARGV[3])
for i = 4, #ARGV, 2 do
  local base = prefix .. 's:' .. ARGV[i]
  local ttl = redis.call('PTTL', base .. ':meta')
  if ttl > 0 then
    redis.call('ZADD', base .. ':readers', now + lease, ARGV[i + 1])
    redis.call('PEXPIRE', base .. ':readers', ttl)
  end
end
return 'ok'
"""


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
        self._global = [f"{prefix}g:{name}" for name in ("bytes", "sizes", "finished", "expiry")]
        script = client.register_script
        self._create = script(_LIBRARY + _CREATE)
        self._append = script(_LIBRARY + _APPEND)
        self._finish = script(_LIBRARY + _FINISH)
        self._expire = script(_LIBRARY + _EXPIRE)
        self._attach = script(_LIBRARY + _ATTACH)
        self._leave = script(_LIBRARY + _LEAVE)
        self._unread = script(_LIBRARY + _UNREAD)
        self._lapsed = script(_LIBRARY + _LAPSED)
        self._refresh = script(_LIBRARY + _REFRESH)
        self._leases: dict[str, str] = {}  # token -> response id, one per open reader
        self._refresher: asyncio.Task[None] | None = None
        self._leaving: set[asyncio.Task[None]] = set()

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

    @property
    def _lease_ms(self) -> int:
        return max(1, round(self.producer_lease_seconds * 1000))

    # --- the contract -----------------------------------------------------------------------

    async def create(self, response_id: str, owner: str = "") -> None:
        reply = await self._run(
            self._create,
            response_id,
            self.max_bytes,
            self.max_bytes // 16,
            self._orphan_ms,
            owner,
            self._lease_ms,
        )
        if reply == b"exists":
            raise ValueError(f"stream {response_id!r} already exists")
        if reply == b"full":
            raise StoreFullError(self.max_bytes)

    async def append(self, response_id: str, seq: int, data: bytes) -> None:
        reply = await self._run(
            self._append,
            response_id,
            seq,
            data,
            self.max_events_per_stream,
            self.max_bytes,
            self._orphan_ms,
            self._lease_ms,
        )
        status = reply[0]
        if status == b"ok":
            return
        if status == b"unknown":
            raise UnknownStreamError(response_id)
        if status == b"finished":
            raise ValueError(f"stream {response_id!r} is finished; nothing may be appended")
        if status == b"gap":
            raise ValueError(f"stream {response_id!r}: expected seq {reply[1]}, got {seq}")
        if status == b"too_long":
            raise StreamTooLongError(self.max_events_per_stream)
        raise StoreFullError(self.max_bytes)

    async def finish(self, response_id: str, terminal: bytes | None = None) -> int:
        has_terminal = b"0" if terminal is None else b"1"
        reply = await self._run(self._finish, response_id, has_terminal, terminal or b"", b"0")
        if reply[0] == b"unknown":
            raise UnknownStreamError(response_id)
        return int(reply[1])

    async def finish_orphaned(self, response_id: str, terminal: bytes) -> bool:
        reply = await self._run(self._finish, response_id, b"1", terminal, b"1")
        if reply[0] == b"unknown":
            raise UnknownStreamError(response_id)
        return bool(reply[0] == b"ended")

    async def read(
        self, response_id: str, after_seq: int, *, idle_timeout: float
    ) -> AsyncGenerator[list[Entry], None]:
        token = secrets.token_hex(8)
        lease_ms = max(1, round(self.reader_lease_seconds * 1000))
        reply = await self._run(self._attach, response_id, token, lease_ms)
        if reply[0] == b"unknown":
            raise UnknownStreamError(response_id)
        self._leases[token] = response_id
        self._start_refresher()
        try:
            # start at or before the last entry, so the finished marker (at `<last>-1`) is read
            # even when after_seq is past the end
            cursor = b"%d-0" % min(max(after_seq, 0), int(reply[1]))
            events_key = self._keys(response_id)[1]
            loop = asyncio.get_running_loop()
            idle_since = loop.time()
            lapsed_since: float | None = None  # when it first saw the producer's lease lapsed
            while True:
                wait = idle_timeout - (loop.time() - idle_since)
                if wait <= 0:
                    yield []
                    idle_since = loop.time()
                    continue
                block_ms = max(1, round(min(wait, MAX_BLOCK_SECONDS) * 1000))
                with _store_errors():
                    streams = await self.client.xread(
                        {events_key: cursor}, count=MAX_BATCH, block=block_ms
                    )
                batch: list[Entry] = []
                finished = False
                for _key, entries in _xread_streams(streams):
                    for entry_id, fields in entries:
                        cursor = entry_id
                        data = fields.get(b"d")
                        if data is None:  # the finished marker
                            finished = True
                            break
                        seq = int(entry_id.split(b"-", 1)[0])
                        if seq > after_seq:
                            batch.append((seq, data))
                if batch:
                    yield batch
                    idle_since = loop.time()
                if finished:
                    return
                if streams:
                    lapsed_since = None
                    continue
                lapsed = await self._lapsed_seconds(response_id)  # or UnknownStreamError
                if not lapsed:
                    lapsed_since = None
                elif lapsed_since is None:
                    lapsed_since = loop.time()
                elif loop.time() - lapsed_since >= self._lapse_confirm_seconds:
                    raise ProducerLostError(response_id, lapsed)
        finally:
            del self._leases[token]
            # in a task of its own: under anyio a cancelled response's every await is cancelled
            # again, and the reader must still leave (else it counts until its lease lapses)
            leaving = asyncio.get_running_loop().create_task(
                self._leave_quietly(response_id, token)
            )
            self._leaving.add(leaving)
            leaving.add_done_callback(self._leaving.discard)
            await asyncio.shield(leaving)

    async def exists(self, response_id: str) -> bool:
        with _store_errors():
            return bool(await self.client.exists(self._keys(response_id)[0]))

    async def owner(self, response_id: str) -> str | None:
        with _store_errors():
            seq, owner = await self.client.hmget(self._keys(response_id)[0], ["seq", "owner"])
        if seq is None:
            return None
        return owner.decode("ascii", "replace") if isinstance(owner, bytes) else owner or ""

    async def unread_seconds(self, response_id: str) -> float | None:
        return await self._ask_unread(response_id, 0)

    async def heartbeat(self, response_id: str) -> float | None:
        return await self._ask_unread(response_id, self._lease_ms)

    async def _ask_unread(self, response_id: str, lease_ms: int) -> float | None:
        reply = await self._run(self._unread, response_id, self._orphan_ms, lease_ms)
        if reply[0] == b"unknown":
            return None
        if reply[0] == b"attached":
            return 0.0
        return int(reply[1]) / 1000

    async def expire(self, response_id: str, seconds: float) -> None:
        reply = await self._run(self._expire, response_id, max(0, round(seconds * 1000)))
        if reply == b"unknown":
            raise UnknownStreamError(response_id)

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
        """Stop refreshing leases (open readers lapse), and close the client if it is ours."""
        if self._refresher is not None:
            self._refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresher
            self._refresher = None
        if self._leaving:
            await asyncio.wait(self._leaving, timeout=5)
        if self._owns_client:
            await self.client.aclose()

    # --- Redis ------------------------------------------------------------------------------

    async def _lapsed_seconds(self, response_id: str) -> float:
        """Seconds since a running stream's producer lease ended, 0 while it lasts."""
        reply = await self._run(self._lapsed, response_id)
        if reply[0] == b"unknown":
            raise UnknownStreamError(response_id)  # expired, or its server died long ago
        return int(reply[1]) / 1000

    def _keys(self, response_id: str) -> list[str]:
        base = f"{self.prefix}s:{response_id}"
        return [f"{base}:meta", f"{base}:events", f"{base}:readers", *self._global]

    async def _run(self, script: AsyncScript, response_id: str, *args: Any) -> Any:
        """One script on this stream's keys."""
        with _store_errors():
            return await script(
                keys=self._keys(response_id), args=[self.prefix, response_id, *args]
            )

    async def _leave_quietly(self, response_id: str, token: str) -> None:
        """Remove a reader's lease and stamp when it left; if Redis fails, the lease lapses."""
        try:
            await self._run(self._leave, response_id, token)
        except StoreError as exc:
            log.warning(
                "stream %s: removing a reader's lease failed: %s", stream_ref(response_id), exc
            )

    def _start_refresher(self) -> None:
        if self._refresher is None or self._refresher.done():
            self._refresher = asyncio.get_running_loop().create_task(self._refresh_leases())

    async def _refresh_leases(self) -> None:
        """Renew the lease of every open reader until none is open."""
        lease_ms = max(1, round(self.reader_lease_seconds * 1000))
        while self._leases:
            await asyncio.sleep(self.reader_lease_seconds / 3)
            pairs = [part for token, rid in self._leases.items() for part in (rid, token)]
            if not pairs:
                return
            try:
                await self._refresh(keys=[], args=[self.prefix, "", lease_ms, *pairs])
            except RedisError as exc:  # the leases may lapse; the next round tries again
                log.warning("renewing reader leases in Redis failed: %s", exc)


@contextlib.contextmanager
def _store_errors() -> Iterator[None]:
    """Everything a store raises is a `StoreError` (stores/base.py)."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError) as exc:  # BusyLoadingError too: restarting
        raise StoreUnavailableError(f"the Redis store failed: {type(exc).__name__}: {exc}") from exc
    except RedisError as exc:
        raise StoreError(f"the Redis store failed: {type(exc).__name__}: {exc}") from exc


def _xread_streams(reply: Any) -> list[tuple[Any, list[tuple[bytes, dict[bytes, bytes]]]]]:
    """XREAD's streams as (key, entries): a list under RESP2, a dict under RESP3."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return [(key, list(entries)) for key, entries in reply.items()]
    return [(key, list(entries)) for key, entries in reply]


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
