"""`BackgroundServer`: uvicorn serving an ASGI app on 127.0.0.1 (a free port by default) in a
daemon thread, for tests, benchmarks and examples that need a real server next to their code.

    with BackgroundServer(create_app(settings)) as server:
        httpx.get(server.url + "/healthz")
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any, Self

from .logs import hide_response_ids_in_access_log


class BackgroundServer:
    """A real HTTP server in a thread; `url` is set once `start()` (or `with`) returns."""

    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_level: str = "warning",
        log_config: dict[str, Any] | None = None,
        graceful_shutdown_seconds: float = 1.0,
    ) -> None:
        import uvicorn

        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind((host, port))
        self._sock.listen(2048)
        self.host, self.port = self._sock.getsockname()[:2]
        self.url = f"http://{self.host}:{self.port}"
        config = uvicorn.Config(
            app,
            log_level=log_level,
            log_config=log_config,
            timeout_graceful_shutdown=max(1, round(graceful_shutdown_seconds)),
        )
        hide_response_ids_in_access_log()  # uvicorn set up its loggers in Config()
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    def start(self, timeout: float = 10.0) -> Self:
        """Start serving; returns once the app's startup has completed."""
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self._sock.close()
                raise RuntimeError(f"the server on {self.url} did not start")
            time.sleep(0.005)
        return self

    def stop(self, timeout: float = 15.0) -> None:
        """Shut down gracefully (open streams get `graceful_shutdown_seconds`) and wait."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._sock.close()
        if self._thread.is_alive():
            raise RuntimeError(f"the server on {self.url} did not stop within {timeout:g} s")

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
