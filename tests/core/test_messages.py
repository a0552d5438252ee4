"""Inputs: a plain string is a user turn, `user()` / `assistant()` / `tool_result()` build SPEC
messages, and a wrong input says what was wrong and what to pass. Proven over real HTTP: the
emulator records the request each form sends."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest

from modelstream import (
    AsyncClient,
    Client,
    Conversation,
    InvalidMessageError,
    as_messages,
    assistant,
    tool_result,
    user,
)
from modelstream.testing import Emulator, Reply, Turn

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
JPEG = b"\xff\xd8\xff\xe0" + b"\x01" * 16
KEY = "sk-test-0123456789"
HELLO = {"role": "user", "content_items": [{"type": "text.done", "text": "Hello"}]}


@pytest.fixture
def emu() -> Any:
    with Emulator() as emulator:
        yield emulator


def sent(emu: Emulator, prompt: Any, mode: str = "sync", model: str = "claude-sonnet-4-5") -> bytes:
    """The request body `complete(prompt)` sends (the emulator's record of it)."""
    emu.queue(Reply.turn(Turn.text("ok")))
    options: dict[str, Any] = {"api_key": KEY, "base_url": emu.base_url("anthropic-messages")}
    if mode == "sync":
        with Client(model, **options) as client:
            assert client.complete(prompt).text == "ok"
    else:

        async def main() -> None:
            async with AsyncClient(model, **options) as client:
                assert (await client.complete(prompt)).text == "ok"

        asyncio.run(main())
    return emu.requests[-1].body


# --- the helpers build SPEC messages -------------------------------------------------------


def test_user_builds_the_spec_user_message() -> None:
    assert user("Hello") == HELLO
    assert assistant("Hi!") == {
        "role": "assistant",
        "content_items": [{"type": "text.done", "text": "Hi!"}],
    }


def test_images_become_inline_data_from_bytes_files_and_data_urls_and_urls_stay_urls(
    tmp_path: Path,
) -> None:
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(JPEG)
    unnamed = tmp_path / "scan"  # no extension: the type is read from the bytes
    unnamed.write_bytes(PNG)
    data_url = "data:image/gif;base64," + base64.b64encode(b"GIF89a....").decode()
    message = user(
        "What is in these?",
        images=[PNG, photo, str(unnamed), data_url, "https://example.com/cat.webp"],
    )
    assert message == {
        "role": "user",
        "content_items": [
            {"type": "text.done", "text": "What is in these?"},
            {"type": "inline_data.done", "data": PNG, "mime_type": "image/png"},
            {"type": "inline_data.done", "data": JPEG, "mime_type": "image/jpeg"},
            {"type": "inline_data.done", "data": PNG, "mime_type": "image/png"},
            {"type": "inline_data.done", "data": b"GIF89a....", "mime_type": "image/gif"},
            {"type": "image_url.done", "image_url": "https://example.com/cat.webp"},
        ],
    }


def test_tool_results_hold_text_json_an_error_and_images_as_urls(tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    chart.write_bytes(PNG)
    assert tool_result("call_1", "21 °C") == {
        "type": "tool_result.done",
        "tool_call_id": "call_1",
        "text": "21 °C",
    }
    assert tool_result("call_2", {"temperature_c": 21, "sky": ["sunny"]})["text"] == (
        '{"temperature_c":21,"sky":["sunny"]}'
    )
    assert tool_result("call_3", "no such city", is_error=True)["text"] == "error: no such city"
    with_image = tool_result("call_4", "the chart", images=[chart, "https://example.com/a.png"])
    assert with_image["images"] == [
        "data:image/png;base64," + base64.b64encode(PNG).decode(),
        "https://example.com/a.png",
    ]
    # results go back in a user turn, in order, with any text
    assert user(tool_result("call_1", "ok"), "and thanks")["content_items"] == [
        {"type": "tool_result.done", "tool_call_id": "call_1", "text": "ok"},
        {"type": "text.done", "text": "and thanks"},
    ]


# --- what stream() and complete() accept ----------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_string_a_message_and_the_spec_list_send_the_same_request(
    emu: Emulator, mode: str
) -> None:
    explicit = [HELLO]
    spec_body = sent(emu, explicit, mode)
    assert sent(emu, "Hello", mode) == spec_body
    assert sent(emu, user("Hello"), mode) == spec_body
    assert sent(emu, (HELLO,), mode) == spec_body
    assert explicit == [HELLO]  # the caller's list is not changed
    assert emu.requests[0].json["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hello"}]}
    ]


