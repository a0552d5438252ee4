"""What the router must remember between turns, and share between the processes behind one
Redis: each deployment's cooldown, its recent failures, and its turns and tokens of this minute.

A deployment cools down when `cooldown_failures` switchable failures come within
`cooldown_window_seconds` (a window opened by the first of them), or at once for a 429 that
says how long to wait (its `retry-after` is the cooldown). Times are wall-clock seconds, so
several processes agree on them; minutes are whole minutes of the epoch."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..config import RouterSettings
from ..stores import StreamStore, redis_of
from .selection import Standing


def minute_of(now: float) -> int:
    return int(now // 60)


def seconds_to_next_minute(now: float) -> float:
    return 60.0 - (now % 60.0)


class RouterState(abc.ABC):
    """The router's shared memory (module docstring)."""

    def __init__(self, settings: RouterSettings) -> None:
        self.settings = settings

    @abc.abstractmethod
    async def standings(self, names: Sequence[str], now: float) -> dict[str, Standing]:
        """Each named deployment's cooldown and this minute's counts (absent: idle)."""

    @abc.abstractmethod
    async def started(self, name: str, now: float) -> None:
        """A turn started on the deployment: one more in this minute's count."""

    @abc.abstractmethod
    async def used(self, name: str, tokens: int, now: float) -> None:
        """The deployment used `tokens` more in this minute."""

    @abc.abstractmethod
    async def failed(self, name: str, now: float, retry_after: float | None) -> bool:
        """A switchable failure of the deployment; True when it now cools down."""

    async def aclose(self) -> None:  # noqa: B027 (most states hold nothing open)
        """Let go of what the state holds open."""


@dataclass
class _Memory:
    cool_until: float = 0.0
    window_start: float = 0.0
    failures: int = 0
    minute: int = -1
    requests: int = 0
    tokens: int = 0

    def this_minute(self, now: float) -> _Memory:
        if self.minute != minute_of(now):
            self.minute, self.requests, self.tokens = minute_of(now), 0, 0
        return self


class MemoryRouterState(RouterState):
    """The state of one process."""

    def __init__(self, settings: RouterSettings) -> None:
        super().__init__(settings)
        self._of: dict[str, _Memory] = {}

    def _memory(self, name: str) -> _Memory:
        memory = self._of.get(name)
        if memory is None:
            memory = self._of[name] = _Memory()
        return memory

    async def standings(self, names: Sequence[str], now: float) -> dict[str, Standing]:
        found: dict[str, Standing] = {}
        for name in names:
            memory = self._of.get(name)
            if memory is not None:
                memory.this_minute(now)
                cooling = max(0.0, memory.cool_until - now)
                found[name] = Standing(cooling, memory.requests, memory.tokens)
        return found

    async def started(self, name: str, now: float) -> None:
        self._memory(name).this_minute(now).requests += 1

    async def used(self, name: str, tokens: int, now: float) -> None:
        self._memory(name).this_minute(now).tokens += tokens

    async def failed(self, name: str, now: float, retry_after: float | None) -> bool:
        memory, settings = self._memory(name), self.settings
        if retry_after is not None:
            return self._cool(memory, now, retry_after)
        if now - memory.window_start > settings.cooldown_window_seconds or not memory.failures:
            memory.window_start, memory.failures = now, 0
        memory.failures += 1
        if memory.failures >= settings.cooldown_failures:
            memory.failures = 0
            return self._cool(memory, now, settings.cooldown_seconds)
        return False

    @staticmethod
    def _cool(memory: _Memory, now: float, seconds: float) -> bool:
        if seconds <= 0:
            return False
        memory.cool_until = max(memory.cool_until, now + seconds)
        return True


# KEYS: the failures counter, the cooldown; ARGV: now ms, window ms, threshold, cooldown ms,
# retry-after ms (-1: none). Returns 1 when the deployment now cools down.
_FAILED = """
local function cool(ms)
  if ms <= 0 then return 0 end
  local until_ms = tonumber(ARGV[1]) + ms
  local current = tonumber(redis.call('GET', KEYS[2]) or '0')
  if until_ms > current then redis.call('SET', KEYS[2], until_ms, 'PX', ms) end
  return 1
end
local hint = tonumber(ARGV[5])
if hint >= 0 then return cool(hint) end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n >= tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1])
  return cool(tonumber(ARGV[4]))
end
return 0
"""


class RedisRouterState(RouterState):
    """The state shared by every process behind one Redis (`serve --redis`): one round trip per
    question, keys that expire by themselves."""

    def __init__(
        self,
        settings: RouterSettings,
        client: Any,
        *,
        prefix: str = "modelstream:router:",
        owns_client: bool = False,
    ) -> None:
        """`client`: a `redis.asyncio.Redis` (a `RedisStore`'s, to share its connections); it
        is closed in `aclose` only when `owns_client`."""
        super().__init__(settings)
        self._redis = client
        self._prefix = prefix
        self._owns_client = owns_client
        self._failed = client.register_script(_FAILED)

    @classmethod
    def from_url(cls, settings: RouterSettings, url: str, **options: Any) -> RedisRouterState:
        import redis.asyncio as aioredis  # the server extra, imported only when used

        return cls(settings, aioredis.Redis.from_url(url), owns_client=True, **options)

    def _key(self, kind: str, name: str, minute: int | None = None) -> str:
        tail = "" if minute is None else f":{minute}"
        return f"{self._prefix}{kind}:{name}{tail}"

    async def standings(self, names: Sequence[str], now: float) -> dict[str, Standing]:
        minute = minute_of(now)
        keys = []
        for name in names:
            keys += [
                self._key("cool", name),
                self._key("rpm", name, minute),
                self._key("tpm", name, minute),
            ]
        values = await self._redis.mget(keys)
        found: dict[str, Standing] = {}
        for i, name in enumerate(names):
            cool, requests, tokens = values[3 * i : 3 * i + 3]
            if cool is None and requests is None and tokens is None:
                continue
            cooling = max(0.0, int(cool) / 1000 - now) if cool is not None else 0.0
            found[name] = Standing(cooling, int(requests or 0), int(tokens or 0))
        return found

    async def started(self, name: str, now: float) -> None:
        await self._count("rpm", name, 1, now)

    async def used(self, name: str, tokens: int, now: float) -> None:
        await self._count("tpm", name, tokens, now)

    async def _count(self, kind: str, name: str, amount: int, now: float) -> None:
        key = self._key(kind, name, minute_of(now))
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.incrby(key, amount)
            pipe.expire(key, 120)
            await pipe.execute()

    async def failed(self, name: str, now: float, retry_after: float | None) -> bool:
        settings = self.settings
        cooled = await self._failed(
            keys=[self._key("fail", name), self._key("cool", name)],
            args=[
                int(now * 1000),
                int(settings.cooldown_window_seconds * 1000),
                settings.cooldown_failures,
                int(settings.cooldown_seconds * 1000),
                -1 if retry_after is None else int(retry_after * 1000),
            ],
        )
        return bool(cooled)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._redis.aclose()


def shared_state(settings: RouterSettings, store: StreamStore) -> RouterState:
    """The router's state for a server on `store`: in its Redis when it has one (so every
    process behind that Redis agrees on cooldowns and counts), else in this process."""
    found = redis_of(store)
    if found is None:
        return MemoryRouterState(settings)
    client, prefix = found
    return RedisRouterState(settings, client, prefix=f"{prefix}router:")
