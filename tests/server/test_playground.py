"""The playground's HTTP side, through a real server in front of the emulator: the page and its
assets need the key (or an open server), every response forbids anything from elsewhere, the
page names nothing off the server, the turn's cost comes from the catalogue, Stop cancels the
upstream call at once, and `modelstream playground` binds 127.0.0.1 and wants `--open` for a
config without keys."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import httpx
import orjson

from modelstream.catalogue import default_catalogue
from modelstream.catalogue.cost import cost_of_turn
from modelstream.playground.app import COOKIE
from modelstream.testing import Emulator, Reply, Turn
from support.server import AUTH, CLIENT_KEY, SERVED, Serve, read_sse

STATIC = files("modelstream.playground") / "static"
PAGE_FILES = ("/playground/", "/playground/static/app.js", "/playground/static/style.css")


def test_without_the_key_the_page_is_the_sign_in_form_and_the_assets_are_refused(
    serve: Serve,
) -> None:
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        page = http.get("/playground/")
        assert page.status_code == 401
        assert 'name="key"' in page.text and "app.js" not in page.text
        for path in PAGE_FILES[1:]:
            refused = http.get(path)
            assert refused.status_code == 401
            assert refused.json()["error"]["type"] == "AuthenticationError"
        wrong = http.get("/playground/static/app.js", headers={"authorization": "Bearer nope"})
        assert wrong.status_code == 401
        bad_sign_in = http.post("/playground/login", data={"key": "nope"})
        assert bad_sign_in.status_code == 401 and "set-cookie" not in bad_sign_in.headers
        assert "not one of this server's keys" in bad_sign_in.text
        moved = http.get("/playground")
        assert moved.status_code in (301, 307, 308)
        assert moved.headers["location"].endswith("/playground/")


def test_signing_in_sets_a_strict_session_cookie_that_serves_the_page(serve: Serve) -> None:
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        signed_in = http.post("/playground/login", data={"key": CLIENT_KEY})
        assert signed_in.status_code == 303
        assert signed_in.headers["location"] == "./"
        cookie = signed_in.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=") and CLIENT_KEY not in cookie  # a session id
        assert "samesite=strict" in cookie.lower() and "httponly" in cookie.lower()
        assert "expires" not in cookie.lower() and "max-age" not in cookie.lower()
        assert "Path=/playground;" in cookie  # never sent to the API's paths
        for path in PAGE_FILES:
            served = http.get(path)  # the client sends the cookie back
            assert served.status_code == 200, path
            if path == "/playground/":
                assert 'id="sign-out"' in served.text
        assert served.text == STATIC.joinpath("style.css").read_text()
    with httpx.Client(base_url=server.url, headers=AUTH) as http:
        assert http.get("/playground/static/app.js").status_code == 200


def test_an_open_server_serves_the_page_to_anyone(serve: Serve) -> None:
    server = serve(keys=[])
    with httpx.Client(base_url=server.url) as http:
        for path in PAGE_FILES:
            assert http.get(path).status_code == 200, path
        assert 'id="sign-out"' not in http.get("/playground/").text  # nobody signs in here
        assert http.get("/playground/static/nothing.js").status_code == 404


def test_every_response_forbids_anything_from_elsewhere(serve: Serve) -> None:
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        responses = [http.get(path) for path in PAGE_FILES]
        responses.append(http.post("/playground/api/cost", json={}))
    for response in responses:
        policy = response.headers["content-security-policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
        assert directives["default-src"] == "'none'"
        for name in ("script-src", "style-src", "connect-src"):
            assert directives[name] == "'self'"
        assert directives["frame-ancestors"] == "'none'"
        assert response.headers["x-content-type-options"] == "nosniff"


def test_the_page_names_nothing_off_the_server_and_never_writes_html() -> None:
    texts = {
        name: STATIC.joinpath(name).read_text()
        for name in ("index.html", "login.html", "app.js", "style.css", "theme.css")
    }
    for name, text in texts.items():
        assert not re.search(r"https?://", text), name
        assert "<script>" not in text and "style=" not in text, name  # CSP: nothing inline
    script = texts["app.js"]
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "document.write" not in script and "eval(" not in script


def test_the_cost_of_a_turn_is_priced_from_the_catalogue(serve: Serve) -> None:
    server = serve()
    usage = {
        "cached_tokens": 100,
        "prompt_tokens": 900,
        "thoughts_tokens": 0,
        "response_tokens": 50,
    }
    price = default_catalogue().lookup(SERVED["anthropic"][0])
    assert price is not None and price.price is not None
    expected = cost_of_turn(usage, price.price, model=price.id).as_json()  # type: ignore[arg-type]
    with httpx.Client(base_url=server.url) as http:
        answer = http.post(
            "/playground/api/cost", json={"model": "anthropic", "usage": usage}, headers=AUTH
        )
        assert answer.status_code == 200
        assert answer.json()["cost"] == expected
        assert http.post("/playground/api/cost", json={"model": "anthropic"}).status_code == 401
        unknown = http.post(
            "/playground/api/cost", json={"model": "nobody", "usage": usage}, headers=AUTH
        )
        assert unknown.status_code == 400
        for usage_given in ({"prompt_tokens": "9"}, {"response_tokens": -1}, [1, 2]):
            bad = http.post(
                "/playground/api/cost",
                json={"model": "anthropic", "usage": usage_given},
                headers=AUTH,
            )
            assert bad.status_code == 400, usage_given
            assert bad.json()["error"]["type"] == "InvalidRequestError"
        unpriced = http.post(
            "/playground/api/cost",
            json={"model": "anthropic", "usage": {**usage, "prompt_tokens": None}},
            headers=AUTH,
        )
        assert unpriced.json()["cost"] is None  # a count unknown: the cost is unknown, never 0


def test_stop_cancels_the_upstream_call_at_once(serve: Serve, emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("slow words " * 200), fragment_size=4, delay=0.1))
    server = serve(resume_grace_seconds=60)  # only Stop can end it early
    body = stream_body_for("anthropic")
    with (
        httpx.Client(base_url=server.url, headers=AUTH, timeout=10) as http,
        http.stream("POST", "/v1/stream", json=body) as response,
    ):
        response_id = response.headers["x-response-id"]
        emu.wait_for_requests(1)
        other = http.post(
            f"/playground/api/stop/{response_id}",
            headers={"authorization": "Bearer someone-else"},
        )
        assert other.status_code == 401
        stopped = http.post(f"/playground/api/stop/{response_id}")
        assert stopped.json() == {"stopped": True}
        (upstream,) = emu.wait_for_requests(1, timeout=3, finished=True)
        stream = read_sse(response)
    assert upstream.client_closed_early
    assert stream.done
    (error,) = stream.errors
    assert error["type"] == "StreamCancelledError" and error["reason"] == "stopped"
    assert len(stream.events) < 200  # it did not run on to the end
    with httpx.Client(base_url=server.url, headers=AUTH) as http:
        again = http.post(f"/playground/api/stop/{response_id}")
        assert again.json() == {"stopped": False}  # already over
        unknown = http.post("/playground/api/stop/resp_" + "0" * 32)
        assert unknown.status_code == 404


def stream_body_for(model: str) -> dict[str, object]:
    return {
        "model": model,
        "messages": [{"role": "user", "content_items": [{"type": "text.done", "text": "go"}]}],
    }


def test_the_command_binds_127_0_0_1_and_wants_open_for_a_config_without_keys(
    tmp_path: Path, emu: Emulator
) -> None:
    config = tmp_path / "server.json"
    model = {"server_model_id": "m", "model": "claude-sonnet-4-5", "api_key": "$UPSTREAM"}
    model["base_url"] = emu.base_url("anthropic-messages")
    config.write_bytes(orjson.dumps({"models": [model]}))
    env = {"UPSTREAM": "sk-test", "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "modelstream", "playground", "--config", str(config)]
    refused = subprocess.run(
        [*command, "--port", "0"], capture_output=True, text=True, env=env, timeout=60
    )
    assert refused.returncode == 2
    assert "--open" in refused.stderr and "no keys" in refused.stderr
    process = subprocess.Popen(
        [*command, "--port", "0", "--open"], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stderr is not None
        lines = [process.stderr.readline() for _ in range(3)]
        announced = next(line for line in lines if "playground: open" in line)
        found = re.search(r"http://127\.0\.0\.1:\d+/playground/", announced)
        assert found is not None, lines
        page = httpx.get(found.group(0), timeout=10)
        assert page.status_code == 200 and "static/app.js" in page.text
    finally:
        process.terminate()
        process.wait(timeout=15)
