"""Markdown in the package's pages, in headless Chromium (Debian's `chromium`, driven by
Playwright): the shared renderer (`modelstream/web/static/markdown.js`) on its own, then the
playground's streamed answers and the trace viewer's text items, which it renders safely, with
copyable code blocks, and without pushing anything off a phone's screen; the playground's
composer at 360–420 px and its sign-in form. Screenshots at 390 and 1280 px are saved in
tmp/artifacts/playground/ and tmp/artifacts/trace-viewer/, and checked."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import httpx
import pytest

from modelstream.server import BackgroundServer
from modelstream.testing import Emulator, Reply, Turn
from modelstream.traces import TraceStore
from modelstream.traces.viewer.app import create_app
from support import REPO
from support.browser import launched_chromium
from support.server import AUTH, CLIENT_KEY, Serve
from support.traces import make_turn, png_data_url, user

ARTIFACTS = REPO / "tmp" / "artifacts"  # screenshots, kept for people to look at
MARKDOWN_JS = (files("modelstream.web") / "static" / "markdown.js").read_text()
CODE = (
    "from pathlib import Path\n"
    "\n"
    'text = Path("notes.txt").read_text(encoding="utf-8")  # a line wider than a phone screen\n'
    "print(text)"
)
ANSWER = f"""# Reading a file in Python

Use **`pathlib`**: it is *shorter* than `open()`, and ~~never~~ rarely wrong.

1. Import it.
2. Read the text:
   - `read_text()` for text,
   - `read_bytes()` for bytes.

```python
{CODE}
```

