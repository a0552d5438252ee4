"""The async clients' sockets: an httpcore network backend over asyncio protocols.

httpx reaches the network through httpcore, and httpcore's default async backend goes through
anyio: every read enters a cancel scope for its timeout and resumes and pauses the transport, about
40% of a relaying server's CPU when each event is its own read (py-spy over `bench/bench_load.py`).
No published backend does this leaner, so this one is written here, on the public interface
httpcore defines for it (`httpcore.AsyncNetworkBackend`): a protocol that buffers what arrives
and a timer per wait, not per read. Everything above it (HTTP/1.1 with h11, the pool, httpx's
errors) is httpx's and httpcore's as before, and the errors raised here are the httpcore ones the
anyio backend raises, chained to the OS error in the same way.

It serves asyncio only: under another event loop (trio through anyio) the client falls back to
httpcore's own backend, connection by connection.
"""

from __future__ import annotations

import asyncio
import collections
import socket
import ssl
import typing

import httpcore
import httpx

if typing.TYPE_CHECKING:
    from collections.abc import Callable, Iterable

SocketOption = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)

# what httpx.AsyncClient() and httpx.Client() pool by default
DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)

# stop reading the socket while this much is buffered and unread (the kernel buffers the rest)
_HIGH_WATER = 256 * 1024

# a timer may fire this much before its time (uvloop counts in milliseconds): not re-armed
_TIMER_SLACK = 0.002


class WaitingProtocol(asyncio.Protocol):
    """A socket's protocol with one reader and one writer that wait on it: the reader until
    something arrives (`wake`), the writer until the send buffer drains; a wait that outlasts
    its timeout fails with the error given. What arrived waits in `chunks` (`buffer`, `take`),
    and the socket is not read while too much of it is unread. Both transports' protocols are
    these.

    The reader's timeouts share one timer per connection: a stream read chunk by chunk would
    otherwise arm and cancel a timer per chunk. It is armed for the first wait's deadline and,
    when it fires with the reader waiting on a later one (each wait moves the deadline), is
    armed again for that; with no reader waiting it is left unarmed until the next wait."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.drain: asyncio.Future[None] | None = None
        self.writing_paused = False
        self._read_deadline: float | None = None  # of the reader's wait now, if it has one
        self._read_error: type[Exception] = TimeoutError
        self._read_timer: asyncio.TimerHandle | None = None
        self._read_timer_at = 0.0
        self.clear_buffer()

    def clear_buffer(self) -> None:
        self.chunks: collections.deque[bytes] = collections.deque()
        self.buffered = 0
        self.reading_paused = False

    def buffer(self, data: bytes) -> None:
        """Keep `data` for the reader and wake it."""
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > _HIGH_WATER and not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()
        self.wake()

    def take(self, max_bytes: int | None = None) -> bytes:
        """The oldest piece kept (at most `max_bytes` of it); reading resumes once little is
        left unread."""
        data = self.chunks.popleft()
        if max_bytes is not None and len(data) > max_bytes:
            self.chunks.appendleft(data[max_bytes:])
            data = data[:max_bytes]
        self.buffered -= len(data)
        if self.reading_paused and self.buffered <= _HIGH_WATER // 4 and self.transport is not None:
            self.reading_paused = False
            self.transport.resume_reading()
        return data

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = typing.cast("asyncio.Transport", transport)

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self.drained()

    def drained(self) -> None:
        """The writer may go on (the buffer drained, or the connection is gone)."""
        drain, self.drain = self.drain, None
        if drain is not None and not drain.done():
            drain.set_result(None)

    def wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait_readable(self, timeout: float | None, error: type[Exception]) -> None:
        """Until something arrives (or the connection ends); `error("timed out reading")`
        after `timeout` seconds of nothing."""
        waiter = self.waiter = self.loop.create_future()
        if timeout is not None:
            deadline = self._read_deadline = self.loop.time() + timeout
            self._read_error = error
            if self._read_timer is None or self._read_timer_at > deadline:
                self._arm_read_timer(deadline)
        try:
            await waiter
        finally:
            self.waiter = None
            self._read_deadline = None

    def _arm_read_timer(self, deadline: float) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
        self._read_timer = self.loop.call_at(deadline, self._read_timer_fired)
        self._read_timer_at = deadline

    def _read_timer_fired(self) -> None:
        self._read_timer = None
        deadline, waiter = self._read_deadline, self.waiter
        if deadline is None or waiter is None or waiter.done():
            return  # no reader waits: armed again by the next wait
        if deadline - self.loop.time() > _TIMER_SLACK:  # a later wait's deadline
            self._arm_read_timer(deadline)
            return
        waiter.set_exception(self._read_error("timed out reading"))

    def connection_lost(self, exc: Exception | None) -> None:
        """Each subclass's, last: a writer waiting goes on (to fail), and the reader's timer
        no longer holds the connection until its deadline."""
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None
        self.drained()

    async def wait_drained(self, timeout: float | None, error: type[Exception]) -> None:
        """After a write: until the send buffer is below its high-water mark; `error("timed
        out writing")` after `timeout` seconds (rare: a timer per wait)."""
        if self.writing_paused:
            drain = self.drain = self.loop.create_future()
            timer = None
            if timeout is not None:
                timer = self.loop.call_later(timeout, _expire, drain, error)
            try:
                await drain
            finally:
                if timer is not None:
                    timer.cancel()


class _Connection(WaitingProtocol):
    """What arrives on one socket, until a reader takes it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.eof = False
        self.lost: BaseException | None = None

    def data_received(self, data: bytes) -> None:
        self.buffer(data)

    def eof_received(self) -> bool:
        self.eof = True
        self.wake()
        return False  # close the transport: HTTP/1.1 never writes after the peer's EOF

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.lost = exc
        self.wake()
        super().connection_lost(exc)


