"""One writer per wire (issue 17): the emulator's replies in a protocol the gateway answers in
are the gateway writer's frames for the scripted turn's SPEC events, and decode back to the
turn."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from modelstream import GrammarChecker, StreamDecoder
from modelstream.protocols import REGISTRY
from modelstream.protocols.common.fidelity_seal import FidelitySeal, is_sealed
from modelstream.protocols.common.gateway import GatewayWire, InboundRequest, WriteContext
from modelstream.protocols.openai_chat.writer import final_body as chat_final_body
from modelstream.protocols.openai_responses.writer import is_generated_id
from modelstream.testing import Media, Text, Thinking, ToolCall, Turn, render, render_frames
from modelstream.testing.emulation import (
    EmulatedStream,
    EventStyle,
    GatewayWrite,
    StreamEmulator,
    turn_events,
)
from modelstream.testing.routes import emulator_for
from modelstream.types import Usage

GATEWAY_WIRES = (
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "gemini-generate-content",
)
MODEL = "m-emulated"
RESPONSE_ID = "emu0123456789abcdef01234567"
CREATED = 1_767_000_000
USAGE: Usage = {
    "cached_tokens": 3,
    "prompt_tokens": 21,
    "thoughts_tokens": 8,
    "response_tokens": 13,
}
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
PCM = bytes(range(256)) * 5

RICH = Turn(
    items=[
        Thinking("The user wants the weather, so call the tool.", signature="c2lnbmF0dXJl"),
        Text("Let me look that up."),
        ToolCall("get_weather", {"city": "Lisbon", "units": ["c", 1.5]}, id="call_lisbon"),
        ToolCall("get_time", {}),
    ],
    usage=USAGE,
)
# what each protocol can send besides: (turn, its name)
EXTRA: dict[str, list[tuple[Turn, str]]] = {
    "openai-chat": [(Turn(items=[Text("Listen."), Media(PCM, "audio/pcm;rate=24000")]), "audio")],
    "openai-responses": [(Turn(items=[Text("Here."), Media(PNG, "image/png")]), "image")],
    "anthropic-messages": [
        (Turn(items=[Thinking("", redacted="RW5jcnlwdGVk"), Text("Hi.")]), "redacted")
    ],
    "gemini-generate-content": [
        (
            Turn(
                items=[Text("Both."), Media(PNG, "image/png"), Media(PCM, "audio/L16;rate=24000")]
            ),
            "media",
        ),
        (Turn(items=[ToolCall("f", {"a": 1}, signature="Q2FsbFNpZw==")]), "signed call"),
    ],
}
CASES = [
    pytest.param(protocol, turn, id=f"{protocol}-{name}")
    for protocol in GATEWAY_WIRES
    for turn, name in [
        (RICH, "rich"),
        (Turn.text("Cut short.", finish="length"), "length"),
        (Turn.text("Filtered.", finish="unknown"), "unknown"),
        (Turn(items=[Thinking("", signature="b3BhcXVl"), Text("Answer.")]), "bare signature"),
        *EXTRA[protocol],
    ]
]


def _stream(turn: Turn, size: int) -> EmulatedStream:
    return EmulatedStream(
        turn=turn,
        model=MODEL,
        size=size,
        include_usage=True,
        response_id=RESPONSE_ID,
        created=CREATED,
    )


def _scripted(protocol: str, turn: Turn) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for item in turn.items:
        if isinstance(item, Text):
            out.append(("text", item.text, None))
        elif isinstance(item, Thinking):
            signature = item.redacted if item.redacted is not None else item.signature
            out.append(("thinking", item.thinking, signature))
        elif isinstance(item, ToolCall):
            signature = item.signature if protocol == "gemini-generate-content" else None
            out.append(("tool_call", item.name, dict(item.arguments), item.id, signature))
        else:
            assert isinstance(item, Media)
            out.append(("media", item.data))
    return out


_SIGNATURES = ("signature", "encrypted_content", "thought_signature", "redacted_thinking")


def _decoded(items: list[Any], turn: Turn) -> list[tuple[Any, ...]]:
    ids = iter(item.id for item in turn.items if isinstance(item, ToolCall))
    out: list[tuple[Any, ...]] = []
    for item in items:
        fidelity = item.get("fidelity") or {}
        signature = next((fidelity[key] for key in _SIGNATURES if key in fidelity), None)
        if item["type"] == "text.done":
            out.append(("text", item["text"], signature))
        elif item["type"] == "thinking.done":
            out.append(("thinking", item["thinking"], signature))
        elif item["type"] == "tool_call.done":
            scripted_id = next(ids)  # a call scripted without an id gets one made up
            call_id = item["tool_call_id"] if scripted_id else None
            args = item["arguments"]
            out.append(("tool_call", item["name"], args, call_id, signature))
        else:
            out.append(("media", item["data"]))
    return out


@pytest.mark.parametrize(("protocol", "turn"), CASES)
@pytest.mark.parametrize("size", [1, 5, 64])
def test_the_emulators_body_is_the_gateway_writers_frames_for_the_turns_events(
    protocol: str, turn: Turn, size: int
) -> None:
    emulator = emulator_for(protocol)
    assert isinstance(emulator, StreamEmulator)
    write = emulator.write
    gateway = REGISTRY[protocol].gateway
    assert isinstance(write, GatewayWrite) and gateway is not None
    assert write.writer is gateway.writer  # the writer the gateway answers its callers with
    stream = _stream(turn, size)
    events = turn_events(stream, write.style)
    checker = GrammarChecker()
    for event in events:
        checker.feed(event)
    checker.end()

    writer = gateway.writer(write.context(stream))
    frames = [frame for event in events for frame in writer.feed(event)]
    body = render(
        protocol, turn, model=MODEL, fragment_size=size, response_id=RESPONSE_ID, created=CREATED
    )

    assert body == b"".join(frames)
    assert (
        render_frames(
            protocol,
            turn,
            model=MODEL,
            fragment_size=size,
            response_id=RESPONSE_ID,
            created=CREATED,
        )
        == frames
    )
    decoder = _decode(protocol, body)
    message = _message(decoder)
    assert _decoded(message["content_items"], turn) == _scripted(protocol, turn)
    calls = any(isinstance(item, ToolCall) for item in turn.items)
    finish = "tool_call" if turn.finish_reason == "stop" and calls else turn.finish_reason
    assert message["finish_reason"] == finish
    assert message["usage_metadata"] == turn.usage_counts()
    assert decoder.metadata.model == MODEL


def test_the_emulators_events_carry_fidelity_as_the_protocols_decoder_gives_it() -> None:
    """A signature rides on one empty fragment after the text and on the `.done` (rule C)."""
    turn = Turn(items=[Thinking("Hmm, yes.", signature="c2ln"), Text("Yes.")])
    emulator = emulator_for("anthropic-messages")
    assert isinstance(emulator, StreamEmulator) and isinstance(emulator.write, GatewayWrite)
    write = emulator.write

    events = turn_events(_stream(turn, 4), write.style)

    items: list[Any] = [event["content_items"][0] for event in events[:-1]]
    assert [(item["type"], item.get("fidelity")) for item in items[:5]] == [
        ("thinking.delta", None),
        ("thinking.delta", None),
        ("thinking.delta", None),
        ("thinking.delta", {"signature": "c2ln"}),
        ("thinking.done", {"signature": "c2ln"}),
    ]
    assert items[3]["thinking"] == "" and items[4]["thinking"] == "Hmm, yes."
    assert events[-1]["event_type"] == "stop"
    assert events[-1]["usage_metadata"] == turn.usage_counts()


# --- what the writers gained for the emulator, which the gateway has too -----------------------

SEAL = FidelitySeal(b"one-writer-test-key-0123456789")


def _written(protocol: str, events: list[Any], upstream: str, **options: Any) -> bytes:
    request = InboundRequest(model=MODEL, messages=[], config={}, stream=True, options=options)
    ctx = WriteContext(RESPONSE_ID, MODEL, CREATED, upstream, SEAL, request)
    gateway = REGISTRY[protocol].gateway
    assert isinstance(gateway, GatewayWire) and gateway.writer is not None
    stream_writer = gateway.writer(ctx)
    return b"".join(frame for event in events for frame in stream_writer.feed(event))


def _events(turn: Turn, size: int = 4, **style: Any) -> list[Any]:
    return turn_events(_stream(turn, size), EventStyle(**style))


def _payloads(body: bytes) -> list[Any]:
    return [
        orjson.loads(line[len(b"data: ") :])
        for line in body.splitlines()
        if line.startswith(b"data: {")
    ]


def test_chat_streams_another_upstreams_audio_with_an_id_and_expiry_of_its_own() -> None:
    events = _events(Turn(items=[Media(PCM, "audio/L16;rate=24000")]), size=2)

    body = _written("openai-chat", events, "gemini-generate-content")

    audio = [p["choices"][0]["delta"]["audio"] for p in _payloads(body)[1:-1] if p["choices"]]
    audio = [a for a in audio if a]
    assert len(audio) > 2 and {a["id"] for a in audio} == {f"audio_{RESPONSE_ID}_1"}
    assert audio[-1] == {"id": f"audio_{RESPONSE_ID}_1", "expires_at": CREATED + 3600}
    item = _message(_decode("openai-chat", body))["content_items"][0]
    assert item["data"] == PCM and item["mime_type"] == "audio/pcm;rate=24000"


def test_chat_writes_its_own_upstreams_audio_id_and_expiry_and_refuses_an_image() -> None:
    fidelity = {"audio_id": "audio_abc", "expires_at": 1_800_000_000}
    events = _events(Turn(items=[Media(PCM, "audio/pcm")]), media=lambda s, m, n: fidelity)

    body = _written("openai-chat", events, "openai-chat")
    image = _written("openai-chat", _events(Turn(items=[Media(PNG, "image/png")])), "openai-chat")

    item = _message(_decode("openai-chat", body))["content_items"][0]
    assert item["data"] == PCM and item["fidelity"] == fidelity
    assert _payloads(image)[-1]["error"]["code"] == "unsupported_content"


@pytest.mark.parametrize(
    ("upstream", "fidelity", "native"),
    [
        ("openai-chat", {"reasoning_field": "reasoning", "signature": "c2ln"}, True),
        ("openai-chat", {"reasoning_field": "reasoning", "format": "f", "reasoning_id": "r"}, True),
        ("openai-chat", {"thought_signature": "c2ln"}, False),  # not Chat's own
        ("anthropic-messages", {"signature": "c2ln"}, False),
    ],
)
def test_chat_writes_a_chat_upstreams_thinking_fidelity_as_it_is_and_seals_the_rest(
    upstream: str, fidelity: dict[str, Any], native: bool
) -> None:
    events = _events(Turn(items=[Thinking("Hmm."), Text("So.")]), thinking=fidelity)

    body = _written("openai-chat", events, upstream)

    item = _message(_decode("openai-chat", body))["content_items"][0]
    if native:
        assert item["fidelity"] == fidelity
    else:
        assert is_sealed(item["fidelity"]["signature"])
        assert SEAL.open(item["fidelity"]["signature"]) == fidelity


def _decode(protocol: str, body: bytes) -> StreamDecoder:
    decoder = StreamDecoder(protocol)
    decoder.feed(body)
    decoder.end()
    return decoder


def _message(decoder: StreamDecoder) -> Any:
    result = decoder.result
    assert result is not None and result.status == "final"
    return result.message


@pytest.mark.parametrize(
    ("protocol", "options", "raw", "finish"),
    [
        ("anthropic-messages", {}, "refusal", "stop"),  # the gateway's: the nearest it has
        ("anthropic-messages", {"unknown_stop_reason": "pause_turn"}, "pause_turn", "unknown"),
        ("gemini-generate-content", {}, "OTHER", "unknown"),
        ("gemini-generate-content", {"unknown_finish_reason": "SAFETY"}, "SAFETY", "unknown"),
    ],
)
def test_an_unknown_finish_is_written_as_the_option_says(
    protocol: str, options: dict[str, Any], raw: str, finish: str
) -> None:
    events = _events(Turn.text("Stopped.", finish="unknown"))

    body = _written(protocol, events, "openai-responses", **options)

    assert _message(_decode(protocol, body))["finish_reason"] == finish
    assert raw.encode() in body


@pytest.mark.parametrize(
    ("upstream", "sealed"), [("gemini-generate-content", False), ("anthropic-messages", True)]
)
def test_gemini_writes_its_own_upstreams_signature_as_it_is_canonical_or_not(
    upstream: str, sealed: bool
) -> None:
    turn = Turn(items=[Thinking("Hmm.", signature="sig-1"), Text("So.")])
    events = _events(turn, signature="thought_signature")

    body = _written("gemini-generate-content", events, upstream)

    fidelity = _message(_decode("gemini-generate-content", body))["content_items"][0]["fidelity"]
    signature = fidelity["thought_signature"]
    assert is_sealed(signature) is sealed
    assert (SEAL.open(signature) if sealed else fidelity) == {"thought_signature": "sig-1"}


def test_gemini_leaves_out_only_the_id_the_assembler_made_up_for_the_call_at_its_place() -> None:
    turn = Turn(items=[ToolCall("f", {}, id="call_7"), ToolCall("g", {})])
    events = _events(turn, synthesized_call_ids=True)  # the second is `call_2`

    body = _written("gemini-generate-content", events, "openai-chat")

    calls = [p["candidates"][0]["content"]["parts"][0] for p in _payloads(body)[:2]]
    assert calls == [
        {"functionCall": {"name": "f", "args": {}, "id": "call_7"}},
        {"functionCall": {"name": "g", "args": {}}},
    ]
    items = _message(_decode("gemini-generate-content", body))["content_items"]
    assert [item["tool_call_id"] for item in items] == ["call_7", "call_2"]


@pytest.mark.parametrize(
    ("upstream", "fidelity", "native"),
    [
        ("openai-responses", {"part": "summary_text", "encrypted_content": "gAAA=="}, True),
        (
            "openai-responses",
            {"id": "rs_1", "part": "summary_text", "encrypted_content": "g"},
            False,
        ),
        ("gemini-generate-content", {"encrypted_content": "gAAA=="}, False),
    ],
)
def test_responses_writes_encrypted_content_as_it_is_only_when_it_loses_no_item_id(
    upstream: str, fidelity: dict[str, Any], native: bool
) -> None:
    events = _events(Turn(items=[Thinking("Hmm."), Text("So.")]), thinking=fidelity)

    body = _written("openai-responses", events, upstream)

    done = next(
        p["item"]
        for p in _payloads(body)
        if p["type"] == "response.output_item.done" and p["item"]["type"] == "reasoning"
    )
    encrypted = done["encrypted_content"]
    if native:
        assert encrypted == fidelity["encrypted_content"]
    else:
        assert SEAL.open(encrypted) == fidelity


@pytest.mark.parametrize(("options", "marker"), [({}, "_gw_"), ({"provider_item_ids": True}, "_")])
def test_responses_item_ids_are_the_gateways_unless_the_option_asks_for_a_providers(
    options: dict[str, Any], marker: str
) -> None:
    body = _written("openai-responses", _events(Turn.text("Hi.")), "openai-responses", **options)

    added = next(p for p in _payloads(body) if p["type"] == "response.output_item.added")
    assert added["item"]["id"] == f"msg{marker}{RESPONSE_ID}_0"
    assert is_generated_id(added["item"]["id"]) is (marker == "_gw_")


def test_chats_whole_answer_carries_an_audio_clip_in_its_message() -> None:
    request = InboundRequest(model=MODEL, messages=[], config={}, stream=False)
    ctx = WriteContext(RESPONSE_ID, MODEL, CREATED, "gemini-generate-content", SEAL, request)
    message: Any = {
        "role": "assistant",
        "content_items": [
            {"type": "text.done", "text": "Listen."},
            {"type": "inline_data.done", "data": PCM, "mime_type": "audio/L16;rate=24000"},
        ],
        "finish_reason": "stop",
        "usage_metadata": USAGE,
    }

    body = chat_final_body(ctx, message)

    out = body["choices"][0]["message"]
    assert out["content"] == "Listen."
    assert base64.b64decode(out["audio"]["data"]) == PCM
    assert out["audio"]["id"] == f"audio_{RESPONSE_ID}_1"
    assert out["audio"]["expires_at"] == CREATED + 3600
