"""The transport of a client's own connection pool, with the process's TLS context (tls.py).

An async client reads its sockets through client/http1.py (HTTP/1.1 parsed by httptools) when
httptools is installed (the `server` extra brings it), else through httpx's own transport over
the asyncio backend of client/network.py; both cost far less per chunk than httpx's default over
anyio (bench/bench_load.py). A blocking client's sockets are plain blocking sockets already.
"""

from __future__ import annotations

import functools
import importlib.util
import ssl

import httpx

from .network import DEFAULT_LIMITS, httpcore_transport


@functools.cache
def _httptools_installed() -> bool:
    """Looked up once per process: a client is built often, and a failed import is not
    remembered by Python, so it would search the path again each time."""
    return importlib.util.find_spec("httptools") is not None


def async_transport(
    ssl_context: ssl.SSLContext, limits: httpx.Limits | None = None
) -> httpx.AsyncBaseTransport:
    if not _httptools_installed():
        return httpcore_transport(ssl_context, limits)
    from .http1 import Http1Transport

    return Http1Transport(ssl_context, limits)


def sync_transport(
    ssl_context: ssl.SSLContext, limits: httpx.Limits | None = None
) -> httpx.BaseTransport:
    return httpx.HTTPTransport(verify=ssl_context, limits=limits or DEFAULT_LIMITS)


__all__ = ["async_transport", "sync_transport"]
