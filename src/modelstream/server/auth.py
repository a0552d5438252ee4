"""Bearer-key checks: `Authorization: Bearer <key>` against the configured keys, in constant
time per key, every key compared, so neither the answer's timing nor its text says anything
about the keys."""

from __future__ import annotations

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
        scheme, _, token = (authorization or "").strip().partition(" ")
        # Starlette decodes header bytes as latin-1: encoding back gives the bytes as sent
        given = token.strip().encode("latin-1", "replace")
        allowed = False
        for expected in self._expected:
            allowed |= hmac.compare_digest(given, expected)
        return allowed and scheme.lower() == "bearer"

    def __repr__(self) -> str:
        return f"BearerKeys({len(self._expected)} keys)"