> See [the pathlib docs](https://docs.python.org/3/library/pathlib.html) for more.

| method | returns |
|---|---|
| `read_text()` | `str` |
| `read_bytes()` | `bytes` |

Markup stays text: <script>window.ran = true</script> <img src=x onerror="window.ran = true"> \
and [a trap](javascript:window.ran=true).
"""
SCRIPT_LINE = (
    'Markup stays text: <script>window.ran = true</script> <img src=x onerror="window.ran = true"> '
    "and [a trap](javascript:window.ran=true)."
)
WIDTHS = [390, 1280]
PHONES = [360, 390, 420]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as browser:
        yield browser


@pytest.fixture
def pages(browser: Any) -> Iterator[Callable[..., Any]]:
    """Opens pages of a given width, each in a fresh browser session that may use the clipboard
    and notes any script error or Content-Security-Policy refusal (`page.errors`)."""
    contexts: list[Any] = []

    def open_page(width: int, height: int = 900) -> Any:
        context = browser.new_context(
            viewport={"width": width, "height": height},
            permissions=["clipboard-read", "clipboard-write"],
        )
        contexts.append(context)
        page = context.new_page()
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.on(
            "console",
            lambda message: (
                page.errors.append(message.text)
                if "Content Security Policy" in message.text
                else None
            ),
        )
        return page

    yield open_page
    for context in contexts:
        context.close()


def render(page: Any, text: str) -> str:
    """The HTML `Markdown.render` builds for `text` (read back here, never written by the page)."""
    built: str = page.evaluate(
        "(text) => { const box = document.createElement('div'); Markdown.render(box, text);"
        " return box.innerHTML; }",
        text,
    )
    return built


@pytest.fixture
def renderer(pages: Callable[..., Any]) -> Any:
    """A blank page with only the renderer loaded."""
    page = pages(800)
    page.set_content("<!doctype html><title>markdown</title><body></body>")
    page.add_script_tag(content=MARKDOWN_JS)
    return page


def sign_in(page: Any, url: str) -> None:
    page.goto(url + "/playground/")
    page.fill("input[name=key]", CLIENT_KEY)
    page.click("button[type=submit]")
    page.wait_for_selector("#model option", state="attached")


def box(locator: Any) -> dict[str, float]:
    found: dict[str, float] = locator.bounding_box()
    assert found is not None, "not laid out"
    return found


OVERFLOWING = """() => {
    // what lies past the left or right edge of the window, but for the inside of a code block
    // or a table, which scroll by themselves
    const width = document.documentElement.clientWidth;
    const found = [];
    for (const node of document.body.querySelectorAll("*")) {
        if (node.closest("pre, .table-wrap")) continue;
        const box = node.getBoundingClientRect();
        if (!box.width && !box.height) continue;
        if (box.left < -0.5 || box.right > width + 0.5) {
            found.push(`${node.tagName.toLowerCase()}.${node.className}: ${box.left}–${box.right}`);
        }
    }
    if (document.documentElement.scrollWidth > width) found.push("the page scrolls sideways");
    return found;
}"""


def overflowing(page: Any) -> list[str]:
    found: list[str] = page.evaluate(OVERFLOWING)
    return found


def screenshot(page: Any, folder: str, name: str, width: int) -> Path:
    """A full-page screenshot in tmp/artifacts/<folder>/, checked to be a PNG `width` wide."""
    path = ARTIFACTS / folder / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    assert int.from_bytes(data[16:20], "big") == width, path  # nothing made the page wider
    print(f"\nscreenshot: {path}")
    return path


def check_markdown(page: Any, answer: Any, width: int) -> None:
    """ANSWER as Markdown in `answer`: each construct as its element, the markup as text."""
    from playwright.sync_api import expect

    expect(answer.locator("h1")).to_have_text("Reading a file in Python")
    expect(answer.locator("strong code")).to_have_text("pathlib")
    expect(answer.locator("em")).to_have_text("shorter")
    expect(answer.locator("del")).to_have_text("never")
    expect(answer.locator("ol > li")).to_have_count(2)
    expect(answer.locator("ol > li ul > li")).to_have_count(2)
    block = answer.locator(".code-block")
    expect(block).to_have_count(1)
    expect(block.locator(".code-lang")).to_have_text("python")
    expect(block.locator(".copy")).to_have_text("Copy")
    assert block.locator("pre code").text_content() == CODE
    if width < 600:  # the long line scrolls inside its block, not the page
        assert block.locator("pre").evaluate("pre => pre.scrollWidth > pre.clientWidth")
    (link,) = answer.locator("a").all()  # the javascript: one is not a link
    assert link.get_attribute("href") == "https://docs.python.org/3/library/pathlib.html"
    assert link.get_attribute("rel") == "noopener noreferrer"
    expect(answer.locator("th")).to_have_count(2)
    expect(answer.locator("td")).to_have_count(4)
    expect(answer.locator("p").last).to_have_text(SCRIPT_LINE)
    expect(answer.locator("script, img, iframe")).to_have_count(0)
    assert page.evaluate("() => window.ran") is None


def check_copy(page: Any, answer: Any) -> None:
    """The code block's Copy button puts the code on the clipboard and says so."""
    from playwright.sync_api import expect

    button = answer.locator(".code-block .copy")
    button.click()
    expect(button).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == CODE
    expect(button).to_have_text("Copy", timeout=5000)  # and then it is ready again


# --- the renderer alone ----------------------------------------------------------------------

COPY_BUTTON = '<button class="copy" type="button" title="Copy the code">Copy</button>'
LINK = 'rel="noopener noreferrer" target="_blank"'


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        pytest.param(
            "# Title\n\nSome *em*, **strong**, ~~gone~~ and `code`.",
            "<h1>Title</h1><p>Some <em>em</em>, <strong>strong</strong>, <del>gone</del> and "
            "<code>code</code>.</p>",
            id="headings-emphasis-inline-code",
        ),
        pytest.param(
            "- a\n- b\n  - c\n\n3. three\n4. four",
            "<ul><li><p>a</p></li><li><p>b</p><ul><li><p>c</p></li></ul></li></ul>"
            '<ol start="3"><li><p>three</p></li><li><p>four</p></li></ol>',
            id="lists-nested-and-numbered",
        ),
        pytest.param(
            "> quoted\nstill quoted\n\n---\n\nafter",
            "<blockquote><p>quoted\nstill quoted</p></blockquote><hr><p>after</p>",
            id="quote-rule-line-breaks",
        ),
        pytest.param(
            "| a | b |\n|:-|-:|\n| 1 | 2 |",
            '<div class="table-wrap"><table><thead><tr><th class="align-left">a</th>'
            '<th class="align-right">b</th></tr></thead><tbody><tr><td class="align-left">1</td>'
            '<td class="align-right">2</td></tr></tbody></table></div>',
            id="table",
        ),
        pytest.param(
            '[site](https://example.com/a "Example") <mailto:me@example.com> '
            "and https://example.com/a_b.",
            f'<p><a href="https://example.com/a" {LINK} title="Example">site</a> '
            f'<a href="mailto:me@example.com" {LINK}>mailto:me@example.com</a> and '
            f'<a href="https://example.com/a_b" {LINK}>https://example.com/a_b</a>.</p>',
            id="links-http-https-mailto",
        ),
        pytest.param(
            "[x](javascript:alert(1)) [y](data:text/html,hi) [z](/relative) ![i](javascript:x)",
            "<p>[x](javascript:alert(1)) [y](data:text/html,hi) [z](/relative) "
            "![i](javascript:x)</p>",
            id="other-links-shown-as-text",
        ),
        pytest.param(
            "snake_case_name, 2 * 3 * 4 and \\*stars\\*; **a *b*** and *a **b** c*",
            "<p>snake_case_name, 2 * 3 * 4 and *stars*; <strong>a <em>b</em></strong> and "
            "<em>a <strong>b</strong> c</em></p>",
            id="emphasis-edges",
        ),
        pytest.param(
            "```python\nprint('<b>hi</b>')\n```",
            '<div class="code-block"><div class="code-head"><span class="code-lang">python</span>'
            f'{COPY_BUTTON}</div><pre><code class="language-python">'
            "print('&lt;b&gt;hi&lt;/b&gt;')</code></pre></div>",
            id="fenced-code",
        ),
        pytest.param(
            "Streaming:\n\n```js\nlet x = 1;\n",
            '<p>Streaming:</p><div class="code-block open"><div class="code-head">'
            f'<span class="code-lang">js</span>{COPY_BUTTON}</div><pre>'
            '<code class="language-js">let x = 1;</code></pre></div>',
            id="unclosed-fence-is-an-open-code-block",
        ),
        pytest.param(
            "1. Install:\n   ```sh\n   pip install modelstream\n   ```\n2. Run it.",
            '<ol><li><p>Install:</p><div class="code-block"><div class="code-head">'
            f'<span class="code-lang">sh</span>{COPY_BUTTON}</div><pre>'
            '<code class="language-sh">pip install modelstream</code></pre></div></li>'
            "<li><p>Run it.</p></li></ol>",
            id="code-in-a-list-item",
        ),
    ],
)
def test_the_renderer_builds_each_construct(renderer: Any, markdown: str, html: str) -> None:
    assert render(renderer, markdown) == html
    assert renderer.errors == []


