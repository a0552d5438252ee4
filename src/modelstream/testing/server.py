"""The loopback emulator: a real HTTP/1.1 server on 127.0.0.1 that answers like the providers.

Theory of operation
-------------------
A stdlib `ThreadingHTTPServer` runs in a daemon thread; each connection gets its own thread.
For every request the emulator records what arrived (`RecordedRequest`), finds the protocol from
the path, takes the first queued `Reply` meant for it (FIFO; a reply queued with `path=` waits
for that path) or makes the default one, and writes it with chunked transfer-encoding, one
`sendall` per piece, so pacing and faults happen on the real socket:

    [delay_first_byte] status line + headers
    piece ─ [delay] ─ piece ─ … (a stall after n bytes, a disconnect after n bytes)
    0\\r\\n\\r\\n   (never written after a disconnect fault)

While it waits between pieces it watches the socket, so a client that closes the connection
mid-stream is seen at once (`client_closed_early`), not only at the next failed write.
Everything the threads share (the queue, the records) is guarded by one lock; `stop()` wakes
every wait and shuts every open connection, so it returns even while a client is stalled.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

import orjson

from . import routes
from .render import (
    DEFAULT_FRAGMENT_SIZE,
    EMBEDDING_PROTOCOLS,
    NO_ENDPOINT_PROTOCOL,
    embedding_for,
    error_body,
    render_frames,
    seconds_text,
)
from .replies import Reply, split_frames, with_corrupted_crc, with_malformed_frame
from .turns import Turn

# Header values never shown in a repr: they hold credentials (keys, bearer tokens, a SigV4
# signature naming the access key id, an AWS session token, cookies).
_SECRET_HEADERS = frozenset(
    {
        "api-key",
        "authorization",
        "cookie",
        "proxy-authorization",
        "x-amz-security-token",
        "x-api-key",
        "x-goog-api-key",
    }
)
_POLL = 0.02  # seconds between checks while pausing

Wait = Literal["done", "client_closed", "stopping"]


@dataclass(repr=False, eq=False)
class RecordedRequest:
    """One request as the emulator received it, and how its response went.

    `headers` has lower-case names and holds every value as it arrived, credentials included;
    the repr (and str) shows a credential header's name but not its value. `received_at` and
    `finished_at` are `time.monotonic()` values, comparable with the test's own clock (e.g. to
    check backoff between retries).
    """

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any
    body: bytes
    protocol: str | None
    received_at: float
    status: int | None = None  # the status sent (None: the connection closed before)
    bytes_sent: int = 0  # response body bytes written (chunk framing not counted)
    client_closed_early: bool = False  # the client closed before the whole body was sent
    finished: bool = False  # the emulator is done with this request
    finished_at: float | None = None
    error: str | None = None  # why the emulator answered 500 (a reply it could not render)

    def __repr__(self) -> str:
        headers = {
            name: "<redacted>" if name in _SECRET_HEADERS else value
            for name, value in self.headers.items()
        }
        return (
            f"RecordedRequest({self.method} {self.path} protocol={self.protocol!r} "
            f"status={self.status} bytes_sent={self.bytes_sent} "
            f"client_closed_early={self.client_closed_early} headers={headers})"
        )


@dataclass
class _Queued:
    reply: Reply
    path: str | None


@dataclass
class _Connection:
    """The socket of one request being answered, and the facts of how it went."""

    sock: socket.socket
    stopping: threading.Event
    record: RecordedRequest
    close: bool = False
    header_lines: list[bytes] = field(default_factory=list)

    def pause(self, seconds: float) -> Wait:
        """Wait `seconds`, watching for the client closing and for the emulator stopping."""
        deadline = time.monotonic() + seconds
        while True:
            if self.stopping.is_set():
                return "stopping"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "done"
            try:
                readable = _readable(self.sock, min(remaining, _POLL))
            except (OSError, ValueError):
                return "stopping" if self.stopping.is_set() else "client_closed"
            if readable and self._peer_closed():
                return "client_closed"
            if readable:  # the client sent bytes mid-response: keep waiting, without select
                self.stopping.wait(max(0.0, deadline - time.monotonic()))

    def _peer_closed(self) -> bool:
        try:
            return self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def send(self, data: bytes) -> Wait:
        try:
            self.sock.sendall(data)
        except OSError:  # BrokenPipe, ConnectionReset, or the socket shut by stop()
            return "stopping" if self.stopping.is_set() else "client_closed"
        return "done"


class _Server(ThreadingHTTPServer):
    # The listen backlog: connections the kernel completes while the accept loop catches up.
    # socketserver's default of 5 drops the SYNs of a load test's burst (retried a second or
    # more later, or lost to the client's connect timeout); the kernel caps it at somaxconn.
    request_queue_size = 1024
    daemon_threads = True
    block_on_close = False  # stop() must not wait for a stalled handler
    allow_reuse_address = True
    emulator: Emulator

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that reset its idle keep-alive connection (it closed with a body unread)
        is no error of the emulator's; anything else is printed as usual."""
        if not isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.emulator._opened(self.connection)

    def finish(self) -> None:
        self.server.emulator._closed(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read `emu.requests`, not stderr

    def _any(self) -> None:
        self.server.emulator._handle(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any


class Emulator:
    """A loopback upstream that speaks the providers' HTTP APIs; see docs/testing.md.

    Use it as a context manager (`with Emulator() as emu:` or `async with`), queue replies
    with `queue`, read what arrived in `requests`.
    """

    def __init__(self, *, fragment_size: int = DEFAULT_FRAGMENT_SIZE, port: int = 0) -> None:
        self.fragment_size = fragment_size
        self.port = port  # on 127.0.0.1; 0 picks a free one
        self._lock = threading.Condition()
        self._queue: list[_Queued] = []
        self._records: list[RecordedRequest] = []
        self._sockets: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._served = 0

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> Emulator:
        """Bind `port` (by default an ephemeral one) on 127.0.0.1 and serve in a daemon thread."""
        if self._server is not None:
            return self
        server = _Server(("127.0.0.1", self.port), _Handler)
        server.emulator = self
        self._server = server
        self._stopping.clear()
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"modelstream-emulator-{server.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every connection, even one a client left stalled."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        with self._lock:
            self._lock.notify_all()
        server.shutdown()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if thread is not None:
            thread.join(timeout=2)
        self._server = self._thread = None

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Emulator:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    # --- what tests use -------------------------------------------------------------------

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        if self._server is None:
            raise RuntimeError("the emulator is not running: use `with Emulator() as emu:`")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def base_url(self, client_type: str) -> str:
        """The base URL a client of `client_type` uses: with `/v1` for the OpenAI family."""
        return self.url + routes.base_path(client_type)

    def queue(self, *replies: Reply, path: str | None = None) -> None:
        """Answer the next requests with `replies`, in order. With `path`, only a request to
        that path (e.g. "/v1/messages") takes them; a reply without one serves any endpoint."""
        for reply in replies:
            if not isinstance(reply, Reply):
                raise TypeError(f"queue takes Reply objects, got {type(reply).__name__}")
        target = urlsplit(path).path if path is not None else None
        with self._lock:
            self._queue.extend(_Queued(reply, target) for reply in replies)

    @property
    def pending(self) -> int:
        """How many queued replies no request has taken yet."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order of arrival (a snapshot of the list)."""
        with self._lock:
            return list(self._records)

    def reset(self) -> None:
        """Forget queued replies and recorded requests."""
        with self._lock:
            self._queue.clear()
            self._records.clear()

    def wait_for_requests(
        self, count: int, timeout: float = 5.0, *, finished: bool = False
    ) -> list[RecordedRequest]:
        """Block until `count` requests have arrived (with `finished`: and been answered, or
        abandoned by the client); returns them. Raises TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not self._reached(count, finished):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopping.is_set():
                    raise TimeoutError(self._waited(count, finished, timeout))
                self._lock.wait(remaining)
            return list(self._records)

    async def wait_for_requests_async(
        self, count: int, timeout: float = 5.0, *, finished: bool = False
    ) -> list[RecordedRequest]:
        """`wait_for_requests` for async code: waits without blocking the event loop."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if self._reached(count, finished):
                    return list(self._records)
            if time.monotonic() >= deadline:
                raise TimeoutError(self._waited(count, finished, timeout))
            await asyncio.sleep(0.005)

    def _reached(self, count: int, finished: bool) -> bool:
        records = self._records
        if len(records) < count:
            return False
        return not finished or all(record.finished for record in records[:count])

    def _waited(self, count: int, finished: bool, timeout: float) -> str:
        what = "finished" if finished else "arrived"
        done = sum(1 for r in self._records if r.finished or not finished)
        return f"{done} of {count} requests {what} within {timeout} s"

    # --- serving (handler threads) --------------------------------------------------------

    def _opened(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.add(sock)

    def _closed(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(sock)

    def _handle(self, handler: _Handler) -> None:
        parts = urlsplit(handler.path)
        body = _read_body(handler)
        try:
            parsed: Any = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            parsed = None
        protocol = routes.protocol_for(parts.path)
        record = RecordedRequest(
            method=handler.command,
            path=parts.path,
            query=dict(parse_qsl(parts.query, keep_blank_values=True)),
            headers={name.lower(): value for name, value in handler.headers.items()},
            json=parsed,
            body=body,
            protocol=protocol,
            received_at=time.monotonic(),
        )
        with self._lock:
            self._records.append(record)
            reply = self._take(parts.path, known=protocol is not None and handler.command == "POST")
            self._served += 1
            serial = self._served
            self._lock.notify_all()
        connection = _Connection(handler.connection, self._stopping, record)
        try:
            if reply is None and protocol is None:
                message = f"no emulated endpoint at {handler.command} {parts.path}"
                self._send_whole(connection, 404, error_body(None, 404, message), {})
            elif reply is None and handler.command != "POST":
                message = f"{handler.command} is not allowed on {parts.path}; use POST"
                self._send_whole(connection, 405, error_body(protocol, 405, message), {})
            else:
                self._serve(connection, reply or Reply(), protocol, serial)
        finally:
            if connection.close:
                handler.close_connection = True
            with self._lock:
                record.finished = True
                record.finished_at = time.monotonic()
                self._lock.notify_all()

    def _take(self, path: str, *, known: bool) -> Reply | None:
        for index, queued in enumerate(self._queue):
            if queued.path == path or (queued.path is None and known):
                del self._queue[index]
                return queued.reply
        return None

    def _serve(
        self, connection: _Connection, reply: Reply, protocol: str | None, serial: int
    ) -> None:
        record = connection.record
        if reply.delay_first_byte:
            outcome = connection.pause(reply.delay_first_byte)
            if outcome != "done":
                self._closed_early(connection, outcome)
                return
        headers = {"x-request-id": f"req_emu{serial:06d}"}
        if reply.retry_after is not None:
            headers["retry-after"] = seconds_text(reply.retry_after)
        if reply.code >= 400 or reply.error_document is not None:
            status = reply.error_document or reply.code
            headers.update(routes.error_headers(protocol, status))
        headers.update(reply.headers)
        if reply.error_document is not None:
            document = error_body(
                protocol, reply.error_document, reply.error_message, retry_after=reply.retry_after
            )
            headers.setdefault("content-type", reply.content_type or "application/json")
            self._send_whole(connection, reply.code, document, headers)
            return
        if reply.code >= 400 and reply.script is None:
            content = reply.content
            if content is None:
                content = error_body(protocol, reply.code, retry_after=reply.retry_after)
            headers.setdefault("content-type", reply.content_type or "application/json")
            self._send_whole(connection, reply.code, content, headers)
            return
        try:
            frames = self._frames(reply, protocol, record)
        except Exception as exc:  # a script this endpoint cannot send: say so to the test
            record.error = f"the emulator could not render the reply: {exc}"
            self._send_whole(connection, 500, error_body(protocol, 500, record.error), headers)
            return
        content_type = routes.content_type(protocol or NO_ENDPOINT_PROTOCOL)
        headers.setdefault("content-type", reply.content_type or content_type)
        if content_type.startswith("text/event-stream"):
            headers.setdefault("cache-control", "no-cache")
        self._stream(connection, reply, frames, headers)

    def _frames(self, reply: Reply, protocol: str | None, record: RecordedRequest) -> list[bytes]:
        """The body's frames, faults included (a ValueError: a fault this protocol cannot
        have, or a script it cannot send)."""
        if protocol is None:  # a turn queued for a path that is no endpoint
            protocol = NO_ENDPOINT_PROTOCOL
        if reply.content is not None:
            frames = split_frames(reply.content, routes.framing(protocol))
        else:
            turn = reply.script or self._default_turn(protocol, record)
            model = reply.model or routes.model_for(record.path, record.json) or "emulated-model"
            frames = render_frames(
                protocol,
                turn,
                model=model,
                fragment_size=reply.fragment_size or self.fragment_size,
                include_usage=routes.wants_usage(protocol, record.json),
                batch=record.path.endswith(":batchEmbedContents"),
                stream_error=reply.stream_error,
            )
        if reply.malformed_frame_at is not None:
            broken = routes.malformed_frame(protocol)
            frames = with_malformed_frame(frames, reply.malformed_frame_at, broken)
        if reply.corrupt_crc_at is not None:
            frames = with_corrupted_crc(frames, *reply.corrupt_crc_at)
        return frames

    def _default_turn(self, protocol: str, record: RecordedRequest) -> Turn:
        """The answer when nothing is queued: an echo of the user's text, or vectors."""
        if protocol in EMBEDDING_PROTOCOLS:
            texts = routes.embedding_inputs(protocol, record.path, record.json)
            size = routes.embedding_dimensions(protocol, record.path, record.json)
            return Turn.embeddings(*(embedding_for(text, size) for text in texts))
        return Turn.text("echo: " + routes.last_user_text(protocol, record.json))

    # --- writing --------------------------------------------------------------------------

    def _head(self, connection: _Connection, status: int, headers: dict[str, str]) -> Wait:
        reason = BaseHTTPRequestHandler.responses.get(status, ("Unknown",))[0]
        lines = [f"HTTP/1.1 {status} {reason}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        outcome = connection.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        if outcome == "done":
            connection.record.status = status
        return outcome

    def _send_whole(
        self, connection: _Connection, status: int, content: bytes, headers: dict[str, str]
    ) -> None:
        headers = {"content-type": "application/json", **headers}
        headers["content-length"] = str(len(content))
        outcome = self._head(connection, status, headers)
        if outcome == "done":
            outcome = connection.send(content)
        if outcome == "done":
            connection.record.bytes_sent = len(content)
        else:
            self._closed_early(connection, outcome)

    def _stream(
        self, connection: _Connection, reply: Reply, frames: list[bytes], headers: dict[str, str]
    ) -> None:
        record = connection.record
        headers["transfer-encoding"] = "chunked"
        if self._head(connection, reply.code, headers) != "done":
            self._closed_early(connection, "client_closed")
            return
        stall = reply.stall_after_bytes
        cut = reply.disconnect_after_bytes
        sent = 0
        for index, piece in enumerate(_pieces(frames, reply, stall, cut)):
            if stall is not None and sent == stall[0]:
                outcome = connection.pause(stall[1])
                stall = None
                if outcome != "done":
                    self._closed_early(connection, outcome)
                    return
            if cut is not None and sent >= cut:
                break
            if index and reply.delay:
                outcome = connection.pause(reply.delay)
                if outcome != "done":
                    self._closed_early(connection, outcome)
                    return
            outcome = connection.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            if outcome != "done":
                self._closed_early(connection, outcome)
                return
            sent += len(piece)
            record.bytes_sent = sent
        if stall is not None and sent == stall[0] and cut is None:
            outcome = connection.pause(stall[1])  # a stall after the last byte of the body
            if outcome != "done":
                self._closed_early(connection, outcome)
                return
        if cut is not None:
            # The fault: end the connection mid-body, never writing the last chunk.
            connection.close = True
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)
            return
        if connection.send(b"0\r\n\r\n") != "done":
            self._closed_early(connection, "client_closed")

    def _closed_early(self, connection: _Connection, outcome: Wait) -> None:
        connection.close = True
        if outcome == "client_closed":
            connection.record.client_closed_early = True


def _readable(sock: socket.socket, timeout: float) -> bool:
    """Whether `sock` has bytes or an end of stream to read, waiting at most `timeout`."""
    if hasattr(select, "poll"):  # no FD_SETSIZE limit, unlike select()
        poller = select.poll()
        poller.register(sock, select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(timeout * 1000))
    readable, _, _ = select.select([sock], [], [], timeout)
    return bool(readable)


def _pieces(
    frames: list[bytes], reply: Reply, stall: tuple[int, float] | None, cut: int | None
) -> Iterator[bytes]:
    """The body as the pieces to write: frames (or `chunk_size` slices), split exactly at the
    byte offsets where a stall or a disconnect happens."""
    if reply.chunk_size is not None:
        body = b"".join(frames)
        size = reply.chunk_size
        frames = [body[i : i + size] for i in range(0, len(body), size)]
    marks = sorted({mark for mark in (stall and stall[0], cut) if mark})
    offset = 0
    for frame in frames:
        start = 0
        for mark in marks:
            if offset < mark < offset + len(frame):
                yield frame[start : mark - offset]
                start = mark - offset
        if start < len(frame):
            yield frame[start:]
        offset += len(frame)


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    """The request body, by Content-Length or chunked transfer-encoding."""
    if "chunked" in handler.headers.get("Transfer-Encoding", "").lower():
        pieces: list[bytes] = []
        while True:
            line = handler.rfile.readline()
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(pieces)
            pieces.append(handler.rfile.read(size))
            handler.rfile.readline()
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length > 0 else b""
