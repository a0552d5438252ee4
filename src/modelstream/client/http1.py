"""HTTP/1.1 for the async clients' own pools, parsed by httptools (llhttp, in C).

Relaying a model's stream, each event is usually one HTTP chunk in one socket read. Through
httpx's default transport that read passes httpcore's pool and connection streams and h11's
state machine, about a quarter of a relaying server's CPU (py-spy over `bench/bench_load.py`).
Here the socket's protocol feeds what arrives to httptools at once, and a body read is a
wait on a buffer: the C parser does the framing (chunked, content-length, until close).
No published transport does this for httpx (httpx-aiohttp brings aiohttp's whole client
stack), so it is written here, behind httpx's public transport interface; httpx still builds
the requests, follows the settings, and sees its own exceptions.

What this transport does not do it hands to httpx's own transport (built with the backend of
client/network.py): anything but plain `http`/`https`, a request under another event loop than
asyncio (trio), and every request when httptools is not installed (it comes with the `server`
extra). Proxies never reach it: httpx mounts a transport of its own per proxy.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
import time
import typing
from collections.abc import AsyncIterator

import httpx

from .network import (
    DEFAULT_LIMITS,
    WaitingProtocol,
    asyncio_running,
    httpcore_transport,
    open_connection,
)

if typing.TYPE_CHECKING:
    import httptools

_DEFAULT_PORTS = {"http": 80, "https": 443}


class _Connection(WaitingProtocol):
    """One keep-alive connection: the response it is receiving, parsed as it arrives."""

    def __init__(self, loop: asyncio.AbstractEventLoop, origin: tuple[str, str, int]) -> None:
        import httptools

        super().__init__(loop)
        self._httptools = httptools
        self.origin = origin
        self.parser: httptools.HttpResponseParser | None = None
        self.idle_since = 0.0
        self.closed = False  # by either side; never reused
        self.gone = False  # the socket is closed
        self._gone: asyncio.Future[None] | None = None
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_done = False
        self.complete = False
        self.keep_alive = False
        self.until_close = False  # a body without length or chunks: it ends at the close
        self.clear_buffer()
        self.error: Exception | None = None

    # --- asyncio.Protocol --------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        parser = self.parser
        if parser is None:  # bytes while no request is out: this connection is not reusable
            self.closed = True
            if self.transport is not None:
                self.transport.close()
            return
        try:
            parser.feed_data(data)
        except self._httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"the server broke HTTP/1.1: {exc}"))

    def eof_received(self) -> bool:
        self.closed = True
        if self.parser is not None and not self.complete:
            if self.head_done and self.until_close:
                self.complete = True
                self.wake()
            elif self.head_done:
                self._fail(
                    httpx.RemoteProtocolError(
                        "peer closed connection without sending complete message body"
                    )
                )
            else:
                self._fail(
                    httpx.RemoteProtocolError("Server disconnected without sending a response.")
                )
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = self.gone = True
        if self._gone is not None and not self._gone.done():
            self._gone.set_result(None)
        if self.parser is not None and not self.complete:
            if exc is not None:
                self._fail(httpx.ReadError(str(exc) or type(exc).__name__))
            else:
                self.eof_received()
        super().connection_lost(exc)

    # --- httptools callbacks -----------------------------------------------------------------

    def on_status(self, status: bytes) -> None:
        self.reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        assert self.parser is not None
        self.status = self.parser.get_status_code()
        if 100 <= self.status < 200 and self.status != 101:  # informational: the real one follows
            self.reason, self.headers, self.status = b"", [], 0
            return
        self.until_close = not any(
            name.lower() in (b"content-length", b"transfer-encoding") for name, _ in self.headers
        ) and self.status not in (204, 304)
        self.head_done = True
        self.wake()

    def on_body(self, body: bytes) -> None:
        self.buffer(body)

    def on_message_complete(self) -> None:
        if self.status == 0:  # the end of an informational response
            return
        assert self.parser is not None
        # asked here: once feed_data has returned, llhttp has reset and answers False
        self.keep_alive = self.parser.should_keep_alive()
        self.complete = True
        self.wake()

    # --- used by the transport ---------------------------------------------------------------

    def _fail(self, error: Exception) -> None:
        if self.error is None:
            self.error = error
        self.closed = True
        if self.transport is not None:
            self.transport.close()
        self.wake()

    def get_extra_info(self, info: str) -> typing.Any:
        """As an httpcore network stream answers (`response.extensions["network_stream"]`)."""
        if self.transport is None:
            return None
        names = {"client_addr": "sockname", "server_addr": "peername"}
        return self.transport.get_extra_info(names.get(info, info))

    def reusable(self, now: float, expiry: float | None) -> bool:
        if self.closed or self.transport is None or self.transport.is_closing():
            return False
        return expiry is None or now - self.idle_since < expiry

    async def send(self, request: httpx.Request, timeouts: dict[str, float | None]) -> None:
        """Write the request; then wait for the response's head."""
        assert self.transport is not None
        self._reset()
        self.parser = self._httptools.HttpResponseParser(self)
        url = request.url
        head = [b"%s %s HTTP/1.1\r\n" % (request.method.encode("ascii"), url.raw_path)]
        for name, value in request.headers.raw:
            head.append(b"%s: %s\r\n" % (name, value))
        head.append(b"\r\n")
        chunked = request.headers.get("transfer-encoding", "").lower() == "chunked"
        await self._write(b"".join(head), timeouts.get("write"))
        async for part in request.stream:  # type: ignore[union-attr]
            if not part:
                continue
            data = b"%x\r\n%s\r\n" % (len(part), part) if chunked else part
            await self._write(data, timeouts.get("write"))
        if chunked:
            await self._write(b"0\r\n\r\n", timeouts.get("write"))
        while not self.head_done:
            if self.error is not None:
                raise self.error
            await self.wait_readable(timeouts.get("read"), httpx.ReadTimeout)
        if self.error is not None:
            raise self.error

    async def _write(self, data: bytes, timeout: float | None) -> None:
        transport = self.transport
        if self.error is not None:
            raise self.error
        if self.closed or transport is None or transport.is_closing():
            raise httpx.WriteError("the connection is closed")
        transport.write(data)
        if self.writing_paused:
            await self.wait_drained(timeout, httpx.WriteTimeout)
            if self.closed and self.error is None and not self.complete:
                raise httpx.WriteError("the connection closed while writing")

    async def read(self, timeout: float | None) -> bytes:
        """The next piece of the body, b"" at its end."""
        while not self.chunks:
            if self.error is not None:
                raise self.error
            if self.complete:
                return b""
            await self.wait_readable(timeout, httpx.ReadTimeout)
        return self.take()

    def finished(self) -> bool:
        """The response was read to its end and the connection may carry another."""
        return self.complete and self.keep_alive and self.error is None and not self.closed

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    async def wait_gone(self) -> None:
        """Drop the connection and wait until its socket is closed (the loop closes it on its
        next turn): a stream that was closed holds no socket."""
        if self.gone or self.transport is None:
            return
        self.transport.abort()
        if not self.gone:
            self._gone = self.loop.create_future()
            await self._gone