def test_raw_html_in_a_models_text_is_shown_as_text_and_never_runs(renderer: Any) -> None:
    text = (
        '<script>window.ran = 1</script>\n\n<img src=x onerror="window.ran = 2">'
        " <iframe src=javascript:window.ran=3></iframe> [go](javascript:window.ran=4)"
        " <a href=javascript:window.ran=5>x</a> **<b onmouseover=window.ran=6>bold</b>**"
    )
    built = renderer.evaluate(
        "(text) => { const box = document.createElement('div'); document.body.append(box);"
        " Markdown.render(box, text); return {text: box.textContent,"
        " elements: [...box.querySelectorAll('*')].map((node) => node.tagName.toLowerCase())}; }",
        text,
    )
    assert built["elements"] == ["p", "p", "strong"]  # only Markdown's own elements
    assert built["text"] == text.replace("\n\n", "").replace("**", "")
    renderer.wait_for_timeout(200)  # an image's onerror would have fired by now
    assert renderer.evaluate("() => window.ran") is None


def test_streamed_text_redraws_only_what_changed_and_keeps_a_finished_code_block(
    renderer: Any,
) -> None:
    """Rendering each prefix of an answer into the same container gives what a fresh render
    of that prefix gives, while the code block, once its fence closed, stays the same node (and
    the same Copy button) to the end."""
    seen = renderer.evaluate(
        """(text) => {
            const live = document.createElement("div");
            const differs = [];
            let finished = null;
            let replaced = 0;
            let open = 0;
            for (let n = 1; n <= text.length; n += 1) {
                Markdown.render(live, text.slice(0, n));
                const fresh = document.createElement("div");
                Markdown.render(fresh, text.slice(0, n));
                if (live.innerHTML !== fresh.innerHTML) differs.push(n);
                if (live.querySelector(".code-block.open")) open += 1;
                const closed = live.querySelector(".code-block:not(.open)");
                if (closed && finished && closed !== finished) replaced += 1;
                finished = finished || closed;
            }
            return {differs: differs.slice(0, 5), replaced, open, kept: live.contains(finished)};
        }""",
        ANSWER,
    )
    assert seen["differs"] == []
    assert seen["open"] > len(CODE)  # the code showed as it came, in an open block
    assert seen["replaced"] == 0 and seen["kept"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("*a " * 33_000, id="openers-without-closers"),
        pytest.param("**a " * 25_000, id="strong-openers"),
        pytest.param("a_b " * 25_000, id="underscores-in-words"),
        pytest.param("[a](" * 25_000, id="unclosed-links"),
        pytest.param("[" * 100_000, id="brackets"),
        pytest.param("`" + "``x" * 33_000, id="backtick-runs"),
        pytest.param("<https:" * 16_000, id="unclosed-autolinks"),
        pytest.param("https://" * 12_500, id="bare-addresses"),
        pytest.param("> " * 50_000 + "deep", id="deep-quotes"),
        pytest.param("".join("  " * n + "- item\n" for n in range(1_000)), id="deep-lists"),
        pytest.param("# " + " " * 100_000 + "x", id="long-heading"),
        pytest.param("|" * 50_000 + "\n" + "|-" * 25_000, id="wide-table"),
    ],
)
def test_no_text_a_model_writes_can_hang_the_page(renderer: Any, text: str) -> None:
    spent_ms = renderer.evaluate(
        "(text) => { const box = document.createElement('div'); const start = performance.now();"
        " Markdown.render(box, text); return performance.now() - start; }",
        text,
    )
    assert spent_ms < 2_000, f"{len(text):,} characters took {spent_ms:.0f} ms"


