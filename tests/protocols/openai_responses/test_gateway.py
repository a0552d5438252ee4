"""The OpenAI Responses gateway wire (protocols/openai_responses: inbound.py, writer.py).

Events → writer → bytes → the openai-responses StreamDecoder gives the same turn back; the items
a client sends back next turn → decode_request gives the same items and fidelity (from any
upstream); a request the encoder writes → decode_request gives the SPEC request back; and the
official `openai` SDK parses what the writer writes, over real loopback HTTP.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import openai
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream import ProviderError
from modelstream.protocols import encode_request
from modelstream.protocols.common.fidelity_seal import FidelitySeal
from modelstream.protocols.common.gateway import (
    GatewayError,
    GatewayRoute,
    InboundCall,
    InboundRequestError,
    ServedModel,
)
from modelstream.protocols.common.options import response_format_spec
from modelstream.protocols.openai_responses.emulator import EMULATOR
from modelstream.protocols.openai_responses.gateway import GATEWAY
from modelstream.protocols.openai_responses.inbound import split_call_id
from modelstream.protocols.openai_responses.writer import is_generated_id
from support import decode_chunks
from support.gateway import (
    call_arguments,
    delta,
    draw_pieces,
    group,
    random_cuts,
    stop,
    strict_objects,
    text,
    thinking,
    tool_call,
    words,
)
from support.gateway_openai_responses import (
    MODEL,
    RESPONSE_ID,
    SEAL,
    context,
    decode,
    frames_of,
    loopback,
    replayed_items,
    request,
    turn,
    write,
)

USAGE = {"cached_tokens": 5, "prompt_tokens": 20, "thoughts_tokens": 7, "response_tokens": 11}
UPSTREAMS = [
    "openai-responses",
    "openai-chat",
    "anthropic-messages",
    "gemini-generate-content",
    "gemini-interactions",
    "bedrock-converse-stream",
]
STREAMED_CALLS = {"openai-chat", "anthropic-messages", "bedrock-converse-stream"}
FOREIGN_THINKING = [
    {"thought_signature": "CiQBVKhc7vB2"},
    {"signature": "EqQBCkYIBxgCKkB"},
    {"redacted_thinking": "EmwKAhgBEgy3va"},
    {"reasoning_field": "reasoning_content"},
    {"id": "rs_68a1", "encrypted_content": "gAAAAABo-encrypted=="},  # seen from another wire
]
USER = {"role": "user", "content": "hi"}


# --- random turns -----------------------------------------------------------------------------


@st.composite
def turns(draw: Any) -> dict[str, Any]:
    """A random turn from a random upstream: its done items (fidelity as that upstream's decoder
    writes it: a Responses upstream's items come in whole output items, several parts sharing
    one id), its events, finish and usage."""
    upstream = draw(st.sampled_from(UPSTREAMS))
    native = upstream == "openai-responses"
    items: list[dict[str, Any]] = []
    for unit in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["text", "thinking", "tool_call"]))
        if kind == "text":
            if native:  # one message item: parts sharing its id (and phase)
                base: dict[str, Any] = {"id": f"msg_{unit}"}
                if draw(st.booleans()):
                    base["phase"] = draw(st.sampled_from(["commentary", "final_answer"]))
                for _ in range(draw(st.integers(1, 2))):
                    refusal = {"refusal": True} if draw(st.booleans()) else {}
                    items.append(text(draw(words), {**base, **refusal}))
            else:
                fidelity = draw(
                    st.sampled_from([None, {"refusal": True}, {"thought_signature": "Tx9"}])
                )
                items.append(text(draw(words), fidelity))
        elif kind == "thinking":
            if native and draw(st.booleans()):  # one reasoning item
                base = {"id": f"rs_{unit}"}
                encrypted = draw(st.sampled_from([None, "gAAAAABenc=="]))
                if draw(st.booleans()):  # encrypted only: one empty item, no part
                    items.append(thinking("", {**base, "encrypted_content": "gAAAAAB=="}))
                    continue
                part = draw(st.sampled_from(["summary_text", "reasoning_text"]))
                count = draw(st.integers(1, 3))
                for position in range(count):
                    fidelity = {**base, "part": part}
                    if encrypted and position == count - 1:
                        fidelity["encrypted_content"] = encrypted
                    items.append(thinking(draw(words), fidelity))
            else:
                # a Responses upstream's own reasoning with text always names its part (above)
                foreign = FOREIGN_THINKING[:-1] if native else FOREIGN_THINKING
                fidelity = draw(st.sampled_from([None, *foreign]))
                value = draw(words if fidelity is None else st.one_of(st.just(""), words))
                items.append(thinking(value, fidelity))
        else:
            fidelity = None
            if upstream not in STREAMED_CALLS:
                options = [None, {"id": f"fc_{unit}"}] if native else [None]
                fidelity = draw(st.sampled_from([*options, {"thought_signature": "Cs8BAY"}]))
            name = draw(st.sampled_from(["get_weather", "search", "f"]))
            items.append(tool_call(f"call_{unit}x", name, draw(call_arguments), fidelity))
    if all(i["type"] == "thinking.done" for i in items):  # a turn of thinking only is empty
        items.append(text(draw(words)))
    calls = any(i["type"] == "tool_call.done" for i in items)
    finish = draw(st.sampled_from(["tool_call" if calls else "stop", "length", "unknown"]))
    usage = {key: draw(st.one_of(st.none(), st.integers(0, 10**6))) for key in USAGE}
    events: list[Any] = []
    for item in items:
        grown = item.get("text", item.get("thinking"))
        pieces = None if grown is None else draw_pieces(draw, grown)
        if item["type"] == "tool_call.done":
            pieces = draw_pieces(draw, json.dumps(item["arguments"]))
        events += group(item, pieces, fidelity_at=0 if draw(st.booleans()) else None)
    events.append(stop(finish, usage))  # type: ignore[arg-type]
    return {
        "upstream": upstream,
        "items": items,
        "events": events,
        "finish": finish,
        "usage": usage,
        "seed": draw(st.integers(0, 2**32)),
    }


def _counted(usage: dict[str, int | None]) -> dict[str, int | None]:
    """Usage as the wire carries it back: unknown counts are 0; wholly unknown stays unknown."""
    if all(value is None for value in usage.values()):
        return usage
    return {key: value or 0 for key, value in usage.items()}


# --- writer → bytes → the Responses stream decoder ---------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns())
def test_any_turn_written_decodes_to_the_same_turn(case: dict[str, Any]) -> None:
    """Kinds, texts, names, arguments, finish and usage come back; the stream decoder sees the
    generated ids; thinking fidelity is sealed in encrypted_content and opens to the original;
    a held call's foreign fidelity is the call_id's suffix. Documented losses: phase and other
    text fidelity (only refusal is in the stream), unknown usage counts read as 0."""
    upstream = case["upstream"]
    body = write(case["events"], context(upstream))
    decoded = decode_chunks("openai-responses", random_cuts(body, random.Random(case["seed"])))
    assert decoded.error is None, decoded.error
    assert decoded.stop is not None
    items = decoded.done_items
    assert len(items) == len(case["items"])
    for got, want in zip(items, case["items"], strict=True):
        assert got["type"] == want["type"]
        fidelity = got.get("fidelity", {})
        original = want.get("fidelity") or {}
        if want["type"] == "text.done":
            assert got["text"] == want["text"]
            assert is_generated_id(fidelity["id"])
            assert fidelity.get("refusal", False) == original.get("refusal", False)
        elif want["type"] == "thinking.done":
            assert got["thinking"] == want["thinking"]
            assert is_generated_id(fidelity["id"])
            if original:
                assert SEAL.open(fidelity["encrypted_content"]) == original
            else:
                assert "encrypted_content" not in fidelity
        else:
            assert (got["name"], got["arguments"]) == (want["name"], want["arguments"])
            call_id, token = split_call_id(got["tool_call_id"])
            assert call_id == want["tool_call_id"]
            if upstream == "openai-responses" and "id" in original:
                assert fidelity == original and token is None
            elif original:
                assert token is not None and SEAL.open(token) == original
            else:
                assert token is None and is_generated_id(fidelity["id"])
    assert decoded.stop["finish_reason"] == case["finish"]
    assert decoded.stop["usage_metadata"] == _counted(case["usage"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns(), st.booleans())
def test_the_items_a_client_sends_back_carry_their_fidelity_home(
    case: dict[str, Any], terminal: bool
) -> None:
    """The next request holds the turn's output items, as the SDK's final response has them
    (the terminal response object) or as Codex collected them (each `output_item.done`): the
    inbound decoder gives the same items with their fidelity. Documented loss, streamed items
    only: a message's fidelity other than refusal (its generated id is all it carries)."""
    body = write(case["events"], context(case["upstream"]))
    inbound = decode(request(USER, *replayed_items(body, terminal=terminal)))
    assert [m["role"] for m in inbound.messages] == ["user", "assistant"]
    expected = copy.deepcopy(case["items"])
    if not terminal:
        for item in expected:
            if item["type"] == "text.done":
                refusal = item.get("fidelity", {}).get("refusal")
                item.pop("fidelity", None)
                if refusal:
                    item["fidelity"] = {"refusal": True}
    assert inbound.messages[1]["content_items"] == expected


