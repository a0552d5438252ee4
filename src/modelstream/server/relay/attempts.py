"""A turn's attempts: the router's candidates tried one after another until one gives the
turn's first event, each with its own upstream pool, config and checks.

Only a failure before the first event moves the turn on (`routing.switching`); the producer
asks, and never after it has relayed an event, so no event is sent twice and nothing a caller
has seen is replaced. Each move is noted (`Switch`) for the trace, the metrics and the answer's
`x-modelstream-deployment` header; a deployment's key is never part of it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...client import AsyncEventStream
from ...client.routing import resolve_route
from ...errors import ModelstreamError, StreamError
from ...web.refusals import Refusal
from ..config import ModelEntry
from ..limits import off_loop
from ..request_policy import check_upstream_request
from ..routing import Router
from ..wire import StreamRequest
from .pool import Shard, UpstreamPool

log = logging.getLogger("modelstream.server")


@dataclass(frozen=True)
class Switch:
    """One move from a failed deployment to the next."""

    failed: str  # the deployment that failed
    to: str  # the one tried next
    reason: str  # `routing.switch_reason`
    error: str  # the failure's type
    status: int | None = None  # its HTTP status, if it had one
    cooled: bool = False  # whether the failed deployment now cools down

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": "deployment_switch",
            "from": self.failed,
            "to": self.to,
            "reason": self.reason,
            "error": self.error,
            "status": self.status,
            "cooled": self.cooled,
        }


@dataclass
class Attempts:
    """The attempts of one turn (module docstring). `checked`: the entry the route already
    checked the request against (its checks are not run twice)."""

    router: Router
    pool: UpstreamPool
    request: StreamRequest
    candidates: list[ModelEntry]
    body_size: int = 0
    checked: ModelEntry | None = None
    switches: list[Switch] = field(default_factory=list)
    entry: ModelEntry | None = None  # the deployment tried now
    shard: Shard | None = None
    _redacts: list[Callable[[str], str]] = field(default_factory=list)

    async def first(self) -> AsyncEventStream:
        """The first candidate's stream. Its request errors are the caller's (a bad message, a
        config its protocol refuses): they are raised, not passed over."""
        entry = self.candidates.pop(0)
        config = self.request.config_of(_protocol(entry))
        if entry is not self.checked:
            await self._check(entry, config)
        return await self._open(entry, config)

    async def after(self, error: StreamError) -> AsyncEventStream | None:
        """The next candidate's stream after `error` ended the attempt before its first event;
        None when the error does not move a turn, or no candidate is left that can take it."""
        failed = self.entry
        assert failed is not None
        reason, cooled = await self.router.failed(failed, error)
        if reason is None:
            return None
        self.release()
        while self.candidates:
            entry = self.candidates.pop(0)
            try:
                config = self.request.config_of(_protocol(entry))
                if entry is not self.checked:
                    await self._check(entry, config)
                stream = await self._open(entry, config)
            except (Refusal, ModelstreamError, KeyError, TypeError, ValueError) as exc:
                log.info(
                    "deployment %s passed over: it cannot take this request (%s)",
                    entry.deployment,
                    type(exc).__name__,
                )
                continue
            status = getattr(error, "status", None)
            self.switches.append(
                Switch(
                    failed.deployment,
                    entry.deployment,
                    reason,
                    type(error).__name__,
                    status if isinstance(status, int) else None,
                    cooled,
                )
            )
            return stream
        return None

    def redact(self, text: str) -> str:
        """`text` with every credential of every deployment tried masked."""
        for redact in self._redacts:
            text = redact(text)
        return text

    def release(self, _task: object = None) -> None:
        """The current attempt's pool has one stream fewer."""
        if self.shard is not None:
            self.shard.release()
            self.shard = None

    async def _check(self, entry: ModelEntry, config: Any) -> None:
        await off_loop(self.body_size, check_upstream_request, entry, self.request.messages, config)

    async def _open(self, entry: ModelEntry, config: Any) -> AsyncEventStream:
        shard = self.pool.take(entry)
        try:
            stream = await off_loop(
                self.body_size, shard.client.stream, self.request.messages, config
            )
        except BaseException:
            shard.release()
            raise
        self.entry, self.shard = entry, shard
        self._redacts.append(shard.client.redact)
        await self.router.started(entry)
        return stream


def _protocol(entry: ModelEntry) -> str:
    return resolve_route(entry.model, entry.client_type, entry.platform).client_type
