"""Headless Chromium for the browser tests (the trace viewer, the playground): Debian's
`chromium` driven by Playwright, launched with the flags a closed network needs. Missing either
fails under CI and skips otherwise (support.missing)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from typing import Any

from support import missing

BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    for candidate in ("chromium", "chromium-browser"):
        path = shutil.which(candidate)
        if path:
            return path
    missing("no chromium browser found (apt-get install -y chromium)")


@contextlib.contextmanager
def launched_chromium() -> Iterator[Any]:
    """A headless Chromium browser, closed at the end."""
    executable = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=BROWSER_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def watched_page(browser: Any, width: int, height: int) -> Iterator[Any]:
    """A fresh browser session's page that notes its script errors (`page.errors`) and every
    URL it requests (`page.requests`), for the test to check; closed at the end."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.errors = []
    page.requests = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("request", lambda request: page.requests.append(request.url))
    try:
        yield page
    finally:
        context.close()
