"""The two ways a `RedisStore` talks to Redis, each shared by all the streams of one store, so
that its connections do not grow with the number of streams (stores/redis.py says what the
operations are):

- `OpBatcher` sends every store operation (append, heartbeat, attach, ...) of a stream as one
  op of a Lua script that runs all the ops queued in one event-loop tick, in order, in one
  round trip: while one batch is in Redis, the next one gathers. Each op stays atomic (the
  whole script is); one op's error is that op's alone.
- `Follower` runs one `XREAD BLOCK` over the event streams of all this store's open readers
  and hands each reader the entries past its cursor. A reader that does not keep up stops being
  read for (its buffer holds at most about two batches) until it has taken what it got.

redis-py's own pipelines and `XREAD` are used as they are; what no library does is this
fan-in and fan-out over one connection each, hence this module.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import NoScriptError, RedisError

log = logging.getLogger("modelstream.server")

# An entry id of a Redis stream, as (ms, seq): orders as the ids do
EntryId = tuple[int, int]
# An entry as XREAD returns it: (id, fields)
RawEntry = tuple[bytes, dict[bytes, bytes]]

MAX_OPS_PER_SCRIPT = 512  # ops per script call: one call holds Redis for at most a few ms
MAX_ARG_BYTES_PER_SCRIPT = 1 << 20
# The shortest time between the starts of two script calls: a call made as soon as the last one
# returned carries the few ops one round trip gathered, and each call costs as much again to
# pack and parse; under load a batch gathers this long (the delay an op may see), while an op
# of an idle store is sent at once.
MIN_CALL_INTERVAL = 0.002
# The shortest time between two XREADs, per stream they wait on: an XREAD over N keys costs
# O(N) to send and to block on, so under load each one gathers more entries instead of being
# sent again at once; at most MAX_PACING seconds (the delay a new entry may see).
PACING_PER_KEY = 25e-6
MAX_PACING = 0.01
MAX_BATCH_BUFFER = 1024  # entries a subscription holds before it is not read for


def parse_id(entry_id: bytes) -> EntryId:
    ms, _, seq = entry_id.partition(b"-")
    return int(ms), int(seq or 0)


def format_id(entry_id: EntryId) -> bytes:
    return b"%d-%d" % entry_id


class OpBatcher:
    """Queues ops and runs each tick's as one script call (module docstring).

    `header()` gives the script's leading arguments at send time; an op is `(code, stream id,
    args)`. The script answers one string, a line per op; an op's future gets its line. An
    error of the whole call (Redis unreachable) is set on every op of the call, converted by
    `convert`."""

    def __init__(
        self,
        client: aioredis.Redis,
        script: str,
        header: Callable[[], list[Any]],
        convert: Callable[[RedisError], Exception],
    ) -> None:
        self.client = client
        self.script = script
        self.sha = client.register_script(script).sha  # computed here, loaded on NOSCRIPT
        self._header = header
        self._convert = convert
        self._queue: list[tuple[bytes, str, Sequence[Any], asyncio.Future[Any]]] = []
        self._sender: asyncio.Task[None] | None = None

    def submit(self, code: bytes, stream_id: str, args: Sequence[Any]) -> asyncio.Future[Any]:
        future = asyncio.get_running_loop().create_future()
        self._queue.append((code, stream_id, args, future))
        if self._sender is None:
            # starts after the tasks already ready in this tick: their ops join this batch
            self._sender = asyncio.get_running_loop().create_task(self._send_all())
        return future

    async def drain(self) -> None:
        """Wait until every queued op was sent (for closing)."""
        if self._sender is not None:
            await asyncio.shield(self._sender)

    async def _send_all(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queue:
                ops, self._queue = self._queue, []
                started = loop.time()
                await self._send(ops)
                pause = MIN_CALL_INTERVAL - (loop.time() - started)
                if self._queue and pause > 0:
                    await asyncio.sleep(pause)
        except BaseException:  # cancelled (the loop is closing): none of the callers may hang
            queued, self._queue = self._queue, []
            _fail([future for *_, future in queued], asyncio.CancelledError())
            raise
        finally:
            self._sender = None

    async def _send(self, ops: list[tuple[bytes, str, Sequence[Any], asyncio.Future[Any]]]) -> None:
        calls: list[tuple[list[Any], list[asyncio.Future[Any]]]] = []
        args: list[Any] = []
        futures: list[asyncio.Future[Any]] = []
        size = 0
        for code, stream_id, op_args, future in ops:
            if future.done():  # its caller was cancelled before it was sent
                continue
            args += (code, stream_id, len(op_args), *op_args)
            futures.append(future)
            size += sum(len(a) for a in op_args if isinstance(a, bytes))
            if len(futures) >= MAX_OPS_PER_SCRIPT or size >= MAX_ARG_BYTES_PER_SCRIPT:
                calls.append((args, futures))
                args, futures, size = [], [], 0
        if futures:
            calls.append((args, futures))
        if not calls:
            return
        header = self._header()
        try:
            replies = await self._run([[*header, *call_args] for call_args, _ in calls])
        except RedisError as exc:
            error = self._convert(exc)
            for _, call_futures in calls:
                _fail(call_futures, error)
            return
        except BaseException as exc:  # cancelled while sending: the callers must not hang
            for _, call_futures in calls:
                _fail(call_futures, asyncio.CancelledError() if _cancel(exc) else exc)
            raise
        for reply, (_, call_futures) in zip(replies, calls, strict=True):
            if isinstance(reply, RedisError):
                _fail(call_futures, self._convert(reply))
                continue
            lines = reply.split(b"\n") if isinstance(reply, bytes) else []
            if len(lines) != len(call_futures):  # not this script's answer: fail, never guess
                _fail(call_futures, self._convert(RedisError(f"unexpected reply {reply!r:.200}")))
                continue
            for future, line in zip(call_futures, lines, strict=True):
                if not future.done():
                    future.set_result(line)

    async def _run(self, calls: list[list[Any]]) -> list[Any]:
        """The script once per call, in one round trip; loaded again if Redis lost it."""
        replies = await self._pipeline(calls)
        missing = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
        if missing:  # a restarted or flushed Redis: none of those ran, so they run now
            await self.client.script_load(self.script)
            again = await self._pipeline([calls[i] for i in missing])
            for i, reply in zip(missing, again, strict=True):
                replies[i] = reply
        return replies

    async def _pipeline(self, calls: list[list[Any]]) -> list[Any]:
        if len(calls) == 1:
            try:
                return [await self.client.evalsha(self.sha, 0, *calls[0])]
            except NoScriptError as exc:
                return [exc]
        pipe = self.client.pipeline(transaction=False)
        for call in calls:
            pipe.evalsha(self.sha, 0, *call)
        return list(await pipe.execute(raise_on_error=False))


class Subscription:
    """One reader's place in the `Follower`: the entries it got and has not taken yet."""

    __slots__ = ("_waiter", "cursor", "entries", "error", "key")

    def __init__(self, key: bytes, cursor: EntryId) -> None:
        self.key = key
        self.cursor = cursor  # the last entry id handed to it
        self.entries: list[RawEntry] = []
        self.error: Exception | None = None
        self._waiter: asyncio.Future[None] | None = None

    @property
    def full(self) -> bool:
        return len(self.entries) >= MAX_BATCH_BUFFER

    async def wait(self, timeout: float) -> None:
        """Until entries or an error arrive, or `timeout` seconds pass."""
        if self.entries or self.error is not None:
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(timeout):
                await self._waiter
        except TimeoutError:
            pass
        finally:
            self._waiter = None

    def wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class Follower:
    """One `XREAD BLOCK` loop over the streams of all open subscriptions (module docstring).

    A subscription that joins while an XREAD waits without its stream would wait until that
    XREAD returns (up to `block_seconds`): it wakes the loop by adding an entry to this
    follower's own wake stream, which every XREAD also waits on."""

    def __init__(
        self,
        client: aioredis.Redis,
        wake_key: str,
        send_wake: Callable[[], None],
        convert: Callable[[RedisError], Exception],
        *,
        block_seconds: float,
        count: int,
    ) -> None:
        self.client = client
        self.wake_key = wake_key.encode()
        self._send_wake = send_wake
        self._convert = convert
        self._block_ms = max(1, round(block_seconds * 1000))
        self._count = count
        self._subscriptions: dict[bytes, set[Subscription]] = {}
        self._wake_cursor = b"0-0"
        self._in_flight: dict[bytes, EntryId] | None = None  # what the waiting XREAD covers
        self._woken = False  # a wake was sent for the XREAD in flight
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    def subscribe(self, key: bytes, cursor: EntryId) -> Subscription:
        subscription = Subscription(key, cursor)
        self._subscriptions.setdefault(key, set()).add(subscription)
        self._wanted(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        subscriptions = self._subscriptions.get(subscription.key)
        if subscriptions is not None:
            subscriptions.discard(subscription)
            if not subscriptions:
                del self._subscriptions[subscription.key]

    def take(self, subscription: Subscription, limit: int) -> list[RawEntry]:
        """Up to `limit` of the entries the subscription got; it is read again once it has
        room."""
        was_full = subscription.full
        taken = subscription.entries[:limit]
        del subscription.entries[:limit]
        if was_full and not subscription.full:
            self._wanted(subscription)
        return taken

    async def aclose(self) -> None:
        """Stop the loop: cancelled, and told to stop after its XREAD in case redis-py absorbed
        the cancellation (seen with redis-py 8 while a reply was being read)."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=self._block_ms / 1000 + 1)
            if self._task.done() and not self._task.cancelled():
                self._task.exception()  # retrieved: it is not logged as never retrieved
            self._task = None

    def _wanted(self, subscription: Subscription) -> None:
        """The subscription wants reading: start the loop, or wake it if its XREAD waits
        without this stream (or from a later entry)."""
        if self._closing:
            return
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._follow())
            return
        self._changed.set()
        in_flight = self._in_flight
        if in_flight is None or self._woken:
            return
        covered = in_flight.get(subscription.key)
        if covered is None or covered > subscription.cursor:
            self._woken = True
            self._send_wake()

    async def _follow(self) -> None:
        loop = asyncio.get_running_loop()
        while self._subscriptions and not self._closing:
            wanted: dict[bytes, EntryId] = {}
            for key, subscriptions in self._subscriptions.items():
                cursor: EntryId | None = None
                for s in subscriptions:
                    if s.error is None and not s.full and (cursor is None or s.cursor < cursor):
                        cursor = s.cursor
                if cursor is not None:
                    wanted[key] = cursor
            if not wanted:
                self._changed.clear()
                await self._changed.wait()  # every reader is full or failed: until one is not
                continue
            # XREAD as a plain command: redis-py's xread() costs a third more to build
            ids = [format_id(cursor) for cursor in wanted.values()]
            streams = [*wanted, self.wake_key, *ids, self._wake_cursor]
            self._in_flight, self._woken = wanted, False
            started = loop.time()
            try:
                reply = await self.client.execute_command(  # type: ignore[no-untyped-call]
                    "XREAD", "COUNT", self._count, "BLOCK", self._block_ms, "STREAMS", *streams
                )
            except RedisError as exc:
                self._fail(wanted, self._convert(exc))
                await asyncio.sleep(0.05)  # a failing Redis is not asked in a busy loop
                continue
            finally:
                self._in_flight = None
            self._deliver(reply, wanted)
            pause = min(MAX_PACING, PACING_PER_KEY * len(wanted)) - (loop.time() - started)
            if pause > 0:
                await asyncio.sleep(pause)

    def _deliver(self, reply: Any, read_after: dict[bytes, EntryId]) -> None:
        """Hand each subscription the entries past its cursor, of an XREAD that read each
        stream after `read_after`."""
        for key, entries in xread_streams(reply):
            if not entries:
                continue
            if key == self.wake_key:
                self._wake_cursor = entries[-1][0]
                continue
            ids = [parse_id(entry_id) for entry_id, _ in entries]
            start_of_read = read_after.get(key)
            for subscription in self._subscriptions.get(key, ()):
                if subscription.full or subscription.error is not None:
                    continue
                if start_of_read is None or subscription.cursor < start_of_read:
                    # it joined (or had room again) behind this read: the entries between its
                    # cursor and the read's are not in this reply; the next XREAD has them
                    continue
                start = 0
                while start < len(ids) and ids[start] <= subscription.cursor:
                    start += 1
                if start < len(ids):
                    subscription.entries += entries[start:]
                    subscription.cursor = ids[-1]
                    subscription.wake()

    def _fail(self, wanted: dict[bytes, EntryId], error: Exception) -> None:
        """The readers of this XREAD fail with `error` (they raise it and leave)."""
        for key in wanted:
            for subscription in self._subscriptions.get(key, ()):
                subscription.error = error
                subscription.wake()


def xread_streams(reply: Any) -> list[tuple[bytes, list[RawEntry]]]:
    """XREAD's streams as (key, entries): a list of pairs under RESP2, a dict under RESP3, where
    redis-py (8.x) wraps each stream's entries in a list of their own."""
    if not reply:
        return []
    pairs = reply.items() if isinstance(reply, dict) else reply
    streams = []
    for key, entries in pairs:
        if len(entries) == 1 and isinstance(entries[0], list):  # an entry is an (id, fields)
            entries = entries[0]
        streams.append((key, list(entries)))
    return streams


def _fail(futures: list[asyncio.Future[Any]], error: BaseException) -> None:
    for future in futures:
        if not future.done():
            if isinstance(error, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(error)


def _cancel(exc: BaseException) -> bool:
    return isinstance(exc, asyncio.CancelledError)
