"""The playground page in headless Chromium (Debian's `chromium`, driven by Playwright) against
the emulator behind a real server: an answer streams in, Stop cancels the upstream call, a
dropped connection resumes with no character lost or doubled. Screenshots are saved in
tmp/artifacts/playground/."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modelstream.testing import Emulator, Reply, Text, Thinking, ToolCall, Turn
from support import REPO
from support.browser import launched_chromium, watched_page
from support.cutting_proxy import CuttingProxy
from support.server import CLIENT_KEY, Serve
from support.traces import png_data_url

ARTIFACTS = REPO / "tmp" / "artifacts" / "playground"  # screenshots, kept for people to look at
STORY = "".join(f"Line {n}: the quick brown fox jumps over the lazy dog.\n" for n in range(1, 41))
SHOWN = STORY.rstrip("\n")  # as Markdown shows it: one paragraph, its lines kept, none after it


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as browser:
        yield browser


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser session that fails the test on a script error or a request elsewhere."""
    with watched_page(browser, 1100, 900) as page:
        yield page


def sign_in(page: Any, url: str) -> None:
    page.goto(url + "/playground/")
    page.fill("input[name=key]", CLIENT_KEY)
    page.click("button[type=submit]")
    page.wait_for_selector("#model option", state="attached")


def ask(page: Any, model: str, text: str) -> None:
    page.select_option("#model", model)
    page.fill("#prompt", text)
    page.click("#send")


def answer(page: Any) -> str:
    found: str | None = page.evaluate(
        "() => document.querySelector('.turn.assistant:last-child .answer .content')"
        "?.textContent ?? ''"
    )
    return found or ""


