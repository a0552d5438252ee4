"""What went wrong with a connection, read once from the exception the transport raised.

The shells (async_client, sync_client) catch what httpx, asyncio and the OS raise and hand
`StreamCall` a `Failure`: the exception with its `Fault` looked up in one table below. The call
then decides retries, resumes and the error the caller sees from the fault alone, so it never
names a transport's exception classes (and a new transport is one more row in the table).
"""

from __future__ import annotations

import asyncio
import enum
import socket
import ssl
from dataclasses import dataclass

import httpx


class Fault(enum.Enum):
    """The kinds of failure the call tells apart."""

    DEADLINE = "deadline"  # the attempt deadline passed (an asyncio timeout, or checked)
    POOL_TIMEOUT = "pool_timeout"  # no pooled connection came free in time
    CONNECT_TIMEOUT = "connect_timeout"
    IDLE_TIMEOUT = "idle_timeout"  # a read (or write) waited longer than the idle timeout
    CONNECT = "connect"  # no connection was made: DNS, refused, TLS, ...
    BROKEN = "broken"  # the connection failed after it was made
    CANCELLED = "cancelled"  # the caller stopped reading: cancellation, Ctrl-C, `break`
    OTHER = "other"  # not the transport's: the library's own errors, or a bug


# First match wins, so a subclass comes before its base (httpx's timeouts are TransportErrors).
_TABLE: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], Fault], ...] = (
    (TimeoutError, Fault.DEADLINE),
    (httpx.PoolTimeout, Fault.POOL_TIMEOUT),
    (httpx.ConnectTimeout, Fault.CONNECT_TIMEOUT),
    (httpx.TimeoutException, Fault.IDLE_TIMEOUT),
    (httpx.ConnectError, Fault.CONNECT),
    (httpx.TransportError, Fault.BROKEN),
    ((GeneratorExit, KeyboardInterrupt, asyncio.CancelledError), Fault.CANCELLED),
)
_TIMEOUTS = frozenset({Fault.POOL_TIMEOUT, Fault.CONNECT_TIMEOUT, Fault.IDLE_TIMEOUT})
_CONNECTION = _TIMEOUTS | {Fault.CONNECT, Fault.BROKEN}


@dataclass(frozen=True)
class Failure:
    """An exception and its fault; for `CONNECT`, why (`dns`, `refused`, `tls` or `connect`)
    and the system's words for it."""

    exc: BaseException
    fault: Fault
    reason: str = ""
    detail: str = ""

    @property
    def timed_out(self) -> bool:
        """One of the transport's own timeouts (not the attempt deadline)."""
        return self.fault in _TIMEOUTS

    @property
    def connection(self) -> bool:
        """The connection failed, or never came: a stream's server may still have it."""
        return self.fault in _CONNECTION


def classify(exc: BaseException) -> Failure:
    """`exc`'s fault, from the table."""
    for kinds, fault in _TABLE:
        if isinstance(exc, kinds):
            if fault is Fault.CONNECT:
                reason, detail = _connect_failure(exc)
                return Failure(exc, fault, reason, detail)
            return Failure(exc, fault)
    return Failure(exc, Fault.OTHER)


def _connect_failure(exc: BaseException) -> tuple[str, str]:
    """Why a connection was not made and the system's words for it, read from the OS error
    that httpx (through httpcore) raised it from."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, socket.gaierror):
            return "dns", str(cause)
        if isinstance(cause, ConnectionRefusedError):
            return "refused", ""
        if isinstance(cause, ssl.SSLError):
            return "tls", str(cause)
        cause = cause.__cause__ or cause.__context__
    return "connect", str(exc)


__all__ = ["Failure", "Fault", "classify"]
