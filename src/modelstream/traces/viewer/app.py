"""The trace viewer: a Starlette app serving one static page and a read-only JSON API.

    GET /                      the page (static/index.html, app.js, style.css: no build step;
                               Markdown by ..web's static/markdown.js and markdown.css)
    GET /api/traces?q=&model=&key=&limit=&offset=   traces, newest first, filtered
    GET /api/trace?id=TRACE_ID                 one trace's turns in order
    GET /api/updates                           server-sent events: `turns` when turns are recorded

Live updates are server-sent events rather than the page polling the API: one long request per
open page, and an event only when something changed, naming the traces that did, so the page
reloads the list and the open trace only then. The file is written by other processes, so the
server itself checks it (`changes_since`: one indexed query) every `poll_interval` seconds. Each
event's id is the newest row seen: a reconnecting browser sends it back (`Last-Event-ID`) and
misses nothing.

Query parameters are checked, not clamped: an unknown or repeated one, a search longer than
`MAX_QUERY`, or a limit or offset that is not a whole number in its range is a 400.

It only reads the trace file and never fetches a URL: http(s) images in a trace are loaded by the
browser, and only when the person clicks them. Requests must name a loopback host (or the host it
was started on), so a web page elsewhere cannot read traces through DNS rebinding: the same check
as the server's (`modelstream.web.hosts`), answered with a 400.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from ...web.hosts import LOOPBACK_NAMES, HostPolicy, host_checked
from ...web.pages import media_type, page_assets, with_page_headers
from ..store import TraceStore

MAX_QUERY = 200  # characters of a search
MAX_LIMIT = 500  # traces in one listing
MAX_OFFSET = 1_000_000_000  # traces skipped (SQLite takes 64-bit integers; a listing far fewer)
MAX_TRACE_ID = 1_000  # characters of a trace id asked for
LOOPBACK_HOSTS = LOOPBACK_NAMES  # what `traces serve` allows, with the address it binds
POLL_INTERVAL_S = 1.0  # how often a live page's connection checks the file for new turns
KEEPALIVE_S = 15.0  # an SSE comment this often, so proxies and browsers keep the stream open

# scripts and styles from here only; images also from data: and (on a click) the web
_CONTENT_SECURITY_POLICY = (
    b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    b"img-src 'self' data: http: https:; media-src data:; base-uri 'none'; "
    b"form-action 'none'; frame-ancestors 'none'"
)


def create_app(
    store: TraceStore,
    *,
    allowed_hosts: Sequence[str] = LOOPBACK_HOSTS,
    poll_interval: float = POLL_INTERVAL_S,
) -> ASGIApp:
    """The viewer over `store`; requests for any host but `allowed_hosts` (names or
    addresses; `"*"`: any) get a 400."""
    static = page_assets(__package__)

    def page(request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in static:
            return _json({"error": {"type": "not_found", "message": "no such file"}}, 404)
        return Response(static[name], media_type=media_type(name))

    def traces(request: Request) -> Response:
        try:
            params = _params(request, {"q", "model", "key", "limit", "offset"})
            text = _text(params, "q", MAX_QUERY)
            model = _text(params, "model", MAX_QUERY)
            key = _text(params, "key", MAX_QUERY)  # a virtual key's whole name
            limit = _count(params, "limit", 100, minimum=1, maximum=MAX_LIMIT)
            offset = _count(params, "offset", 0, minimum=0, maximum=MAX_OFFSET)
        except BadQuery as exc:
            return _bad_query(exc)
        found = store.list_traces(text=text, model=model, key=key, limit=limit, offset=offset)
        return _json({"db": str(store.path), "traces": [s.to_json() for s in found]})

    def trace(request: Request) -> Response:
        try:
            params = _params(request, {"id"})
            trace_id = _text(params, "id", MAX_TRACE_ID) or ""
        except BadQuery as exc:
            return _bad_query(exc)
        if not trace_id:
            return _bad_query(BadQuery("id is required: /api/trace?id=TRACE_ID"))
        turns = store.trace_records(trace_id)
        if not turns:
            message = f"no trace {trace_id!r} in {store.path}"
            return _json({"error": {"type": "not_found", "message": message}}, 404)
        return _json({"trace_id": trace_id, "turns": turns})

    async def updates(request: Request) -> Response:
        try:
            _params(request, set())
            resumed = _last_event_id(request.headers.get("last-event-id"))
        except BadQuery as exc:
            return _bad_query(exc)
        # a new page starts from the newest row; a reconnecting one from the last it saw
        start = (
            resumed if resumed is not None else (await run_in_threadpool(store.changes_since, 0))[0]
        )
        return StreamingResponse(
            _update_events(store, start, poll_interval),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    routes = [
        Route("/", page),
        Route("/static/{name}", page),
        Route("/api/traces", traces),
        Route("/api/trace", trace),
        Route("/api/updates", updates),
    ]
    app = host_checked(
        Starlette(routes=routes),
        hosts=HostPolicy.of(allowed_hosts),
        status=400,
        error_type="invalid_request",  # as the viewer's other 400s
    )
    return with_page_headers(app, _CONTENT_SECURITY_POLICY)


async def _update_events(
    store: TraceStore, last: int, poll_interval: float
) -> AsyncIterator[bytes]:
    """`ready` at once, then a `turns` event (`{"traces": [ids]}`) whenever turns are recorded.
    Ends when the client goes away (Starlette cancels it on disconnect)."""
    yield _event("ready", last, {"row": last})
    quiet = 0.0
    while True:
        await asyncio.sleep(poll_interval)
        newest, changed = await run_in_threadpool(store.changes_since, last)
        if changed:
            last, quiet = newest, 0.0
            yield _event("turns", last, {"traces": changed})
            continue
        quiet += poll_interval
        if quiet >= KEEPALIVE_S:
            quiet = 0.0
            yield b": keep-alive\n\n"


def _event(name: str, row: int, data: dict[str, Any]) -> bytes:
    return b"event: %s\nid: %d\ndata: %s\n\n" % (name.encode(), row, orjson.dumps(data))


def _last_event_id(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    if not (value.isascii() and value.isdigit()) or int(value) > MAX_OFFSET:
        raise BadQuery(f"Last-Event-ID must be a row number, got {value[:40]!r}")
    return int(value)


def _json(value: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(value), status_code=status, media_type="application/json")


class BadQuery(ValueError):
    """A query parameter the API does not take, or a value out of its range: a 400."""


def _bad_query(exc: BadQuery) -> Response:
    return _json({"error": {"type": "invalid_request", "message": str(exc)}}, 400)


def _params(request: Request, known: set[str]) -> dict[str, str]:
    """The query parameters, each given at most once and each one the route knows."""
    pairs = request.query_params.multi_items()
    for name, _ in pairs:
        if name not in known:
            raise BadQuery(
                f"unknown query parameter {name[:40]!r}; known: {', '.join(sorted(known))}"
            )
    params = dict(pairs)
    if len(params) < len(pairs):
        raise BadQuery("a query parameter is given twice")
    return params


def _text(params: dict[str, str], name: str, max_length: int) -> str | None:
    value = params.get(name, "").strip()
    if len(value) > max_length:
        raise BadQuery(f"{name} is longer than {max_length} characters")
    return value or None


def _count(params: dict[str, str], name: str, default: int, *, minimum: int, maximum: int) -> int:
    value = params.get(name)
    if value is None or value == "":
        return default
    digits = value.isascii() and value.isdigit() and len(value) <= len(str(maximum))
    if not digits or not minimum <= int(value) <= maximum:  # int() only of a bounded length
        raise BadQuery(
            f"{name} must be a whole number from {minimum} to {maximum}, got {value[:40]!r}"
        )
    return int(value)


__all__ = ["create_app"]