def _expire(future: asyncio.Future[None], error: type[Exception]) -> None:
    if not future.done():
        future.set_exception(error("timed out writing"))


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection, as httpcore reads and writes it."""

    def __init__(self, transport: asyncio.Transport, connection: _Connection) -> None:
        self._transport = transport
        self._connection = connection

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        connection = self._connection
        if not connection.chunks and not connection.eof:
            await connection.wait_readable(timeout, httpcore.ReadTimeout)
        if connection.chunks:
            return connection.take(max_bytes)
        if connection.lost is not None:
            raise httpcore.ReadError(str(connection.lost)) from connection.lost
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        connection = self._connection
        if connection.lost is not None or self._transport.is_closing():
            error = httpcore.WriteError(str(connection.lost or "the connection is closed"))
            raise error from connection.lost
        self._transport.write(buffer)
        await connection.wait_drained(timeout, httpcore.WriteTimeout)
        if connection.lost is not None:
            raise httpcore.WriteError(str(connection.lost)) from connection.lost

    async def aclose(self) -> None:
        # close() lets the socket go on the loop's next turn (after what is still to be written);
        # one turn later anything left is dropped: a closed stream holds no socket
        if not self._transport.is_closing():
            self._transport.close()
            await asyncio.sleep(0)
        self._transport.abort()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = self._connection.loop
        try:
            transport = await asyncio.wait_for(
                loop.start_tls(
                    self._transport,
                    self._connection,
                    ssl_context,
                    server_hostname=server_hostname,
                    ssl_handshake_timeout=timeout,
                ),
                timeout,
            )
        except TimeoutError as exc:
            self._transport.close()
            raise httpcore.ConnectTimeout("timed out in the TLS handshake") from exc
        except (OSError, ssl.SSLError, ConnectionError) as exc:
            self._transport.close()
            raise httpcore.ConnectError(str(exc)) from exc
        if transport is None:  # the peer closed during the handshake
            self._transport.close()
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        self._connection.transport = transport
        return AsyncioStream(transport, self._connection)

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "is_readable":
            # httpcore asks of an idle pooled connection: anything or EOF there means the server
            # closed it (or broke the protocol), so it is not reused
            return bool(self._connection.chunks) or self._connection.eof
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Connects with the running asyncio loop; under any other, with httpcore's own backend."""

    def __init__(self) -> None:
        self._fallback: httpcore.AsyncNetworkBackend | None = None

    def _other_loop(self) -> httpcore.AsyncNetworkBackend | None:
        if asyncio_running():
            return None
        if self._fallback is None:
            self._fallback = httpcore.AnyIOBackend()
        return self._fallback

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        other = self._other_loop()
        if other is not None:
            return await other.connect_tcp(host, port, timeout, local_address, socket_options)
        loop = asyncio.get_running_loop()
        try:
            transport, connection = await asyncio.wait_for(
                open_connection(loop, host, port, local_address), timeout
            )
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"timed out connecting to {host}:{port}") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = transport.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(transport, connection)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        other = self._other_loop()
        if other is not None:
            return await other.connect_unix_socket(path, timeout, socket_options)
        loop = asyncio.get_running_loop()
        try:
            transport, connection = await asyncio.wait_for(
                loop.create_unix_connection(lambda: _Connection(loop), path), timeout
            )
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"timed out connecting to {path}") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        return AsyncioStream(transport, connection)

    async def sleep(self, seconds: float) -> None:
        other = self._other_loop()
        if other is not None:
            await other.sleep(seconds)
        else:
            await asyncio.sleep(seconds)


def asyncio_running() -> bool:
    """Whether this is an asyncio event loop's task (not trio's, say)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def open_connection(
    loop: asyncio.AbstractEventLoop,
    host: str,
    port: int,
    local_address: str | None,
    protocol: Callable[[], asyncio.Protocol] | None = None,
) -> tuple[asyncio.Transport, typing.Any]:
    """Each address of `host` in turn. asyncio's own loop over them folds several failures into
    one bare OSError; here the first failure is kept as the cause, so a refused connection reads
    as ConnectionRefusedError and a bad name as socket.gaierror (client/streams.py tells them
    apart for ProviderConnectionError). `protocol` makes each connection's protocol (client/http1.py
    has its own)."""
    addresses = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    first: OSError | None = None
    for family, _kind, proto, _name, address in addresses:
        try:
            transport, connection = await loop.create_connection(
                protocol or (lambda: _Connection(loop)),
                host=str(address[0]),
                port=int(address[1]),
                family=family,
                proto=proto,
                local_addr=(local_address, 0) if local_address else None,
            )
        except OSError as exc:
            first = first or exc
            continue
        return transport, connection
    raise first or OSError(f"no address found for {host}")


def httpcore_transport(
    ssl_context: ssl.SSLContext, limits: httpx.Limits | None = None
) -> httpx.AsyncHTTPTransport:
    """httpx's transport, its pool connecting through `AsyncioBackend`.

    httpx builds its pool without a way to pass a backend, so the pool is built again here with
    the same settings (`AsyncHTTPTransport` keeps it as `_pool`); if a later httpx keeps it
    elsewhere, its own transport is returned unchanged."""
    limits = limits or DEFAULT_LIMITS
    transport = httpx.AsyncHTTPTransport(verify=ssl_context, limits=limits)
    if isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=AsyncioBackend(),
        )
    return transport


__all__ = ["AsyncioBackend", "AsyncioStream", "httpcore_transport"]
