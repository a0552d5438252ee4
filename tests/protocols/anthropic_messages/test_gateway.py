"""The Anthropic Messages gateway wire (SPEC §8): the inbound request decoder, the stream writer,
the final and error bodies, fidelity across wires, and the official `anthropic` SDK reading it
all over loopback HTTP."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import anthropic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream import GrammarChecker, StreamDecoder
from modelstream.protocols import encode_request, protocol_named
from modelstream.protocols.anthropic_messages.gateway import GATEWAY, ROUTES, read_key
from modelstream.protocols.anthropic_messages.inbound import decode_request, nearest_level
from modelstream.protocols.anthropic_messages.writer import (
    AnthropicStreamWriter,
    UnsupportedOutputError,
    count_tokens_body,
    error_body,
    final_body,
    models_body,
)
from modelstream.protocols.common.encoding import THINKING_LEVELS
from modelstream.protocols.common.gateway import (
    GatewayError,
    InboundCall,
    InboundRequestError,
    ServedModel,
)
from modelstream.server.config import ModelEntry
from modelstream.server.request_policy import check_upstream_request
from modelstream.testing import error_body as emulator_error_body
from support import REPO
from support.gateway import delta, done_items, group, json_trees, stop, usage_dicts
from support.gateway_anthropic_messages import (
    COUNT_TOKENS,
    GENERATE,
    SEAL,
    client_content,
    context,
    cut_item,
    frames,
    loopback,
    turn_events,
    write,
)

AGENT_REQUESTS = REPO.parent / "shared/clients/agent-requests.json"
USAGE = {"cached_tokens": 5, "prompt_tokens": 11, "thoughts_tokens": 3, "response_tokens": 7}
SIGNATURE = "EqQBCkYIBxgCKkAnative+signature/w=="


def body_of(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Hello"}],
    }
    return {**base, **fields}


def decode(body: Any, call: InboundCall = GENERATE) -> Any:
    return decode_request(body, call, SEAL)


def refused(body: Any, call: InboundCall = GENERATE) -> InboundRequestError:
    with pytest.raises(InboundRequestError) as raised:
        decode(body, call)
    assert raised.value.status == 400
    return raised.value


def decoded_events(body: bytes, sizes: list[int]) -> list[Any]:
    """Our own stream decoder over the writer's bytes, cut at `sizes`, grammar-checked."""
    decoder = StreamDecoder("anthropic-messages")
    checker = GrammarChecker()
    events: list[Any] = []
    position, turn = 0, 0
    while position < len(body):
        size = sizes[turn % len(sizes)] if sizes else len(body)
        events += decoder.feed(body[position : position + max(1, size)])
        position += max(1, size)
        turn += 1
    events += decoder.end()
    for event in events:
        checker.feed(event)
    checker.end()
    return events


# --- strategies ---------------------------------------------------------------------------------

json_values = json_trees(st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=6))
arguments = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
ID_TAILS = st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True)
signatures = st.from_regex(r"[A-Za-z0-9+/]{8,40}={0,2}", fullmatch=True)
counts = st.none() | st.integers(0, 10**6)
usages = usage_dicts(counts)


@st.composite
def native_items(draw: st.DrawFn) -> list[dict[str, Any]]:
    """An answer as an Anthropic upstream gives it: its own fidelity only."""
    items: list[dict[str, Any]] = []
    for index in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["text", "thinking", "signed", "redacted", "call"]))
        if kind == "text":
            items.append({"type": "text.done", "text": draw(st.text(min_size=1, max_size=30))})
        elif kind == "thinking":
            items.append(
                {"type": "thinking.done", "thinking": draw(st.text(min_size=1, max_size=30))}
            )
        elif kind == "signed":
            thinking = draw(st.text(max_size=30))
            fidelity = {"signature": draw(signatures)}
            items.append({"type": "thinking.done", "thinking": thinking, "fidelity": fidelity})
        elif kind == "redacted":
            fidelity = {"redacted_thinking": draw(signatures)}
            items.append({"type": "thinking.done", "thinking": "", "fidelity": fidelity})
        else:
            items.append(
                {
                    "type": "tool_call.done",
                    "tool_call_id": f"toolu_{index}{draw(ID_TAILS)}",
                    "name": draw(st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True)),
                    "arguments": draw(arguments),
                }
            )
    if not any(i["type"] != "thinking.done" for i in items):  # a thinking-only turn is empty
        items.append({"type": "text.done", "text": "answer"})
    return items


def cutter(data: st.DataObject) -> Any:
    def cut(text: str) -> list[str]:
        points = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=3)))
        edges = [0, *points, len(text)]
        return [text[a:b] for a, b in itertools.pairwise(edges)]

    return cut


def expected_finish(finish: str, items: list[dict[str, Any]]) -> str:
    read = {"stop": "stop", "length": "length", "tool_call": "tool_call", "unknown": "stop"}[finish]
    has_call = any(i["type"] == "tool_call.done" for i in items)
    return "tool_call" if read == "stop" and has_call else read


