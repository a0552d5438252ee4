"""Who is calling: a request's bearer key checked against the static `keys` first (in constant
time, `web.keys.BearerKeys`), then against the virtual keys' store (by the SHA-256 of the
secret: `keys.secrets`), so a server with both keeps its static keys' speed and rights.

A caller is known by `holder`, the hash of its key (`web.keys.key_hash`): streams and traces
belong to it whichever kind of key it is. A virtual key also brings its record, for the
admission of each turn (`keys.Admission`), its name, for traces and metrics, and its secret,
held only in memory as a `Secret` (never logged or stored)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..auth.secret import Secret
from ..web.keys import BearerKeys, key_hash, scheme_and_token
from .keys.records import KeyRecord
from .keys.refusals import refusal_for
from .keys.store import KeyStore, Turnaway


@dataclass(frozen=True)
class Caller:
    """An allowed caller (module docstring)."""

    holder: str | None  # the key's hash; None on an open server
    record: KeyRecord | None = None  # a virtual key's record, as it was when checked
    secret: Secret | None = field(default=None, repr=False)  # a virtual key's secret

    @property
    def key_name(self) -> str | None:
        return None if self.record is None else self.record.name


OPEN = Caller(None)


class Callers:
    """The keys a request may carry: `static` and, when `virtual` is given, the store's."""

    def __init__(self, static: BearerKeys, virtual: KeyStore | None = None) -> None:
        self.static = static
        self.virtual = virtual

    @property
    def open(self) -> bool:
        return self.static.open and self.virtual is None

    async def identify(self, authorization: str | None, now: float) -> Caller | None:
        """The caller of a request with this `Authorization` value; None when its key is none
        of them (the route answers its own 401). A revoked or expired virtual key gets the
        `Refusal` that says so."""
        if self.open:
            return OPEN
        if not self.static.open and self.static.allows(authorization):
            return Caller(self.static.holder(authorization))
        if self.virtual is None:
            return None
        scheme, token = scheme_and_token(authorization)
        if scheme.lower() != "bearer" or not token:
            return None
        record = await self.virtual.by_secret(token)
        if record is None:
            return None
        status = record.status(now)
        if status != "active":
            turned = Turnaway("revoked" if status == "revoked" else "expired", record)
            raise refusal_for(turned, "", now)
        return Caller(key_hash(token), record, Secret(token))
