"""The AI SDK's UI message stream from `modelstream serve` (docs/frontends.md), over real HTTP
in front of the emulator: the frames a `useChat` page reads for text, reasoning, a tool call and
a structured answer; an error before and after the first content; the reconnect by chat id,
which replays the chat's last stream to the same frames, on any instance behind one Redis, and
finds nothing for another key or another chat. The browser itself is the judge in
test_ai_sdk_browser.py."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from modelstream.server.stores.redis import RedisStore
from modelstream.testing import Emulator, Reply, Text, Thinking, Turn
from support.server import AUTH, CLIENT_KEY, CLIENT_KEY_ENV, Serve

API = "/v1/stream/ai-sdk"
UI_HEADER = "x-vercel-ai-ui-message-stream"


def ui_message(text: str, role: str = "user", number: int = 1) -> dict[str, Any]:
    return {"id": f"m{number}", "role": role, "parts": [{"type": "text", "text": text}]}


def body(chat: str = "chat-1", model: str = "chat", **more: Any) -> dict[str, Any]:
    return {
        "id": chat,
        "messages": [ui_message("Hello?")],
        "trigger": "submit-message",
        "messageId": None,
        "model": model,
        **more,
    }


def chunks(raw: str) -> list[dict[str, Any]]:
    """The chunks of a UI message stream, checking its framing: `data:` lines, `[DONE]` last."""
    frames = [frame for frame in raw.split("\n\n") if frame]
    assert frames[-1] == "data: [DONE]", frames[-3:]
    assert all(frame.startswith("data: ") for frame in frames), frames
    return [json.loads(frame[6:]) for frame in frames[:-1]]


def text_of(found: list[dict[str, Any]]) -> str:
    return "".join(c["delta"] for c in found if c["type"] == "text-delta")


def post(url: str, payload: dict[str, Any], key: str = CLIENT_KEY) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"}
    return httpx.post(url + API, json=payload, headers=headers, timeout=30)


def test_a_text_turn_is_a_ui_message_stream_that_finishes(serve: Serve, emu: Emulator) -> None:
    server = serve()
    emu.queue(Reply.turn(Turn.text("Hello from the model."), fragment_size=5))
    response = post(server.url, body())
    assert response.status_code == 200
    assert response.headers[UI_HEADER] == "v1"
    assert response.headers["content-type"].startswith("text/event-stream")
    found = chunks(response.text)
    kinds = [c["type"] for c in found]
    assert kinds[:3] == ["start", "start-step", "text-start"]
    assert kinds[-3:] == ["text-end", "finish-step", "finish"]
    assert set(kinds[3:-3]) == {"text-delta"}
    assert text_of(found) == "Hello from the model."
    response_id = response.headers["x-response-id"]
    assert found[0]["messageId"] == "msg_" + response_id.removeprefix("resp_")
    assert found[0]["messageMetadata"] == {"responseId": response_id, "model": "chat"}
    finish = found[-1]
    assert finish["finishReason"] == "stop"
    assert finish["messageMetadata"]["usage"]["outputTokens"] > 0


def test_reasoning_and_a_tool_call_are_their_own_parts(serve: Serve, emu: Emulator) -> None:
    server = serve()
    turn = Turn(
        items=[
            Thinking("Let me look."),
            Text("Checking."),
            *Turn.tool_call("weather", {"city": "Oslo"}).items,
        ]
    )
    emu.queue(Reply.turn(turn))
    found = chunks(post(server.url, body(model="anthropic")).text)
    kinds = [c["type"] for c in found]
    assert "reasoning-start" in kinds and "reasoning-end" in kinds
    assert "".join(c["delta"] for c in found if c["type"] == "reasoning-delta") == "Let me look."
    assert text_of(found) == "Checking."
    [start] = [c for c in found if c["type"] == "tool-input-start"]
    [available] = [c for c in found if c["type"] == "tool-input-available"]
    assert start["toolName"] == available["toolName"] == "weather"
    assert start["toolCallId"] == available["toolCallId"]
    assert available["input"] == {"city": "Oslo"}
    streamed = "".join(c["inputTextDelta"] for c in found if c["type"] == "tool-input-delta")
    assert json.loads(streamed) == {"city": "Oslo"}
    assert found[-1]["finishReason"] == "tool-calls"


def test_a_structured_answer_grows_as_one_data_part(serve: Serve, emu: Emulator) -> None:
    server = serve()
    answer = {"city": "Oslo", "days": [{"day": "Mon", "high": 12}, {"day": "Tue", "high": 9}]}
    emu.queue(Reply.turn(Turn.text(json.dumps(answer)), fragment_size=4))
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "array"}},
        "required": ["city", "days"],
    }
    config = {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "forecast", "schema": schema},
        }
    }
    found = chunks(post(server.url, body(config=config)).text)
    objects = [c for c in found if c["type"] == "data-object"]
    assert len(objects) > 5
    assert {c["id"] for c in objects} == {"object"}  # one part, replaced each time
    assert objects[-1]["data"] == answer
    # every value shown is a prefix of the answer: never a half-written number
    for shown in (c["data"] for c in objects):
        for day, final in zip(shown.get("days", []), answer["days"], strict=False):
            assert "high" not in day or day["high"] == final["high"]
        assert answer["city"].startswith(shown.get("city", ""))


def test_the_transports_body_becomes_the_turn(serve: Serve, emu: Emulator) -> None:
    """System text, earlier turns with a tool call and its output, and the page's own fields."""
    server = serve()
    emu.queue(Reply.turn(Turn.text("Sunny.")))
    history = [
        {"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
        ui_message("Weather in Oslo?"),
        {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {
                    "type": "tool-weather",
                    "toolCallId": "call_1",
                    "state": "output-available",
                    "input": {"city": "Oslo"},
                    "output": {"sky": "clear"},
                },
                {"type": "step-start"},
                {"type": "text", "text": "It is clear."},
            ],
        },
        ui_message("And tomorrow?", number=2),
    ]
    payload = {**body(), "messages": history, "pageField": 1}
    assert post(server.url, payload).status_code == 200
    sent = emu.requests[-1].json
    messages = sent["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    roles = [m["role"] for m in messages[1:]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    assert messages[2]["tool_calls"][0]["function"]["name"] == "weather"
    assert json.loads(messages[3]["content"]) == {"sky": "clear"}
    assert "pageField" not in sent


@pytest.mark.parametrize(
    ("payload", "status", "says"),
    [
        ({"id": "c", "messages": [ui_message("hi")]}, 400, "model"),
        (body(model="no-such-model"), 404, "not served"),
        ({**body(), "messages": []}, 400, "messages"),
        ({**body(), "messages": [{"role": "robot", "parts": []}]}, 400, "messages[0]"),
    ],
)
def test_a_refused_turn_is_an_http_error_the_transport_shows(
    serve: Serve, payload: dict[str, Any], status: int, says: str
) -> None:
    server = serve()
    response = post(server.url, payload)
    assert response.status_code == status
    assert says in response.json()["error"]["message"]


def test_a_wrong_key_is_a_401(serve: Serve) -> None:
    server = serve()
    assert post(server.url, body(), key="msk-wrong").status_code == 401


def test_an_upstream_cut_after_content_ends_in_an_error_never_a_finish(
    serve: Serve, emu: Emulator
) -> None:
    server = serve()
    emu.queue(
        Reply.turn(Turn.text("A long answer. " * 40), fragment_size=8, disconnect_after_bytes=1200)
    )
    found = chunks(post(server.url, body()).text)
    assert text_of(found)  # what came is kept
    assert found[-1]["type"] == "error"
    assert found[-1]["errorText"]
    assert "finish" not in [c["type"] for c in found]


def reconnect(url: str, chat: str, key: str = CLIENT_KEY) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"}
    return httpx.get(f"{url}{API}/{chat}/stream", headers=headers, timeout=30)


def test_the_reconnect_replays_the_chats_last_stream_to_the_same_frames(
    serve: Serve, emu: Emulator
) -> None:
    server = serve()
    emu.queue(Reply.turn(Turn.text("First answer.")), Reply.turn(Turn.text("Second answer.")))
    post(server.url, body(chat="chat-7"))
    second = post(server.url, body(chat="chat-7"))
    replayed = reconnect(server.url, "chat-7")
    assert replayed.status_code == 200
    assert replayed.headers[UI_HEADER] == "v1"
    assert replayed.text == second.text  # the last stream, frame for frame
    assert text_of(chunks(replayed.text)) == "Second answer."


def test_no_stream_to_reconnect_to_is_a_204_for_another_chat_or_key(
    serve: Serve, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    other_key = "msk-other-2f9d0c1b"
    monkeypatch.setenv("MODELSTREAM_TEST_OTHER_KEY", other_key)
    server = serve(keys=["$" + CLIENT_KEY_ENV, "$MODELSTREAM_TEST_OTHER_KEY"])
    emu.queue(Reply.turn(Turn.text("Mine.")))
    post(server.url, body(chat="chat-mine"))
    assert reconnect(server.url, "chat-never").status_code == 204
    assert reconnect(server.url, "chat-mine", key=other_key).status_code == 204
    assert reconnect(server.url, "chat-mine").status_code == 200
    assert reconnect(server.url, "chat-mine", key="msk-wrong").status_code == 401


def test_a_reconnect_on_another_instance_behind_redis_replays_a_running_stream(
    serve: Serve, emu: Emulator, redis_url: str, prefix: str
) -> None:
    first = serve(store=RedisStore.from_url(redis_url, prefix=prefix))
    second = serve(store=RedisStore.from_url(redis_url, prefix=prefix))
    story = "Once upon a time, a chat was cut and came back whole. " * 5
    emu.queue(Reply.turn(Turn.text(story), fragment_size=8, delay=0.01))
    with (
        httpx.Client(timeout=30) as http,
        http.stream("POST", first.url + API, json=body(chat="chat-r"), headers=AUTH) as response,
    ):
        assert response.status_code == 200
        next(response.iter_bytes())  # the stream runs; this reader goes
    replayed = reconnect(second.url, "chat-r")
    assert replayed.status_code == 200
    found = chunks(replayed.text)
    assert text_of(found) == story
    assert found[-1]["type"] == "finish"


def test_a_structured_answer_never_shows_half_an_enum_value(serve: Serve, emu: Emulator) -> None:
    server = serve()
    answer = {"order": "A-17", "status": "pending"}
    emu.queue(Reply.turn(Turn.text(json.dumps(answer)), fragment_size=2))
    schema = {
        "type": "object",
        "properties": {"order": {"type": "string"}, "status": {"enum": ["pending", "shipped"]}},
        "required": ["order", "status"],
    }
    config = {
        "response_format": {"type": "json_schema", "json_schema": {"name": "o", "schema": schema}}
    }
    found = chunks(post(server.url, body(config=config)).text)
    statuses = [
        c["data"]["status"] for c in found if c["type"] == "data-object" and "status" in c["data"]
    ]
    assert statuses == ["pending"]
    orders = [c["data"].get("order") for c in found if c["type"] == "data-object"]
    assert orders[-1] == "A-17" and "A-1" in orders  # an open plain string shows as it grows