# --- the writer, frame by frame -----------------------------------------------------------------


def test_frames_are_numbered_from_zero_by_their_position() -> None:
    body = write(turn(thinking("Hm.", {"signature": "s"}), text("Hi"), tool_call("c1", "f", {})))
    numbers = [data["sequence_number"] for _, data in frames_of(body)]
    assert numbers == list(range(len(numbers)))


def test_a_text_turn_is_written_as_openai_streams_it() -> None:
    body = write(turn(text("Hello"), usage=USAGE), context("anthropic-messages"))
    names = [name for name, _ in frames_of(body)]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    created = frames_of(body)[0][1]["response"]
    assert created["id"] == RESPONSE_ID and created["object"] == "response"
    assert (created["status"], created["output"], created["usage"]) == ("in_progress", [], None)
    completed = frames_of(body)[-1][1]["response"]
    assert completed["status"] == "completed"
    assert completed["output"][0]["content"][0]["text"] == "Hello"
    assert completed["usage"] == {
        "input_tokens": 25,
        "input_tokens_details": {"cached_tokens": 5},
        "output_tokens": 18,
        "output_tokens_details": {"reasoning_tokens": 7},
        "total_tokens": 43,
    }


def test_the_same_events_give_the_same_bytes() -> None:
    events = turn(thinking("x", {"signature": "s"}), text("y"), tool_call("c", "f", {"a": 1}))
    assert write(events, context("gemini-generate-content")) == write(
        events, context("gemini-generate-content")
    )


@pytest.mark.parametrize(
    ("finish", "reason"), [("length", "max_output_tokens"), ("unknown", "content_filter")]
)
def test_a_turn_cut_short_ends_incomplete(finish: str, reason: str) -> None:
    name, data = frames_of(write(turn(text("Part"), finish=finish)))[-1]
    assert name == "response.incomplete"
    assert data["response"]["status"] == "incomplete"
    assert data["response"]["incomplete_details"] == {"reason": reason}


def test_wholly_unknown_usage_is_null_and_partial_usage_counts_unknown_as_zero() -> None:
    assert frames_of(write(turn(text("a"))))[-1][1]["response"]["usage"] is None
    usage = {
        "cached_tokens": None,
        "prompt_tokens": 9,
        "thoughts_tokens": None,
        "response_tokens": 4,
    }
    written = frames_of(write(turn(text("a"), usage=usage)))[-1][1]["response"]["usage"]
    assert (written["input_tokens"], written["output_tokens"], written["total_tokens"]) == (
        9,
        4,
        13,
    )


