"""One TLS context per process for every client's connection pool.

A context that trusts the CA bundle reads and parses the bundle: about 15 ms of CPU, which httpx
pays again in every client it builds (`verify=True`). A context is safe to share between
connections, clients and threads, so the clients of one process share one, made the first time a
client may speak TLS, the way httpx makes it (`SSL_CERT_FILE` / `SSL_CERT_DIR`, else certifi).

A client whose base URL is plain `http://` (a local server, the emulator) never makes a TLS
connection, so it does not pay for the bundle: it gets a context with no CA loaded, which refuses
any certificate if it were ever used. With a proxy in the environment (the proxy itself may be
reached over TLS) it gets the shared context.
"""

from __future__ import annotations

import ssl
import threading
import urllib.request

import httpx

_lock = threading.Lock()
_shared: ssl.SSLContext | None = None
_untrusting: ssl.SSLContext | None = None


def shared_ssl_context() -> ssl.SSLContext:
    """The process's verifying context, made on first use."""
    global _shared
    if _shared is None:
        with _lock:
            if _shared is None:
                _shared = httpx.create_ssl_context()
    return _shared


def ssl_context_for(base_url: str | None, own: ssl.SSLContext | None = None) -> ssl.SSLContext:
    """The context a client's pool gets: the caller's `own`, else the shared one, else (plain
    http and no proxy) one that trusts nothing."""
    if own is not None:
        return own
    if base_url is None or not base_url.lower().startswith("http://"):
        return shared_ssl_context()
    if urllib.request.getproxies():
        return shared_ssl_context()
    return _trusting_nothing()


def _trusting_nothing() -> ssl.SSLContext:
    global _untrusting
    if _untrusting is None:
        # verify_mode CERT_REQUIRED and check_hostname stay on, with no CA: any TLS handshake
        # fails, so this context can never be the cause of an unverified connection
        _untrusting = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return _untrusting
