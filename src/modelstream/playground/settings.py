"""What the playground needs of the server it is mounted in, as plain values: whoever mounts it
(`modelstream.serving`) reads them from the server's settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..auth.secret import Secret


@dataclass(frozen=True)
class PlaygroundSettings:
    """The server's bearer keys (none: an open server), the upstream model of each served model
    id (a turn's cost is the upstream model's price), how long a sign-in lasts, and how long a
    request body may take to arrive."""

    keys: tuple[Secret, ...] = field(repr=False)
    models: Mapping[str, str]  # served model id -> upstream model
    session_seconds: float
    body_timeout_seconds: float