# --- the stream: writer → bytes → this project's decoder ---------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=native_items(),
    finish=st.sampled_from(["stop", "length", "tool_call", "unknown"]),
    usage=usages,
    sizes=st.lists(st.integers(1, 64), max_size=6),
    fidelity_at=st.integers(0, 3),
    data=st.data(),
)
def test_any_turn_written_reads_back_as_the_same_items_finish_and_usage(
    items: list[dict[str, Any]],
    finish: str,
    usage: dict[str, Any],
    sizes: list[int],
    fidelity_at: int,
    data: st.DataObject,
) -> None:
    events = turn_events(items, finish, usage, cutter(data), fidelity_at)
    checker = GrammarChecker()
    for event in events:
        checker.feed(event)  # the input is a grammatical stream

    decoded = decoded_events(write(events), sizes)

    expected = list(items)
    if finish == "unknown":  # written as `refusal`, which reads back as stop + its marker
        expected.append({"type": "text.done", "text": "", "fidelity": {"refusal": True}})
    assert done_items(decoded) == expected
    assert decoded[-1]["finish_reason"] == expected_finish(finish, items)
    # unknown counts are written 0 (Anthropic's fields are integers); thoughts stay unknown
    # when they were, since only known thoughts are written in output_tokens_details
    assert decoded[-1]["usage_metadata"] == {
        "cached_tokens": usage["cached_tokens"] or 0,
        "prompt_tokens": usage["prompt_tokens"] or 0,
        "thoughts_tokens": usage["thoughts_tokens"],
        "response_tokens": usage["response_tokens"] or 0,
    }


def test_the_frames_are_anthropics_with_indices_allocated_by_the_writer() -> None:
    items = [
        {"type": "thinking.done", "thinking": "Hm.", "fidelity": {"signature": SIGNATURE}},
        {"type": "text.done", "text": "Hi"},
        {"type": "tool_call.done", "tool_call_id": "toolu_1", "name": "f", "arguments": {"a": 1}},
    ]
    body = write(turn_events(items, "tool_call", USAGE))

    names = [(name, data.get("index")) for name, data in frames(body)]
    assert names == [
        ("message_start", None),
        ("content_block_start", 0),
        ("ping", None),
        ("content_block_delta", 0),
        ("content_block_delta", 0),  # the signature, last in its block
        ("content_block_stop", 0),
        ("content_block_start", 1),
        ("content_block_delta", 1),
        ("content_block_stop", 1),
        ("content_block_start", 2),
        ("content_block_delta", 2),
        ("content_block_stop", 2),
        ("message_delta", None),
        ("message_stop", None),
    ]
    start = frames(body)[0][1]["message"]
    assert start["id"] == "msg_gw_0123abcd"
    assert start["model"] == "claude-sonnet-4-5"
    assert start["usage"] == {
        "input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 0,
    }
    assert frames(body)[-2][1] == {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {
            "input_tokens": 11,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 5,
            "output_tokens": 10,
            "output_tokens_details": {"thinking_tokens": 3},
        },
    }


def test_tool_arguments_stream_as_their_fragments_arrive() -> None:
    item = {"type": "tool_call.done", "tool_call_id": "call_1", "name": "f", "arguments": {"a": 1}}
    writer = AnthropicStreamWriter(context("openai-chat"))
    first = writer.feed(delta({**item, "type": "tool_call.delta", "arguments": '{"a"'}))
    assert [name for name, _ in frames(b"".join(first))] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
    ]
    more = writer.feed(
        delta({"type": "tool_call.delta", "tool_call_id": "", "name": "", "arguments": ":1}"})
    )
    assert frames(b"".join(more))[0][1]["delta"] == {
        "type": "input_json_delta",
        "partial_json": ":1}",
    }


def test_a_refusal_text_ends_the_turn_with_the_refusal_stop_reason() -> None:
    items = [
        {"type": "text.done", "text": "I can't help with that."},
        {"type": "text.done", "text": "", "fidelity": {"refusal": True}},
    ]
    body = write(turn_events(items, "stop", USAGE))

    assert [name for name, _ in frames(body)].count("content_block_start") == 1
    assert frames(body)[-2][1]["delta"]["stop_reason"] == "refusal"
    assert done_items(decoded_events(body, [])) == items  # Anthropic's own refusal, unchanged


@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("tool_call", "tool_use"),
        ("unknown", "refusal"),
    ],
)
def test_each_finish_reason_has_its_anthropic_stop_reason(finish: str, reason: str) -> None:
    body = write(turn_events([{"type": "text.done", "text": "x"}], finish, USAGE))
    assert frames(body)[-2][1]["delta"]["stop_reason"] == reason


def test_an_image_from_the_upstream_ends_the_stream_with_an_error_naming_it() -> None:
    writer = AnthropicStreamWriter(context("gemini-generate-content"))
    out = writer.feed(
        delta({"type": "inline_data.delta", "data": b"\x89PNG", "mime_type": "image/png"})
    )

    name, data = frames(b"".join(out))[-1]
    assert name == "error"
    assert data["error"]["type"] == "api_error"
    assert "inline_data (image/png)" in data["error"]["message"]
    assert writer.feed(stop("stop", USAGE)) == []  # type: ignore[arg-type]  # nothing after the error


def test_fail_writes_one_error_event_and_nothing_after_it() -> None:
    writer = AnthropicStreamWriter(context())
    writer.feed(delta({"type": "text.delta", "text": "Once upon"}))

    out = writer.fail(GatewayError(529, "OverloadedError", "Overloaded"))

    assert out == [
        b"event: error\ndata: "
        b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    ]
    assert writer.feed(delta({"type": "text.done", "text": "Once upon"})) == []
    assert writer.fail(GatewayError(500, "ServerError", "again")) == []


def test_events_that_break_the_grammar_end_the_stream_with_an_error() -> None:
    writer = AnthropicStreamWriter(context())
    writer.feed(delta({"type": "text.delta", "text": "a"}))

    out = writer.feed(delta({"type": "thinking.delta", "thinking": "b"}))

    name, data = frames(b"".join(out))[-1]
    assert name == "error"
    assert "thinking fragment came while a text was open" in data["error"]["message"]


def test_a_stop_while_a_block_is_open_is_never_a_normal_end() -> None:
    writer = AnthropicStreamWriter(context())
    writer.feed(delta({"type": "text.delta", "text": "a"}))

    out = writer.feed(stop("stop", USAGE))  # type: ignore[arg-type]

    assert [name for name, _ in frames(b"".join(out))] == ["error"]