def test_a_failure_mid_text_writes_error_then_response_failed_with_the_output_so_far() -> None:
    writer = GATEWAY.writer(context("anthropic-messages"))
    frames: list[bytes] = []
    for item in group(text("Done.")) + group(text("Half way"))[:1]:
        frames += writer.feed(item)
    error = GatewayError(429, "RateLimitError", "slow down", retry_after=2)
    frames += writer.fail(error)
    assert writer.feed(stop()) == [] and writer.fail(error) == []
    parsed = frames_of(b"".join(frames))
    assert [name for name, _ in parsed[-2:]] == ["error", "response.failed"]
    assert parsed[-2][1]["error"] == {
        "message": "slow down",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    failed = parsed[-1][1]["response"]
    assert failed["status"] == "failed"
    assert failed["error"] == {
        "code": "rate_limit_exceeded",
        "message": "slow down Please try again in 2s.",
    }
    assert [item["status"] for item in failed["output"]] == ["completed", "incomplete"]
    assert failed["output"][1]["content"][0]["text"] == "Half"
    done = [d["item"]["id"] for n, d in parsed if n == "response.output_item.done"]
    assert done == [failed["output"][0]["id"]]  # the open item is never finished
    decoded = decode_chunks("openai-responses", [b"".join(frames)])
    assert isinstance(decoded.error, ProviderError)


def test_a_failure_before_any_event_still_opens_the_response() -> None:
    writer = GATEWAY.writer(context())
    error = GatewayError(400, "ContextWindowExceededError", "too long")
    names = [name for name, _ in frames_of(b"".join(writer.fail(error)))]
    assert names == ["response.created", "response.in_progress", "error", "response.failed"]
    failed = frames_of(b"".join(GATEWAY.writer(context()).fail(error)))[-1][1]["response"]
    assert failed["error"]["code"] == "context_length_exceeded"  # what Codex acts on


@pytest.mark.parametrize(
    ("item", "named"),
    [
        ({"type": "inline_data.delta", "data": b"\x00\x01", "mime_type": "audio/pcm"}, "audio/pcm"),
        ({"type": "inline_thinking.delta", "data": b"\x89PNG", "mime_type": "image/png"}, "inline"),
        ({"type": "embedding.delta", "embedding": [0.5]}, "embedding"),
    ],
)
def test_an_item_the_wire_cannot_carry_fails_the_stream_naming_it(
    item: dict[str, Any], named: str
) -> None:
    writer = GATEWAY.writer(context("gemini-generate-content"))
    frames = writer.feed(delta({"type": "text.delta", "text": "a"}))
    frames += writer.feed(delta({"type": "text.done", "text": "a"}))
    frames += writer.feed(delta(item))
    name, data = frames_of(b"".join(frames))[-1]
    assert name == "response.failed"
    assert named in data["response"]["error"]["message"]
    assert writer.feed(stop()) == []


def test_an_image_is_an_image_generation_call_written_whole() -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
    image = {"type": "inline_data.done", "data": png, "mime_type": "image/png"}
    events = [
        delta({"type": "inline_data.delta", "data": png[:10], "mime_type": "image/png"}),
        delta({"type": "inline_data.delta", "data": png[10:], "mime_type": "image/png"}),
        delta({**image, "fidelity": {"thought_signature": "img"}}),
        *group(text("Here it is.")),
        stop(),
    ]
    body = write(events, context("gemini-generate-content"))
    decoded = decode_chunks("openai-responses", [body])
    assert decoded.done_items[0]["data"] == png
    assert decoded.done_items[0]["mime_type"] == "image/png"
    back = decode(request(USER, *replayed_items(body, terminal=False)))
    assert back.messages[1]["content_items"][0] == {
        **image,
        "fidelity": {"thought_signature": "img"},
    }


def test_a_refusal_ends_as_a_refusal_part() -> None:
    body = write(turn(text("I can't help with that.", {"refusal": True})), context("openai-chat"))
    done = next(d for n, d in frames_of(body) if n == "response.content_part.done")
    assert done["part"] == {"type": "refusal", "refusal": "I can't help with that."}
    assert [n for n, _ in frames_of(body)].count("response.refusal.done") == 1


def test_calls_from_an_upstream_without_call_fidelity_stream_their_arguments() -> None:
    events = group(tool_call("toolu_1", "f", {"path": "a.txt"}), ['{"path": ', '"a.txt"}'])
    writer = GATEWAY.writer(context("anthropic-messages"))
    first = writer.feed(events[0])
    names = [name for name, _ in frames_of(b"".join(first))]
    assert names[-2:] == ["response.output_item.added", "response.function_call_arguments.delta"]


def test_calls_from_a_gemini_upstream_are_written_whole_with_their_signature() -> None:
    call = tool_call("call_0", "f", {"q": 1}, {"thought_signature": "sig"})
    events = group(call)
    writer = GATEWAY.writer(context("gemini-generate-content"))
    started = frames_of(b"".join(writer.feed(events[0])))
    assert [name for name, _ in started] == ["response.created", "response.in_progress"]
    assert [writer.feed(e) for e in events[1:-1]] == [[]] * (len(events) - 2)
    written = frames_of(b"".join(writer.feed(events[-1])))
    added = written[0][1]["item"]
    assert added["call_id"].startswith("call_0.MSF1")
    assert written[-1][1]["item"]["call_id"] == added["call_id"]


def test_a_namespaced_tool_is_called_in_its_namespace() -> None:
    ctx = context(
        "anthropic-messages", tool_namespaces={"get_goal": ["multi_agent_v1", "get_goal"]}
    )
    body = write(turn(tool_call("toolu_1", "get_goal", {}), finish="tool_call"), ctx)
    done = next(d["item"] for n, d in frames_of(body) if n == "response.output_item.done")
    assert (done["namespace"], done["name"]) == ("multi_agent_v1", "get_goal")


def test_a_responses_upstream_has_its_own_items_in_the_terminal_response() -> None:
    items = [
        thinking("One.", {"id": "rs_1", "part": "summary_text"}),
        thinking("Two.", {"id": "rs_1", "part": "summary_text", "encrypted_content": "gAAA=="}),
        text("Hi", {"id": "msg_1", "phase": "final_answer"}),
        tool_call("call_1", "f", {}, {"id": "fc_1"}),
    ]
    output = frames_of(write(turn(*items, finish="tool_call")))[-1][1]["response"]["output"]
    assert output == [
        {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [
                {"type": "summary_text", "text": "One."},
                {"type": "summary_text", "text": "Two."},
            ],
            "encrypted_content": "gAAA==",
        },
        {
            "id": "msg_1",
            "type": "message",
            "status": "completed",
            "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": "Hi"}],
            "role": "assistant",
            "phase": "final_answer",
        },
        {
            "id": "fc_1",
            "type": "function_call",
            "status": "completed",
            "arguments": "{}",
            "call_id": "call_1",
            "name": "f",
        },
    ]