class _Body(httpx.AsyncByteStream):
    """A response body as httpx reads it; the connection goes back to the pool at its end."""

    def __init__(self, transport: Http1Transport, connection: _Connection, timeout: float | None):
        self._transport = transport
        self._connection = connection
        self._timeout = timeout
        self._done = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        # an iterator, not an async generator: one left unfinished is not finalized later by
        # the loop in a task of its own
        return self

    async def __anext__(self) -> bytes:
        try:
            chunk = await self._connection.read(self._timeout)
        except BaseException:
            self._release()
            raise
        if not chunk:
            self._release()
            raise StopAsyncIteration
        return chunk

    async def aclose(self) -> None:
        self._release()
        if self._connection.closed:
            await self._connection.wait_gone()
            # and the turn in which the loop finalizes httpx's generators over this body
            await asyncio.sleep(0)

    def _release(self) -> None:
        if not self._done:
            self._done = True
            self._transport._release(self._connection)


class Http1Transport(httpx.AsyncBaseTransport):
    """Pooled HTTP/1.1 connections per origin (module docstring); limits as httpx's."""

    def __init__(self, ssl_context: ssl.SSLContext, limits: httpx.Limits | None = None) -> None:
        limits = limits or DEFAULT_LIMITS
        self._ssl_context = ssl_context
        self._max_connections = limits.max_connections
        self._max_idle = limits.max_keepalive_connections
        self._expiry = limits.keepalive_expiry
        self._fallback = httpcore_transport(ssl_context, limits)
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._open = 0  # connections made and not closed (idle or carrying a request)
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        scheme = url.scheme
        if scheme not in _DEFAULT_PORTS or not asyncio_running():
            return await self._fallback.handle_async_request(request)
        if self._closed:
            raise RuntimeError("the transport is closed")
        origin = (scheme, url.host, url.port or _DEFAULT_PORTS[scheme])
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        connection = await self._acquire(origin, timeouts)
        try:
            await connection.send(request, timeouts)
        except BaseException as exc:
            self._release(connection)  # unfinished: closed
            if isinstance(exc, OSError):
                raise httpx.WriteError(str(exc)) from exc
            raise
        return httpx.Response(
            connection.status,
            headers=connection.headers,
            stream=_Body(self, connection, timeouts.get("read")),
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": connection.reason,
                "network_stream": connection,
            },
        )

    async def _acquire(
        self, origin: tuple[str, str, int], timeouts: dict[str, float | None]
    ) -> _Connection:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.reusable(now, self._expiry):
                return connection
            self._discard(connection)
        full = self._max_connections is not None and self._open >= self._max_connections
        # a full pool closes an idle connection of another origin for this one, else waits
        if full and not self._close_one_idle():
            await self._wait_for_slot(timeouts.get("pool"))
            return await self._acquire(origin, timeouts)
        self._open += 1
        try:
            return await self._connect(origin, timeouts.get("connect"))
        except BaseException:
            self._open -= 1
            self._notify()
            raise

    def _close_one_idle(self) -> bool:
        for idle in self._idle.values():
            if idle:
                self._discard(idle.pop(0))
                return True
        return False

    def _discard(self, connection: _Connection) -> None:
        """Close a connection of this pool: its place is free."""
        connection.close()
        self._open -= 1

    async def _wait_for_slot(self, timeout: float | None) -> None:
        """Until a request ends (its connection goes idle or closes), or PoolTimeout."""
        slot = asyncio.get_running_loop().create_future()
        self._waiting.append(slot)
        try:
            async with asyncio.timeout(timeout):
                await slot
        except TimeoutError:
            raise httpx.PoolTimeout("no connection of the pool was free in time") from None
        finally:
            if not slot.done():
                slot.cancel()

    def _notify(self) -> None:
        while self._waiting:
            slot = self._waiting.popleft()
            if not slot.done():
                slot.set_result(None)
                return

    async def _connect(self, origin: tuple[str, str, int], timeout: float | None) -> _Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await open_connection(
                    loop, host, port, None, lambda: _Connection(loop, origin)
                )
                connection: _Connection = protocol
                if scheme == "https":
                    try:
                        tls = await loop.start_tls(
                            transport, connection, self._ssl_context, server_hostname=host
                        )
                    except BaseException:
                        transport.close()
                        raise
                    if tls is None:
                        raise ConnectionError("the connection closed during the TLS handshake")
                    connection.transport = tls
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"timed out connecting to {host}:{port}") from exc
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc)) from exc
        return connection

    def _release(self, connection: _Connection) -> None:
        """A request is over: keep its connection for the next one, or close it."""
        if connection.finished() and not self._closed:
            connection.parser = None
            connection.idle_since = time.monotonic()
            idle = self._idle.setdefault(connection.origin, [])
            idle.append(connection)
            if self._max_idle is not None and sum(map(len, self._idle.values())) > self._max_idle:
                self._discard(idle.pop(0))
        else:
            self._discard(connection)
        self._notify()

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            for connection in idle:
                self._discard(connection)
        self._idle.clear()
        await asyncio.sleep(0)  # the closes take effect on the loop's next turn
        await self._fallback.aclose()


__all__ = ["Http1Transport"]
