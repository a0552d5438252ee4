"""The chat playground: one static page over the server's own API, mounted at `/playground`.

    GET  /playground/                     the page (static/index.html, app.js, style.css)
    GET  /playground/static/{name}        its scripts and style sheets (theme.css, the look it
                                          shares with the sign-in form, needs no key)
    POST /playground/login                a key from the sign-in form: a session cookie
    POST /playground/logout               end the session, here and in the browser
    POST /playground/api/v1/stream        the server's POST /v1/stream, as the session's key
    GET  /playground/api/v1/streams/{id}  the server's resume (`Last-Event-ID`), likewise
    GET  /playground/api/v1/models        the server's model list, likewise
    POST /playground/api/cost             {"model", "usage", "at_ms"}: the turn's cost
    POST /playground/api/stop/{response_id}   cancel a running stream's upstream call now

A browser cannot send a bearer header when it loads a page, so on a server with keys the sign-in
form trades a key for a session (`sessions.py`): a random id in an HttpOnly, SameSite=Strict
cookie sent only to `/playground` paths, and the key kept in the server's memory. The page and
these routes take that session or a bearer key; without either the sign-in form is all there is.
The page's API calls go to `/playground/api/v1/...`, which hand the request to the server's own
route with the session's key as its bearer key: the same routes and wire as any client, and a
stream the page starts belongs to that key. On an open server (no keys) everything is open, as
the API is.

A state-changing request sent by another site's page (`Origin`, `Sec-Fetch-Site`) is a 403, and
any request for a `Host` the server does not answer is a 421 (`..web.hosts`), keys or not: a
cookie would otherwise let a page elsewhere act as the person signed in.

Every response forbids anything from elsewhere (CSP: scripts, styles, connections and images
from this origin only, plus `data:`/`blob:` images and audio the page makes itself).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import parse_qs

import orjson
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from ..auth.secret import Secret
from ..catalogue import default_catalogue
from ..catalogue.cost import cost_of_turn
from ..errors import PermissionDeniedError
from ..web.bodies import json_object, read_body
from ..web.hosts import HostPolicy, host_checked
from ..web.keys import BearerKeys
from ..web.pages import HTML, media_type, page_assets, with_page_headers
from ..web.refusals import Refusal, invalid_request, not_found, unauthorized
from .sessions import SessionStore, cross_site
from .settings import PlaygroundSettings

COOKIE = "modelstream_playground_session"
MAX_SMALL_BODY = 64 * 1024  # the sign-in form holds one key; a cost request, one usage
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
PUBLIC_ASSETS = ("theme.css",)  # the sign-in form's style sheet: it is shown before a key is
WRONG_KEY = (
    b'<p class="error" role="alert"><strong>That is not one of this server\'s keys.</strong> '
    b"Check it for a typo, or ask whoever runs the server for one of the <code>keys</code> "
    b"in its config.</p>"
)
# the sign-out button, left out of the page on an open server (nobody signs in there)
SIGN_OUT = (
    b'<form id="sign-out" method="post" action="logout">'
    b'<button type="submit">Sign out</button></form>'
)

# nothing from elsewhere; images and audio the page makes itself (data:, blob:)
CONTENT_SECURITY_POLICY = (
    b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    b"img-src 'self' data: blob:; media-src data: blob:; base-uri 'none'; "
    b"form-action 'self'; frame-ancestors 'none'"
)


class StreamControl(Protocol):
    """What the playground asks of the server's streams (the server's `StreamRelay`)."""

    async def readable_by(self, response_id: str, owner: str) -> bool:
        """Whether `response_id` names a stream stored for the key `owner` hashes (False for
        what is not a response id, without asking the store)."""
        ...

    def stop(self, response_id: str) -> bool:
        """Cancel the stream's upstream call now; False when none of that id runs."""
        ...