def test_reasoning_items_carry_encrypted_content_when_the_request_includes_it() -> None:
    body = write(
        turn(thinking("Hm."), text("a")), context("openai-chat", include_encrypted_content=True)
    )
    added = next(d["item"] for n, d in frames_of(body) if n == "response.output_item.added")
    assert added == {
        "id": added["id"],
        "type": "reasoning",
        "summary": [],
        "encrypted_content": None,
    }


def test_the_response_object_echoes_the_request() -> None:
    body = {**request(USER), "instructions": "Be brief.", "temperature": 0.2, "store": False}
    body["reasoning"] = {"effort": "low", "summary": "auto"}
    ctx = context()
    ctx = type(ctx)(**{**ctx.__dict__, "request": decode(body)})
    created = frames_of(write(turn(text("a")), ctx))[0][1]["response"]
    assert created["instructions"] == "Be brief."
    assert (created["temperature"], created["store"]) == (0.2, False)
    assert created["reasoning"] == {"effort": "low", "summary": "auto"}


# --- the final body, error bodies, keys -------------------------------------------------------


def test_the_final_body_is_the_terminal_response_object() -> None:
    events = turn(thinking("Hm.", {"signature": "s"}), text("Hi"), finish="stop", usage=USAGE)
    message: Any = {
        "role": "assistant",
        "content_items": [
            e["content_items"][0]
            for e in events
            if e["content_items"] and e["content_items"][0]["type"].endswith(".done")
        ],
        "usage_metadata": USAGE,
        "finish_reason": "stop",
    }
    ctx = context("anthropic-messages")
    assert GATEWAY.final_body(ctx, message) == frames_of(write(events, ctx))[-1][1]["response"]


def test_a_final_body_holding_audio_is_a_failed_response() -> None:
    message: Any = {
        "role": "assistant",
        "content_items": [{"type": "inline_data.done", "data": b"\x00", "mime_type": "audio/wav"}],
        "usage_metadata": USAGE,
        "finish_reason": "stop",
    }
    body = GATEWAY.final_body(context("gemini-generate-content"), message)
    assert body["status"] == "failed" and "audio/wav" in body["error"]["message"]