# --- fidelity across wires ----------------------------------------------------------------------

FOREIGN_THINKING = [
    {"thought_signature": "Q2lnbmF0dXJl"},  # Gemini
    {"id": "rs_1", "encrypted_content": "gAAAAB-encrypted"},  # Responses
    {"reasoning_field": "reasoning_content"},  # Chat (DeepSeek)
]
FOREIGN_CALLS = [{"thought_signature": "Y2FsbA=="}, {"id": "fc_1"}]


def next_request(body: bytes, results: bool = True) -> dict[str, Any]:
    """The next request a client sends: the streamed answer as its assistant turn."""
    content = client_content(body)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": content},
    ]
    calls = [b["id"] for b in content if b["type"] == "tool_use"]
    if calls and results:
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in calls
                ],
            }
        )
    return body_of(messages=messages)


@settings(max_examples=60, deadline=None)
@given(
    thinking=st.sampled_from(FOREIGN_THINKING),
    call=st.sampled_from(FOREIGN_CALLS),
    text=st.text(min_size=1, max_size=20),
    upstream=st.sampled_from(
        ["gemini-generate-content", "openai-responses", "gemini-interactions"]
    ),
    late=st.booleans(),
    data=st.data(),
)
def test_foreign_fidelity_comes_back_on_the_next_request_exactly(
    thinking: dict[str, Any],
    call: dict[str, Any],
    text: str,
    upstream: str,
    late: bool,
    data: st.DataObject,
) -> None:
    items = [
        {
            "type": "thinking.done",
            "thinking": data.draw(st.text(max_size=20)),
            "fidelity": thinking,
        },
        {"type": "text.done", "text": text, "fidelity": {"id": "msg_1", "phase": "final_answer"}},
        {
            "type": "tool_call.done",
            "tool_call_id": "call_7",
            "name": "get_weather",
            "arguments": data.draw(arguments),
            "fidelity": call,
        },
    ]
    cut = cutter(data)
    events = [
        *group(items[0], cut_item(items[0], cut), fidelity_at=2),
        *group(items[1], cut_item(items[1], cut), fidelity_at=0),
        # the assembler gives it last (rule C)
        *group(items[2], cut_item(items[2], cut), fidelity_at=3 if late else 0),
        stop("tool_call", USAGE),  # type: ignore[arg-type]
    ]
    body = write(events, context(upstream))

    request = decode(next_request(body))

    assistant = request.messages[1]["content_items"]
    assert assistant == [
        items[0],
        {"type": "text.done", "text": text},  # text fidelity has no Anthropic field: lost
        items[2],
    ]
    assert request.messages[2]["content_items"][0]["tool_call_id"] == "call_7"


def test_bedrock_signatures_are_written_natively_and_its_redacted_reasoning_sealed() -> None:
    redacted = {"redacted_content": "cmVkYWN0ZWQ="}
    items = [
        {"type": "thinking.done", "thinking": "Plan.", "fidelity": {"signature": "Bedrock-sig"}},
        {"type": "thinking.done", "thinking": "", "fidelity": redacted},
        {"type": "text.done", "text": "Done."},
    ]
    body = write(turn_events(items, "stop", USAGE), context("bedrock-converse-stream"))

    content = client_content(body)
    assert content[0] == {"type": "thinking", "thinking": "Plan.", "signature": "Bedrock-sig"}
    assert content[1]["type"] == "redacted_thinking"
    assert content[1]["data"].startswith("MSF1")
    assert decode(next_request(body)).messages[1]["content_items"] == items


def test_an_edited_sealed_signature_is_a_400_naming_the_block() -> None:
    items = [
        {"type": "thinking.done", "thinking": "x", "fidelity": {"thought_signature": "abc"}},
        {"type": "text.done", "text": "y"},
    ]
    request = next_request(
        write(turn_events(items, "stop", USAGE), context("gemini-generate-content"))
    )
    block = request["messages"][1]["content"][0]
    block["signature"] = (
        block["signature"][:-5]
        + ("A" if block["signature"][-5] != "A" else "B")
        + block["signature"][-4:]
    )

    error = refused(request)

    assert error.param == "messages.1.content.0.signature"
    assert "altered" in str(error)


def test_an_edited_sealed_tool_id_is_a_400_naming_it() -> None:
    items = [
        {
            "type": "tool_call.done",
            "tool_call_id": "c1",
            "name": "f",
            "arguments": {},
            "fidelity": {"id": "fc_1"},
        }
    ]
    request = next_request(
        write(turn_events(items, "tool_call", USAGE), context("openai-responses"))
    )
    block = request["messages"][1]["content"][0]
    head, token = block["id"].split("__")
    block["id"] = f"{head}__{token[:10]}{'Z' if token[10] != 'Z' else 'Y'}{token[11:]}"

    error = refused(request)

    assert error.param == "messages.1.content.0.id"


def test_a_tool_call_whose_fidelity_may_come_late_is_held_until_done() -> None:
    writer = AnthropicStreamWriter(context("gemini-generate-content"))
    writer.feed(delta({"type": "text.delta", "text": "x"}))
    writer.feed(delta({"type": "text.done", "text": "x"}))
    first = writer.feed(
        delta({"type": "tool_call.delta", "tool_call_id": "c1", "name": "f", "arguments": '{"a":'})
    )
    later = writer.feed(
        delta(
            {
                "type": "tool_call.delta",
                "tool_call_id": "",
                "name": "",
                "arguments": "1}",
                "fidelity": {"thought_signature": "s"},
            }
        )
    )
    done = writer.feed(
        delta(
            {
                "type": "tool_call.done",
                "tool_call_id": "c1",
                "name": "f",
                "arguments": {"a": 1},
                "fidelity": {"thought_signature": "s"},
            }
        )
    )

    assert first == later == []
    written = frames(b"".join(done))
    assert [name for name, _ in written] == [
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    ]
    assert written[0][1]["content_block"]["id"].startswith("c1__MSF1")
    assert written[1][1]["delta"]["partial_json"] == '{"a":1}'


