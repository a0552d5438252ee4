"""The authentication headers of a call (the transport's job, never an encoder's: encoders
produce requests without secrets). Where the key goes is the protocol's `auth` (its descriptor)."""

from __future__ import annotations

from ..protocols import protocol_named
from .credentials import Secret


def auth_headers(client_type: str, key: Secret) -> dict[str, str]:
    """The headers that carry `key` for `client_type` (e.g. `Authorization: Bearer`,
    `x-api-key`, `x-goog-api-key`)."""
    return protocol_named(client_type, what="client type").auth.headers(key.reveal())
