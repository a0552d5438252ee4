"""`StreamRelay`: the server's streams, assembled from the relay's parts (`__init__` draws them)
and the one place that starts a stream: a slot for its caller, a pool for its upstream call,
its entry in the store, then its producer."""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import AsyncGenerator, Iterator, Sequence

from ...web.refusals import Refusal
from ..config import ModelEntry, ServerSettings
from ..errors import store_unavailable
from ..keys import Ticket
from ..limits import StreamSlots, per_key_limit
from ..routing import Router, RouterState, shared_state
from ..stores import StoreError, StoreFullError, StreamStore
from ..wire import StreamRequest, is_response_id, new_response_id
from .attempts import Attempts
from .ledger import KeyLedger
from .observers import Observers, RelayObserver
from .pool import UpstreamPool
from .priority import StartPriority
from .producer import Producer
from .writer import SSEWriter

# A stream's owner record in the store: the owner's key hash, then the stream's meta. Key hashes
# never hold the separator (`web.keys.key_hash`: "key-" and hex digits).
_META_SEPARATOR = "\n"


class StreamRelay:
    """Starts producers and serves readers; `observers` are told of each stream's counts
    (`observers.RelayObserver`)."""

    def __init__(
        self,
        settings: ServerSettings,
        store: StreamStore,
        observers: Sequence[RelayObserver] = (),
        router_state: RouterState | None = None,
        ledger: KeyLedger | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        virtual = settings.virtual_keys is not None
        per_key = per_key_limit(settings.limits, len(settings.keys), virtual)
        self.slots = StreamSlots(settings.limits.max_concurrent_streams, per_key)
        self.priority = StartPriority()
        self.pool = UpstreamPool()
        self._shards = self.pool.shards  # the same dict: per deployment, its pools
        state = router_state or shared_state(settings.router, store)
        self.router = Router(settings.served, state)
        self.ledger = ledger
        self.producer = Producer(
            settings, store, self.slots, self.priority, Observers(observers), ledger
        )
        self.writer = SSEWriter(settings, store, self.priority)

    # --- lifecycle --------------------------------------------------------------------------

    def open(self) -> None:
        """The first connection pool of each served model."""
        self.pool.open(self.settings.models)

    async def aclose(self) -> None:
        """Cancel running streams (each ends with a cancelled entry), then close the clients."""
        await self.producer.cancel_all()
        await self.pool.aclose()
        await self.router.state.aclose()
        if self.ledger is not None:
            await self.ledger.aclose()
        self.producer.close_traces()

    @property
    def in_flight(self) -> int:
        return self.slots.in_use

    # --- producing --------------------------------------------------------------------------

    @contextlib.contextmanager
    def arrival(self) -> Iterator[None]:
        """Around a stream request's reading and checks (`StartPriority.arrival`)."""
        with self.priority.arrival():
            yield

    async def start(self, entry: ModelEntry, request: StreamRequest, body_size: int = 0) -> str:
        """Plan the turn's deployments (a 429 `Refusal` when all are at their limits), take a
        slot for the caller (or a 429), plan the first upstream call (raising the library's
        errors for bad messages or config; in a worker thread when the request came in a large
        body of `body_size` bytes: `limits.off_loop`), register the stream for its caller's key
        hash and start its producer. `entry`: the deployment the route checked the request
        against."""
        caller = request.caller
        plan = await self.router.plan(request.model, self.pool.busy)
        ledger, ticket = self.ledger, None
        if ledger is not None and request.key is not None:  # a virtual key's turn: admitted
            max_tokens = request.config.get("max_tokens")
            ticket = await ledger.admit(request.key, entry, max_tokens, body_size)
        try:
            self.slots.acquire(caller)
        except BaseException:
            await _release(ledger, ticket)
            raise
        attempts = Attempts(
            self.router, self.pool, request, list(plan.candidates), body_size, checked=entry
        )
        response_id = new_response_id()
        try:
            # counted in its pool before any await: the starts that run meanwhile see this
            # pool's stream, so none is handed a pool with no free connection
            stream = await attempts.first()
            await self.store.create(response_id, _owner_record(caller or "", request.meta))
        except BaseException as exc:
            self.slots.release(caller)
            attempts.release()
            await _release(ledger, ticket)
            if isinstance(exc, StoreFullError):
                raise Refusal(
                    503,
                    "StoreFullError",
                    str(exc),
                    outcome="store_full",
                    headers={"retry-after": "1"},
                ) from None
            if isinstance(exc, StoreError):
                raise store_unavailable() from None
            raise
        task = self.producer.start(response_id, entry, request, stream, attempts, ticket)
        task.add_done_callback(attempts.release)
        return response_id

    def deployment_of(self, response_id: str) -> ModelEntry | None:
        """The deployment a running stream of this process is on (the one that answered, once
        its first event is stored); None for a stream not produced here."""
        return self.producer.deployment_of(response_id)

    def stop(self, response_id: str) -> bool:
        """Cancel a running stream's upstream call now (`Producer.stop`)."""
        return self.producer.stop(response_id)

    # --- reading ----------------------------------------------------------------------------

    async def readable_by(self, response_id: str, owner: str) -> bool:
        """Whether the stream is stored and was started with the key `owner` hashes: a stream
        of another key reads as unknown, so a resume does not tell it exists."""
        return await self.meta_for(response_id, owner) is not None

    async def meta_for(self, response_id: str, owner: str) -> str | None:
        """The stream's `StreamRequest.meta` ("" for none) when it is stored and was started
        with the key `owner` hashes; None otherwise (another key's stream reads as unknown, and
        the store is not asked about what is not a response id)."""
        if not is_response_id(response_id):
            return None
        try:
            stored = await self.store.owner(response_id)
        except StoreError:
            raise store_unavailable() from None
        if stored is None:
            return None
        stored_owner, _, meta = stored.partition(_META_SEPARATOR)
        if not hmac.compare_digest(stored_owner.encode(), owner.encode()):
            return None
        return meta

    def sse(self, response_id: str, after_seq: int) -> AsyncGenerator[bytes, None]:
        """The SSE body of a stream from `after_seq` on (`SSEWriter.sse`)."""
        return self.writer.sse(response_id, after_seq)


def _owner_record(owner: str, meta: str) -> str:
    return f"{owner}{_META_SEPARATOR}{meta}" if meta else owner


async def _release(ledger: KeyLedger | None, ticket: Ticket | None) -> None:
    """Free what a turn that never reached a provider held."""
    if ledger is not None and ticket is not None:
        await ledger.release(ticket)
