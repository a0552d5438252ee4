"""The upstream side of the relay: per deployment of a served model, clients of `POOL_SIZE`
connections each, one more whenever every one of them is full.

httpcore walks every connection of a pool each time a request starts or ends (and polls each
idle socket), so one pool of 1,000 connections costs O(streams) per stream: pools of
`POOL_SIZE` keep that constant. The stream slots bound the streams, and the least busy pool of
ceil(max / POOL_SIZE) is never full, so no stream waits for a connection.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import httpx

from ...client import AsyncClient, RetryPolicy, Timeouts
from ...client.tls import ssl_context_for
from ...client.transports import async_transport
from ..config import ModelEntry

POOL_SIZE = 32  # upstream connections per pool (`UpstreamPool.take`)


@dataclass(eq=False)
class Shard:
    """One upstream client (one connection pool) of a model, and the streams it runs now."""

    client: AsyncClient
    streams: int = 0

    def busy(self) -> int:
        return self.streams

    def release(self, _task: object = None) -> None:
        self.streams -= 1


class UpstreamPool:
    """The upstream clients of the served models (module docstring)."""

    def __init__(self) -> None:
        self.shards: dict[str, list[Shard]] = {}  # per deployment
        self._clients: list[AsyncClient] = []
        self._pools: list[httpx.AsyncClient] = []  # the clients' connection pools

    def open(self, models: Iterable[ModelEntry]) -> None:
        """The first connection pool of each of `models`."""
        for entry in models:
            self._shards_of(entry)

    def take(self, entry: ModelEntry) -> Shard:
        """The least busy pool of the model, or a new one while every pool is full, with the
        stream counted in it (`Shard.release` when the stream ends)."""
        shards = self._shards_of(entry)
        shard = min(shards, key=Shard.busy)
        if shard.streams >= POOL_SIZE:
            shard = self._new_shard(entry)
            shards.append(shard)
        shard.streams += 1
        return shard

    def busy(self, entry: ModelEntry) -> int:
        """The streams the deployment runs now, in this process."""
        return sum(shard.streams for shard in self.shards.get(entry.deployment, ()))

    async def aclose(self) -> None:
        """Close every client and its connections."""
        for client in self._clients:
            await client.aclose()
        for pool in self._pools:  # given to the clients, so theirs to close is not
            await pool.aclose()
        self._clients.clear()
        self._pools.clear()
        self.shards.clear()

    def _shards_of(self, entry: ModelEntry) -> list[Shard]:
        shards = self.shards.get(entry.deployment)
        if shards is None:
            shards = self.shards[entry.deployment] = [self._new_shard(entry)]
        return shards

    def _new_shard(self, entry: ModelEntry) -> Shard:
        timeouts = Timeouts(idle=entry.idle_timeout_seconds)
        pool = httpx.AsyncClient(
            timeout=timeouts.httpx_timeout(),
            # the process's one TLS context (client/tls.py); lean HTTP/1.1 (client/transports.py)
            transport=async_transport(
                ssl_context_for(entry.base_url), httpx.Limits(max_connections=POOL_SIZE)
            ),
        )
        self._pools.append(pool)
        client = AsyncClient(
            entry.model,
            api_key=entry.api_key.reveal() if entry.api_key else None,
            base_url=entry.base_url,
            client_type=entry.client_type,
            platform=entry.platform,
            retry=RetryPolicy(max_attempts=entry.max_attempts),
            timeouts=timeouts,
            http_client=pool,
            traces=False,  # the relay records every served turn itself, as "server"
        )
        self._clients.append(client)
        return Shard(client)