def test_error_bodies_are_openais_and_the_emulators_bytes_match() -> None:
    error = GatewayError(429, "RateLimitError", "Rate limit reached", retry_after=3)
    assert GATEWAY.error_body(error) == {
        "error": {
            "message": "Rate limit reached",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    emulated = EMULATOR.error_body(429, "Rate limit reached", retry_after=3)
    assert json.loads(emulated) == GATEWAY.error_body(error)
    assert emulated == (
        b'{\n  "error": {\n    "message": "Rate limit reached",\n    "type": "requests",\n'
        b'    "param": null,\n    "code": "rate_limit_exceeded"\n  }\n}\n'
    )


def test_the_key_is_the_bearer_token() -> None:
    assert GATEWAY.read_key({"authorization": "Bearer sk-123"}, {}) == "sk-123"
    assert GATEWAY.read_key({"authorization": "Basic abc"}, {}) is None
    assert GATEWAY.read_key({}, {}) is None


def test_the_routes_are_create_and_retrieve() -> None:
    assert [(r.method, r.path, r.kind) for r in GATEWAY.routes] == [
        ("POST", "/v1/responses", "generate"),
        ("GET", "/v1/responses/{response_id}", "retrieve"),
    ]
    assert GATEWAY.models_body is not None
    listed = GATEWAY.models_body([ServedModel("gpt-5-mini", "openai", 1)])
    assert listed == {
        "object": "list",
        "data": [{"id": "gpt-5-mini", "object": "model", "created": 1, "owned_by": "openai"}],
    }


# --- fidelity across wires ----------------------------------------------------------------------


@pytest.mark.parametrize("terminal", [True, False])
@pytest.mark.parametrize(
    ("upstream", "items"),
    [
        (
            "gemini-generate-content",
            [
                thinking("Plan.", {"thought_signature": "CiQBVKhc7vB2"}),
                tool_call("call_0", "lookup", {"q": "x"}, {"thought_signature": "Cs8BAY"}),
            ],
        ),
        (
            "anthropic-messages",
            [thinking("Plan.", {"signature": "EqQBCkYIBxgCKkB"}), text("Answer.")],
        ),
        ("anthropic-messages", [thinking("", {"redacted_thinking": "EmwKAhgB"}), text("A")]),
        (
            "bedrock-converse-stream",
            [thinking("Plan.", {"signature": "sig=="}), tool_call("tooluse_1", "f", {"a": 1})],
        ),
        ("openai-chat", [thinking("Plan.", {"reasoning_field": "reasoning_content"}), text("A")]),
        (
            "openai-responses",
            [
                thinking("", {"id": "rs_1", "encrypted_content": "gAAAAABo"}),
                tool_call("call_1", "f", {}, {"id": "fc_1"}),
            ],
        ),
    ],
)
def test_foreign_fidelity_comes_back_exactly(
    upstream: str, items: list[dict[str, Any]], terminal: bool
) -> None:
    finish = "tool_call" if any(i["type"] == "tool_call.done" for i in items) else "stop"
    body = write(turn(*items, finish=finish), context(upstream))
    back = decode(request(USER, *replayed_items(body, terminal=terminal)))
    assert back.messages[1]["content_items"] == items


def test_a_gemini_text_signature_comes_back_from_the_final_response() -> None:
    item = text("Answer.", {"thought_signature": "Tx9"})
    body = write(turn(item), context("gemini-generate-content"))
    output = replayed_items(body, terminal=True)
    assert output[0]["id"].startswith("msg_MSF1")
    assert decode(request(USER, *output)).messages[1]["content_items"] == [item]


@pytest.mark.parametrize(
    ("where", "param"),
    [
        ("encrypted_content", "input[1].encrypted_content"),
        ("call_id", "input[2].call_id"),
    ],
)
def test_an_edited_sealed_token_is_refused_naming_the_field(where: str, param: str) -> None:
    items = [
        thinking("Plan.", {"thought_signature": "a"}),
        tool_call("c", "f", {}, {"thought_signature": "b"}),
    ]
    body = write(turn(*items, finish="tool_call"), context("gemini-generate-content"))
    replay = replayed_items(body, terminal=False)
    target = replay[0] if where == "encrypted_content" else replay[1]
    value = target[where]
    target[where] = value[:-6] + ("A" if value[-6] != "A" else "B") + value[-5:]
    with pytest.raises(InboundRequestError) as caught:
        decode(request(USER, *replay))
    assert caught.value.param == param and "altered" in str(caught.value)
    with pytest.raises(InboundRequestError):  # another server's key
        decode(request(USER, *replayed_items(body, terminal=False)), FidelitySeal.random())


def test_generated_ids_never_reach_an_upstream() -> None:
    body = write(
        turn(thinking("Hm."), text("Hi"), tool_call("c1", "f", {})), context("openai-chat")
    )
    back = decode(request(USER, *replayed_items(body, terminal=True)))
    assert all("fidelity" not in item for item in back.messages[1]["content_items"])


def test_a_function_call_output_gets_the_original_call_id() -> None:
    call = tool_call("call_0", "f", {}, {"thought_signature": "s"})
    body = write(turn(call, finish="tool_call"), context("gemini-generate-content"))
    sent_id = replayed_items(body, terminal=False)[0]["call_id"]
    output = {"type": "function_call_output", "call_id": sent_id, "output": "42"}
    back = decode(request(USER, *replayed_items(body, terminal=False), output))
    assert back.messages[2]["content_items"] == [
        {"type": "tool_result.done", "tool_call_id": "call_0", "text": "42"}
    ]


# --- the request: encoder → body → decode_request -----------------------------------------------

_tool_names = st.sampled_from(["get_weather", "search", "lookup"])
_schema = strict_objects(st.sampled_from("abc"))


@st.composite
def spec_requests(draw: Any) -> dict[str, Any]:
    """A random SPEC request the Responses encoder takes: alternating user and assistant
    messages, every call answered in the next user message, assistant items with Responses
    fidelity or none (thinking only with it: the encoder drops any other)."""
    messages: list[dict[str, Any]] = []
    pending: list[str] = []
    for turn_index in range(draw(st.integers(0, 2))):
        user: list[dict[str, Any]] = [
            {"type": "tool_result.done", "tool_call_id": call_id, "text": draw(words)}
            for call_id in pending
        ]
        for _ in range(draw(st.integers(1, 2))):
            if draw(st.booleans()):
                user.append({"type": "text.done", "text": draw(words)})
            else:
                user.append({"type": "image_url.done", "image_url": "https://x.test/a.png"})
        messages.append({"role": "user", "content_items": user})
        assistant: list[dict[str, Any]] = []
        pending = []
        if draw(st.booleans()):
            parts = draw(st.integers(1, 2))
            for position in range(parts):
                fidelity = {"id": f"rs_{turn_index}", "part": "summary_text"}
                if position == parts - 1 and draw(st.booleans()):
                    fidelity["encrypted_content"] = "gAAAAB=="
                assistant.append(thinking(draw(words), fidelity))
        if draw(st.booleans()):
            assistant.append(text(draw(words), {"id": f"msg_{turn_index}"}))
        else:
            assistant.append(text(draw(words)))
        for call in range(draw(st.integers(0, 2))):
            call_id = f"call_{turn_index}_{call}"
            pending.append(call_id)
            fidelity = {"id": f"fc_{turn_index}_{call}"} if draw(st.booleans()) else None
            assistant.append(tool_call(call_id, draw(_tool_names), draw(call_arguments), fidelity))
        messages.append({"role": "assistant", "content_items": assistant})
    last: list[dict[str, Any]] = [
        {"type": "tool_result.done", "tool_call_id": call_id, "text": "ok"} for call_id in pending
    ]
    last.append({"type": "text.done", "text": draw(words)})
    messages.append({"role": "user", "content_items": last})
    config: dict[str, Any] = {}
    if draw(st.booleans()):
        config["system_prompt"] = draw(words)
    if draw(st.booleans()):
        config["max_tokens"] = draw(st.integers(1, 10_000))
    if draw(st.booleans()):
        config["temperature"] = draw(st.floats(0, 2))
    if draw(st.booleans()):
        config["thinking_level"] = draw(
            st.sampled_from(["none", "low", "medium", "high", "xhigh", "max"])
        )
    if draw(st.booleans()):
        config["thinking_summary"] = True
    if draw(st.booleans()):
        names = draw(st.lists(_tool_names, min_size=1, max_size=3, unique=True))
        config["tools"] = [
            {"name": name, "description": draw(words), "parameters": draw(_schema)}
            for name in names
        ]
        if draw(st.booleans()):
            config["tools"][0]["strict"] = True
        config["tool_choice"] = draw(
            st.sampled_from(["auto", "required", "none", names[:1], names])
        )
        config["parallel_tool_calls"] = draw(st.booleans())
    if draw(st.booleans()):
        config["response_format"] = draw(
            st.sampled_from(
                [
                    {"type": "json_object"},
                    {"type": "object", "properties": {"a": {"type": "integer"}}},
                    {"name": "answer", "schema": {"type": "object"}, "strict": True},
                ]
            )
        )
    return {"messages": messages, "config": config}


def _normalized(config: dict[str, Any]) -> dict[str, Any]:
    """A config as the wire carries it: a tool's `strict` explicit (Responses reads an omitted
    one as strict, so the encoder sends false) and its response format as Responses' wrapper."""
    out = dict(config)
    if "tools" in out:
        out["tools"] = [{"strict": False, **tool} for tool in out["tools"]]
    if "response_format" in out:
        out["response_format"] = response_format_spec(out["response_format"], "openai-responses")
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_requests())
def test_a_request_the_encoder_writes_decodes_to_the_same_request(case: dict[str, Any]) -> None:
    sent = encode_request("openai-responses", MODEL, case["messages"], case["config"])
    inbound = decode(sent.json)
    assert inbound.model == MODEL and inbound.stream is True
    assert inbound.messages == case["messages"]
    config = dict(inbound.config)
    if "response_format" in config:
        config["response_format"] = response_format_spec(config["response_format"], "x")
    assert config == _normalized(case["config"])
    if case["config"].get("thinking_level", "none") != "none":
        assert inbound.options["include_encrypted_content"] is True


# --- the request: each field ----------------------------------------------------------------------


def test_a_plain_string_input_is_one_user_message() -> None:
    inbound = decode({"model": MODEL, "input": "Hello", "stream": True})
    assert inbound.messages == [
        {"role": "user", "content_items": [{"type": "text.done", "text": "Hello"}]}
    ]
    assert inbound.stream is True


def test_instructions_and_system_and_developer_messages_join_the_system_prompt() -> None:
    body = request(
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "B"}]},
        USER,
        {"role": "system", "content": "C"},
        instructions="A",
    )
    inbound = decode(body)
    assert inbound.config["system_prompt"] == "A\n\nB\n\nC"
    assert [m["role"] for m in inbound.messages] == ["user"]


