"""What a signer is: it adds credentials to a request that is otherwise ready to send.

Like httpx's `Auth`, but sans-IO: a signer reads the request (method, URL, headers, body) and
the time, and returns the headers to add. It opens no socket and reads no clock, so it can be
called once per attempt (a retry gets a fresh SigV4 date) and tested byte for byte.

Credentials that expire (AWS session credentials, Google and Entra access tokens) come from a
provider object that a signer holds: refreshing them is IO, and it happens there, only when
they are stale. A signer whose provider may block says so with `may_block`, so an async shell
knows to call it in a worker thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from .secret import Secret


@dataclass(frozen=True)
class SignableRequest:
    """One HTTP request as it will be sent, minus its credentials."""

    method: str
    url: str  # absolute, with its query string, already percent-encoded as it goes on the wire
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    body: bytes = field(default=b"", repr=False)


class RequestSigner(Protocol):
    """Adds credentials to a request."""

    may_block: bool  # True when `sign` may refresh credentials through IO (a provider)

    def sign(self, request: SignableRequest, now: datetime) -> dict[str, str]:
        """The headers to add to `request` sent at `now` (an aware UTC datetime)."""
        ...

    def redact(self, text: str) -> str:
        """`text` with every secret this signer sends masked (provider errors may echo one)."""
        ...


@dataclass(frozen=True)
class AccessToken:
    """A bearer token and when it stops working (None: the provider did not say)."""

    value: Secret
    expires_at: datetime | None = None

    def fresh_at(self, now: datetime, margin_seconds: float) -> bool:
        """Whether the token still works `margin_seconds` after `now`."""
        if self.expires_at is None:
            return True
        return (self.expires_at - now).total_seconds() > margin_seconds


class TokenProvider(Protocol):
    """Hands out a valid access token, refreshing it (IO) when it is stale."""

    def token(self, now: datetime) -> AccessToken: ...


def redact_all(text: str, secrets: list[Secret]) -> str:
    for secret in secrets:
        text = secret.redact(text)
    return text
