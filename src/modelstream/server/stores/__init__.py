"""Where streams live while they run and while they can be resumed: `StreamStore` is the
contract (stores/base.py), `MemoryStore` the in-process implementation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import (
    Entry,
    ProducerLostError,
    StoreError,
    StoreFullError,
    StoreLimitError,
    StoreUnavailableError,
    StreamStore,
    StreamTooLongError,
    UnknownStreamError,
)
from .memory import MemoryStore

if TYPE_CHECKING:
    from redis.asyncio import Redis


def redis_of(store: StreamStore) -> tuple[Redis, str] | None:
    """The Redis client and key prefix of a store kept in Redis, where what every process
    behind it must share (router state, virtual keys) is kept too; None for any other store."""
    try:
        from .redis import RedisStore
    except ImportError:  # no redis package: no RedisStore either
        return None
    return (store.client, store.prefix) if isinstance(store, RedisStore) else None


__all__ = [
    "Entry",
    "MemoryStore",
    "ProducerLostError",
    "StoreError",
    "StoreFullError",
    "StoreLimitError",
    "StoreUnavailableError",
    "StreamStore",
    "StreamTooLongError",
    "UnknownStreamError",
    "redis_of",
]
