"""What the tests share; no test file imports another, they import this package. Here: the
repository (`REPO`), the shared corpus, a loopback HTTP server that replays bodies, and decoding.
Its modules hold the rest, each named for what it helps test (`support.server`,
`support.client`, `support.gateway`, ...).

The corpus is read in place from `../shared/corpus` beside the clone (or `MODELSTREAM_CORPUS`).
When it is missing, corpus tests fail under CI (`.ci/run` sets CI=true) and skip elsewhere.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest

from modelstream import GrammarChecker, StreamDecoder, StreamError
from modelstream.types import Event

REPO = Path(__file__).resolve().parents[2]  # this file is tests/support/__init__.py
CORPUS = Path(os.environ.get("MODELSTREAM_CORPUS", REPO.parent / "shared" / "corpus"))


def missing(what: str, *, ci_must: str = "install it: see .ci/run") -> NoReturn:
    """Something the tests need is missing: a failure under CI (which must provide it), else a
    skip."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} (CI must {ci_must})")
    pytest.skip(what)


def require_corpus() -> Path:
    if CORPUS.is_dir():
        return CORPUS
    missing(f"the shared corpus is missing at {CORPUS}", ci_must="have ../shared beside the clone")


def capture_names(protocol: str) -> list[str]:
    """Capture names for parametrizing; empty when the corpus is missing (tests then skip)."""
    folder = CORPUS / protocol
    if not folder.is_dir():
        return ["<corpus missing>"]
    return sorted(p.stem for suffix in BODY_SUFFIXES for p in folder.glob(f"*{suffix}"))


# The body file of a capture: SSE text, or a binary AWS event stream (bedrock-converse-stream).
BODY_SUFFIXES = (".sse", ".bin")


@dataclass
class Capture:
    protocol: str
    name: str
    body: bytes
    sidecar: dict[str, Any]


def load_capture(protocol: str, name: str) -> Capture:
    folder = require_corpus() / protocol
    body = next(
        path for s in BODY_SUFFIXES if (path := folder / f"{name}{s}").is_file()
    ).read_bytes()
    sidecar = json.loads((folder / f"{name}.json").read_text())
    return Capture(protocol, name, body, sidecar)


class _ReplayHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ReplayServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        route = self.server.routes.get(self.path.split("?")[0])
        if route is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body, slices = route
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for piece in _slice(body, slices):
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return  # the client stopped reading first: nothing left to serve

    do_GET = _serve
    do_POST = _serve


def _slice(body: bytes, sizes: Sequence[int]) -> Iterator[bytes]:
    """Cut `body` into pieces of the given sizes, cycling; the last piece takes the rest."""
    if not sizes:
        yield body
        return
    pos, i = 0, 0
    while pos < len(body):
        size = max(1, sizes[i % len(sizes)])
        yield body[pos : pos + size]
        pos += size
        i += 1


class ReplayServer(ThreadingHTTPServer):
    """A real HTTP server on 127.0.0.1 that replays registered bodies byte for byte."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ReplayHandler)
        self.routes: dict[str, tuple[bytes, Sequence[int]]] = {}
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that reset its keep-alive connection (a test done with the body) is no
        error of the replay's; anything else is printed as usual."""
        if not isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            super().handle_error(request, client_address)


@dataclass
class Decoded:
    events: list[Event] = field(default_factory=list)
    error: StreamError | None = None
    decoder: StreamDecoder | None = None

    @property
    def done_items(self) -> list[dict[str, Any]]:
        return [
            dict(item)
            for event in self.events
            for item in event["content_items"]
            if item["type"].endswith(".done")
        ]

    @property
    def stop(self) -> Event | None:
        last = self.events[-1] if self.events else None
        return last if last and last["event_type"] == "stop" else None


def pieces(body: bytes, cuts: list[int]) -> list[bytes]:
    """`body` cut at the given offsets (in any order): the chunks a network read might give."""
    cuts = sorted(cuts)
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def decode_chunks(protocol: str, chunks: Iterator[bytes] | list[bytes], **options: Any) -> Decoded:
    """Drive a StreamDecoder over chunks, checking the grammar of every event as it comes."""
    decoder = StreamDecoder(protocol, **options)
    checker = GrammarChecker()
    out = Decoded(decoder=decoder)
    try:
        for chunk in chunks:
            for event in decoder.feed(chunk):
                checker.feed(event)
                out.events.append(event)
        for event in decoder.end():
            checker.feed(event)
            out.events.append(event)
    except StreamError as exc:
        out.error = exc
    if out.error is None:
        checker.end()
    return out


def decode_over_http(
    server: ReplayServer,
    capture: Capture,
    slices: Sequence[int] = (),
    **options: Any,
) -> Decoded:
    """Serve the capture's bytes over loopback HTTP in the given slices and decode the body."""
    path = f"/{capture.protocol}/{capture.name}"
    server.routes[path] = (capture.body, slices)
    with httpx.Client() as client, client.stream("POST", server.url + path, json={}) as response:
        assert response.status_code == 200
        return decode_chunks(capture.protocol, response.iter_raw(), **options)
