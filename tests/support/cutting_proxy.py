"""A TCP relay the browser tests put between a page and the server, to cut its connections
mid-stream as a network would (the playground's and the AI SDK page's resume tests)."""

from __future__ import annotations

import contextlib
import socket
import threading


class CuttingProxy:
    """A TCP relay in front of the server whose connections the test can cut, as a network
    would: the page's fetch then fails mid-stream. It notes each request line it relays."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections: list[socket.socket] = []
        self.request_lines: list[str] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            with self.lock:
                self.connections += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, requests: bool) -> None:
        try:
            while data := source.recv(65536):
                if requests:
                    with self.lock:
                        self.request_lines += [
                            line.decode("latin-1")
                            for line in data.split(b"\r\n")
                            if line.startswith((b"GET ", b"POST "))
                        ]
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Drop every open connection at once (the page's and the server's side)."""
        with self.lock:
            connections, self.connections = self.connections, []
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()

    def close(self) -> None:
        self.listener.close()
        self.cut()
