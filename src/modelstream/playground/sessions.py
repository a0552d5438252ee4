"""The playground's sign-ins, and whether a request was sent by the page itself.

Signing in trades a bearer key for a session: a random id (`secrets.token_urlsafe`) that the
browser keeps in an HttpOnly cookie, and the key it stands for, kept here in the server's memory
until the session is signed out or expires. So no script, and no copy of the cookie taken after
sign-out or expiry, ever holds the key. Sessions live in this process only: a restart signs
everyone out, and each process of a multi-process server has its own.

A browser sends a cookie with whatever request a page makes, so a state-changing request must
also show it came from the playground's own page: `Sec-Fetch-Site`, which current browsers set
and no page can, must be `same-origin` or `none` (the person's own action); a browser that does
not send it must send the request's own `Origin`. (Not `Origin` first: under the pages'
`Referrer-Policy: no-referrer`, Chromium sends `Origin: null` with a form's POST.) A request
with neither comes from a program, not a page, and is not a forgery.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..auth.secret import Secret

SESSION_SECONDS = 12 * 3600.0  # the config's default playground_session_seconds
MAX_SESSIONS = 1_000  # past it, a sign-in ends the oldest session


@dataclass(frozen=True)
class _Session:
    key: Secret = field(repr=False)
    expires_at: float  # on the store's clock


class SessionStore:
    """Signed-in sessions in memory, at most `max_sessions`, each for `lifetime_seconds` from
    its sign-in (on `clock`, monotonic seconds)."""

    def __init__(
        self,
        lifetime_seconds: float = SESSION_SECONDS,
        *,
        max_sessions: int = MAX_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lifetime = lifetime_seconds
        self._max = max_sessions
        self._clock = clock
        self._sessions: dict[str, _Session] = {}  # oldest first: all live equally long
        self._lock = threading.Lock()

    def open(self, key: Secret) -> str:
        """A new session for `key`: its id, for the cookie."""
        session_id = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            self._forget_expired(now)
            while len(self._sessions) >= self._max:
                del self._sessions[next(iter(self._sessions))]
            self._sessions[session_id] = _Session(key, now + self._lifetime)
        return session_id

    def key(self, session_id: str | None) -> Secret | None:
        """The key a live session signed in with; None for an unknown, ended or expired one."""
        if not session_id:
            return None
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return None
            if self._clock() >= session.expires_at:
                del self._sessions[session_id]
                return None
            return session.key

    def close(self, session_id: str | None) -> None:
        """Sign a session out (nothing if there is none)."""
        with self._lock:
            self._sessions.pop(session_id or "", None)

    def _forget_expired(self, now: float) -> None:
        while self._sessions:
            oldest = next(iter(self._sessions))
            if self._sessions[oldest].expires_at > now:
                return
            del self._sessions[oldest]

    def __repr__(self) -> str:
        return f"SessionStore({len(self._sessions)} sessions)"


def cross_site(
    *, sec_fetch_site: str | None, origin: str | None, scheme: str, host: str | None
) -> str | None:
    """Why a request with these headers was sent by another site's page, or None when it was
    not (the page itself, the person's own action, or a program)."""
    if sec_fetch_site is not None:
        if sec_fetch_site.lower() in ("same-origin", "none"):
            return None
        return f"Sec-Fetch-Site is {sec_fetch_site[:40]!r}"
    if origin is not None and not _same_origin(origin, scheme, host):
        return f"Origin {origin[:100]!r} is not this server's"
    return None


def _same_origin(origin: str, scheme: str, host: str | None) -> bool:
    """Whether `origin` is the origin of a request for `host` that came over `scheme`.

    An https origin on a request that came as http is the page's own when a TLS proxy in front
    ended the connection (the server trusts no forwarded-scheme header); the reverse, an http
    page posting to an https server, is another origin."""
    try:
        parts = urlsplit(origin.lower())
    except ValueError:
        return False
    if parts.path or parts.query or parts.fragment or not host:
        return False  # "null" (a sandboxed frame, a redirect across sites) included
    schemes = ("http", "https") if scheme == "http" else (scheme,)
    return parts.scheme in schemes and parts.netloc == host.strip().lower()


__all__ = ["MAX_SESSIONS", "SESSION_SECONDS", "SessionStore", "cross_site"]
