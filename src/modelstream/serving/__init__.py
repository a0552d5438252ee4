"""What `modelstream serve` and `modelstream playground` run, one level above the server and the
chat page, the one place that imports both:

    app.py       create_app(settings, *, store=None, bound_host=None): the server's app
                 (`modelstream.server.create_app`) with the playground mounted at /playground
    command.py   the `serve` command (`python -m modelstream.server` runs it too)

`create_app` and `playground_settings` are imported from `app.py` on first use, so the command's
`--help` loads no Starlette.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app, playground_settings


def __getattr__(name: str) -> Any:
    if name in ("create_app", "playground_settings"):
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["create_app", "playground_settings"]