def test_a_user_message_with_images_reaches_the_provider_as_its_image_blocks(
    emu: Emulator, tmp_path: Path
) -> None:
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(JPEG)
    sent(emu, user("Describe", images=[photo, "https://example.com/cat.png"]))
    [message] = emu.requests[-1].json["messages"]
    assert message["content"] == [
        {"type": "text", "text": "Describe"},
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/jpeg",
                "data": base64.b64encode(JPEG).decode(),
            },
        },
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
    ]


def test_a_history_built_with_the_helpers_is_sent_in_order(emu: Emulator) -> None:
    history = [user("Hi"), assistant("Hello! How can I help?"), user("Tell me a joke")]
    sent(emu, history)
    assert [(m["role"], m["content"]) for m in emu.requests[-1].json["messages"]] == [
        ("user", [{"type": "text", "text": "Hi"}]),
        ("assistant", [{"type": "text", "text": "Hello! How can I help?"}]),
        ("user", [{"type": "text", "text": "Tell me a joke"}]),
    ]


def test_a_conversation_takes_a_string_and_a_helper_message(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("one")), Reply.turn(Turn.text("two")))
    options: dict[str, Any] = {"api_key": KEY, "base_url": emu.base_url("openai-chat")}
    with Client("deepseek-chat", **options) as client:
        chat = Conversation(client)
        assert chat.send("first").text == "one"
        assert chat.send(user("second", images=[PNG])).text == "two"
    assert chat.history[0] == user("first")
    assert chat.history[2]["content_items"][1] == {
        "type": "inline_data.done",
        "data": PNG,
        "mime_type": "image/png",
    }


# --- wrong inputs say what was wrong and what to pass ----------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: user(42), TypeError, "part 0 must be text (a str)"),
        (lambda: user(), ValueError, "needs text, an image or a tool result"),
        (lambda: user("x", images="photo.png"), TypeError, "images must be a list"),
        (lambda: user("x", images=[3.5]), TypeError, "an image must be bytes, a file path"),
        (lambda: user("x", images=[b"not an image"]), ValueError, "cannot tell the image type"),
        (lambda: user("x", images=["nowhere.png"]), FileNotFoundError, "no such file"),
        (lambda: user("x", images=["data:image/png;base64,%%%"]), ValueError, "data: URL"),
        (lambda: assistant(["hi"]), TypeError, "as a str, got list"),
        (lambda: tool_result("", "x"), TypeError, "tool call's id as a non-empty str"),
        (lambda: tool_result("c", {1: "x"}), TypeError, "str or JSON-ready"),
        (lambda: as_messages(42), TypeError, "messages must be a str (the user's turn)"),
        (lambda: as_messages(None), TypeError, "got None"),
        (lambda: as_messages(["Hello"]), TypeError, "message 0 must be a str"),
        (lambda: as_messages([HELLO, 3]), TypeError, "message 1 must be"),
    ],
)
def test_a_wrong_input_names_what_was_wrong_and_what_to_pass(
    call: Any, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=r"(?s).*" + words.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_a_list_of_strings_is_refused_with_the_helper_to_use(emu: Emulator) -> None:
    with Client("claude-sonnet-4-5", api_key=KEY, base_url=emu.base_url("anthropic-messages")) as c:
        with pytest.raises(TypeError, match=r"wrap text in user\('...'\)"):
            c.stream(["Hello", "again"])
        with pytest.raises(TypeError, match="complete\\('Hello'\\)"):
            c.complete(b"Hello")  # type: ignore[arg-type]
    assert emu.requests == []  # refused before anything was sent


def test_a_conversation_refuses_a_wrong_turn_with_what_to_send(emu: Emulator) -> None:
    with Client("deepseek-chat", api_key=KEY, base_url=emu.base_url("openai-chat")) as client:
        chat = Conversation(client)
        with pytest.raises(TypeError, match=r"send a str, .*modelstream.user.*got int"):
            chat.send(42)  # type: ignore[arg-type]
        with pytest.raises(InvalidMessageError, match="role 'assistant'"):
            chat.send(assistant("not mine to send"))
    assert emu.requests == [] and chat.history == []