def test_images_are_image_urls() -> None:
    data_url = "data:image/png;base64,iVBORw0KGgo="
    body = request(
        {
            "role": "user",
            "content": [
                {"type": "input_image", "image_url": "https://x.test/cat.jpg", "detail": "high"},
                {"type": "input_image", "image_url": data_url},
            ],
        }
    )
    inbound = decode(body)
    assert inbound.messages[0]["content_items"] == [
        {"type": "image_url.done", "image_url": "https://x.test/cat.jpg"},
        {"type": "image_url.done", "image_url": data_url},
    ]
    assert "the detail of input images" in inbound.ignored


def test_a_tool_output_with_images_is_a_tool_result_with_images() -> None:
    output = [
        {"type": "input_text", "text": "see"},
        {"type": "input_image", "image_url": "https://x.test/a.png"},
    ]
    body = request(USER, {"type": "function_call_output", "call_id": "c1", "output": output})
    assert decode(body).messages[0]["content_items"][1] == {
        "type": "tool_result.done",
        "tool_call_id": "c1",
        "text": "see",
        "images": ["https://x.test/a.png"],
    }


def test_config_fields_map_to_config() -> None:
    body = request(
        USER,
        max_output_tokens=100,
        temperature=0.5,
        top_p=0.9,
        parallel_tool_calls=False,
        tools=[{"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": True}],
        tool_choice={"type": "function", "name": "f"},
        reasoning={"effort": "high", "summary": "auto"},
        text={"format": {"type": "json_object"}},
    )
    assert decode(body).config == {
        "max_tokens": 100,
        "temperature": 0.5,
        "top_p": 0.9,
        "parallel_tool_calls": False,
        "tools": [{"name": "f", "parameters": {"type": "object"}, "strict": True}],
        "tool_choice": ["f"],
        "thinking_level": "high",
        "thinking_summary": True,
        "response_format": {"type": "json_object"},
    }


def test_a_json_schema_format_is_the_response_format() -> None:
    form = {"type": "json_schema", "name": "answer", "schema": {"type": "object"}, "strict": True}
    assert decode(request(USER, text={"format": form})).config["response_format"] == form
    assert "response_format" not in decode(request(USER, text={"format": {"type": "text"}})).config


def test_reasoning_values_config_has_no_level_for_go_natively() -> None:
    inbound = decode(request(USER, reasoning={"effort": "minimal", "summary": "detailed"}))
    assert inbound.config["thinking_level"] == "low"
    assert inbound.config["thinking_summary"] is True
    assert inbound.native_fields["reasoning"] == {"effort": "minimal", "summary": "detailed"}


