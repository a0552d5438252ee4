"""The chat playground page, served by `modelstream serve` at /playground and by
`modelstream playground` (docs/playground.md)."""

from .app import create_playground

__all__ = ["create_playground"]
