"""`EventStreamResponse`: a stream's SSE body, written as the relay produces it, ended early when
the client goes.

Starlette's `StreamingResponse` does the same under uvicorn (which speaks ASGI 2.3, so a write
to a closed connection is silently dropped) with an anyio task group per response: a cancel
scope, a child task and a collapsing exception group, about a tenth of the server's CPU per
stream (py-spy over `bench/bench_load.py`). Here the response writes from its own task and one
plain asyncio task waits for the disconnect, cancelling the writer when it comes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from . import wire

# what every SSE response of the server carries: no cache, no proxy buffering
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


class EventStreamResponse(Response):
    """200, `text/event-stream`, the chunks of `body` as they come; `body` is closed at the end,
    whether it ran out, the client left, or the server is stopping."""

    media_type = wire.EVENT_STREAM

    def __init__(self, body: AsyncGenerator[bytes, None], headers: Mapping[str, str]) -> None:
        self.body_iterator = body
        self.status_code = 200
        self.background = None
        self.init_headers(headers)
        self._writing = True
        self._client_left = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        writer = asyncio.current_task()
        assert writer is not None  # an ASGI app runs in a task
        watcher = asyncio.get_running_loop().create_task(self._watch(receive, writer))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            async for chunk in self.body_iterator:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            # the client left: the response is simply over, unless the server is stopping too
            if not self._client_left or writer.uncancel() > 0:
                raise
        finally:
            # set before anything here awaits: the watcher cancels only while this writes
            self._writing = False
            watcher.cancel()
            await self.body_iterator.aclose()

    async def _watch(self, receive: Receive, writer: asyncio.Task[object]) -> None:
        """Wait for the disconnect (a request's body may come first); cancel the writer if it
        is still writing."""
        with contextlib.suppress(Exception):  # a receive that fails: nothing to watch for
            while (await receive())["type"] != "http.disconnect":
                pass
            if self._writing:
                self._client_left = True
                writer.cancel()
