"""The transport's failures are classified by one table (client/failures.py); `StreamCall`
decides from the fault and names no transport class."""

from __future__ import annotations

import ast
import asyncio
import socket
import ssl
from pathlib import Path

import httpx
import pytest

import modelstream.client.streams as streams
from modelstream.client.failures import Fault, classify
from modelstream.errors import IncompleteStreamError


@pytest.mark.parametrize(
    ("exc", "fault"),
    [
        (TimeoutError(), Fault.DEADLINE),
        (httpx.PoolTimeout("pool"), Fault.POOL_TIMEOUT),
        (httpx.ConnectTimeout("connect"), Fault.CONNECT_TIMEOUT),
        (httpx.ReadTimeout("read"), Fault.IDLE_TIMEOUT),
        (httpx.WriteTimeout("write"), Fault.IDLE_TIMEOUT),
        (httpx.ConnectError("no"), Fault.CONNECT),
        (httpx.ReadError("reset"), Fault.BROKEN),
        (httpx.RemoteProtocolError("peer closed"), Fault.BROKEN),
        (asyncio.CancelledError(), Fault.CANCELLED),
        (GeneratorExit(), Fault.CANCELLED),
        (KeyboardInterrupt(), Fault.CANCELLED),
        (IncompleteStreamError("finish reason", "cut"), Fault.OTHER),
        (httpx.DecodingError("gzip"), Fault.OTHER),
        (ValueError("a bug"), Fault.OTHER),
    ],
)
def test_each_exception_has_one_fault(exc: BaseException, fault: Fault) -> None:
    failure = classify(exc)
    assert failure.fault is fault and failure.exc is exc
    assert failure.timed_out == (
        fault in {Fault.POOL_TIMEOUT, Fault.CONNECT_TIMEOUT, Fault.IDLE_TIMEOUT}
    )
    assert failure.connection == isinstance(exc, httpx.TransportError)


def _raised_from(cause: BaseException) -> httpx.ConnectError:
    try:
        try:
            raise cause
        except BaseException as inner:
            raise httpx.ConnectError("could not connect") from inner
    except httpx.ConnectError as outer:
        return outer


@pytest.mark.parametrize(
    ("cause", "reason", "detail"),
    [
        (
            socket.gaierror(-2, "Name or service not known"),
            "dns",
            "[Errno -2] Name or service not known",
        ),
        (ConnectionRefusedError(111, "Connection refused"), "refused", ""),
        (
            ssl.SSLError(1, "certificate verify failed"),
            "tls",
            "certificate verify failed",
        ),
        (OSError(101, "Network is unreachable"), "connect", "could not connect"),
    ],
)
def test_a_connect_failure_says_why_from_the_os_error(
    cause: BaseException, reason: str, detail: str
) -> None:
    failure = classify(_raised_from(cause))
    assert (failure.fault, failure.reason, failure.detail) == (Fault.CONNECT, reason, detail)


def test_the_call_names_no_transport() -> None:
    tree = ast.parse(Path(streams.__file__).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    }
    assert imported.isdisjoint({"httpx", "httpcore", "asyncio", "ssl", "socket", "anyio"})
