"""The async clients' transports, through httpx over real loopback sockets: HTTP/1.1 on httptools
(client/http1.py) and httpx's own over the asyncio backend (client/network.py), each through
the same cases: TLS, keep-alive, flow control both ways, timeouts, the OS errors a connection
error keeps, and a peer that breaks HTTP. Each server here is a plain thread on a listening
socket, so what the client sees is exactly what a peer did: a slow reader, a stall, a close."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from modelstream.client.http1 import Http1Transport
from modelstream.client.network import AsyncioStream, httpcore_transport
from modelstream.client.tls import shared_ssl_context

Handler = Callable[[socket.socket], None]
Transport = Callable[..., httpx.AsyncBaseTransport]
TRANSPORTS = {"http1": Http1Transport, "httpcore": httpcore_transport}


@pytest.fixture(params=list(TRANSPORTS))
def async_transport(request: pytest.FixtureRequest) -> Transport:
    """Each test runs with both transports."""
    return TRANSPORTS[request.param]


class Peer:
    """A listening socket on 127.0.0.1 whose every connection runs `handler` in a thread."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.handler = handler
        self.tls = tls
        self.connections = 0
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            self.handler(conn)
        except OSError:
            pass  # the client went (a test of errors) or refused the certificate
        finally:
            conn.close()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def peer() -> Iterator[Callable[..., Peer]]:
    peers: list[Peer] = []

    def make(handler: Handler, tls: ssl.SSLContext | None = None) -> Peer:
        peers.append(Peer(handler, tls))
        return peers[-1]

    yield make
    for p in peers:
        p.close()


def read_request(conn: socket.socket) -> bytes | None:
    """One request's head and Content-Length body; None when the client closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return None
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            return None
        body += piece
    return body


def respond(conn: socket.socket, body: bytes) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))


def keep_alive_echo(conn: socket.socket) -> None:
    """Answers each request on the connection with its body's length and first bytes."""
    while (body := read_request(conn)) is not None:
        respond(conn, b"%d:%s" % (len(body), body[:16]))


def causes(exc: BaseException) -> list[BaseException]:
    """The exception and what it was raised from or during, as client/streams.py walks them
    (httpcore's pool re-raises a connect error `from None`, which keeps only the context)."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    return chain


def run(coro: Callable[[], object]) -> object:
    return asyncio.run(coro())  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, Path]:
    """A self-signed certificate for 127.0.0.1: the server's context and the CA file to trust."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "modelstream test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    return server, cert_file


def test_tls_requests_share_one_verified_connection(
    peer: Callable[..., Peer], certificate: tuple[ssl.SSLContext, Path], async_transport: Transport
) -> None:
    server_context, ca_file = certificate
    p = peer(keep_alive_echo, tls=server_context)
    trusting = ssl.create_default_context(cafile=str(ca_file))

    async def go() -> tuple[list[bytes], list[object]]:
        async with httpx.AsyncClient(transport=async_transport(trusting)) as http:
            bodies, streams = [], []
            for n in range(3):
                response = await http.post(p.url, content=b"x" * (n + 1))
                bodies.append(response.content)
                streams.append(response.extensions["network_stream"])
            return bodies, streams

    bodies, streams = run(go)  # type: ignore[misc]
    assert bodies == [b"1:x", b"2:xx", b"3:xxx"]
    assert p.connections == 1  # kept alive and reused
    if async_transport is httpcore_transport:
        assert all(isinstance(s, AsyncioStream) for s in streams)
    ssl_object = streams[0].get_extra_info("ssl_object")
    assert ssl_object is not None and ssl_object.version() in ("TLSv1.2", "TLSv1.3")


def test_an_untrusted_certificate_is_a_connect_error_from_the_ssl_error(
    peer: Callable[..., Peer], certificate: tuple[ssl.SSLContext, Path], async_transport: Transport
) -> None:
    p = peer(keep_alive_echo, tls=certificate[0])

    async def go() -> None:
        async with httpx.AsyncClient(transport=async_transport(shared_ssl_context())) as http:
            await http.post(p.url, content=b"x")

    with pytest.raises(httpx.ConnectError) as caught:
        run(go)
    assert any(isinstance(c, ssl.SSLCertVerificationError) for c in causes(caught.value))