def create_playground(settings: PlaygroundSettings, hosts: HostPolicy) -> ASGIApp:
    """The playground's routes, to mount at `/playground` in the server's app: it hands its API
    calls to that app, and stops a stream through the app's `state.relay` (a `StreamControl`).
    `hosts`: the `Host` names it answers (the server's)."""
    keys = BearerKeys(settings.keys)
    sessions = SessionStore(settings.session_seconds)
    static = page_assets(__package__)
    if keys.open:
        static["index.html"] = static["index.html"].replace(SIGN_OUT, b"")
    sign_in = static.pop("login.html")
    wrong_key = sign_in.replace(b"<!-- wrong key -->", WRONG_KEY)

    def authorization(request: Request) -> str | None:
        """The request's key as an `Authorization` value: the header, else the session's."""
        header = request.headers.get("authorization")
        if header is not None:
            return header
        key = sessions.key(request.cookies.get(COOKIE))
        return None if key is None else f"Bearer {key.reveal()}"

    def page(request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in static:
            return _error(404, "NotFoundError", f"no file {name[:60]!r} in the playground")
        if name not in PUBLIC_ASSETS and not keys.allows(authorization(request)):
            if name != "index.html":
                return _error(401, "AuthenticationError", "sign in at /playground/ first")
            return Response(sign_in, 401, media_type=HTML)
        return Response(static[name], media_type=media_type(name))

    async def login(request: Request) -> Response:
        try:
            body = await read_body(request, MAX_SMALL_BODY, settings.body_timeout_seconds)
        except Refusal as refusal:
            return _refused(refusal)
        key = (parse_qs(body.decode("utf-8", "replace")).get("key") or [""])[0].strip()
        if not key or not keys.allows(f"Bearer {key}"):
            return Response(wrong_key, 401, media_type=HTML)
        response = RedirectResponse("./", status_code=303)
        if not keys.open:
            sessions.close(request.cookies.get(COOKIE))  # a second sign-in replaces the first
            # no Max-Age: the browser forgets it when it closes; the server after the lifetime
            set_session_cookie(request, response, sessions.open(Secret(key)))
        return response

    async def logout(request: Request) -> Response:
        sessions.close(request.cookies.get(COOKIE))
        response = RedirectResponse("./", status_code=303)
        set_session_cookie(request, response, None)
        return response

    def check_key(request: Request) -> str | None:
        """The caller's key hash (None on an open server), or a 401 `Refusal`."""
        given = authorization(request)
        if not keys.allows(given):
            raise unauthorized()
        return keys.holder(given)

    async def cost(request: Request) -> Response:
        try:
            check_key(request)
            asked = json_object(
                await read_body(request, MAX_SMALL_BODY, settings.body_timeout_seconds)
            )
            model = asked.get("model")
            upstream = settings.models.get(model) if isinstance(model, str) else None
            usage, at_ms = asked.get("usage"), asked.get("at_ms")
            if upstream is None or not _is_usage(usage):
                raise invalid_request(
                    'send {"model": a served model id, "usage": the stop event\'s usage, '
                    '"at_ms": when it ran}'
                )
        except Refusal as refusal:
            return _refused(refusal)
        info = default_catalogue().lookup(upstream)
        if info is None or info.price is None:  # unknown, never zero
            return _json({"cost": None, "model": upstream})
        turn = cost_of_turn(
            usage,
            info.price,
            model=info.id,
            at_ms=at_ms if isinstance(at_ms, int) else None,
        )
        return _json({"cost": turn.as_json() if turn.known else None, "model": upstream})

    async def stop(request: Request) -> Response:
        response_id = request.path_params["response_id"]
        relay: StreamControl = request.app.state.relay  # `request.app` is the outer app
        try:
            caller = check_key(request)
            # another key's stream reads as unknown, as it does for a resume
            if not await relay.readable_by(response_id, caller or ""):
                raise not_found(f"no stream {response_id[:60]!r} to stop")
        except Refusal as refusal:
            return _refused(refusal)
        return _json({"stopped": relay.stop(response_id)})

    # a Router, not an app: `request.app` stays the server's, whose state holds the relay
    to_server = ServerRoute(authorization)
    router = Router(
        routes=[
            Route("/", page, methods=["GET"]),
            Route("/static/{name}", page, methods=["GET"]),
            Route("/login", login, methods=["POST"]),
            Route("/logout", logout, methods=["POST"]),
            Route("/api/v1/stream", to_server, methods=["POST"]),
            Route("/api/v1/streams/{response_id}", to_server, methods=["GET"]),
            Route("/api/v1/models", to_server, methods=["GET"]),
            Route("/api/cost", cost, methods=["POST"]),
            Route("/api/stop/{response_id}", stop, methods=["POST"]),
        ]
    )
    checked = host_checked(same_site_only(router), hosts=hosts)
    return with_page_headers(checked, CONTENT_SECURITY_POLICY)


def set_session_cookie(request: Request, response: Response, session_id: str | None) -> None:
    """The session cookie (None: its removal): sent only to the playground's paths, never with
    a request another site's page makes, out of reach of scripts, and over https only when the
    page came over https."""
    path = request.scope.get("root_path") or "/"  # where the playground is mounted
    secure = request.url.scheme == "https"
    if session_id is None:
        response.delete_cookie(COOKIE, path=path, secure=secure, httponly=True, samesite="strict")
    else:
        response.set_cookie(
            COOKIE, session_id, path=path, secure=secure, httponly=True, samesite="strict"
        )


class ServerRoute:
    """The server's own route for a playground API path (`/api/v1/stream` -> `/v1/stream`),
    called with the session's key as the bearer key: the page uses the server's API as any
    client does, without ever holding the key."""

    def __init__(self, authorization: Callable[[Request], str | None]) -> None:
        self._authorization = authorization

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        given = self._authorization(Request(scope))
        headers = [
            (name, value)
            for name, value in scope["headers"]
            if name not in (b"cookie", b"authorization")  # the session id goes no further
        ]
        if given is not None:
            headers.append((b"authorization", given.encode("latin-1")))
        outer = scope.get("app_root_path", "")  # where the server's app is mounted
        path = outer + "/v1" + scope["path"][len(scope["root_path"]) :].removeprefix("/api/v1")
        forwarded = {k: v for k, v in scope.items() if k not in ("path_params", "endpoint")}
        forwarded.update(path=path, raw_path=path.encode(), root_path=outer, headers=headers)
        await scope["app"](forwarded, receive, send)  # the server's app (Starlette sets it)


def same_site_only(app: ASGIApp) -> ASGIApp:
    """`app`, answering a state-changing request sent by another site's page with a 403: the
    browser would have sent the session cookie with it."""

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in SAFE_METHODS:
            request = Request(scope)
            reason = cross_site(
                sec_fetch_site=request.headers.get("sec-fetch-site"),
                origin=request.headers.get("origin"),
                scheme=scope["scheme"],
                host=request.headers.get("host"),
            )
            if reason is not None:
                message = (
                    f"the playground takes this request only from its own page: {reason}; "
                    "open the playground at this server's address and use it there"
                )
                refusal = Refusal(
                    403, PermissionDeniedError.__name__, message, outcome="cross_site"
                )
                await _refused(refusal)(scope, receive, send)
                return
        await app(scope, receive, send)

    return checked


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


__all__ = ["COOKIE", "StreamControl", "create_playground"]
