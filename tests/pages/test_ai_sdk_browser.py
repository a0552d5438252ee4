"""The AI SDK's own client is the judge of the UI message stream: docs/examples/ai-sdk-chat (a
React page with `useChat` and `DefaultChatTransport`, from the npm registry, bundled with
esbuild) in headless Chromium against `modelstream serve` in front of the emulator. A turn
streams in and shows its text; a structured answer shows its value; a connection cut
mid-answer (a TCP relay drops it) resumes through the chat's reconnect to the exact text; a
reload mid-answer picks the running answer up again (`useChat({resume: true})`)."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from modelstream.testing import Emulator, Reply, Turn
from support import REPO, missing
from support.browser import launched_chromium, watched_page
from support.cutting_proxy import CuttingProxy
from support.frontend import FRONTEND
from support.server import CLIENT_KEY, Serve

EXAMPLE = REPO / "docs" / "examples" / "ai-sdk-chat"
STORY = "".join(f"Line {n}: a chat was cut and came back whole. " for n in range(1, 31))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The example page's script, bundled as its package.json's build does."""
    esbuild = FRONTEND / ".bin" / "esbuild"
    if not (FRONTEND / "@ai-sdk" / "react").is_dir() or not esbuild.exists():
        missing(f"the AI SDK's npm packages are not installed in {FRONTEND.parent}")
    out = tmp_path_factory.mktemp("ai-sdk") / "app.js"
    command = [str(esbuild), str(EXAMPLE / "app.jsx"), "--bundle", "--format=esm"]
    command += ["--jsx=automatic", f"--outfile={out}", '--define:process.env.NODE_ENV="production"']
    subprocess.run(
        command, check=True, capture_output=True, env={**os.environ, "NODE_PATH": str(FRONTEND)}
    )
    return out.read_bytes()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as browser:
        yield browser


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser session."""
    with watched_page(browser, 900, 700) as page:
        yield page


def open_example(page: Any, origin: str, bundle: bytes, query: str = "") -> None:
    """The example page as if served at `origin`/app/ (so its calls to the server are
    same-origin), its files answered by the test."""
    files = {"index.html": (EXAMPLE / "index.html").read_bytes(), "app.js": bundle}
    page.route(lambda url: url.startswith(f"{origin}/app/"), lambda route: serve_file(route, files))
    page.goto(f"{origin}/app/index.html?model=chat&key={CLIENT_KEY}{query}")
    wait_for(page, lambda: status(page) == "ready")  # the mount's reconnect found nothing


def serve_file(route: Any, files: dict[str, bytes]) -> None:
    name = route.request.url.split("?", 1)[0].rsplit("/", 1)[-1]
    kind = "text/html" if name.endswith(".html") else "text/javascript"
    route.fulfill(status=200, body=files[name], content_type=kind)


def status(page: Any) -> str:
    return str(page.text_content("#status") or "")


def answer(page: Any) -> str:
    return str(page.text_content("#answer") or "")


def wait_for(page: Any, until: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, (
            status(page),
            answer(page)[-80:],
            page.errors,
            page.text_content("#error") if page.query_selector("#error") else None,
        )
        time.sleep(0.02)


def ask(page: Any, text: str) -> None:
    page.fill("#prompt", text)
    page.click("#send")


def test_a_turn_streams_in_and_shows_its_text(
    serve: Serve, emu: Emulator, page: Any, bundle: bytes
) -> None:
    server = serve()
    emu.queue(Reply.turn(Turn.text(STORY), fragment_size=16, delay=0.005))
    open_example(page, server.url, bundle)
    ask(page, "Tell me a story.")
    seen: set[str] = set()
    wait_for(page, lambda: seen.add(answer(page)) or status(page) == "ready")
    assert answer(page) == STORY
    assert len(seen) > 3  # it grew as it streamed
    assert all(STORY.startswith(text) for text in seen)
    assert page.errors == []


def test_a_structured_answer_shows_its_value_as_it_grows(
    serve: Serve, emu: Emulator, page: Any, bundle: bytes
) -> None:
    server = serve()
    value = {"city": "Oslo", "days": [{"day": "Mon", "high": 12}, {"day": "Tue", "high": 9.5}]}
    emu.queue(Reply.turn(Turn.text(json.dumps(value)), fragment_size=3, delay=0.06))
    open_example(page, server.url, bundle, "&schema=1")
    ask(page, "The forecast for Oslo?")
    shown: list[Any] = []

    def objects() -> bool:
        text = page.text_content("#object") if page.query_selector("#object") else None
        if text and (not shown or json.loads(text) != shown[-1]):
            shown.append(json.loads(text))
        return status(page) == "ready"

    wait_for(page, objects)
    assert shown[-1] == value
    assert len(shown) > 3
    assert emu.requests[-1].json["response_format"]["type"] == "json_schema"


def test_a_connection_cut_mid_answer_resumes_to_the_exact_text(
    serve: Serve, emu: Emulator, page: Any, bundle: bytes
) -> None:
    server = serve()
    emu.queue(Reply.turn(Turn.text(STORY), fragment_size=8, delay=0.01))
    proxy = CuttingProxy(int(server.url.rsplit(":", 1)[1]))
    try:
        open_example(page, proxy.url, bundle)
        ask(page, "Tell me a story.")
        wait_for(page, lambda: len(answer(page)) > 100)
        proxy.cut()
        wait_for(page, lambda: status(page) == "error")
        cut_at = answer(page)
        assert STORY.startswith(cut_at) and cut_at != STORY
        page.click("#resume")
        wait_for(page, lambda: status(page) == "ready")
        assert answer(page) == STORY  # not a character lost or doubled
        reconnects = [
            line for line in proxy.request_lines if line.startswith("GET /v1/stream/ai-sdk/")
        ]
        assert len(reconnects) == 2, proxy.request_lines  # at the mount, and the resume
        assert len(emu.requests) == 1  # the model was asked once
    finally:
        proxy.close()


def test_a_reload_mid_answer_picks_the_running_answer_up_again(
    serve: Serve, emu: Emulator, page: Any, bundle: bytes
) -> None:
    server = serve()
    emu.queue(Reply.turn(Turn.text(STORY), fragment_size=8, delay=0.01))
    open_example(page, server.url, bundle)
    ask(page, "Tell me a story.")
    wait_for(page, lambda: len(answer(page)) > 100)
    page.reload()
    wait_for(page, lambda: answer(page) == STORY and status(page) == "ready")
    assert len(emu.requests) == 1
    assert page.errors == []


@contextlib.contextmanager
def page_site(bundle: bytes) -> Iterator[str]:
    """The example page on a site of its own, `http://localhost:<port>` (another origin than
    the server's `127.0.0.1`), served by a real HTTP server: the browser's CORS checks run as
    they would for a page on another site (a page answered by Playwright's routing would have
    its preflights answered by Playwright)."""
    files = {"/app/index.html": (EXAMPLE / "index.html").read_bytes(), "/app/app.js": bundle}

    class Files(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = files.get(self.path.split("?", 1)[0])
            self.send_response(200 if found else 404)
            kind = "text/html" if self.path.startswith("/app/index") else "text/javascript"
            self.send_header("content-type", kind)
            self.end_headers()
            self.wfile.write(found or b"")

        def log_message(self, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Files)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        yield f"http://localhost:{site.server_address[1]}"
    finally:
        site.shutdown()
        site.server_close()


def test_a_page_on_another_origin_streams_when_the_server_allows_it(
    serve: Serve, emu: Emulator, page: Any, bundle: bytes
) -> None:
    with page_site(bundle) as origin:
        server = serve(cors_origins=[origin])
        emu.queue(Reply.turn(Turn.text(STORY), fragment_size=32))
        page.goto(f"{origin}/app/index.html?model=chat&key={CLIENT_KEY}&server={server.url}")
        wait_for(page, lambda: status(page) == "ready")
        ask(page, "Tell me a story.")
        wait_for(page, lambda: status(page) == "ready" and bool(answer(page)))
    assert answer(page) == STORY
    assert page.errors == []


def test_a_page_on_another_origin_is_refused_by_default(
    serve: Serve, emu: Emulator, page: Any, bundle: bytes
) -> None:
    server = serve()
    with page_site(bundle) as origin:
        page.goto(f"{origin}/app/index.html?model=chat&key={CLIENT_KEY}&server={server.url}")
        wait_for(page, lambda: status(page) == "error")  # the mount's reconnect: blocked
        ask(page, "Tell me a story.")
        time.sleep(0.5)
        assert status(page) == "error"
    assert answer(page) == ""
    assert emu.requests == []  # the browser sent no turn past its preflight


def test_the_example_builds_from_its_own_package_json() -> None:
    """The page's package.json names the versions .ci/run installs and the build the test runs."""
    package = json.loads((EXAMPLE / "package.json").read_text())
    ci = (REPO / ".ci" / "run").read_text()
    for name, version in {**package["dependencies"], **package["devDependencies"]}.items():
        assert f"{name}@{version}" in ci
    assert "esbuild app.jsx --bundle" in package["scripts"]["build"]
    assert '<script type="module" src="app.js">' in (EXAMPLE / "index.html").read_text()