def test_a_refused_connection_keeps_the_os_error(
    peer: Callable[..., Peer], async_transport: Transport
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there

    async def go() -> None:
        async with httpx.AsyncClient(transport=async_transport(shared_ssl_context())) as http:
            await http.get(f"http://127.0.0.1:{port}/")

    with pytest.raises(httpx.ConnectError) as caught:
        run(go)
    assert any(isinstance(c, ConnectionRefusedError) for c in causes(caught.value))


def test_a_large_body_read_slowly_arrives_whole(
    peer: Callable[..., Peer], async_transport: Transport
) -> None:
    body = bytes(range(256)) * (16 * 1024)  # 4 MiB: the client stops reading the socket

    def send_big(conn: socket.socket) -> None:
        read_request(conn)
        respond(conn, body)

    p = peer(send_big)

    async def go() -> bytes:
        received = bytearray()
        async with (
            httpx.AsyncClient(transport=async_transport(shared_ssl_context())) as http,
            http.stream("GET", p.url) as response,
        ):
            async for chunk in response.aiter_raw():
                received += chunk
                if len(received) < 1 << 20:
                    await asyncio.sleep(0.005)  # slower than the peer sends
        return bytes(received)

    assert run(go) == body


def test_a_large_request_body_to_a_slow_reader_is_sent_whole(
    peer: Callable[..., Peer], async_transport: Transport
) -> None:
    body = b"abcdefgh" * (1 << 20)  # 8 MiB: more than the socket buffers, so the write waits

    def slow_reader(conn: socket.socket) -> None:
        time.sleep(0.3)
        keep_alive_echo(conn)

    p = peer(slow_reader)

    async def go() -> bytes:
        async with httpx.AsyncClient(transport=async_transport(shared_ssl_context())) as http:
            return (await http.post(p.url, content=body, timeout=30)).content

    assert run(go) == b"%d:abcdefghabcdefgh" % len(body)


def test_a_stalled_response_times_out_as_httpx_says(
    peer: Callable[..., Peer], async_transport: Transport
) -> None:
    stop = threading.Event()

    def stall(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nhalf")
        stop.wait(5)

    p = peer(stall)

    async def go() -> None:
        timeout = httpx.Timeout(5, read=0.2)
        async with httpx.AsyncClient(
            transport=async_transport(shared_ssl_context()), timeout=timeout
        ) as http:
            await http.get(p.url)

    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        run(go)
    stop.set()
    assert time.monotonic() - started < 2


def test_the_read_timeout_counts_from_each_piece_not_from_the_first(
    peer: Callable[..., Peer], async_transport: Transport
) -> None:
    """Pieces 0.1 s apart outlast a 0.3 s read timeout together without tripping it (the
    reader's waits share one timer, moved by each wait); the stall after the last piece times
    out about 0.3 s after it."""
    stop = threading.Event()

    def trickle(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        for i in range(8):
            time.sleep(0.1)
            conn.sendall(b"1\r\n%d\r\n" % i)
        stop.wait(5)

    p = peer(trickle)
    pieces: list[tuple[float, bytes]] = []

    async def go() -> None:
        timeout = httpx.Timeout(5, read=0.3)
        async with (
            httpx.AsyncClient(
                transport=async_transport(shared_ssl_context()), timeout=timeout
            ) as http,
            http.stream("GET", p.url) as response,
        ):
            async for chunk in response.aiter_raw():
                pieces.append((time.monotonic(), chunk))

    with pytest.raises(httpx.ReadTimeout):
        run(go)
    timed_out = time.monotonic()
    stop.set()
    assert b"".join(chunk for _, chunk in pieces) == b"01234567"
    assert 0.25 <= timed_out - pieces[-1][0] < 1.5


def test_a_connection_the_server_closed_while_idle_is_not_reused(
    peer: Callable[..., Peer], async_transport: Transport
) -> None:
    def one_answer(conn: socket.socket) -> None:
        read_request(conn)
        respond(conn, b"once")  # then closes: keep-alive promised, not kept

    p = peer(one_answer)

    async def go() -> list[bytes]:
        async with httpx.AsyncClient(transport=async_transport(shared_ssl_context())) as http:
            first = (await http.get(p.url)).content
            await asyncio.sleep(0.1)  # the close reaches the pooled connection
            second = (await http.get(p.url)).content
            return [first, second]

    assert run(go) == [b"once", b"once"]
    assert p.connections == 2


def raw_answer(answer: bytes, then_close: bool = True) -> Handler:
    """A peer that answers each request with `answer`, as bytes on the wire."""

    def handler(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(answer)
        if not then_close:
            time.sleep(1)

    return handler


async def get(transport: httpx.AsyncBaseTransport, url: str, **options: object) -> httpx.Response:
    async with httpx.AsyncClient(transport=transport, **options) as http:  # type: ignore[arg-type]
        response = await http.get(url)
        await response.aread()
        return response


@pytest.mark.parametrize(
    ("answer", "body"),
    [
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
            b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
            b"abcde",
        ),
        (b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end", b"until the end"),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", b"ok"),
        (b"HTTP/1.1 204 No Content\r\n\r\n", b""),
    ],
    ids=["chunked", "until-close", "informational-first", "no-content"],
)
def test_each_way_of_ending_a_body_is_read(
    peer: Callable[..., Peer], async_transport: Transport, answer: bytes, body: bytes
) -> None:
    p = peer(raw_answer(answer))
    response = run(lambda: get(async_transport(shared_ssl_context()), p.url))
    assert isinstance(response, httpx.Response) and response.content == body


@pytest.mark.parametrize(
    "answer",
    [
        b"",  # closed before a response
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf",  # closed mid-body
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n",  # mid-chunks
        b"NOT HTTP AT ALL\r\n\r\n",
    ],
    ids=["no-response", "short-body", "unfinished-chunks", "garbage"],
)
def test_a_peer_that_breaks_http_is_a_protocol_error(
    peer: Callable[..., Peer], async_transport: Transport, answer: bytes
) -> None:
    p = peer(raw_answer(answer))
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        run(lambda: get(async_transport(shared_ssl_context()), p.url))


def test_a_full_pool_makes_a_request_wait_for_a_free_connection(
    peer: Callable[..., Peer], async_transport: Transport
) -> None:
    def slow_echo(conn: socket.socket) -> None:
        while read_request(conn) is not None:
            time.sleep(0.1)
            respond(conn, b"ok")

    p = peer(slow_echo)

    async def go() -> tuple[list[bytes], bool]:
        limits = httpx.Limits(max_connections=1)
        transport = async_transport(shared_ssl_context(), limits)
        async with httpx.AsyncClient(transport=transport) as http:
            both = await asyncio.gather(http.get(p.url), http.get(p.url))
        async with httpx.AsyncClient(
            transport=async_transport(shared_ssl_context(), limits),
            timeout=httpx.Timeout(5, pool=0.02),
        ) as http:
            try:
                await asyncio.gather(http.get(p.url), http.get(p.url))
            except httpx.PoolTimeout:
                timed_out = True
            else:
                timed_out = False
        return [r.content for r in both], timed_out

    contents, timed_out = run(go)  # type: ignore[misc]
    assert contents == [b"ok", b"ok"] and timed_out
    assert p.connections == 2  # the first client's two requests shared one