def test_same_protocol_fidelity_passes_unchanged() -> None:
    items = [
        {"type": "thinking.done", "thinking": "a", "fidelity": {"signature": SIGNATURE}},
        {"type": "thinking.done", "thinking": "", "fidelity": {"redacted_thinking": "EqkE"}},
        {"type": "text.done", "text": "b"},
    ]
    body = write(turn_events(items, "stop", USAGE))
    assert client_content(body)[:2] == [
        {"type": "thinking", "thinking": "a", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": "EqkE"},
    ]


# --- the request: SPEC request → encoder → body → decode_request --------------------------------

MODELS = ["claude-sonnet-4-5", "claude-sonnet-4-6", "claude-opus-4-7"]
IMAGES = [
    "data:image/png;base64,iVBORw0KGgo=",
    "https://example.com/cat.png",
    "data:application/pdf;base64,JVBERi0xLjQ=",
    "https://example.com/paper.pdf",
]
words = st.text(min_size=1, max_size=12)


@st.composite
def spec_requests(draw: st.DrawFn) -> tuple[str, list[Any], dict[str, Any]]:
    model = draw(st.sampled_from(MODELS))
    level = draw(st.none() | st.sampled_from(THINKING_LEVELS))
    thinking_on = level not in (None, "none")
    config: dict[str, Any] = {
        "max_tokens": draw(st.integers(32000, 64000) if thinking_on else st.integers(1, 64000))
    }
    if level is not None:
        config["thinking_level"] = level
        if draw(st.booleans()):
            config["thinking_summary"] = draw(st.booleans())
    if draw(st.booleans()):
        config["system_prompt"] = draw(words)
    if not thinking_on and draw(st.booleans()):
        config["temperature"] = draw(st.floats(0, 1))
        config["top_p"] = draw(st.floats(0, 1))
    if draw(st.booleans()):
        config["stop"] = draw(st.lists(words, min_size=1, max_size=3))
    names = draw(
        st.lists(st.from_regex(r"[a-z][a-z_]{0,9}", fullmatch=True), max_size=3, unique=True)
    )
    if names:
        config["tools"] = [
            {
                "name": name,
                "description": draw(words),
                "parameters": {
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "type": "object",
                    "properties": {"q": {"type": "string"}},
                    "additionalProperties": False,
                },
            }
            for name in names
        ]
        choices = ["auto", "none"] + ([] if thinking_on else ["required", [names[0]]])
        if draw(st.booleans()):
            config["tool_choice"] = draw(st.sampled_from(choices))
        if draw(st.booleans()):
            config["parallel_tool_calls"] = False
    if draw(st.booleans()):
        config["response_format"] = {
            "type": "json_schema",
            "name": "response",
            "schema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "additionalProperties": False,  # closed, as the encoder sends it
            },
        }
    if draw(st.booleans()):
        config["prompt_caching"] = True

    messages: list[Any] = []
    pending: list[str] = []
    turns = draw(st.integers(0, 2))
    for turn in range(turns + 1):
        user: list[Any] = []
        for call_id in pending:
            result: dict[str, Any] = {
                "type": "tool_result.done",
                "tool_call_id": call_id,
                "text": draw(st.text(max_size=10)),
            }
            if draw(st.booleans()):
                result["images"] = [IMAGES[0]]
            user.append(result)
        for _ in range(draw(st.integers(0 if pending else 1, 2))):
            if draw(st.booleans()):
                user.append({"type": "text.done", "text": draw(words)})
            else:
                user.append({"type": "image_url.done", "image_url": draw(st.sampled_from(IMAGES))})
        messages.append({"role": "user", "content_items": user})
        pending = []
        if turn == turns:
            break
        assistant: list[Any] = []
        for index in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(["text", "thinking", "redacted", "call"]))
            if kind == "text":
                assistant.append({"type": "text.done", "text": draw(words)})
            elif kind == "thinking":
                assistant.append(
                    {
                        "type": "thinking.done",
                        "thinking": draw(words),
                        "fidelity": {"signature": draw(signatures)},
                    }
                )
            elif kind == "redacted":
                assistant.append(
                    {
                        "type": "thinking.done",
                        "thinking": "",
                        "fidelity": {"redacted_thinking": draw(signatures)},
                    }
                )
            else:
                call_id = f"toolu_{turn}{index}_{draw(ID_TAILS)}"
                pending.append(call_id)
                assistant.append(
                    {
                        "type": "tool_call.done",
                        "tool_call_id": call_id,
                        "name": "lookup",
                        "arguments": draw(arguments),
                    }
                )
        messages.append({"role": "assistant", "content_items": assistant})
    return model, messages, config


def expected_config(model: str, config: dict[str, Any]) -> dict[str, Any]:
    """The config decode_request gives back: the encoder's documented losses applied."""
    out = copy.deepcopy(config)
    level = config.get("thinking_level")
    thinking_on = level not in (None, "none")
    if level == "xhigh" and model == "claude-sonnet-4-6":
        out["thinking_level"] = "max"  # Claude 4.6 has no xhigh effort
    summary = config.get("thinking_summary")
    if summary is not None and not (
        thinking_on and (summary is False or model == "claude-opus-4-7")
    ):
        del out["thinking_summary"]  # nothing was sent for it
    if config.get("parallel_tool_calls") is False:
        if config.get("tool_choice") == "none":
            del out["parallel_tool_calls"]
        else:
            out.setdefault("tool_choice", "auto")
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=spec_requests())
def test_any_encoded_request_decodes_to_the_same_messages_and_config(
    request: tuple[str, list[Any], dict[str, Any]],
) -> None:
    model, messages, config = request
    body = encode_request("anthropic-messages", model, messages, config).json  # type: ignore[arg-type]

    inbound = decode(json.loads(json.dumps(body)))

    assert inbound.model == model
    assert inbound.stream is True
    assert inbound.messages == messages
    assert inbound.config == expected_config(model, config)
    assert inbound.native_fields == {}


