"""Where streams live while they run and while they can be resumed: `StreamStore` is the
contract (stores/base.py), `MemoryStore` the in-process implementation."""

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
]
