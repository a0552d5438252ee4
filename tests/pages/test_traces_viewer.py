"""The trace viewer, as a person uses it: `python -m modelstream.traces serve` on an ephemeral
loopback port over traces recorded through the clients, its JSON API over real HTTP, and the
page in headless Chromium (Debian's `chromium`, driven by Playwright; a screenshot is saved)."""

from __future__ import annotations

import base64
import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import orjson
import pytest

from modelstream import Client, StreamDecoder, StreamError
from modelstream.client import RetryPolicy
from modelstream.testing import Emulator, Reply, Thinking, ToolCall, Turn, render
from modelstream.traces import TraceStore, TurnRecorder
from modelstream.types import Message
from support import REPO
from support.browser import launched_chromium
from support.traces import (
    API_KEY,
    BROKEN_TRACE,
    IMAGE_TRACE,
    SCRIPT_TEXT,
    SCRIPT_TRACE,
    WEATHER_QUESTION,
    WEATHER_THINKING,
    WEATHER_TRACE,
    make_turn,
    png_data_url,
    record_demo_traces,
    usage,
    user,
)


@dataclass
class Viewer:
    url: str
    db: Path
    facts: dict[str, Any]


@contextlib.contextmanager
def traced_client(model: str, db: Path) -> Iterator[tuple[Emulator, Client]]:
    """An emulator and a blocking client of it (Responses, one attempt) tracing into `db`."""
    with (
        Emulator() as emu,
        Client(
            model,
            api_key=API_KEY,
            base_url=emu.base_url("openai-responses"),
            traces=db,
            retry=RetryPolicy(max_attempts=1),
        ) as client,
    ):
        yield emu, client