# --- the request: field by field ----------------------------------------------------------------


def test_a_missing_max_tokens_is_a_400_as_at_anthropic() -> None:
    body = body_of()
    del body["max_tokens"]
    assert refused(body).param == "max_tokens"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ([], None),
        ({"max_tokens": 5, "messages": []}, "model"),
        (body_of(messages=[]), "messages"),
        (body_of(messages="hi"), "messages"),
        (body_of(messages=[{"role": "system", "content": "x"}]), "messages.0.role"),
        (body_of(stream="yes"), "stream"),
        (body_of(temperature=1.5), "temperature"),
        (body_of(max_tokens=0), "max_tokens"),
        (body_of(n=2), "n"),
        (body_of(frequency_penalty=0.5), "frequency_penalty"),
        (body_of(thinking={"type": "enabled", "budget_tokens": 512}), "thinking.budget_tokens"),
        (body_of(thinking={"type": "between_tools"}), "thinking.type"),
        (body_of(tool_choice={"type": "tools"}), "tool_choice.type"),
        (body_of(output_config={"format": {"type": "json_object"}}), "output_config.format.type"),
        (body_of(tools=[{"name": "f", "input_schema": {}, "colour": "red"}]), "tools.0.colour"),
    ],
)
def test_a_malformed_or_unknown_field_is_a_400_naming_it(body: Any, param: str | None) -> None:
    assert refused(body).param == param


def test_the_usual_fields_map_to_the_config() -> None:
    inbound = decode(
        body_of(
            system=[{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
            temperature=0.3,
            top_p=0.9,
            stop_sequences=["END"],
            stream=True,
        )
    )
    assert inbound.stream is True
    assert inbound.config == {
        "max_tokens": 1024,
        "system_prompt": "Be brief.\n\nBe kind.",
        "temperature": 0.3,
        "top_p": 0.9,
        "stop": ["END"],
    }


@pytest.mark.parametrize(
    ("budget", "level"),
    [
        (1024, "low"),
        (2000, "low"),
        (3000, "medium"),
        (10000, "medium"),
        (10300, "high"),
        (31999, "max"),
        (100000, "max"),
    ],
)
def test_a_thinking_budget_maps_to_the_nearest_level(budget: int, level: str) -> None:
    assert nearest_level(budget) == level
    inbound = decode(body_of(thinking={"type": "enabled", "budget_tokens": budget}))
    assert inbound.config["thinking_level"] == level


@pytest.mark.parametrize(
    ("thinking", "output_config", "expected"),
    [
        ({"type": "adaptive"}, None, {"thinking_level": "high"}),
        ({"type": "adaptive"}, {"effort": "low"}, {"thinking_level": "low"}),
        ({"type": "disabled"}, None, {"thinking_level": "none"}),
        (
            {"type": "enabled", "budget_tokens": 4096, "display": "omitted"},
            None,
            {"thinking_level": "medium", "thinking_summary": False},
        ),
        (
            {"type": "adaptive", "display": "summarized"},
            None,
            {"thinking_level": "high", "thinking_summary": True},
        ),
    ],
)
def test_thinking_maps_to_a_level_and_its_display_to_thinking_summary(
    thinking: dict[str, Any], output_config: Any, expected: dict[str, Any]
) -> None:
    body = body_of(thinking=thinking)
    if output_config is not None:
        body["output_config"] = output_config
    config = decode(body).config
    assert {k: config[k] for k in ("thinking_level", "thinking_summary") if k in config} == expected


def test_an_effort_without_adaptive_thinking_goes_to_an_anthropic_upstream_only() -> None:
    inbound = decode(body_of(output_config={"effort": "low"}))
    assert "thinking_level" not in inbound.config
    assert inbound.native_fields == {"output_config": {"effort": "low"}}


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ({"type": "auto"}, {"tool_choice": "auto"}),
        ({"type": "any"}, {"tool_choice": "required"}),
        ({"type": "none"}, {"tool_choice": "none"}),
        ({"type": "tool", "name": "f"}, {"tool_choice": ["f"]}),
        (
            {"type": "auto", "disable_parallel_tool_use": True},
            {"tool_choice": "auto", "parallel_tool_calls": False},
        ),
    ],
)
def test_tool_choice_maps_to_the_config(choice: dict[str, Any], expected: dict[str, Any]) -> None:
    tools = [{"name": "f", "input_schema": {"type": "object"}}]
    config = decode(body_of(tools=tools, tool_choice=choice)).config
    assert {k: config[k] for k in ("tool_choice", "parallel_tool_calls") if k in config} == expected


def test_a_custom_tool_keeps_its_schema_as_given_and_its_strictness() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {},
    }
    tools = [
        {
            "type": "custom",
            "name": "Bash",
            "description": "Run it.",
            "input_schema": schema,
            "strict": True,
        }
    ]
    assert decode(body_of(tools=tools)).config["tools"] == [
        {"name": "Bash", "description": "Run it.", "parameters": schema, "strict": True}
    ]


