"""The AI SDK's own client is the judge of the UI message stream: docs/examples/ai-sdk-chat (a
React page with `useChat` and `DefaultChatTransport`, from the npm registry, bundled with
esbuild) in headless Chromium against `modelstream serve` in front of the emulator. A turn
streams in and shows its text; a structured answer shows its value; a connection cut
mid-answer (a TCP relay drops it) resumes through the chat's reconnect to the exact text; a
reload mid-answer picks the running answer up again (`useChat({resume: true})`)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from modelstream.testing import Emulator, Reply, Turn
from support import REPO, missing
from support.browser import launched_chromium, watched_page
from support.cutting_proxy import CuttingProxy
from support.server import CLIENT_KEY, Serve

EXAMPLE = REPO / "docs" / "examples" / "ai-sdk-chat"
FRONTEND = REPO / ".frontend" / "node_modules"  # installed by .ci/run
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

    def serve_file(route: Any) -> None:
        name = route.request.url.split("?", 1)[0].rsplit("/", 1)[-1]
        kind = "text/html" if name.endswith(".html") else "text/javascript"
        route.fulfill(status=200, body=files[name], content_type=kind)

    page.route(f"{origin}/app/*", serve_file)
    page.goto(f"{origin}/app/index.html?model=chat&key={CLIENT_KEY}{query}")
    wait_for(page, lambda: status(page) == "ready")  # the mount's reconnect found nothing


def status(page: Any) -> str:
    return str(page.text_content("#status") or "")


def answer(page: Any) -> str:
    return str(page.text_content("#answer") or "")


def wait_for(page: Any, until: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, (status(page), answer(page)[-80:], page.errors)
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
    emu.queue(Reply.turn(Turn.text(json.dumps(value)), fragment_size=3, delay=0.01))
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


def test_the_example_builds_from_its_own_package_json() -> None:
    """The page's package.json names the versions .ci/run installs and the build the test runs."""
    package = json.loads((EXAMPLE / "package.json").read_text())
    ci = (REPO / ".ci" / "run").read_text()
    for name, version in {**package["dependencies"], **package["devDependencies"]}.items():
        assert f"{name}@{version}" in ci
    assert "esbuild app.jsx --bundle" in package["scripts"]["build"]
    assert '<script type="module" src="app.js">' in (EXAMPLE / "index.html").read_text()
