"""The chat playground page, served by `modelstream serve` at /playground and by
`modelstream playground` (docs/playground.md). It knows the server only through its HTTP API
and `PlaygroundSettings`; `modelstream.serving` mounts it on the server's app."""

from .app import create_playground
from .settings import PlaygroundSettings

__all__ = ["PlaygroundSettings", "create_playground"]
