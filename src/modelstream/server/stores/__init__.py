"""Where streams live while they run and while they can be resumed: `StreamStore` is the
contract (stores/base.py), `MemoryStore` the in-process implementation."""

from .base import (
    Entry,
    StoreError,
    StoreFullError,
    StoreLimitError,
    StreamStore,
    StreamTooLongError,
    UnknownStreamError,
)
from .memory import MemoryStore

__all__ = [
    "Entry",
    "MemoryStore",
    "StoreError",
    "StoreFullError",
    "StoreLimitError",
    "StreamStore",
    "StreamTooLongError",
    "UnknownStreamError",
]