# --- the playground ----------------------------------------------------------------------------

WATCH_CODE_BLOCKS = """() => {
    // counts code blocks shown while still open, and finished ones taken out of the page
    window.codeBlocks = {open: 0, rebuilt: 0};
    const blocks = (nodes) => [...nodes].filter((node) => node.classList?.contains("code-block"));
    new MutationObserver((records) => {
        for (const record of records) {
            for (const node of blocks(record.addedNodes)) {
                if (node.classList.contains("open")) window.codeBlocks.open += 1;
            }
            for (const node of blocks(record.removedNodes)) {
                if (!node.classList.contains("open")) window.codeBlocks.rebuilt += 1;
            }
        }
    }).observe(document.getElementById("log"), {childList: true, subtree: true});
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_a_streamed_answer_shows_as_markdown_with_copyable_code_and_fits_the_screen(
    serve: Serve, emu: Emulator, pages: Callable[..., Any], width: int
) -> None:
    from playwright.sync_api import expect

    emu.queue(Reply.turn(Turn.text(ANSWER), fragment_size=6, delay=0.005))
    server = serve()
    page = pages(width)
    sign_in(page, server.url)
    page.evaluate(WATCH_CODE_BLOCKS)
    page.select_option("#model", "anthropic")
    page.fill("#prompt", "How do I read a file in Python?")
    page.click("#send")
    expect(page.locator(".turn.assistant .cost")).to_contain_text("cost:")

    answer = page.locator(".turn.assistant .answer .content")
    check_markdown(page, answer, width)
    watched = page.evaluate("() => window.codeBlocks")
    assert watched["open"] > 0  # mid-stream, the unclosed fence showed as an open code block
    assert watched["rebuilt"] == 0  # once closed, it stayed as it was while the rest came
    assert emu.requests[0].json["messages"][0]["content"][0]["text"].startswith("How do I")
    assert overflowing(page) == []
    screenshot(page, "playground", f"markdown-{width}px", width)
    check_copy(page, answer)

    # the conversation, answer and all, is shown the same from the session after a reload
    page.reload()
    check_markdown(page, page.locator(".turn.assistant .answer .content"), width)
    assert page.errors == []


@pytest.mark.parametrize("width", PHONES)
def test_on_a_phone_the_composer_fits_with_nothing_pushed_off(
    serve: Serve, pages: Callable[..., Any], width: int
) -> None:
    from playwright.sync_api import expect

    server = serve()
    page = pages(width, height=780)
    sign_in(page, server.url)
    controls = {
        name: box(page.locator(selector))
        for name, selector in (
            ("message", "#prompt"),
            ("attach", ".attach"),
            ("regenerate", "#regenerate"),
            ("stop", "#stop"),
            ("send", "#send"),
        )
    }
    for name, found in controls.items():
        assert found["x"] >= 0 and found["x"] + found["width"] <= width, (name, found)
    assert controls["message"]["width"] >= width - 40  # the text box takes the width
    middles = [
        found["y"] + found["height"] / 2 for name, found in controls.items() if name != "message"
    ]
    assert max(middles) - min(middles) < 3, controls  # one row of buttons, none wrapped below
    assert overflowing(page) == []

    # the control still attaches, clicked as a person would
    png = base64.b64decode(png_data_url().split(",", 1)[1])
    with page.expect_file_chooser() as chooser:
        page.click(".attach")
    chooser.value.set_files({"name": "blue.png", "mimeType": "image/png", "buffer": png})
    expect(page.locator("#attachments img")).to_have_count(1)
    assert overflowing(page) == []
    screenshot(page, "playground", f"composer-{width}px", width)
    assert page.errors == []


@pytest.mark.parametrize("width", WIDTHS)
def test_the_sign_in_page_is_styled_like_the_rest_and_says_clearly_when_a_key_is_wrong(
    serve: Serve, pages: Callable[..., Any], width: int
) -> None:
    from playwright.sync_api import expect

    server = serve()
    page = pages(width)
    assert page.goto(server.url + "/playground/").status == 401
    expect(page.locator("header h1")).to_have_text("modelstream playground")  # as on the page
    card = page.locator("main")
    expect(card.locator("h2")).to_have_text("Sign in")
    assert card.evaluate("node => getComputedStyle(node).borderTopLeftRadius") == "12px"
    found = box(card)
    margins = found["x"], width - found["x"] - found["width"]
    assert abs(margins[0] - margins[1]) <= 2 and min(margins) >= 8, margins  # centred, inset
    assert page.evaluate("() => document.scripts.length") == 0  # nothing to run: CSP-clean
    assert overflowing(page) == []
    screenshot(page, "playground", f"sign-in-{width}px", width)

    page.fill("input[name=key]", "not-a-key-of-this-server")
    page.click("button[type=submit]")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("That is not one of this server's keys.")
    expect(alert).to_contain_text("ask whoever runs the server")
    assert alert.evaluate("node => getComputedStyle(node).color") == "rgb(192, 57, 43)"
    assert page.context.cookies() == []
    assert overflowing(page) == []
    screenshot(page, "playground", f"sign-in-wrong-key-{width}px", width)

    page.fill("input[name=key]", CLIENT_KEY)  # the form, still there, signs in
    page.click("button[type=submit]")
    page.wait_for_selector("#model option", state="attached")
    assert page.errors == []


def test_only_the_sign_in_forms_style_sheet_is_served_without_a_key(serve: Serve) -> None:
    server = serve()
    with httpx.Client(base_url=server.url) as http:
        theme = http.get("/playground/static/theme.css")
        assert theme.status_code == 200 and theme.headers["content-type"].startswith("text/css")
        for name in ("style.css", "app.js", "markdown.js", "markdown.css"):
            assert http.get(f"/playground/static/{name}").status_code == 401, name
        assert http.get("/playground/static/login.html").status_code == 404
    with httpx.Client(base_url=server.url, headers=AUTH) as http:
        shared = http.get("/playground/static/markdown.js")
        assert shared.status_code == 200 and shared.text == MARKDOWN_JS
        assert shared.headers["content-type"] == "text/javascript; charset=utf-8"


# --- the trace viewer --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The viewer, in this process, over a trace whose answer is ANSWER: its URL."""
    db = tmp_path_factory.mktemp("markdown-viewer") / "traces.sqlite3"
    store = TraceStore(db)
    store.append(
        make_turn("markdown-answer", [user("How do I read a file in Python?")], reply=ANSWER)
    )
    with BackgroundServer(create_app(store)) as server:
        yield server.url
    store.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_traces_text_shows_as_markdown_with_copyable_code_and_fits_the_screen(
    viewer: str, pages: Callable[..., Any], width: int
) -> None:
    from playwright.sync_api import expect

    page = pages(width)
    page.goto(f"{viewer}/#trace=markdown-answer")
    expect(page.locator("article.turn")).to_have_count(1)
    answer = page.locator("article.turn .response .item.text .markdown")
    check_markdown(page, answer, width)
    question = page.locator("article.turn .message.user .markdown p")
    expect(question).to_have_text("How do I read a file in Python?")
    assert overflowing(page) == []
    screenshot(page, "trace-viewer", f"markdown-{width}px", width)
    check_copy(page, answer)
    assert page.errors == []