def watch(page: Any, until: Any, timeout: float = 30.0) -> list[str]:
    """The answer's distinct texts as it grows, polled until `until(text)` holds."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = answer(page)
        if not seen or text != seen[-1]:
            seen.append(text)
        if until(text):
            return seen
        time.sleep(0.02)
    raise AssertionError(f"the answer stopped at {seen[-1][-80:]!r}")


RECORD_ANSWERS = """() => {
    window.answerStates = [];
    new MutationObserver(() => {
        const node = document.querySelector(".turn.assistant:last-child .answer .content");
        const text = node ? node.textContent : "";
        const states = window.answerStates;
        if (text && text !== states[states.length - 1]) states.push(text);
    }).observe(document.getElementById("log"), {
        childList: true, subtree: true, characterData: true,
    });
}"""


def record_answers(page: Any) -> None:
    """From now on, every text the answer shows is noted (a MutationObserver in the page), so
    a character shown twice, even for a moment, cannot go unseen."""
    page.evaluate(RECORD_ANSWERS)


def recorded_answers(page: Any) -> list[str]:
    states: list[str] = page.evaluate("() => window.answerStates")
    return states


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"\nscreenshot: {path}")
    return path


def only_from(page: Any, origin: str) -> None:
    assert page.errors == []
    assert [url for url in page.requests if not url.startswith(origin + "/")] == []


def test_an_answer_streams_in_bit_by_bit_with_its_cost_and_stays_for_the_session(
    serve: Serve, emu: Emulator, page: Any
) -> None:
    from playwright.sync_api import expect

    turn = Turn.text(STORY)
    emu.queue(Reply.turn(turn, fragment_size=8, delay=0.01))
    server = serve()
    sign_in(page, server.url)
    record_answers(page)
    ask(page, "anthropic", "Tell me a story")
    watch(page, lambda text: text == SHOWN)
    states = recorded_answers(page)
    assert states[-1] == SHOWN
    assert len(states) >= 20, states  # it appeared bit by bit, not at once
    assert all(STORY.startswith(text) for text in states)
    expect(page.locator(".turn.assistant .cost")).to_contain_text("USD")
    expect(page.locator(".turn.assistant .finish")).to_have_text("finish: stop")
    sent = emu.requests[0].json
    assert sent["messages"][-1]["content"][0]["text"] == "Tell me a story"
    screenshot(page, "streamed-answer")

    # the history lives in the browser session: a reload shows it again, and it is sent back
    page.reload()
    page.wait_for_selector(".turn.assistant .cost")
    assert answer(page) == SHOWN
    emu.queue(Reply.turn(Turn.text("The end."), delay=0.0))
    ask(page, "anthropic", "And then?")
    watch(page, lambda text: text == "The end.")
    history = emu.requests[1].json["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    only_from(page, server.url)


def test_the_page_cannot_read_its_session_and_signing_out_ends_it(
    serve: Serve, emu: Emulator, page: Any
) -> None:
    from playwright.sync_api import expect

    server = serve()
    sign_in(page, server.url)
    assert page.evaluate("() => document.cookie") == ""  # HttpOnly: no script sees the session
    (session,) = page.context.cookies()
    assert (
        session["httpOnly"] and session["sameSite"] == "Strict" and CLIENT_KEY not in str(session)
    )
    emu.queue(Reply.turn(Turn.text("Signed in.")))
    ask(page, "anthropic", "Hello?")
    watch(page, lambda text: text == "Signed in.")
    page.click("#sign-out button")
    expect(page.locator("input[name=key]")).to_be_visible()  # the sign-in form again
    assert page.context.cookies() == []
    # the old session id, put back by hand, opens nothing: the server forgot it
    page.context.add_cookies([session])
    assert page.goto(server.url + "/playground/").status == 401
    only_from(page, server.url)


def test_stop_cancels_the_upstream_call(serve: Serve, emu: Emulator, page: Any) -> None:
    from playwright.sync_api import expect

    emu.queue(Reply.turn(Turn.text(STORY), fragment_size=4, delay=0.1))  # about 60 s in all
    server = serve(resume_grace_seconds=60)  # only Stop can end it this early
    sign_in(page, server.url)
    ask(page, "chat", "Tell me a long story")
    watch(page, lambda text: len(text) >= 40)
    clicked = time.monotonic()
    page.click("#stop")
    (upstream,) = emu.wait_for_requests(1, timeout=5, finished=True)
    assert upstream.client_closed_early  # the emulator saw the server hang up
    assert upstream.finished_at is not None and upstream.finished_at - clicked < 5
    expect(page.locator(".turn.assistant .error")).to_have_text("stopped")
    expect(page.locator("#send")).to_be_enabled()
    stopped_at = answer(page)
    assert STORY.startswith(stopped_at) and len(stopped_at) < len(STORY)
    screenshot(page, "stopped")
    emu.queue(Reply.turn(Turn.text("Fine.")))
    ask(page, "chat", "Shorter, please")
    watch(page, lambda text: text == "Fine.")
    sent = emu.requests[-1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    # the answer so far goes back as it was shown (a line break it ended on is not shown)
    assert sent[1]["content"].rstrip("\n") == stopped_at
    only_from(page, server.url)


def test_a_dropped_connection_resumes_without_a_lost_or_doubled_character(
    serve: Serve, emu: Emulator, page: Any
) -> None:
    emu.queue(Reply.turn(Turn.text(STORY), fragment_size=8, delay=0.02))
    server = serve()
    proxy = CuttingProxy(int(server.url.rsplit(":", 1)[1]))
    try:
        sign_in(page, proxy.url)
        record_answers(page)
        ask(page, "gemini", "Tell me a story")
        watch(page, lambda text: len(text) >= 200)
        proxy.cut()
        watch(page, lambda text: text == SHOWN)
        states = recorded_answers(page)
        # every text ever shown was the story so far: nothing lost, nothing twice
        assert all(STORY.startswith(text) for text in states), states
        assert [len(text) for text in states] == sorted({len(text) for text in states})
        assert answer(page) == SHOWN
        resumes = [
            line
            for line in proxy.request_lines
            if line.startswith("GET /playground/api/v1/streams/")
        ]
        assert resumes, proxy.request_lines  # it came back through the server's resume
        page.wait_for_selector(".turn.assistant .cost")
        screenshot(page, "resumed")
        assert len(emu.requests) == 1  # one upstream call: the stream went on without the page
        only_from(page, proxy.url)
    finally:
        proxy.close()


def test_settings_images_thinking_tool_calls_regenerate_and_clear(
    serve: Serve, emu: Emulator, page: Any
) -> None:
    from playwright.sync_api import expect

    turn = Turn(
        items=[
            Thinking("The picture is one colour.", signature="sig-1"),
            Text("It is a blue rectangle."),
            ToolCall("lookup_colour", {"rgb": [47, 111, 223]}, id="toolu_1"),
        ]
    )
    emu.queue(Reply.turn(turn))
    server = serve()
    sign_in(page, server.url)
    page.select_option("#thinking", "low")
    page.click("#system-box summary")
    page.fill("#system", "Answer in one sentence.")
    png = base64.b64decode(png_data_url().split(",", 1)[1])
    page.set_input_files("#attach", {"name": "blue.png", "mimeType": "image/png", "buffer": png})
    expect(page.locator("#attachments img")).to_have_count(1)
    ask(page, "anthropic", "What is this?")
    tool = page.locator(".turn.assistant .tool-call")
    expect(tool.locator(".name")).to_have_text("tool call: lookup_colour")
    expect(tool.locator("pre")).to_contain_text('"rgb"')
    thinking = page.locator(".turn.assistant details.thinking")
    expect(thinking).not_to_have_attribute("open", "")  # folded until clicked
    expect(thinking.locator(".content")).to_have_text("The picture is one colour.")
    expect(page.locator(".turn.user img")).to_have_count(1)
    sent = emu.requests[0].json
    assert "Answer in one sentence." in str(sent["system"])
    assert sent["thinking"]["type"] in ("enabled", "adaptive")
    blocks = sent["messages"][0]["content"]
    assert [block["type"] for block in blocks] == ["image", "text"]
    assert blocks[0]["source"]["data"] == base64.b64encode(png).decode()
    expect(page.locator(".turn.assistant .cost")).to_contain_text("cost:")
    screenshot(page, "thinking-tool-call-image")
    thinking.locator("summary").click()
    expect(thinking).to_have_attribute("open", "")

    emu.queue(Reply.turn(Turn.text("A blue rectangle, again.")))
    page.click("#regenerate")
    watch(page, lambda text: text == "A blue rectangle, again.")
    expect(page.locator(".turn.assistant")).to_have_count(1)
    assert len(emu.requests[1].json["messages"]) == 1  # the same question, asked again

    page.click("#clear")
    expect(page.locator(".turn")).to_have_count(0)
    page.reload()
    page.wait_for_selector("#model option", state="attached")
    expect(page.locator(".turn")).to_have_count(0)
    expect(page.locator("#system")).to_have_value("Answer in one sentence.")
    only_from(page, server.url)


def test_a_reload_mid_answer_picks_the_running_answer_up_again(
    serve: Serve, emu: Emulator, page: Any
) -> None:
    emu.queue(Reply.turn(Turn.text(STORY), fragment_size=8, delay=0.02))
    server = serve()
    sign_in(page, server.url)
    ask(page, "responses", "Tell me a story")
    watch(page, lambda text: len(text) >= 100)
    page.reload()
    watch(page, lambda text: text == SHOWN)
    page.wait_for_selector(".turn.assistant .cost")
    assert page.locator(".turn.assistant").count() == 1
    assert len(emu.requests) == 1
    only_from(page, server.url)


def test_errors_show_under_the_turn_and_the_page_stays_usable(
    serve: Serve, emu: Emulator, page: Any
) -> None:
    from playwright.sync_api import expect

    emu.queue(Reply.status(529))  # the upstream is overloaded: the stream ends in an error
    server = serve()
    sign_in(page, server.url)
    ask(page, "anthropic", "Hello?")
    expect(page.locator(".turn.assistant .error")).to_contain_text("OverloadedError")
    expect(page.locator("#send")).to_be_enabled()
    page.select_option("#model", "anthropic")
    page.evaluate("() => document.getElementById('model').append(new Option('gone', 'gone'))")
    ask(page, "gone", "Anyone there?")  # a model the server does not serve: its 404, shown
    expect(page.locator(".turn.assistant .error").last).to_contain_text("NotFoundError")
    screenshot(page, "errors")
    emu.queue(Reply.turn(Turn.text("Here.")))
    ask(page, "anthropic", "Third time?")
    watch(page, lambda text: text == "Here.")
    sent = emu.requests[-1].json["messages"]
    assert [m["role"] for m in sent] == ["user"]  # the failed exchanges are not sent again
    only_from(page, server.url)
