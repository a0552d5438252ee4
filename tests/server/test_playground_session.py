"""The playground's sign-in, through a real server in front of the emulator: the cookie holds a
random session id the server looks up (never the key), is HttpOnly and SameSite=Strict, and
Secure over https; the session streams through the playground's own routes as the key it signed
in with, until it is signed out or expires; and every state-changing POST refuses a request sent
by another site's page (`Origin`, `Sec-Fetch-Site`)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from importlib.resources import files
from typing import Any

import httpx

from modelstream.client.credentials import Secret
from modelstream.playground.app import COOKIE
from modelstream.playground.sessions import SessionStore
from modelstream.server import settings_from_mapping
from modelstream.serving import create_app
from modelstream.testing import Emulator, Reply, Turn
from support.server import (
    AUTH,
    CLIENT_KEY,
    CLIENT_KEY_ENV,
    UPSTREAM_KEY,
    UPSTREAM_KEY_ENV,
    LiveServer,
    Serve,
    config_for,
    read_sse,
    stream_body,
)


@contextlib.contextmanager
def signed_in(server: LiveServer) -> Iterator[httpx.Client]:
    """A client holding a session cookie, as a browser would after the sign-in form."""
    with httpx.Client(base_url=server.url, timeout=10) as http:
        answer = http.post("/playground/login", data={"key": CLIENT_KEY})
        assert answer.status_code == 303, answer.text
        yield http


def session_id(http: httpx.Client) -> str:
    value = http.cookies.get(COOKIE)
    assert value
    return value


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_the_cookie_holds_a_session_id_not_the_key_and_scripts_cannot_read_it(
    serve: Serve,
) -> None:
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        answer = http.post("/playground/login", data={"key": CLIENT_KEY})
    cookie = answer.headers["set-cookie"]
    assert CLIENT_KEY not in cookie
    attributes = [part.strip().lower() for part in cookie.split(";")]
    assert "httponly" in attributes and "samesite=strict" in attributes
    assert "path=/playground" in attributes
    assert "secure" not in attributes  # this request came over plain http
    session = cookie.split(";", 1)[0].removeprefix(f"{COOKIE}=")
    assert len(session) >= 32  # secrets.token_urlsafe: random, not derived from the key


def test_the_page_script_never_reads_a_cookie() -> None:
    script = (files("modelstream.playground") / "static" / "app.js").read_text()
    assert "document.cookie" not in script
    assert "authorization" not in script.lower()  # the server adds the session's key


def test_a_session_streams_as_its_key_through_the_playground_routes(
    serve: Serve, emu: Emulator
) -> None:
    emu.queue(Reply.turn(Turn.text("signed-in answer")))
    server = serve()
    with signed_in(server) as http:
        models = http.get("/playground/api/v1/models")
        assert models.status_code == 200
        assert "anthropic" in [model["id"] for model in models.json()["data"]]
        with http.stream("POST", "/playground/api/v1/stream", json=stream_body()) as response:
            assert response.status_code == 200
            response_id = response.headers["x-response-id"]
            stream = read_sse(response)
        assert stream.done and stream.events[-1]["event_type"] == "stop"
        replay = http.get(f"/playground/api/v1/streams/{response_id}")
        assert replay.status_code == 200 and read_sse(replay).done
    # the stream belongs to the key the session signed in with, as any client's does
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=10) as http:
        assert http.get(f"/v1/streams/{response_id}").status_code == 200
    with httpx.Client(base_url=server.url, timeout=10) as anonymous:
        assert anonymous.get("/playground/api/v1/models").status_code == 401
        assert anonymous.post("/playground/api/v1/stream", json=stream_body()).status_code == 401


def test_after_signing_out_the_session_is_gone_on_the_server_too(serve: Serve) -> None:
    server = serve()
    with signed_in(server) as http:
        stolen = session_id(http)
        assert http.get("/playground/").status_code == 200
        out = http.post("/playground/logout")
        assert out.status_code == 303 and out.headers["location"] == "./"
        cleared = out.headers["set-cookie"].lower()
        assert cleared.startswith(f"{COOKIE}=") and "max-age=0" in cleared
        assert http.get("/playground/").status_code == 401  # the sign-in form again
    # the old cookie, sent again (a copy of it, say), opens nothing
    with httpx.Client(base_url=server.url, cookies={COOKIE: stolen}, timeout=10) as http:
        assert http.get("/playground/").status_code == 401
        assert http.get("/playground/api/v1/models").status_code == 401
        assert http.post("/playground/api/cost", json={}).status_code == 401


def test_an_expired_session_opens_nothing(serve: Serve) -> None:
    server = serve(playground_session_seconds=0.5)
    with signed_in(server) as http:
        assert http.get("/playground/api/v1/models").status_code == 200
        time.sleep(0.7)
        assert http.get("/playground/api/v1/models").status_code == 401
        assert http.get("/playground/").status_code == 401


def test_sessions_are_bounded_and_expire_on_the_servers_clock() -> None:
    now = [1000.0]
    sessions = SessionStore(lifetime_seconds=60, max_sessions=2, clock=lambda: now[0])
    first, second = sessions.open(Secret("k1")), sessions.open(Secret("k2"))
    third = sessions.open(Secret("k3"))
    assert sessions.key(first) is None  # the oldest made room
    assert [sessions.key(s).reveal() for s in (second, third)] == ["k2", "k3"]  # type: ignore[union-attr]
    now[0] += 61
    assert sessions.key(second) is None and sessions.key(third) is None
    assert len({first, second, third}) == 3 and sessions.key("made-up") is None


def test_a_sign_in_sent_by_another_sites_page_is_refused(serve: Serve) -> None:
    server = serve()
    foreign = [
        {"origin": "http://evil.example"},
        {"origin": "null"},  # a sandboxed frame or a redirect across sites
        {"origin": "http://127.0.0.1:1"},  # another port: another origin
        {"origin": server.url + "/playground/"},  # not an origin at all
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},  # a sibling subdomain is another origin still
    ]
    with httpx.Client(base_url=server.url) as http:
        for headers in foreign:
            refused = http.post("/playground/login", data={"key": CLIENT_KEY}, headers=headers)
            assert refused.status_code == 403, headers
            assert refused.json()["error"]["type"] == "PermissionDeniedError"
            assert "set-cookie" not in refused.headers
        own = {"origin": server.url, "sec-fetch-site": "same-origin"}
        allowed = http.post("/playground/login", data={"key": CLIENT_KEY}, headers=own)
        assert allowed.status_code == 303
        for headers in (
            {"sec-fetch-site": "none"},  # the person's own action (a bookmark, the address bar)
            {"origin": server.url.replace("http://", "https://")},  # a TLS proxy in front
            # Chromium's form POST under the pages' Referrer-Policy: no-referrer
            {"origin": "null", "sec-fetch-site": "same-origin"},
        ):
            answer = http.post("/playground/login", data={"key": CLIENT_KEY}, headers=headers)
            assert answer.status_code == 303, headers


def test_the_other_playground_posts_refuse_another_sites_page(serve: Serve) -> None:
    server = serve()
    evil = {"origin": "http://evil.example", "sec-fetch-site": "cross-site"}
    with signed_in(server) as http:
        posts = [
            ("/playground/api/cost", {"model": "anthropic", "usage": {}}),
            ("/playground/api/stop/resp_" + "0" * 32, None),
            ("/playground/api/v1/stream", stream_body()),
            ("/playground/logout", None),
        ]
        for path, body in posts:
            refused = http.post(path, json=body, headers=evil)
            assert refused.status_code == 403, path
            bearer = http.post(path, json=body, headers={**evil, **AUTH})
            assert bearer.status_code == 403, path
        assert http.get("/playground/").status_code == 200  # the refused logout did nothing


def test_the_cookie_is_secure_when_the_request_came_over_https(emu: Emulator) -> None:
    env = {UPSTREAM_KEY_ENV: UPSTREAM_KEY, CLIENT_KEY_ENV: CLIENT_KEY}
    app = create_app(settings_from_mapping(config_for(emu), env))

    async def sign_in() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)  # the ASGI scope's scheme is https
        async with httpx.AsyncClient(transport=transport, base_url="https://127.0.0.1") as http:
            return await http.post("/playground/login", data={"key": CLIENT_KEY})

    answer = asyncio.run(sign_in())
    assert answer.status_code == 303
    attributes = [part.strip().lower() for part in answer.headers["set-cookie"].split(";")]
    assert "secure" in attributes and "httponly" in attributes


def test_a_deeply_nested_json_body_is_a_clear_400(serve: Serve, emu: Emulator) -> None:
    server = serve()
    with signed_in(server) as http:
        cost = http.post(
            "/playground/api/cost", json={"model": "anthropic", "usage": nested(500)}, headers=AUTH
        )
        stream = http.post(
            "/playground/api/v1/stream", json={"model": "anthropic", "messages": nested(500)}
        )
    for answer in (cost, stream):
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert error["type"] == "InvalidRequestError"
        assert "levels deep" in error["message"] and "Traceback" not in answer.text
    assert emu.requests == []
