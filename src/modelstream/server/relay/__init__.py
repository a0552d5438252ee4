"""Streams that outlive their connection: a producer per stream writes events into the store;
every HTTP response, the first or a resumed one, is a reader of that store.

    POST /v1/stream ─► start() ─► producer task ─► store.append(seq, event) … finish(terminal)
                         │                                  │
                         └─► sse(rid, 0) ◄── store.read ◄───┴───► sse(rid, n) ◄── GET /v1/streams/…

    stream_relay.py  `StreamRelay`: starts a stream (plan, slot, first attempt, store entry,
                     producer)
    attempts.py      a turn's deployments tried in turn until one gives its first event
    pool.py          the upstream clients, `POOL_SIZE` connections each, per deployment
    producer.py      a stream's upstream call into the store, supervised (grace, stop)
    outbox.py        the producer's events handed to the store in batches
    writer.py        a reader's SSE output
    priority.py      a starting stream's first event before other streams' bulk
    observers.py     what is counted of each stream: the metrics, the cost, the deployments
    ledger.py        a virtual key's turns: admitted with an estimate held, settled exactly
    error_lines.py   the error lines the relay writes itself
"""

from .ledger import KeyLedger
from .observers import CostCounter, DeploymentMetrics, RelayObserver, StreamMetrics
from .outbox import MAX_PENDING
from .pool import POOL_SIZE
from .priority import BurstClock
from .stream_relay import StreamRelay

__all__ = [
    "MAX_PENDING",
    "POOL_SIZE",
    "BurstClock",
    "CostCounter",
    "DeploymentMetrics",
    "KeyLedger",
    "RelayObserver",
    "StreamMetrics",
    "StreamRelay",
]