def test_server_tools_go_native_and_are_named_as_required() -> None:
    tools = [
        {"name": "f", "input_schema": {"type": "object"}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    ]
    inbound = decode(body_of(tools=tools))
    assert "tools" not in inbound.config  # extra_body may add the tools, never replace them
    assert inbound.native_fields["tools"] == tools
    assert inbound.native_required == ("tools.1 (web_search_20250305)",)


def test_native_fields_pass_the_servers_policy_and_reach_an_anthropic_upstreams_body() -> None:
    tools = [
        {"name": "f", "input_schema": {"type": "object"}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    ]
    edits = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
    call = InboundCall(GENERATE.route, headers={"anthropic-beta": "context-management-2025-06-27"})
    inbound = decode(
        body_of(
            tools=tools,
            tool_choice={"type": "tool", "name": "web_search"},
            top_k=4,
            context_management=edits,
            output_config={"effort": "low"},
        ),
        call,
    )
    # what the server does for a same-protocol upstream (server/gateway.py `_config`)
    config: Any = {**inbound.config, "extra_body": dict(inbound.native_fields)}
    entry = ModelEntry("claude", "claude-sonnet-4-5", "anthropic", "anthropic-messages")
    check_upstream_request(entry, inbound.messages, config)

    request = encode_request("anthropic-messages", "claude-sonnet-4-5", inbound.messages, config)

    assert request.json["tools"] == tools
    assert request.json["tool_choice"] == {"type": "tool", "name": "web_search"}
    assert request.json["top_k"] == 4
    assert request.json["context_management"] == edits
    assert request.json["output_config"] == {"effort": "low"}
    assert request.headers["anthropic-beta"] == "context-management-2025-06-27"


def test_anthropic_only_custom_tool_keys_are_ignored() -> None:
    tools = [{"name": "f", "input_schema": {}, "defer_loading": True, "input_examples": [{}]}]
    inbound = decode(body_of(tools=tools))
    assert inbound.config["tools"] == [{"name": "f", "parameters": {}}]
    assert inbound.ignored == ("defer_loading", "input_examples")


def test_anthropic_only_fields_go_native_and_documented_ones_are_ignored() -> None:
    edits = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
    inbound = decode(
        body_of(top_k=5, context_management=edits, metadata={"user_id": "u"}, service_tier="auto")
    )
    assert inbound.native_fields == {"top_k": 5, "context_management": edits}
    assert inbound.ignored == ("metadata", "service_tier")
    assert "top_k" not in inbound.config


def test_cache_control_anywhere_turns_prompt_caching_on() -> None:
    cached = {"type": "ephemeral"}
    for body in (
        body_of(system=[{"type": "text", "text": "s", "cache_control": cached}]),
        body_of(
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "x", "cache_control": cached}],
                }
            ]
        ),
        body_of(tools=[{"name": "f", "input_schema": {}, "cache_control": cached}]),
        body_of(cache_control=cached),
    ):
        assert decode(body).config["prompt_caching"] is True


@pytest.mark.parametrize("field", ["output_config", "output_format"])
def test_a_structured_output_format_becomes_response_format(field: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    value = {"type": "json_schema", "schema": schema}
    body = body_of(**{field: {"format": value} if field == "output_config" else value})
    assert decode(body).config["response_format"] == {
        "type": "json_schema",
        "name": "response",
        "schema": schema,
    }


def test_the_beta_header_goes_to_an_anthropic_upstream_only() -> None:
    call = InboundCall(
        GENERATE.route,
        headers={
            "anthropic-beta": "context-management-2025-06-27",
            "anthropic-version": "2099-01-01",
        },
    )
    inbound = decode(body_of(), call)
    assert inbound.upstream_headers == {"anthropic-beta": "context-management-2025-06-27"}
    assert inbound.native_fields == {"betas": ["context-management-2025-06-27"]}


def test_count_tokens_takes_the_same_body_without_max_tokens() -> None:
    body = body_of()
    del body["max_tokens"]
    inbound = decode(body, COUNT_TOKENS)
    assert inbound.stream is False
    assert "max_tokens" not in inbound.config
    assert refused(body_of(), COUNT_TOKENS).param == "max_tokens"
    assert count_tokens_body(42) == {"input_tokens": 42}


def test_user_content_blocks_become_items() -> None:
    content = [
        {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": [
                {"type": "text", "text": "sunny"},
                {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}},
            ],
        },
        {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": True},
        {"type": "text", "text": "Look:"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"},
        },
    ]
    items = decode(body_of(messages=[{"role": "user", "content": content}])).messages[0][
        "content_items"
    ]
    assert items == [
        {
            "type": "tool_result.done",
            "tool_call_id": "t1",
            "text": "sunny",
            "images": ["https://x.test/a.png"],
        },
        {"type": "tool_result.done", "tool_call_id": "t2", "text": "error: boom"},
        {"type": "text.done", "text": "Look:"},
        {"type": "image_url.done", "image_url": "data:image/png;base64,iVBO"},
        {"type": "image_url.done", "image_url": "data:application/pdf;base64,JVBE"},
    ]


@pytest.mark.parametrize(
    ("block", "param"),
    [
        (
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "x"},
            },
            "messages.0.content.0.source.type",
        ),
        (
            {"type": "image", "source": {"type": "file", "file_id": "file_1"}},
            "messages.0.content.0.source.type",
        ),
        (
            {"type": "image", "source": {"type": "url", "url": "file:///etc/passwd"}},
            "messages.0.content.0.source.url",
        ),
        (
            {"type": "search_result", "source": "s", "title": "t", "content": []},
            "messages.0.content.0.type",
        ),
        ({"type": "tool_use", "id": "t", "name": "f", "input": {}}, "messages.0.content.0.type"),
    ],
)
def test_a_user_block_this_gateway_cannot_carry_is_a_400(block: dict[str, Any], param: str) -> None:
    assert refused(body_of(messages=[{"role": "user", "content": [block]}])).param == param


def test_a_server_tool_block_in_the_history_is_a_400() -> None:
    block = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    messages = [{"role": "user", "content": "x"}, {"role": "assistant", "content": [block]}]
    assert refused(body_of(messages=messages)).param == "messages.1.content.0.type"


