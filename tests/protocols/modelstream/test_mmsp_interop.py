"""MMSP interop (issue 4, part 4): the `mmsp` package from PyPI, with its own
`client_type="mmsp"` client (`AutoLLMClient` → `MmspClient`), streams from a live modelstream
server, and the events it yields are the events our `client_type="modelstream"` client yields
for the same scripted turn; the server's errors reach it as MMSP's `UpstreamError`."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from mmsp import AutoLLMClient, UpstreamError

from modelstream import IncompleteStreamError, check_events
from modelstream.jsonwire import error_object
from modelstream.testing import Emulator, Reply, Text, Thinking, ToolCall, Turn
from modelstream.types import Event, Message
from support.modelstream_client import HELLO, drive, without_clock
from support.server import CLIENT_KEY, SERVED, LiveServer, Serve

RICH_TURN = Turn(
    items=[
        Thinking("Two cities, two calls.", signature="sig-mmsp-1"),
        Text("Checking the weather in Paris and Tokyo."),
        ToolCall("get_weather", {"city": "Paris"}, id="call_paris"),
        ToolCall("get_weather", {"city": "Tokyo"}, id="call_tokyo"),
    ]
)


@pytest.fixture
def server(serve: Serve) -> LiveServer:
    return serve()


def mmsp_stream(
    server: LiveServer,
    model: str,
    messages: list[Message],
    config: dict[str, Any] | None = None,
    *,
    api_key: str = CLIENT_KEY,
) -> tuple[list[Event], UpstreamError | None]:
    """One turn through MMSP's client, pointed at the server as MMSP documents it: a base URL
    ending in /v1 (it appends /stream) and the server's bearer key."""

    async def main() -> tuple[list[Event], UpstreamError | None]:
        client = AutoLLMClient(
            model, api_key=api_key, base_url=server.url + "/v1", client_type="mmsp"
        )
        events: list[Any] = []
        try:
            # MMSP stamps created_at into the messages it is given: hand it a copy
            async for event in client.streaming_response(
                messages=copy.deepcopy(messages),  # type: ignore[arg-type]
                config=dict(config or {}),  # type: ignore[arg-type]
            ):
                events.append(event)
        except UpstreamError as exc:
            return events, exc
        return events, None

    return asyncio.run(main())


@pytest.mark.parametrize("model", list(SERVED))
def test_mmsp_s_client_yields_the_events_ours_yields_for_the_same_turn(
    server: LiveServer, emu: Emulator, model: str
) -> None:
    emu.queue(Reply.turn(RICH_TURN, fragment_size=4))
    theirs, error = mmsp_stream(server, model, HELLO, {"max_tokens": 256})
    emu.queue(Reply.turn(RICH_TURN, fragment_size=4))
    ours = drive("async", server.url, HELLO, {"max_tokens": 256}, model=model)

    assert error is None and ours.error is None
    assert len(theirs) > 10
    check_events(theirs)  # MMSP's events obey our grammar checker
    assert without_clock(theirs) == without_clock(ours.events)
    assert all(isinstance(event["created_at"], int) for event in theirs)
    done = [e["content_items"][0] for e in theirs if e["content_items"][:1]]
    assert [item["type"] for item in done if item["type"].endswith(".done")] == [
        "thinking.done",
        "text.done",
        "tool_call.done",
        "tool_call.done",
    ]
    assert theirs[-1]["event_type"] == "stop" and theirs[-1]["finish_reason"] == "tool_call"
    upstream_model = SERVED[model][0]  # in the body, or in the path (Gemini)
    assert [upstream_model in (r.json.get("model") or r.path) for r in emu.requests] == [True] * 2


def test_mmsp_s_client_lists_the_models_the_server_serves(server: LiveServer) -> None:
    async def main() -> list[str]:
        client = AutoLLMClient(
            "anthropic", api_key=CLIENT_KEY, base_url=server.url + "/v1", client_type="mmsp"
        )
        return await client.list_models()

    assert asyncio.run(main()) == list(SERVED)


def test_an_error_after_the_stream_began_reaches_mmsp_as_the_object_we_raise_from(
    server: LiveServer, emu: Emulator
) -> None:
    story = Turn.text("A story that the upstream will not finish telling. " * 3)
    emu.queue(Reply.turn(story, fragment_size=5, disconnect_after_bytes=700))
    theirs, error = mmsp_stream(server, "anthropic", HELLO)
    emu.queue(Reply.turn(story, fragment_size=5, disconnect_after_bytes=700))
    ours = drive("sync", server.url, HELLO)

    assert isinstance(ours.error, IncompleteStreamError)
    assert error is not None and error.error_type == "IncompleteStreamError"
    assert error.error == error_object(ours.error)["error"]
    assert without_clock(theirs) == without_clock(ours.events)
    assert theirs and theirs[-1]["event_type"] == "delta"


def test_a_wrong_key_is_refused_to_mmsp_with_the_server_s_status_and_type(
    server: LiveServer, emu: Emulator
) -> None:
    events, error = mmsp_stream(server, "anthropic", HELLO, api_key="msk-wrong")

    assert events == []
    assert error is not None
    assert (error.status, error.error_type) == (401, "AuthenticationError")
    assert "msk-wrong" not in str(error)
    assert emu.requests == []
