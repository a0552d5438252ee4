"""Bearer-key checks: `Authorization: Bearer <key>` against the configured keys, in constant
time per key, every key compared, so neither the answer's timing nor its text says anything
about the keys. A stream is bound to the key that started it by `owner`, a hash of that key."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from ..client.credentials import Secret


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
        scheme, given = _bearer(authorization)
        allowed = False
        for expected in self._expected:
            allowed |= hmac.compare_digest(given, expected)
        return allowed and scheme.lower() == "bearer"

    def owner(self, authorization: str | None) -> str:
        """Who a stream started with this header belongs to: a hash of its key (the key itself
        is never stored), or "" on an open server, where every caller may read every stream."""
        if self.open:
            return ""
        return hashlib.sha256(b"modelstream stream owner\0" + _bearer(authorization)[1]).hexdigest()

    def __repr__(self) -> str:
        return f"BearerKeys({len(self._expected)} keys)"


def _bearer(authorization: str | None) -> tuple[str, bytes]:
    """The scheme and the token of an `Authorization` value."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    # Starlette decodes header bytes as latin-1: encoding back gives the bytes as sent
    return scheme, token.strip().encode("latin-1", "replace")