def test_claude_codes_first_request_decodes() -> None:
    if not AGENT_REQUESTS.is_file():
        pytest.skip("../shared/clients/agent-requests.json is not here")
    shape = json.loads(AGENT_REQUESTS.read_text())["claude-code"]
    body = _filled({**shape["body"], "system": shape["system"], "messages": shape["messages"]})
    call = InboundCall(
        GENERATE.route,
        headers={"anthropic-beta": shape["anthropic-beta"], "anthropic-version": "2023-06-01"},
    )

    inbound = decode(body, call)

    assert inbound.model == "claude-sonnet-4-5"
    assert inbound.stream is True
    assert inbound.config["thinking_level"] == "max"  # budget 31999
    assert inbound.config["thinking_summary"] is False  # display: omitted
    assert inbound.config["prompt_caching"] is True
    assert inbound.config["tools"][0]["parameters"]["$schema"] == "text"
    assert inbound.native_fields == {
        "context_management": body["context_management"],
        "betas": shape["anthropic-beta"].split(","),
    }
    assert inbound.ignored == ("metadata",)
    assert inbound.upstream_headers == {"anthropic-beta": shape["anthropic-beta"]}


def _filled(value: Any, key: str = "") -> Any:
    """The agent-requests shape with its placeholders made concrete."""
    if isinstance(value, dict):
        return {k: _filled(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, key) for v in value]
    if value == "str":
        return "text"
    if value == "int":
        return {"max_tokens": 32000, "budget_tokens": 31999}[key]
    if value == "bool":
        return key == "stream"
    if value == "{…}":
        return {"type": "ephemeral"} if key == "cache_control" else {}
    return value


# --- keys, models, errors, the final body ------------------------------------------------------


def test_the_key_is_read_as_the_sdks_send_it() -> None:
    assert read_key({"x-api-key": "k1", "authorization": "Bearer k2"}, {}) == "k1"
    assert read_key({"authorization": "Bearer k2"}, {}) == "k2"
    assert read_key({"authorization": "Basic k3"}, {}) is None
    assert read_key({}, {"key": "k4"}) is None


def test_the_protocol_offers_this_gateway_and_its_routes() -> None:
    assert protocol_named("anthropic-messages").gateway is GATEWAY
    assert [(r.method, r.path, r.kind, r.header) for r in ROUTES] == [
        ("POST", "/v1/messages", "generate", None),
        ("POST", "/v1/messages/count_tokens", "count_tokens", None),
        ("GET", "/v1/models", "models", "anthropic-version"),  # OpenAI's path, by its header
    ]


def test_the_models_list_has_anthropics_shape() -> None:
    body = models_body(
        [ServedModel("claude-a", "anthropic", 1_700_000_000), ServedModel("gpt-b", "openai")]
    )
    assert body == {
        "data": [
            {
                "type": "model",
                "id": "claude-a",
                "display_name": "claude-a",
                "created_at": "2023-11-14T22:13:20Z",
            },
            {
                "type": "model",
                "id": "gpt-b",
                "display_name": "gpt-b",
                "created_at": "1970-01-01T00:00:00Z",
            },
        ],
        "has_more": False,
        "first_id": "claude-a",
        "last_id": "gpt-b",
    }


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (404, "not_found_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (502, "api_error"),
        (529, "overloaded_error"),
    ],
)
def test_error_bodies_have_anthropics_type_for_the_status(status: int, kind: str) -> None:
    assert error_body(GatewayError(status, "X", "went wrong")) == {
        "type": "error",
        "error": {"type": kind, "message": "went wrong"},
    }


def test_the_emulator_writes_the_same_error_bytes_as_before() -> None:
    assert emulator_error_body("anthropic-messages", 429, "slow down") == (
        b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
    )


def test_the_final_body_is_anthropics_message() -> None:
    message = {
        "role": "assistant",
        "content_items": [
            {"type": "thinking.done", "thinking": "Hm.", "fidelity": {"signature": SIGNATURE}},
            {"type": "text.done", "text": "Hi"},
            {
                "type": "tool_call.done",
                "tool_call_id": "c1",
                "name": "f",
                "arguments": {"a": 1},
                "fidelity": {"id": "fc_1"},
            },
        ],
        "usage_metadata": USAGE,
        "finish_reason": "tool_call",
    }
    body = final_body(context("openai-responses"), message)  # type: ignore[arg-type]

    assert body["id"] == "msg_gw_0123abcd"
    assert body["stop_reason"] == "tool_use"
    assert body["content"][:2] == [
        {"type": "thinking", "thinking": "Hm.", "signature": SIGNATURE},
        {"type": "text", "text": "Hi"},
    ]
    assert body["content"][2]["id"].startswith("c1__MSF1")
    assert body["usage"]["output_tokens"] == 10


def test_a_final_body_with_an_image_is_refused() -> None:
    message = {
        "role": "assistant",
        "content_items": [{"type": "inline_data.done", "data": b"x", "mime_type": "image/png"}],
        "finish_reason": "stop",
    }
    with pytest.raises(UnsupportedOutputError, match="inline_data"):
        final_body(context(), message)  # type: ignore[arg-type]


# --- the official SDK over loopback HTTP ------------------------------------------------------


def sdk(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="x", max_retries=0)


