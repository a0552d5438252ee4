"""Shared helpers of the modelstream-client tests: `drive` streams a turn through `Client` or
`AsyncClient` with `client_type="modelstream"` against a live server (the server tests'
fixtures, `support.server`), and `FaultyProxy`, a TCP proxy on 127.0.0.1 that cuts or
stalls its next connections after a given number of response-body bytes, as a network would.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from modelstream import FinalResponse, ModelstreamError, PartialResponse
from modelstream.client import AsyncClient, Client
from modelstream.types import Config, Event, Message
from support.server import AUTH, CLIENT_KEY, read_sse, user

MODES = ("sync", "async")
HELLO = [user("hello")]


@dataclass
class Outcome:
    """What the caller of `stream()` saw."""

    events: list[Event]
    result: FinalResponse | PartialResponse | None
    error: ModelstreamError | None
    sleeps: list[float] = field(default_factory=list)

    @property
    def response_id(self) -> str | None:
        return self.result.metadata.response_id if self.result else None

    @property
    def resumes(self) -> list[dict[str, Any]]:
        assert self.result is not None
        return [d for d in self.result.metadata.diagnostics if d["type"] == "resume"]


def drive(
    mode: str,
    base_url: str,
    messages: list[Message] | None = None,
    config: Config | None = None,
    *,
    model: str = "anthropic",
    api_key: str = CLIENT_KEY,
    sleep: Callable[[float], None] | None = None,
    **options: Any,
) -> Outcome:
    """One turn through the sync or the async client; every backoff is recorded, and slept
    only through `sleep` when given."""
    sleeps: list[float] = []

    def record(seconds: float) -> None:
        sleeps.append(seconds)
        if sleep is not None:
            sleep(seconds)

    async def record_async(seconds: float) -> None:
        record(seconds)

    kwargs = dict(client_type="modelstream", base_url=base_url, api_key=api_key, **options)
    messages = HELLO if messages is None else messages
    events: list[Event] = []
    error: ModelstreamError | None = None
    if mode == "sync":
        with Client(model, sleep=record, **kwargs) as client:
            stream = client.stream(messages, config)
            try:
                with stream:
                    events.extend(stream)
            except ModelstreamError as exc:
                error = exc
            result = stream.result
    else:

        async def main() -> FinalResponse | PartialResponse | None:
            nonlocal error
            async with AsyncClient(model, sleep=record_async, **kwargs) as client:
                stream = client.stream(messages, config)
                try:
                    async with stream:
                        async for event in stream:
                            events.append(event)
                except ModelstreamError as exc:
                    error = exc
                return stream.result

        result = asyncio.run(main())
    return Outcome(events, result, error, sleeps)


def stored_events(server_url: str, response_id: str) -> tuple[list[str], list[str | None]]:
    """The server's stored stream, read whole: each frame's data and id, [DONE] included."""
    with (
        httpx.Client(base_url=server_url) as http,
        http.stream("GET", f"/v1/streams/{response_id}", headers=AUTH) as response,
    ):
        assert response.status_code == 200, response.read()
        stream = read_sse(response)
    return stream.data, stream.ids


def without_clock(events: list[Event]) -> list[dict[str, Any]]:
    return [{k: v for k, v in event.items() if k != "created_at"} for event in events]


# --- a network that fails -------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """What happens to one connection: after `after` bytes of the response body, the proxy
    closes it ("cut") or stops forwarding while keeping it open ("stall")."""

    after: int
    kind: Literal["cut", "stall"] = "cut"


class FaultyProxy:
    """A TCP proxy on 127.0.0.1 in front of `target`; the n-th connection accepted after
    `plan(...)` gets the n-th fault (later ones pass untouched). `tripped` counts faults that
    happened, so a test knows its connection really broke."""

    def __init__(self, target_port: int) -> None:
        self._target = ("127.0.0.1", target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._faults: deque[Fault | None] = deque()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.tripped = 0
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def plan(self, *faults: Fault | None) -> None:
        with self._lock:
            self._faults = deque(faults)
            self.tripped = 0

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                _close(sock)

    def __enter__(self) -> FaultyProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._target)
            with self._lock:
                fault = self._faults.popleft() if self._faults else None
                self._sockets += [client, server]
            threading.Thread(target=self._upstream, args=(client, server), daemon=True).start()
            threading.Thread(
                target=self._downstream, args=(server, client, fault), daemon=True
            ).start()

    def _upstream(self, client: socket.socket, server: socket.socket) -> None:
        try:
            while data := client.recv(65536):
                server.sendall(data)
        except OSError:
            pass
        _close(server)  # the client left: the server sees its reader go

    def _downstream(
        self, server: socket.socket, client: socket.socket, fault: Fault | None
    ) -> None:
        head = bytearray()
        body_start: int | None = None
        sent = 0
        try:
            while data := server.recv(65536):
                if fault is not None and body_start is None:
                    head += data
                    end = head.find(b"\r\n\r\n")
                    if end >= 0:
                        body_start = end + 4
                if fault is not None and body_start is not None:
                    allowed = body_start + fault.after - sent
                    if allowed < len(data):
                        client.sendall(data[: max(allowed, 0)])
                        with self._lock:
                            self.tripped += 1
                        if fault.kind == "cut":
                            _close(client)
                            _close(server)
                        return  # a stall: nothing more is forwarded
                client.sendall(data)
                sent += len(data)
        except OSError:
            pass
        _close(client)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


__all__ = [
    "HELLO",
    "MODES",
    "Fault",
    "FaultyProxy",
    "Outcome",
    "drive",
    "stored_events",
    "without_clock",
]
