"""The chat playground: one static page over the server's own API, mounted at `/playground`.

    GET  /playground/                     the page (static/index.html, app.js, style.css)
    GET  /playground/static/{name}        its script and style sheet
    POST /playground/login                a key from the sign-in form: a session cookie
    POST /playground/api/cost             {"model", "usage", "at_ms"}: the turn's cost
    POST /playground/api/stop/{response_id}   cancel a running stream's upstream call now

The page talks to `POST /v1/stream` and resumes with `GET /v1/streams/{id}` + `Last-Event-ID`
like any client, so it adds no second wire. Its own routes need the server's key too. A browser
cannot send a bearer header when it loads a page, so on a server with keys the page and its
assets are served only to a request that carries a key in `Authorization` or in the session
cookie the sign-in form sets (SameSite=Strict, so no other site's page can use it); without one
the sign-in form is all there is. The script reads the key from that cookie to send it as the
bearer key of its API calls. On an open server (no keys) everything is open, as the API is.

Every response forbids anything from elsewhere (CSP: scripts, styles, connections and images
from this origin only, plus `data:`/`blob:` images and audio the page makes itself).
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any
from urllib.parse import parse_qs

import orjson
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route, Router
from starlette.types import ASGIApp

from ..catalogue import default_catalogue
from ..catalogue.cost import cost_of_turn
from ..pages import ASSET_TYPES, page_assets, with_page_headers
from ..server import wire
from ..server.auth import BearerKeys
from ..server.config import ServerSettings
from ..server.errors import Refusal, invalid_request, not_found, unauthorized
from ..server.limits import read_body

COOKIE = "modelstream_playground_key"
MAX_SMALL_BODY = 64 * 1024  # the sign-in form holds one key; a cost request, one usage

# nothing from elsewhere; images and audio the page makes itself (data:, blob:)
CONTENT_SECURITY_POLICY = (
    b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    b"img-src 'self' data: blob:; media-src data: blob:; base-uri 'none'; "
    b"form-action 'self'; frame-ancestors 'none'"
)


def create_playground(settings: ServerSettings) -> ASGIApp:
    """The playground's routes, to mount at `/playground` in the server's app (it reads the
    server's `StreamRelay` from `app.state.relay` to stop a stream)."""
    keys = BearerKeys(settings.keys)
    static = page_assets(__package__)
    sign_in = (files(__package__) / "static" / "login.html").read_bytes()
    wrong_key = sign_in.replace(
        b"<!-- wrong key -->", b"<p><strong>That is not one of this server's keys.</strong></p>"
    )

    def authorization(request: Request) -> str | None:
        """The request's key as an `Authorization` value: the header, else the cookie."""
        header = request.headers.get("authorization")
        if header is not None:
            return header
        cookie = request.cookies.get(COOKIE)
        return None if cookie is None else f"Bearer {cookie}"

    def page(request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in static:
            return _error(404, "NotFoundError", f"no file {name[:60]!r} in the playground")
        if not keys.allows(authorization(request)):
            if name != "index.html":
                return _error(401, "AuthenticationError", "sign in at /playground/ first")
            return Response(sign_in, 401, media_type=ASSET_TYPES["index.html"])
        return Response(static[name], media_type=ASSET_TYPES[name])

    async def login(request: Request) -> Response:
        try:
            body = await read_body(request, MAX_SMALL_BODY)
        except Refusal as refusal:
            return _refused(refusal)
        key = (parse_qs(body.decode("utf-8", "replace")).get("key") or [""])[0].strip()
        if not key or not keys.allows(f"Bearer {key}"):
            return Response(wrong_key, 401, media_type=ASSET_TYPES["index.html"])
        response = RedirectResponse("./", status_code=303)
        if not keys.open:
            # a session cookie (gone when the browser closes), sent to the playground's paths
            # only, never by another site's page; the script reads it, so not HttpOnly
            path = request.scope.get("root_path") or "/"  # where the playground is mounted
            response.set_cookie(COOKIE, key, path=path, samesite="strict", httponly=False)
        return response

    def check_key(request: Request) -> str | None:
        """The caller's key hash (None on an open server), or a 401 `Refusal`."""
        authorization = request.headers.get("authorization")
        if not keys.allows(authorization):
            raise unauthorized()
        return keys.holder(authorization)

    async def cost(request: Request) -> Response:
        try:
            check_key(request)
            asked = wire.json_object(await read_body(request, MAX_SMALL_BODY))
            model = asked.get("model")
            entry = settings.model(model) if isinstance(model, str) else None
            usage, at_ms = asked.get("usage"), asked.get("at_ms")
            if entry is None or not _is_usage(usage):
                raise invalid_request(
                    'send {"model": a served model id, "usage": the stop event\'s usage, '
                    '"at_ms": when it ran}'
                )
        except Refusal as refusal:
            return _refused(refusal)
        info = default_catalogue().lookup(entry.model)
        if info is None or info.price is None:  # unknown, never zero
            return _json({"cost": None, "model": entry.model})
        turn = cost_of_turn(
            usage,
            info.price,
            model=info.id,
            at_ms=at_ms if isinstance(at_ms, int) else None,
        )
        return _json({"cost": turn.as_json() if turn.known else None, "model": entry.model})

    async def stop(request: Request) -> Response:
        response_id = request.path_params["response_id"]
        relay = request.app.state.relay  # the server's: `request.app` is the outer app
        try:
            caller = check_key(request)
            # another key's stream reads as unknown, as it does for a resume
            if not wire.is_response_id(response_id) or not await relay.readable_by(
                response_id, caller or ""
            ):
                raise not_found(f"no stream {response_id[:60]!r} to stop")
        except Refusal as refusal:
            return _refused(refusal)
        return _json({"stopped": relay.stop(response_id)})

    # a Router, not an app: `request.app` stays the server's, whose state holds the relay
    router = Router(
        routes=[
            Route("/", page, methods=["GET"]),
            Route("/static/{name}", page, methods=["GET"]),
            Route("/login", login, methods=["POST"]),
            Route("/api/cost", cost, methods=["POST"]),
            Route("/api/stop/{response_id}", stop, methods=["POST"]),
        ]
    )
    return with_page_headers(router, CONTENT_SECURITY_POLICY)


def _json(value: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(value), status_code=status, media_type="application/json")


def _error(status: int, kind: str, message: str) -> Response:
    return _json({"error": {"type": kind, "message": message}}, status)


def _refused(refusal: Refusal) -> Response:
    response = _json(refusal.body(), refusal.status)
    response.headers.update(refusal.headers)
    return response


def _is_usage(value: Any) -> bool:
    """SPEC §2 usage: each field a count or null (unknown)."""
    return isinstance(value, dict) and all(
        value.get(name) is None or (type(value[name]) is int and value[name] >= 0)
        for name in ("cached_tokens", "prompt_tokens", "thoughts_tokens", "response_tokens")
    )


__all__ = ["COOKIE", "create_playground"]
