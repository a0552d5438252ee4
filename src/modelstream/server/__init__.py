"""The modelstream server: configured models over HTTP as resumable streams (docs/server.md).

    settings = load_settings("server.toml")
    app = create_app(settings)            # an ASGI app: the API alone

`modelstream serve` runs `modelstream.serving.create_app`: this app with the playground mounted.

`create_app` and `BackgroundServer` need the `server` extra (Starlette, uvicorn) and are imported
on first use, so `config` and `stores` import without it (and the `serve` command, in
`modelstream.serving.command`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import (
    Limits,
    ModelEntry,
    ServerConfigError,
    ServerSettings,
    load_settings,
    settings_from_mapping,
)
from .stores import MemoryStore, StreamStore

if TYPE_CHECKING:
    from .app import create_app
    from .background import BackgroundServer


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    if name == "BackgroundServer":
        from .background import BackgroundServer

        return BackgroundServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BackgroundServer",
    "Limits",
    "MemoryStore",
    "ModelEntry",
    "ServerConfigError",
    "ServerSettings",
    "StreamStore",
    "create_app",
    "load_settings",
    "settings_from_mapping",
]
