"""Bearer-key checks: `Authorization: Bearer <key>` against the configured keys, in constant
time per key, every key compared, so neither the answer's timing nor its text says anything
about the keys. Streams and server traces belong to the key that started them: `holder`, a hash of
that key."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from ..auth.secret import Secret


class BearerKeys:
    """The keys clients may send; none means an open server."""

    def __init__(self, keys: Sequence[Secret]) -> None:
        self._expected = [key.reveal().encode("utf-8") for key in keys]

    @property
    def open(self) -> bool:
        return not self._expected

    def allows(self, authorization: str | None) -> bool:
        """Whether this `Authorization` header value carries one of the keys."""
        if self.open:
            return True
        scheme, token = scheme_and_token(authorization)
        # Starlette decodes header bytes as latin-1: encoding back gives the bytes as sent
        given = token.encode("latin-1", "replace")
        allowed = False
        for expected in self._expected:
            allowed |= hmac.compare_digest(given, expected)
        return allowed and scheme.lower() == "bearer"

    def holder(self, authorization: str | None) -> str | None:
        """Who sent an allowed request, as `key_hash` of its bearer key (the key itself is never
        stored); None on an open server, where callers have no identity."""
        if self.open:
            return None
        return key_hash(scheme_and_token(authorization)[1])

    def __repr__(self) -> str:
        return f"BearerKeys({len(self._expected)} keys)"


def scheme_and_token(authorization: str | None) -> tuple[str, str]:
    """The scheme and the token of an `Authorization` value ("" for a part it lacks)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    return scheme, token.strip()


def key_hash(key: str) -> str:
    """A name for a bearer key that is safe to store and show: `key-` and the first 16 hex
    digits of its SHA-256 (server keys are random secrets, so the hash does not reveal them)."""
    digest = hashlib.sha256(key.encode("latin-1", "replace")).hexdigest()
    return "key-" + digest[:16]
