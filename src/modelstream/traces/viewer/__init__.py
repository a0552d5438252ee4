"""The trace viewer web app (`modelstream traces serve`)."""

from .app import create_app

__all__ = ["create_app"]
