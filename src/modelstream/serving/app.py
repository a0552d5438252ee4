"""What `modelstream serve` and `modelstream playground` run: the server's app (`server`) with
the chat page (`playground`) mounted at `/playground`. The one module that imports both; neither
imports the other, and both import the HTTP layer they share from `web`.

    app = create_app(settings, store=store, bound_host=host)    # an ASGI app, for uvicorn

Starlette is imported with this module: import it when the server runs (the `server` extra).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Mount

from ..playground import PlaygroundSettings, create_playground
from ..server.app import create_app as create_server_app
from ..server.config import ServerSettings
from ..server.stores import StreamStore
from ..web.hosts import HostPolicy


def create_app(
    settings: ServerSettings, *, store: StreamStore | None = None, bound_host: str | None = None
) -> Starlette:
    """The server as an ASGI app (`server.create_app`, which says what `store` and `bound_host`
    are), with the playground at `/playground`, answering the `Host` names the server does."""
    hosts = HostPolicy.for_listener(bound_host, settings.allowed_hosts)
    playground = create_playground(playground_settings(settings), hosts)
    return create_server_app(
        settings, store=store, bound_host=bound_host, routes=[Mount("/playground", playground)]
    )


def playground_settings(settings: ServerSettings) -> PlaygroundSettings:
    """What the playground needs of the server's settings."""
    return PlaygroundSettings(
        keys=settings.keys,
        models={m.server_model_id: m.model for m in settings.models},
        session_seconds=settings.playground_session_seconds,
        body_timeout_seconds=settings.limits.body_timeout_seconds,
    )


__all__ = ["create_app", "playground_settings"]
