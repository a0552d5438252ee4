"""Shared pieces of the trace tests (the `store` fixture is loaded for every folder by
tests/conftest.py): a trace file per test, a tiny PNG, a turn made by hand (`make_turn`) and a
set of realistic traces recorded through the clients. A missing optional tool (a browser, the
OpenTelemetry SDK) goes through `support.missing`."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modelstream import AsyncClient, Client, Conversation, StreamError
from modelstream.testing import Emulator, Reply, Text, Thinking, ToolCall, Turn
from modelstream.traces import TraceStore, TraceTurn
from modelstream.types import Message, Usage

API_KEY = "sk-trace-test-key-0123456789"


def user(text: str) -> Message:
    return {"role": "user", "content_items": [{"type": "text.done", "text": text}]}


def usage(cached: int, prompt: int, thoughts: int, response: int) -> Usage:
    return {
        "cached_tokens": cached,
        "prompt_tokens": prompt,
        "thoughts_tokens": thoughts,
        "response_tokens": response,
    }


def png_data_url(
    width: int = 24, height: int = 16, rgb: tuple[int, int, int] = (47, 111, 223)
) -> str:
    """A small solid-colour PNG as a data: URL, made here so no file or network is needed."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )
    return "data:image/png;base64," + base64.b64encode(png).decode()


def make_turn(
    trace_id: str,
    messages: list[Message],
    *,
    reply: str = "ok",
    model: str = "claude-sonnet-4-5",
    status: Any = "final",
    created_at: int = 1_700_000_000_000,
    tokens: tuple[int, int, int, int] | None = (0, 10, 0, 5),
) -> TraceTurn:
    return TraceTurn(
        trace_id=trace_id,
        source="client",
        model=model,
        client_type="anthropic-messages",
        provider="anthropic",
        config={"max_tokens": 100},
        messages=messages,
        items=[{"type": "text.done", "text": reply}],
        open_item=None,
        usage=usage(*tokens) if tokens else None,
        finish_reason="stop" if status == "final" else None,
        raw_finish_reason="end_turn" if status == "final" else None,
        status=status,
        reason=None if status == "final" else "the connection broke",
        response_id="msg_1",
        response_model=model,
        timings={"ttfb_ms": 1.0, "ttfe_ms": 2.0, "total_ms": 3.0},
        item_timings=[{"type": "text", "start_ms": 2.0, "end_ms": 3.0}],
        created_at=created_at,
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TraceStore]:
    trace_store = TraceStore(tmp_path / "traces.sqlite3")
    yield trace_store
    trace_store.close()


# --- a realistic set of traces, recorded through the clients --------------------------------

WEATHER_TRACE = "agent-weather-7f3a"
IMAGE_TRACE = "vision-check-91bc"
BROKEN_TRACE = "story-cut-off-42"
SCRIPT_TRACE = "escaping-check-<b>"
WEATHER_QUESTION = "What's the weather in Lisbon today?"
WEATHER_THINKING = "The user wants the current weather in Lisbon; I should call get_weather."
SCRIPT_TEXT = "<img src=x onerror=\"document.title='pwned'\"> and <script>alert(1)</script>"


def get_weather(city: str) -> dict[str, Any]:
    return {"city": city, "temperature_c": 21, "sky": "sunny"}


def record_demo_traces(path: Path) -> dict[str, Any]:
    """Record four traces into `path` through real clients against the emulator: a tool loop
    with thinking (Anthropic, sync), an image question (Responses, async), a stream cut off
    mid-answer (Gemini), and a message full of markup. Returns facts the tests check."""
    store = TraceStore(path)
    first_usage = usage(cached=1024, prompt=312, thoughts=48, response=37)
    with Emulator() as emu:
        emu.queue(
            Reply.turn(
                Turn(
                    items=[
                        Thinking(WEATHER_THINKING, signature="c2lnbmF0dXJl"),
                        Text("Let me check the weather for you."),
                        ToolCall("get_weather", {"city": "Lisbon"}, id="toolu_weather_1"),
                    ],
                    usage=first_usage,
                ),
                fragment_size=6,
                delay=0.004,
            ),
            Reply.turn(
                Turn.text("It is 21 °C and sunny in Lisbon.", usage=usage(1024, 420, 0, 14)),
                delay=0.004,
            ),
        )
        with Client(
            "claude-sonnet-4-5",
            api_key=API_KEY,
            base_url=emu.base_url("anthropic-messages"),
            traces=store,
        ) as client:
            config: Any = {"system_prompt": "Be brief.", "trace_id": WEATHER_TRACE}
            chat = Conversation(client, config)
            chat.run(WEATHER_QUESTION, {"get_weather": get_weather})

        emu.queue(Reply.turn(Turn.text("A blue rectangle.", usage=usage(0, 85, 0, 5)), delay=0.002))
        image = png_data_url()
        question: Message = {
            "role": "user",
            "content_items": [
                {"type": "text.done", "text": "What is in these pictures?"},
                {"type": "image_url.done", "image_url": image},
                {"type": "image_url.done", "image_url": "https://images.example/cat.png"},
            ],
        }

        async def ask() -> None:
            async with AsyncClient(
                "gpt-5-mini",
                api_key=API_KEY,
                base_url=emu.base_url("openai-responses"),
                traces=store,
            ) as client:
                await client.complete([question], {"trace_id": IMAGE_TRACE})

        asyncio.run(ask())

        emu.queue(Reply.turn(Turn.text("Once upon a time " * 30), disconnect_after_bytes=700))
        with (
            Client(
                "gemini-2.5-flash",
                api_key=API_KEY,
                base_url=emu.base_url("gemini-generate-content"),
                traces=store,
            ) as client,
            contextlib.suppress(StreamError),
        ):
            client.complete([user("Tell me a long story.")], {"trace_id": BROKEN_TRACE})

        emu.queue(Reply.turn(Turn.text("I will not run that.")))
        with Client(
            "deepseek-chat", api_key=API_KEY, base_url=emu.base_url("openai-chat"), traces=store
        ) as client:
            client.complete([user(SCRIPT_TEXT)], {"trace_id": SCRIPT_TRACE})
    store.close()
    return {"first_usage": first_usage, "image": image}