WEATHER: Any = {
    "name": "get_weather",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def test_the_sdks_stream_helper_reads_text_thinking_tool_use_finish_and_usage() -> None:
    items = [
        {
            "type": "thinking.done",
            "thinking": "They want weather.",
            "fidelity": {"signature": SIGNATURE},
        },
        {"type": "text.done", "text": "Let me check."},
        {
            "type": "tool_call.done",
            "tool_call_id": "toolu_01A",
            "name": "get_weather",
            "arguments": {"city": "Lisbon"},
        },
    ]
    body = write(turn_events(items, "tool_call", USAGE, lambda s: [s[:3], s[3:]]))
    with loopback() as server:
        server.stream(body)
        with sdk(server.url).messages.stream(
            model="claude-sonnet-4-5",
            max_tokens=1024,
            messages=[{"role": "user", "content": "Weather?"}],
            tools=[WEATHER],
        ) as stream:
            text = "".join(stream.text_stream)
            final = stream.get_final_message()

    assert text == "Let me check."
    assert [block.type for block in final.content] == ["thinking", "text", "tool_use"]
    thinking, _, call = final.content
    assert (thinking.thinking, thinking.signature) == ("They want weather.", SIGNATURE)  # type: ignore[union-attr]
    assert (call.id, call.name, call.input) == ("toolu_01A", "get_weather", {"city": "Lisbon"})  # type: ignore[union-attr]
    assert final.stop_reason == "tool_use"
    assert final.usage.input_tokens == 11
    assert final.usage.cache_read_input_tokens == 5
    assert final.usage.output_tokens == 10
    assert final.usage.output_tokens_details is not None
    assert final.usage.output_tokens_details.thinking_tokens == 3


def test_foreign_fidelity_rides_the_sdks_own_next_request_and_comes_back() -> None:
    thinking = {"id": "rs_9", "encrypted_content": "gAAAA-opaque"}
    call = {"thought_signature": "c2lnbmVk"}
    items = [
        {"type": "thinking.done", "thinking": "", "fidelity": thinking},  # no summary text
        {
            "type": "tool_call.done",
            "tool_call_id": "call_1",
            "name": "get_weather",
            "arguments": {"city": "Oslo"},
            "fidelity": call,
        },
    ]
    body = write(turn_events(items, "tool_call", USAGE), context("gemini-generate-content"))
    answer = {
        "role": "assistant",
        "content_items": [{"type": "text.done", "text": "Cold."}],
        "usage_metadata": USAGE,
        "finish_reason": "stop",
    }
    with loopback() as server:
        server.stream(body)
        server.json(200, final_body(context("gemini-generate-content"), answer))  # type: ignore[arg-type]
        client = sdk(server.url)
        history: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
        with client.messages.stream(
            model="m", max_tokens=1024, messages=history, tools=[WEATHER]
        ) as stream:
            first = stream.get_final_message()
        history.append(
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in first.content],
            }
        )
        tool_use: Any = first.content[1]
        result = {"type": "tool_result", "tool_use_id": tool_use.id, "content": "-3 C"}
        history.append({"role": "user", "content": [result]})
        second = client.messages.create(
            model="m", max_tokens=1024, messages=history, tools=[WEATHER]
        )
        headers, sent = server.requests[-1].headers, server.requests[-1].body

    assert [b.type for b in first.content] == ["thinking", "tool_use"]  # an empty thinking is kept
    assert second.content[0].text == "Cold."  # type: ignore[union-attr]
    assert second.stop_reason == "end_turn"
    assert read_key(headers, {}) == "x"  # as this SDK sends its api_key
    inbound = decode(sent)
    assert inbound.messages[1]["content_items"] == items
    assert inbound.messages[2]["content_items"] == [
        {"type": "tool_result.done", "tool_call_id": "call_1", "text": "-3 C"}
    ]


def test_a_429_is_the_sdks_rate_limit_error_with_retry_after() -> None:
    error = GatewayError(429, "RateLimitError", "slow down", retry_after=2)
    with loopback() as server:
        server.json(429, error_body(error), error.headers)
        with pytest.raises(anthropic.RateLimitError) as raised:
            sdk(server.url).messages.create(
                model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
            )

    assert raised.value.status_code == 429
    assert raised.value.response.headers["retry-after"] == "2"
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "slow down"},
    }


def test_an_error_mid_stream_makes_the_sdk_raise_after_the_text_before_it() -> None:
    writer = AnthropicStreamWriter(context())
    body = b"".join(writer.feed(delta({"type": "text.delta", "text": "Once upon"})))
    body += b"".join(writer.fail(GatewayError(529, "OverloadedError", "Overloaded")))
    seen: list[str] = []
    with loopback() as server:
        server.stream(body)
        # the SDK raises its status error with the stream's own status (200): APIStatusError
        client = sdk(server.url)
        messages: Any = [{"role": "user", "content": "x"}]
        with (
            pytest.raises(anthropic.APIStatusError) as raised,
            client.messages.stream(model="m", max_tokens=5, messages=messages) as stream,
        ):
            seen.extend(stream.text_stream)

    assert seen == ["Once upon"]
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_the_sdk_reads_an_unknown_finish_as_a_refusal() -> None:
    body = write(turn_events([{"type": "text.done", "text": "Blocked."}], "unknown", USAGE))
    with loopback() as server:
        server.stream(body)
        with sdk(server.url).messages.stream(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        ) as stream:
            final = stream.get_final_message()
    assert final.stop_reason == "refusal"


def test_the_sdks_count_tokens_body_decodes_and_reads_the_answer() -> None:
    with loopback() as server:
        server.json(200, count_tokens_body(42))
        counted = sdk(server.url).messages.count_tokens(
            model="claude-sonnet-4-5",
            system="Be brief.",
            messages=[{"role": "user", "content": "Hi"}],
            tools=[WEATHER],
        )
        path, sent = server.requests[-1].path, server.requests[-1].body

    assert counted.input_tokens == 42
    assert path == "/v1/messages/count_tokens"
    inbound = decode(sent, COUNT_TOKENS)
    assert inbound.config["system_prompt"] == "Be brief."
    assert inbound.config["tools"][0]["name"] == "get_weather"