@contextlib.contextmanager
def serving(db: Path, *options: str) -> Iterator[str]:
    """`python -m modelstream.traces serve` on an ephemeral port over `db`: its URL."""
    command = [sys.executable, "-m", "modelstream.traces", "serve", "--db", str(db), "--port", "0"]
    process = subprocess.Popen(
        [*command, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "Trace viewer at http://127.0.0.1:PORT/ reading ..."
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if found is None:
            process.kill()
            _, errors = process.communicate(timeout=10)
            pytest.fail(f"the viewer did not start: {line!r} {errors}")
        yield found.group(0)
    finally:
        process.terminate()
        process.wait(timeout=10)


# Two traces a server recorded for its virtual keys, older than the demo traces (they list last),
# under the namespace of each caller's key as the server names them.
ALICE_TRACE = "key-5e2c0a9d41b7f3e8/review-pr-12"
CI_TRACE = "key-0b8d6f1e2a3c4d5e/nightly-report"


def record_keyed_traces(db: Path) -> None:
    """What the server records for turns served for a virtual key: the recorder is given the
    key's name, here for the events of a rendered upstream answer."""
    store = TraceStore(db)
    for started, (trace_id, key_name, answer) in enumerate(
        [(CI_TRACE, "ci bot", "All green."), (ALICE_TRACE, "alice", "Looks good to me.")]
    ):
        recorder = TurnRecorder(
            trace_id=trace_id,
            source="server",
            model="house-model",
            client_type="openai-chat",
            provider="openai",
            config={},
            messages=[user("Review this, please.")],
            started_at_ms=1_600_000_000_000 + started,
            key_name=key_name,
        )
        decoder = StreamDecoder("openai-chat")
        body = render("openai-chat", Turn.text(answer), model="gpt-4o-mini")
        for event in decoder.feed(body, 1) + decoder.end(2):
            recorder.observe(event)
        assert decoder.result is not None
        store.append(recorder.finish(decoder.result))
    store.close()


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    db = tmp_path_factory.mktemp("viewer") / "traces.sqlite3"
    record_keyed_traces(db)
    facts = record_demo_traces(db)
    with serving(db) as url:
        yield Viewer(url, db, facts)


# --- the JSON API --------------------------------------------------------------------------


def test_the_api_lists_the_recorded_traces_newest_first(viewer: Viewer) -> None:
    body = httpx.get(viewer.url + "api/traces").json()
    assert body["db"] == str(viewer.db)
    assert [t["trace_id"] for t in body["traces"]] == [
        SCRIPT_TRACE,
        BROKEN_TRACE,
        IMAGE_TRACE,
        WEATHER_TRACE,
        ALICE_TRACE,
        CI_TRACE,
    ]
    weather = body["traces"][3]
    assert (weather["turns"], weather["models"], weather["last_status"]) == (
        2,
        ["claude-sonnet-4-5"],
        "final",
    )


def test_the_api_searches_ids_texts_and_models(viewer: Viewer) -> None:
    def found(**params: str) -> list[str]:
        traces = httpx.get(viewer.url + "api/traces", params=params).json()["traces"]
        return [t["trace_id"] for t in traces]

    assert found(q="LISBON") == [WEATHER_TRACE]
    assert found(q="get_weather") == [WEATHER_TRACE]
    assert found(q="vision") == [IMAGE_TRACE]
    assert found(model="gemini") == [BROKEN_TRACE]
    assert found(q="no such words anywhere") == []
    assert found(key="alice") == [ALICE_TRACE]  # a key's whole name, case-sensitive
    assert found(key="ci bot") == [CI_TRACE]
    assert found(key="ci") == [] and found(key="Alice") == []
    assert found(key="alice", model="claude") == []
    by_id = {t["trace_id"]: t for t in httpx.get(viewer.url + "api/traces").json()["traces"]}
    assert (by_id[ALICE_TRACE]["key_names"], by_id[WEATHER_TRACE]["key_names"]) == (["alice"], [])
    (turn,) = httpx.get(viewer.url + "api/trace", params={"id": ALICE_TRACE}).json()["turns"]
    assert turn["key_name"] == "alice"


def test_the_api_gives_a_trace_turn_by_turn_and_404_for_an_unknown_id(viewer: Viewer) -> None:
    trace = httpx.get(viewer.url + "api/trace", params={"id": WEATHER_TRACE}).json()
    assert [t["turn"] for t in trace["turns"]] == [1, 2]
    assert trace["turns"][0]["messages"][0]["content_items"][0]["text"] == WEATHER_QUESTION
    assert trace["turns"][1]["context_turn"] == 1

    missing_trace = httpx.get(viewer.url + "api/trace", params={"id": "../../etc/passwd"})
    assert missing_trace.status_code == 404
    assert missing_trace.json()["error"]["type"] == "not_found"


@pytest.mark.parametrize(
    ("path", "params", "named"),
    [
        ("api/traces", {"offset": "1e23"}, "offset"),
        ("api/traces", {"offset": "9" * 30}, "offset"),
        ("api/traces", {"offset": "9" * 4301}, "offset"),  # past int()'s digit limit
        ("api/traces", {"offset": "-1"}, "offset"),
        ("api/traces", {"limit": "0"}, "limit"),
        ("api/traces", {"limit": "501"}, "limit"),
        ("api/traces", {"limit": "ten"}, "limit"),
        ("api/traces", {"q": "x" * 201}, "q"),
        ("api/traces", {"model": "m" * 201}, "model"),
        ("api/traces", {"key": "k" * 201}, "key"),
        ("api/traces", {"page": "2"}, "page"),
        ("api/trace", {}, "id"),
        ("api/trace", {"id": "t" * 1001}, "id"),
        ("api/trace", {"id": WEATHER_TRACE, "turn": "1"}, "turn"),
    ],
)
def test_every_query_parameter_is_checked_and_a_bad_one_is_a_400(
    viewer: Viewer, path: str, params: dict[str, str], named: str
) -> None:
    response = httpx.get(viewer.url + path, params=params)

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request" and named in error["message"]


def test_a_repeated_query_parameter_is_a_400(viewer: Viewer) -> None:
    response = httpx.get(viewer.url + "api/traces?limit=1&limit=2")

    assert response.status_code == 400
    assert "twice" in response.json()["error"]["message"]


def test_a_request_naming_another_host_is_refused(viewer: Viewer) -> None:
    """A page elsewhere that rebinds its DNS name to 127.0.0.1 still sends its own Host."""
    response = httpx.get(viewer.url + "api/traces", headers={"host": "evil.example"})
    assert response.status_code == 400
    assert "traces" not in response.text


def test_every_response_forbids_scripts_and_frames_from_elsewhere(viewer: Viewer) -> None:
    for path in ("", "static/app.js", "api/traces"):
        headers = httpx.get(viewer.url + path).headers
        policy = headers["content-security-policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert headers["x-content-type-options"] == "nosniff"
    assert httpx.get(viewer.url + "static/../store.py").status_code == 404


def test_the_page_loads_nothing_from_elsewhere_and_never_writes_html() -> None:
    static = files("modelstream.traces.viewer") / "static"
    html = static.joinpath("index.html").read_text()
    scripts = [
        static.joinpath("app.js").read_text(),
        (files("modelstream.web") / "static" / "markdown.js").read_text(),  # shared
    ]
    assert re.findall(r'(?:src|href)="([^"]*)"', html) == [
        "data:,",  # an empty icon, so the browser asks for no favicon
        "/static/style.css",
        "/static/markdown.css",
        "/static/markdown.js",
        "/static/app.js",
        "#",
    ]
    for script in scripts:
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in script


# --- the page in a browser -----------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as browser:
        yield browser


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page that fails the test on any script error or any request off the viewer."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    yield page
    page.close()


def test_a_person_searches_opens_a_trace_and_reads_it_turn_by_turn(
    viewer: Viewer, page: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    page.goto(viewer.url)
    links = page.locator(".trace-link")
    expect(links).to_have_count(6)
    # Some traces were served for virtual keys: every entry says which key, if any.
    expect(links.locator(".key")).to_have_count(6)
    expect(links.filter(has_text=WEATHER_TRACE).locator(".key")).to_have_text("no virtual key")

    page.fill("#key", "alice")
    expect(links).to_have_count(1)
    expect(page.locator("#list-status")).to_have_text("1 trace found")
    expect(links.first).to_contain_text(ALICE_TRACE)
    expect(links.first.locator(".key")).to_have_text("key alice")
    links.first.click()
    expect(page.locator("article.turn .turn-head")).to_contain_text("key alice")
    page.fill("#key", "Alice")  # the whole name, as written
    expect(page.locator("#list-status")).to_have_text("No trace matches.")
    page.fill("#key", "")
    expect(links).to_have_count(6)

    page.fill("#q", "lisbon")
    expect(links).to_have_count(1)
    expect(page.locator("#list-status")).to_have_text("1 trace found")
    expect(links.first).to_contain_text(WEATHER_TRACE)
    expect(links.first).to_contain_text("2 turns")
    links.first.click()

    turns = page.locator("article.turn")
    expect(turns).to_have_count(2)
    first, second = turns.nth(0), turns.nth(1)
    expect(page.locator(".trace-head h2")).to_have_text(WEATHER_TRACE)
    expect(first.get_by_text(WEATHER_QUESTION)).to_be_visible()

    # Thinking is folded: its text shows only once the person opens it.
    thinking = first.locator("details.thinking")
    expect(thinking).to_have_count(1)
    expect(thinking.get_by_text(WEATHER_THINKING)).to_be_hidden()
    thinking.locator("summary").click()
    expect(thinking.get_by_text(WEATHER_THINKING)).to_be_visible()

    # The tool call with its name, its arguments and the result the next turn sent back.
    call = first.locator(".tool-call")
    expect(call.locator(".name")).to_have_text("get_weather")
    expect(call).to_contain_text('"city": "Lisbon"')
    expect(call.locator(".tool-result")).to_contain_text('"sky":"sunny"')
    expect(second.locator(".tool-result")).to_contain_text("Tool result of get_weather")
    expect(second.get_by_text("It is 21 °C and sunny in Lisbon.")).to_be_visible()

    # Usage of each turn: 1,024 cached + 312 prompt in; Anthropic counts thinking as output.
    expect(first.locator(".facts")).to_contain_text("Input 1,336")
    expect(first.locator(".facts")).to_contain_text("cached 1,024")
    expect(first.locator(".facts")).to_contain_text("Output 85")
    expect(second.locator(".facts")).to_contain_text("Input 1,444")

    # The timeline: one bar per item, in stream order, each with a width.
    bars = first.locator(".timeline .bar")
    expect(bars).to_have_count(3)
    boxes = bars.evaluate_all(
        "bars => bars.map(b => [b.className, b.getBoundingClientRect().left, "
        "b.getBoundingClientRect().width])"
    )
    assert [box[0] for box in boxes] == ["bar thinking", "bar text", "bar tool_call"]
    assert all(width > 0 for _, _, width in boxes)
    assert boxes[0][1] < boxes[1][1] < boxes[2][1]

    screenshot = tmp_path / "trace-viewer.png"
    page.screenshot(path=str(screenshot), full_page=True)
    print(f"\nscreenshot: {screenshot}")
    assert page.errors == []


def test_images_show_at_once_from_data_urls_and_from_the_web_only_on_a_click(
    viewer: Viewer, page: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    fetched: list[str] = []
    pixel = base64.b64decode(png_data_url(rgb=(220, 60, 60)).split(",", 1)[1])

    def remote_image(route: Any) -> None:  # stands in for the web: nothing leaves the machine
        fetched.append(route.request.url)
        route.fulfill(status=200, content_type="image/png", body=pixel)

    page.route("https://images.example/**", remote_image)
    page.goto(f"{viewer.url}#trace={quote(IMAGE_TRACE)}")
    turn = page.locator("article.turn")
    expect(turn).to_have_count(1)

    inline = turn.locator("img").first
    expect(inline).to_have_attribute("src", viewer.facts["image"])
    assert inline.evaluate("img => img.complete && img.naturalWidth") == 24

    button = turn.get_by_role("button", name="Show image from images.example")
    expect(button).to_be_visible()
    assert fetched == []
    button.click()
    remote = turn.locator('img[src="https://images.example/cat.png"]')
    expect(remote).to_be_visible()
    assert fetched == ["https://images.example/cat.png"]

    screenshot = tmp_path / "trace-viewer-images.png"
    page.screenshot(path=str(screenshot), full_page=True)
    print(f"\nscreenshot: {screenshot}")
    assert page.errors == []


def test_markup_in_a_trace_is_shown_as_text_and_never_runs(viewer: Viewer, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{viewer.url}#trace={quote(SCRIPT_TRACE)}")
    expect(page.locator(".trace-head h2")).to_have_text(SCRIPT_TRACE)
    expect(page.locator("article.turn .message.user")).to_contain_text(SCRIPT_TEXT)
    expect(page.locator('img[src="x"]')).to_have_count(0)
    assert page.title() == "modelstream traces"
    assert page.errors == []


def test_a_cut_off_turn_shows_its_status_reason_and_unfinished_item(
    viewer: Viewer, page: Any
) -> None:
    from playwright.sync_api import expect

    page.goto(viewer.url)
    page.fill("#model", "gemini")
    expect(page.locator(".trace-link")).to_have_count(1)
    page.locator(".trace-link").click()
    turn = page.locator("article.turn")
    expect(turn.locator(".badge.incomplete")).to_have_text("incomplete")
    expect(turn.locator(".reason")).to_contain_text("no finish reason")
    expect(turn.locator(".open-item")).to_contain_text("(unfinished)")
    expect(turn.locator(".timeline .bar.open")).to_have_count(1)
    assert page.errors == []


ARTIFACTS = REPO / "tmp" / "artifacts" / "trace-viewer"  # screenshots, kept for people to look at


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"\nscreenshot: {path}")
    return path


def box(locator: Any) -> dict[str, float]:
    found: dict[str, float] = locator.bounding_box()
    assert found is not None, "not laid out"
    return found


@pytest.mark.parametrize("width", [360, 390, 420])
def test_on_a_phone_the_list_folds_away_and_the_trace_takes_the_whole_width(
    viewer: Viewer, browser: Any, width: int
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": 844})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(viewer.url)
        # No trace open: the list is what there is to see.
        links = page.locator(".trace-link")
        expect(links).to_have_count(6)
        expect(page.locator("#sidebar")).to_be_visible()
        assert box(page.locator("#sidebar"))["width"] >= width - 2
        screenshot(page, f"list-{width}px")

        page.locator(".trace-link", has_text=WEATHER_TRACE).click()
        turns = page.locator("article.turn")
        expect(turns).to_have_count(2)
        expect(page.locator("#sidebar")).to_be_hidden()
        toggle = page.get_by_role("button", name="Traces")
        expect(toggle).to_have_attribute("aria-expanded", "false")

        # The trace uses the width: a turn spans nearly all of it, a short answer is one line
        # or two (the old layout left ~60 px and broke it letter by letter), nothing scrolls
        # sideways.
        assert box(turns.nth(0))["width"] >= width - 40
        answer = turns.nth(1).get_by_text("It is 21 °C and sunny in Lisbon.")
        line = float(answer.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)"))
        assert box(answer)["height"] <= 2 * line + 1
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        screenshot(page, f"trace-{width}px")

        toggle.click()
        expect(page.locator("#sidebar")).to_be_visible()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        page.locator(".trace-link", has_text=IMAGE_TRACE).click()
        expect(page.locator(".trace-head h2")).to_have_text(IMAGE_TRACE)
        expect(page.locator("#sidebar")).to_be_hidden()
        assert errors == []
    finally:
        page.close()


def test_on_a_wide_screen_the_list_and_the_trace_sit_side_by_side(
    viewer: Viewer, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(f"{viewer.url}#trace={quote(WEATHER_TRACE)}")
        expect(page.locator("article.turn")).to_have_count(2)
        sidebar, trace = box(page.locator("#sidebar")), box(page.locator("#trace"))
        assert sidebar["width"] <= 340 and sidebar["x"] + sidebar["width"] <= trace["x"] + 1
        assert trace["width"] >= 1280 - 340 - 2
        expect(page.get_by_role("button", name="Traces")).to_be_hidden()
        screenshot(page, "trace-1280px")
    finally:
        page.close()


def test_a_turn_stored_truncated_says_what_was_cut(viewer: Viewer, page: Any) -> None:
    """Last in this file: it adds a trace to the shared file the tests above count."""
    from playwright.sync_api import expect

    from modelstream.traces import TraceLimits, TraceStore

    request = [user("pages " * 50_000)]
    store = TraceStore(viewer.db, limits=TraceLimits(max_turn_bytes=20_000))
    store.append(make_turn("huge-request-1", request))
    store.close()
    size = len(orjson.dumps(request))

    page.goto(f"{viewer.url}#trace=huge-request-1")
    cut = page.locator("article.turn details.truncated")
    expect(cut).to_have_count(1)
    expect(cut.locator("summary")).to_contain_text(f"messages: stored truncated ({size:,} bytes")
    cut.locator("summary").click()
    expect(cut.locator("pre")).to_contain_text('[{"role":"user"')
    assert page.errors == []


# --- live: turns recorded while the page is open -------------------------------------------


def test_turns_recorded_while_the_page_is_open_appear_without_a_reload(
    tmp_path: Path, browser: Any
) -> None:
    """A viewer started on a trace file that does not exist yet (`--create`); turns are then
    recorded by a client, in this process, through the emulator. The list gains the new trace,
    and the open trace its new turn, with no reload, and a thinking block the person unfolded
    stays unfolded."""
    from playwright.sync_api import expect

    db = tmp_path / "live.sqlite3"
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    with serving(db, "--create") as url, Emulator() as emu:
        page.goto(url)
        expect(page.locator("#list-status")).to_have_text("No traces recorded yet.")
        expect(page.locator("body")).to_have_attribute("data-live", "on")
        loads = []
        page.on("load", lambda: loads.append(1))

        emu.queue(
            Reply.turn(
                Turn(
                    items=[
                        Thinking(WEATHER_THINKING, signature="c2ln"),
                        ToolCall("get_weather", {"city": "Lisbon"}, id="call_1"),
                    ]
                )
            ),
        )
        with Client(
            "claude-sonnet-4-5",
            api_key=API_KEY,
            base_url=emu.base_url("anthropic-messages"),
            traces=db,
        ) as client:
            first = client.complete([user(WEATHER_QUESTION)], {"trace_id": "live-weather"})
            link = page.locator(".trace-link", has_text="live-weather")
            expect(link).to_have_count(1)  # appeared in the list by itself
            expect(link).to_contain_text("1 turn")
            link.click()
            turns = page.locator("article.turn")
            expect(turns).to_have_count(1)
            thinking = turns.first.locator("details.thinking")
            thinking.locator("summary").click()
            expect(thinking.get_by_text(WEATHER_THINKING)).to_be_visible()

            emu.queue(Reply.turn(Turn.text("It is 21 °C and sunny in Lisbon.")))
            result: Message = {
                "role": "user",
                "content_items": [
                    {"type": "tool_result.done", "tool_call_id": "call_1", "text": "21 °C"}
                ],
            }
            client.complete([user(WEATHER_QUESTION), first, result], {"trace_id": "live-weather"})
            expect(turns).to_have_count(2)  # the open trace grew by itself
            expect(turns.nth(1)).to_contain_text("It is 21 °C and sunny in Lisbon.")
            expect(link).to_contain_text("2 turns")
            expect(thinking.get_by_text(WEATHER_THINKING)).to_be_visible()  # still unfolded
        assert loads == []  # no reload happened
        screenshot(page, "live-update-1280px")
    page.close()
    assert errors == []


def test_failed_and_cancelled_turns_show_usage_unknown_in_the_list_and_on_the_page(
    tmp_path: Path, browser: Any
) -> None:
    from playwright.sync_api import expect

    db = tmp_path / "failures.sqlite3"
    with traced_client("gpt-5-mini", db) as (emu, client):
        emu.queue(Reply.status(500))
        with contextlib.suppress(StreamError):
            client.complete([user("Hello?")], {"trace_id": "refused"})
        emu.queue(Reply.turn(Turn.text("A long answer " * 40), delay=0.01))
        with client.stream([user("Tell me more")], {"trace_id": "left-early"}) as stream:
            next(iter(stream))  # one event, then the caller walks away: cancelled
        emu.queue(Reply.turn(Turn.text("Fine.", usage=usage(0, 12, 0, 3))))
        client.complete([user("Still there?")], {"trace_id": "refused"})

    listing = {t.trace_id: t for t in TraceStore(db).list_traces()}
    assert listing["left-early"].last_status == "cancelled"
    assert listing["left-early"].usage_text() == "usage unknown"
    assert listing["refused"].usage_text() == "15 tokens (+ 1 turn with usage unknown)"

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with serving(db) as url:
        page.goto(url)
        for trace_id, expected in (
            ("left-early", "usage unknown"),
            ("refused", "15 tokens (+ 1 turn with usage unknown)"),
        ):
            entry = page.locator(".trace-link", has_text=trace_id)
            expect(entry.locator(".usage")).to_have_text(expected)  # as `traces list` says it
            entry.click()
            expect(page.locator(".trace-head h2")).to_have_text(trace_id)
            expect(page.locator(".trace-head .usage")).to_contain_text(expected)
        expect(page.locator("article.turn").first.locator(".facts")).to_contain_text(
            "Usage unknown"
        )
        expect(page.locator(".trace-link").first).not_to_contain_text("0 tokens")
        screenshot(page, "usage-unknown-1280px")
    page.close()


def test_each_turn_and_the_trace_show_their_cost_and_unknown_is_never_zero(
    tmp_path: Path, browser: Any
) -> None:
    from playwright.sync_api import expect

    db = tmp_path / "costs.sqlite3"
    with traced_client("gpt-5-nano", db) as (emu, client):
        for _ in range(2):
            emu.queue(Reply.turn(Turn.text("Priced.", usage=usage(0, 1000, 0, 500))))
            client.complete([user("What does this cost?")], {"trace_id": "priced"})
        emu.queue(Reply.status(500))
        with contextlib.suppress(StreamError):
            client.complete([user("And this?")], {"trace_id": "priced"})

    turns = TraceStore(db).get_trace("priced")
    # gpt-5-nano in the catalogue: input $0.05 and output $0.40 per million tokens
    assert [turn.cost["total"] if turn.cost else None for turn in turns] == [
        "0.00025",
        "0.00025",
        None,
    ]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with serving(db) as url:
        page.goto(url)
        page.locator(".trace-link", has_text="priced").click()
        expect(page.locator(".trace-head .cost")).to_have_text(
            "$0.000500 (+ 1 turn with cost unknown)"
        )
        facts = page.locator("article.turn .facts")
        expect(facts.nth(0)).to_contain_text("Cost $0.000250")
        expect(facts.nth(2)).to_contain_text("Cost unknown")
        screenshot(page, "cost-1280px")
    page.close()