def test_store_include_and_previous_response_id_are_options() -> None:
    inbound = decode(
        request(
            USER,
            store=False,
            include=["reasoning.encrypted_content", "web_search_call.action.sources"],
            previous_response_id="resp_abc",
        )
    )
    assert inbound.options["store"] is False
    assert inbound.options["include_encrypted_content"] is True
    assert inbound.options["previous_response_id"] == "resp_abc"
    assert inbound.native_fields["store"] is False
    assert inbound.native_fields["include"] == ["reasoning.encrypted_content"]
    assert "include web_search_call.action.sources" in inbound.ignored


def test_previous_response_id_alone_needs_no_input() -> None:
    inbound = decode({"model": MODEL, "previous_response_id": "resp_abc"})
    assert inbound.messages == []
    with pytest.raises(InboundRequestError) as caught:
        decode({"model": MODEL})
    assert caught.value.param == "input"


def test_upstream_only_fields_are_native_and_codex_metadata_is_ignored() -> None:
    inbound = decode(
        request(
            USER,
            prompt_cache_key="k",
            metadata={"a": "b"},
            user="u",
            safety_identifier="s",
            service_tier="flex",
            truncation="auto",
            client_metadata={"session_id": "x"},
            text={"verbosity": "low"},
        )
    )
    assert inbound.native_fields == {
        "prompt_cache_key": "k",
        "metadata": {"a": "b"},
        "user": "u",
        "safety_identifier": "s",
        "service_tier": "flex",
        "truncation": "auto",
        "text": {"verbosity": "low"},
    }
    assert "client_metadata" in inbound.ignored


def test_hosted_tools_are_dropped_and_listed() -> None:
    tools = [
        {"type": "function", "name": "f", "parameters": {"type": "object"}},
        {"type": "web_search", "external_web_access": True},
    ]
    inbound = decode(request(USER, tools=tools))
    assert [t["name"] for t in inbound.config["tools"]] == ["f"]  # type: ignore[index]
    assert "tools[1] (web_search)" in inbound.ignored


def test_an_image_generation_tool_asks_for_image_output() -> None:
    tools = [{"type": "image_generation", "size": "1024x1024", "quality": "high"}]
    inbound = decode(request(USER, tools=tools))
    assert inbound.config["image_output"] == {"size": "1024x1024"}
    assert "tools[0].quality" in inbound.ignored


def test_a_namespace_is_flattened_and_its_calls_come_back_by_namespace() -> None:
    tools = [
        {"type": "function", "name": "get_goal", "parameters": {"type": "object"}},
        {
            "type": "namespace",
            "name": "multi_agent_v1",
            "description": "agents",
            "tools": [
                {"type": "function", "name": "get_goal", "parameters": {"type": "object"}},
                {"type": "function", "name": "spawn", "parameters": {"type": "object"}},
            ],
        },
    ]
    call = {
        "type": "function_call",
        "call_id": "c1",
        "name": "spawn",
        "namespace": "multi_agent_v1",
        "arguments": "{}",
    }
    inbound = decode(request(USER, call, tools=tools))
    names = [t["name"] for t in inbound.config["tools"]]  # type: ignore[index]
    assert names == ["get_goal", "multi_agent_v1__get_goal", "spawn"]
    assert inbound.options["tool_namespaces"] == {
        "multi_agent_v1__get_goal": ["multi_agent_v1", "get_goal"],
        "spawn": ["multi_agent_v1", "spawn"],
    }
    assert inbound.messages[1]["content_items"][0]["name"] == "spawn"  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"n": 2}, "n"),
        ({"background": True}, "background"),
        ({"top_logprobs": 5}, "top_logprobs"),
        ({"max_tool_calls": 3}, "max_tool_calls"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"temperature": "hot"}, "temperature"),
        ({"reasoning": {"effort": "extreme"}}, "reasoning.effort"),
        ({"reasoning": {"budget": 100}}, "reasoning.budget"),
        ({"include": ["everything"]}, "include[0]"),
        ({"text": {"format": {"type": "xml"}}}, "text.format"),
        ({"tools": [{"type": "custom", "name": "apply_patch"}]}, "tools[0]"),
        (
            {"tools": [{"type": "function", "name": "f", "defer_loading": True}]},
            "tools[0].defer_loading",
        ),
        ({"tool_choice": {"type": "web_search"}}, "tool_choice"),
        (
            {"tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": []}},
            "tool_choice.mode",
        ),
        ({"model": 5}, "model"),
    ],
)
def test_a_field_that_cannot_be_served_is_refused_naming_it(
    fields: dict[str, Any], param: str
) -> None:
    with pytest.raises(InboundRequestError) as caught:
        decode({**request(USER), **fields})
    assert caught.value.param == param
    assert caught.value.status == 400


@pytest.mark.parametrize(
    ("item", "param"),
    [
        (
            {"role": "user", "content": [{"type": "input_file", "file_id": "f"}]},
            "input[0].content[0]",
        ),
        (
            {"role": "user", "content": [{"type": "input_image", "image_url": "file:///etc"}]},
            "input[0].content[0].image_url",
        ),
        ({"role": "tool", "content": "x"}, "input[0].role"),
        (
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "[1]"},
            "input[0].arguments",
        ),
        ({"type": "item_reference", "id": "msg_1"}, "input[0]"),
        ({"type": "message", "role": "user", "content": "x", "extra": 1}, "input[0].extra"),
    ],
)
def test_an_input_item_that_cannot_be_served_is_refused_naming_it(
    item: dict[str, Any], param: str
) -> None:
    with pytest.raises(InboundRequestError) as caught:
        decode(request(item))
    assert caught.value.param == param


def test_a_body_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(InboundRequestError):
        decode([1, 2])


def test_codexs_request_decodes() -> None:
    """The shape of Codex's first request (../shared/clients/agent-requests.json)."""
    parameters = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    function = {"type": "function", "description": "d", "strict": False, "parameters": parameters}
    body = {
        "model": MODEL,
        "instructions": "You are Codex.",
        "input": [
            {
                "type": "message",
                "id": "msg_c47b628f",
                "role": "developer",
                "content": [{"type": "input_text", "text": "perms"}],
            },
            {
                "type": "message",
                "id": "msg_01a234db",
                "role": "user",
                "content": [{"type": "input_text", "text": "Say the word"}],
            },
        ],
        "tools": [
            {**function, "name": "exec_command"},
            {**function, "name": "write_stdin"},
            {
                "type": "namespace",
                "name": "multi_agent_v1",
                "description": "d",
                "tools": [{**function, "name": "get_goal"}],
            },
            {"type": "web_search", "external_web_access": False},
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"summary": "auto"},
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "01a234db-9b9d",
        "client_metadata": {"session_id": "01a234db"},
    }
    inbound = decode(body)
    assert inbound.stream is True
    assert inbound.config["system_prompt"] == "You are Codex.\n\nperms"
    assert [t["name"] for t in inbound.config["tools"]] == [
        "exec_command",
        "write_stdin",
        "get_goal",
    ]  # type: ignore[index]
    assert inbound.config["thinking_summary"] is True and "thinking_level" not in inbound.config
    assert inbound.messages == [
        {"role": "user", "content_items": [{"type": "text.done", "text": "Say the word"}]}
    ]
    assert {"client_metadata", "tools[3] (web_search)"} <= set(inbound.ignored)
    assert inbound.native_fields["prompt_cache_key"] == "01a234db-9b9d"


def test_a_route_that_says_stream_overrides_the_body() -> None:
    call = InboundCall(GatewayRoute("POST", "/v1/responses", "generate", stream=True))
    assert GATEWAY.decode_request(request(USER), call, SEAL).stream is True


# --- the official openai SDK over loopback HTTP -------------------------------------------------

SDK_TURN = [
    thinking("Checking the weather tool.", {"signature": "EqQBCkYIBxgCKkB"}),
    text("Let me look that up."),
    tool_call("toolu_01", "get_weather", {"city": "Paris", "unit": "c"}),
]


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0)


def test_the_sdk_stream_helper_reads_the_whole_turn() -> None:
    body = write(turn(*SDK_TURN, finish="tool_call", usage=USAGE), context("anthropic-messages"))
    with loopback() as server:
        server.stream(body)
        with _client(server.url).responses.stream(model=MODEL, input="Weather in Paris?") as stream:
            deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
    assert "".join(deltas) == "Let me look that up."
    assert final.output_text == "Let me look that up."
    reasoning, message, call = final.output
    assert (
        reasoning.type == "reasoning" and reasoning.summary[0].text == "Checking the weather tool."
    )
    assert message.type == "message"
    assert call.type == "function_call"
    assert (call.name, call.call_id) == ("get_weather", "toolu_01")
    assert json.loads(call.arguments) == {"city": "Paris", "unit": "c"}
    assert final.status == "completed"
    assert final.usage is not None
    assert (final.usage.input_tokens, final.usage.output_tokens) == (25, 18)
    assert final.usage.input_tokens_details.cached_tokens == 5
    assert final.usage.output_tokens_details.reasoning_tokens == 7


def test_the_sdk_iterates_every_event_of_a_raw_stream() -> None:
    body = write(turn(text("Hi there"), usage=USAGE), context("openai-chat"))
    with loopback() as server:
        server.stream(body)
        events = list(_client(server.url).responses.create(model=MODEL, input="hi", stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[-1].type == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Hi there"


def test_the_sdk_reads_the_non_stream_body() -> None:
    events = turn(*SDK_TURN, finish="tool_call", usage=USAGE)
    message: Any = {
        "role": "assistant",
        "content_items": [
            i for e in events for i in e["content_items"] if i["type"].endswith(".done")
        ],
        "usage_metadata": USAGE,
        "finish_reason": "tool_call",
    }
    with loopback() as server:
        server.json(200, GATEWAY.final_body(context("anthropic-messages"), message))
        response = _client(server.url).responses.create(model=MODEL, input="Weather?")
    assert response.output_text == "Let me look that up."
    assert response.output[2].type == "function_call"
    assert response.output[2].name == "get_weather"
    assert response.usage is not None and response.usage.total_tokens == 43


def test_a_429_raises_the_sdks_rate_limit_error_with_retry_after() -> None:
    error = GatewayError(429, "RateLimitError", "Rate limit reached", retry_after=7)
    with loopback() as server:
        server.json(429, GATEWAY.error_body(error), error.headers)
        with pytest.raises(openai.RateLimitError) as caught:
            _client(server.url).responses.create(model=MODEL, input="hi")
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.code == "rate_limit_exceeded"


def test_an_in_stream_failure_makes_the_sdk_raise() -> None:
    writer = GATEWAY.writer(context("anthropic-messages"))
    frames = [f for e in group(text("Partial answer")) for f in writer.feed(e)]
    frames += writer.fail(GatewayError(502, "IncompleteStreamError", "the upstream broke off"))
    with loopback() as server:
        server.stream(b"".join(frames))
        client = _client(server.url)
        with (
            pytest.raises(openai.APIError) as caught,
            client.responses.stream(model=MODEL, input="hi") as stream,
        ):
            stream.get_final_response()
    assert "the upstream broke off" in str(caught.value)


def test_the_sdk_reads_a_resumed_stream_after_a_sequence_number() -> None:
    body = write(turn(text("Hello again"), usage=USAGE), context("openai-chat"))
    suffix = b"".join(
        b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"
        for name, data in frames_of(body)
        if data["sequence_number"] > 4
    )
    with loopback() as server:
        server.stream(suffix)
        events = list(
            _client(server.url).responses.retrieve(RESPONSE_ID, stream=True, starting_after=4)
        )
        query = server.requests[0].query
    assert query == {"stream": "true", "starting_after": "4"}
    assert events[0].sequence_number == 5
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "Hello again"
