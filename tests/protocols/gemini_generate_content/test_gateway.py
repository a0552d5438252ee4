"""The Gemini generateContent gateway wire (SPEC §8): the inbound request decoder, the stream
writer, the final and error bodies, fidelity across wires, and the official `google-genai` SDK
reading it all over loopback HTTP."""

from __future__ import annotations

import base64
import copy
import json
import string
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream import GrammarChecker, StreamDecoder
from modelstream.errors import GrammarViolation, StreamProtocolError
from modelstream.protocols import encode_request, protocol_named
from modelstream.protocols.common.fidelity_seal import FidelitySeal, is_sealed
from modelstream.protocols.common.gateway import (
    GatewayError,
    InboundRequest,
    InboundRequestError,
    ServedModel,
)
from modelstream.protocols.gemini_generate_content.gateway import (
    COUNT_TOKENS_ROUTE,
    GATEWAY,
    GENERATE_ROUTE,
    STREAM_ROUTE,
    read_key,
)
from modelstream.protocols.gemini_generate_content.inbound import decode_request
from modelstream.protocols.gemini_generate_content.writer import (
    error_body,
    error_object,
    final_body,
    models_body,
    usage_metadata,
    writer,
)
from modelstream.server import BackgroundServer
from modelstream.types import Event, FinishReason, Usage
from support.gateway import delta, done_items, group, json_trees, stop, usage_dicts
from support.gateway_gemini_generate_content import (
    KEY,
    PROTOCOL,
    LoopbackGateway,
    Script,
    call,
    context,
    final_message,
    model_contents,
    sse_chunks,
    turn_events,
)

SEAL = FidelitySeal.random()
USAGE: Usage = {"cached_tokens": 4, "prompt_tokens": 10, "thoughts_tokens": 6, "response_tokens": 5}
# Gemini signatures are standard base64 with `+` and `/` (google-genai writes them back URL-safe)
NATIVE_SIGNATURE = "Cv8BAb4+9vt/XdtKMt+r7Z3gLh52ZQ3RKYDzp4A6PHh0dLuvI1K=="[:48]


def request(stream: bool = True, alt: str = "sse", **options: Any) -> InboundRequest:
    return InboundRequest(
        model="gemini-2.5-flash",
        messages=[],
        config={},
        stream=stream,
        options={"alt": alt, **options} if stream else {},
    )


def write(events: list[Event], *, alt: str = "sse", upstream: str = "anthropic-messages") -> bytes:
    w = writer(context(request(alt=alt), SEAL, upstream))
    return b"".join(frame for event in events for frame in w.feed(event))


def decode(body: bytes, sizes: list[int] | None = None) -> tuple[list[Event], StreamDecoder]:
    """Feed a written body to the protocol's own stream decoder, checking the grammar."""
    decoder = StreamDecoder(PROTOCOL)
    checker = GrammarChecker()
    events: list[Event] = []
    chunks = [body]
    if sizes:
        chunks, pos, i = [], 0, 0
        while pos < len(body):
            chunks.append(body[pos : pos + sizes[i % len(sizes)]])
            pos += sizes[i % len(sizes)]
            i += 1
    for chunk in chunks:
        for event in decoder.feed(chunk):
            checker.feed(event)
            events.append(event)
    for event in decoder.end():
        checker.feed(event)
        events.append(event)
    checker.end()
    return events, decoder


def decode_body(body: Any, route: Any = STREAM_ROUTE, **kwargs: Any) -> InboundRequest:
    return decode_request(body, call(route, **kwargs), SEAL)


def user(text: str = "Hi") -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


# --- strategies -----------------------------------------------------------------------------

texts = st.text(alphabet=string.ascii_letters + " .,é雪\n🙂", min_size=1, max_size=30)
native_signatures = st.binary(min_size=3, max_size=40).map(lambda b: base64.b64encode(b).decode())
foreign_fidelity = st.one_of(
    st.fixed_dictionaries({"signature": st.text(string.ascii_letters, min_size=1, max_size=40)}),
    st.fixed_dictionaries(
        {"id": st.just("rs_1"), "encrypted_content": st.text(min_size=1, max_size=40)}
    ),
    st.fixed_dictionaries({"reasoning_field": st.just("reasoning_content")}),
    st.just({"redacted_thinking": "opaque=="}),
)
fidelities = st.one_of(
    st.none(),
    native_signatures.map(lambda s: {"thought_signature": s}),
    foreign_fidelity,
)
json_values = json_trees(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False, width=64)
    | st.text(max_size=10),
    key_size=6,
)
arguments = st.dictionaries(
    st.text(string.ascii_letters, min_size=1, max_size=8), json_values, max_size=4
)
counts = st.one_of(st.none(), st.integers(0, 10_000))
usages = usage_dicts(counts)


@st.composite
def items(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "thinking", "tool_call", "image"]))
    fidelity = draw(fidelities)
    item: dict[str, Any]
    if kind in ("text", "thinking"):
        item = {"type": f"{kind}.done", kind: draw(texts)}
    elif kind == "tool_call":
        real = draw(st.booleans())
        suffix = draw(st.text(string.ascii_letters + string.digits, min_size=4, max_size=12))
        item = {
            "type": "tool_call.done",
            "tool_call_id": ("toolu_" + suffix) if real else "",  # "": numbered below
            "name": draw(st.sampled_from(["get_weather", "search", "f"])),
            "arguments": draw(arguments),
        }
    else:
        item = {
            "type": "inline_data.done",
            "data": draw(st.binary(min_size=1, max_size=40)),
            "mime_type": "image/png",
        }
    if fidelity:
        item["fidelity"] = fidelity
    return item


@st.composite
def turns(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[list[int]], list[bool]]:
    turn = draw(st.lists(items(), min_size=1, max_size=6))
    if all(item["type"] == "thinking.done" for item in turn):
        turn.append({"type": "text.done", "text": "answer"})
    ordinal = 0
    for item in turn:
        if item["type"] == "tool_call.done":
            ordinal += 1
            if not item["tool_call_id"]:  # the upstream gave none: the assembler's name
                item["tool_call_id"] = f"call_{ordinal}"
    cuts = [draw(st.lists(st.integers(1, 40), max_size=4)) for _ in turn]
    first = [draw(st.booleans()) for _ in turn]
    return turn, cuts, first


def _signed(item: dict[str, Any]) -> bool:
    return bool(item.get("fidelity"))


def joined_as_gemini_decodes(turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documented loss of the stream decoder: it joins consecutive parts of one kind and
    begins a new item at a signed part only when the open one is signed. The writer signs the
    one part of an item that follows one of its kind (a sealed `{}` when it has no fidelity), so
    such an item joins its predecessor only when that one is unsigned."""
    out: list[dict[str, Any]] = []
    signed: list[bool] = []
    previous_kind = None
    for item in turn:
        kind = item["type"]
        held = kind in ("text.done", "thinking.done") and kind == previous_kind
        previous_kind = kind
        if held and not signed[-1]:
            field = kind.partition(".")[0]
            merged = {**out[-1], field: out[-1][field] + item[field]}
            merged.pop("fidelity", None)
            if _signed(item):
                merged["fidelity"] = item["fidelity"]
            out[-1], signed[-1] = merged, True
            continue
        out.append(copy.deepcopy(item))
        signed.append(held or _signed(item))
    return out


def opened(item: dict[str, Any]) -> dict[str, Any]:
    """An item as read back by a Gemini decoder, its sealed signature opened."""
    item = copy.deepcopy(item)
    signature = (item.get("fidelity") or {}).get("thought_signature")
    if is_sealed(signature):
        item["fidelity"] = SEAL.open(signature)
        if not item["fidelity"]:  # the writer's mark of an item's beginning
            del item["fidelity"]
    return item


def expected_usage(usage: Usage, thought_written: bool) -> Usage:
    """The stop usage after usageMetadata and back (writer.usage_metadata's documented
    arithmetic): an unknown input count beside a known one reads 0; unknown thoughts read 0
    when Gemini's rule infers them (a response count and no thought part)."""
    cached, prompt = usage["cached_tokens"], usage["prompt_tokens"]
    thoughts, response = usage["thoughts_tokens"], usage["response_tokens"]
    if cached is None and prompt is None and thoughts is None and response is None:
        return usage
    known_input = cached is not None or prompt is not None
    if thoughts is None and response is not None and not thought_written:
        thoughts = 0
    return {
        "cached_tokens": (cached or 0) if known_input else None,
        "prompt_tokens": (prompt or 0) if known_input else None,
        "thoughts_tokens": thoughts,
        "response_tokens": response,
    }


# --- the stream writer, read back by the protocol's own decoder -----------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turn=turns(),
    usage=usages,
    finish=st.sampled_from(["stop", "length", "tool_call", "unknown"]),
    sizes=st.lists(st.integers(1, 97), min_size=1, max_size=5),
)
def test_written_streams_decode_to_the_same_items_finish_and_usage(
    turn: tuple[list[dict[str, Any]], list[list[int]], list[bool]],
    usage: Usage,
    finish: FinishReason,
    sizes: list[int],
) -> None:
    items_, cuts, first = turn
    body = write(turn_events(items_, finish, usage, cuts, first))
    events, _ = decode(body, sizes)
    assert [opened(item) for item in done_items(events)] == joined_as_gemini_decodes(items_)
    calls = any(item["type"] == "tool_call.done" for item in items_)
    expected_finish = (
        ("tool_call" if calls else "stop") if finish in ("stop", "tool_call") else finish
    )
    assert events[-1]["finish_reason"] == expected_finish
    thought = any(item["type"] == "thinking.done" for item in items_)
    assert events[-1]["usage_metadata"] == expected_usage(usage, thought)


def test_a_text_stream_is_written_as_gemini_streams_it() -> None:
    events = [
        delta({"type": "text.delta", "text": "Hel"}),
        delta({"type": "text.delta", "text": "lo"}),
        delta({"type": "text.delta", "text": "", "fidelity": {"thought_signature": "c2ln"}}),
        delta({"type": "text.done", "text": "Hello", "fidelity": {"thought_signature": "c2ln"}}),
        stop("stop", USAGE),
    ]
    body = write(events, upstream=PROTOCOL)
    assert body.split(b"\r\n\r\n")[0] == (
        b'data: {"candidates": [{"content": {"parts": [{"text": "Hel"}],"role": "model"},'
        b'"index": 0}],"modelVersion": "gemini-2.5-flash","responseId": "resp-7Qz"}'
    )
    chunks = sse_chunks(body)
    assert [c["candidates"][0]["content"]["parts"] for c in chunks] == [
        [{"text": "Hel"}],
        [{"text": "lo"}],
        [{"text": "", "thoughtSignature": "c2ln"}],
        [{"text": ""}],
    ]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert chunks[-1]["usageMetadata"] == {
        "promptTokenCount": 14,
        "candidatesTokenCount": 5,
        "totalTokenCount": 25,
        "cachedContentTokenCount": 4,
        "thoughtsTokenCount": 6,
    }
    assert all("usageMetadata" not in c for c in chunks[:-1])
    assert body.endswith(b"\r\n\r\n") and b"\n\n" not in body.replace(b"\r\n\r\n", b"")


def test_thinking_is_written_as_thought_parts_and_the_signature_on_the_part_it_rode_on() -> None:
    thinking = {"type": "thinking.done", "thinking": "Let me see", "fidelity": {"signature": "sig"}}
    events = turn_events([thinking, {"type": "text.done", "text": "4"}], "stop", USAGE)
    parts = [c["candidates"][0]["content"]["parts"][0] for c in sse_chunks(write(events))]
    assert parts[0] == {"text": "Let me see", "thought": True}
    assert parts[1]["thought"] is True and parts[1]["text"] == ""
    assert SEAL.open(parts[1]["thoughtSignature"]) == {"signature": "sig"}
    assert parts[2:] == [{"text": "4"}, {"text": ""}]


def test_a_function_call_is_one_whole_part_at_its_done_with_its_id_and_signature() -> None:
    call_item = {
        "type": "tool_call.done",
        "tool_call_id": "toolu_01A",
        "name": "get_weather",
        "arguments": {"city": "Paris", "days": [1, 2]},
        "fidelity": {"thought_signature": NATIVE_SIGNATURE},
    }
    events = turn_events([call_item], "tool_call", USAGE, cuts=[[3, 9]])
    chunks = sse_chunks(write(events))
    assert len(chunks) == 2
    assert chunks[0]["candidates"][0]["content"]["parts"] == [
        {
            "functionCall": {
                "name": "get_weather",
                "args": {"city": "Paris", "days": [1, 2]},
                "id": "toolu_01A",
            },
            "thoughtSignature": NATIVE_SIGNATURE,
        }
    ]
    assert chunks[1]["candidates"][0]["finishReason"] == "STOP"


def test_a_call_without_a_provider_id_is_written_without_one_as_gemini_does() -> None:
    call_item = {"type": "tool_call.done", "tool_call_id": "call_1", "name": "f", "arguments": {}}
    chunks = sse_chunks(write(turn_events([call_item], "tool_call", USAGE)))
    assert chunks[0]["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "f", "args": {}}}
    ]


@pytest.mark.parametrize(
    ("finish", "reason"),
    [("stop", "STOP"), ("length", "MAX_TOKENS"), ("tool_call", "STOP"), ("unknown", "OTHER")],
)
def test_finish_reasons_map_to_geminis(finish: FinishReason, reason: str) -> None:
    chunks = sse_chunks(write(turn_events([{"type": "text.done", "text": "x"}], finish, USAGE)))
    assert chunks[-1]["candidates"][0]["finishReason"] == reason


def test_usage_counts_input_with_cache_and_leaves_unknown_counts_out() -> None:
    assert usage_metadata(USAGE) == {
        "promptTokenCount": 14,
        "candidatesTokenCount": 5,
        "totalTokenCount": 25,
        "cachedContentTokenCount": 4,
        "thoughtsTokenCount": 6,
    }
    unknown: Usage = {
        "cached_tokens": None,
        "prompt_tokens": None,
        "thoughts_tokens": None,
        "response_tokens": None,
    }
    assert usage_metadata(unknown) is None
    partial: Usage = {**unknown, "prompt_tokens": 3, "response_tokens": 0}
    assert usage_metadata(partial) == {
        "promptTokenCount": 3,
        "candidatesTokenCount": 0,
        "totalTokenCount": 3,
    }


def test_an_item_after_one_of_its_kind_is_held_and_written_whole_with_its_signature() -> None:
    first = {"type": "thinking.done", "thinking": "one", "fidelity": {"id": "rs_1", "part": 0}}
    second = {"type": "thinking.done", "thinking": "two", "fidelity": {"id": "rs_1", "part": 1}}
    events = turn_events(
        [first, second, {"type": "text.done", "text": "ok"}], "stop", USAGE, cuts=[[1], [1]]
    )
    parts = [c["candidates"][0]["content"]["parts"][0] for c in sse_chunks(write(events))]
    assert [p["text"] for p in parts] == ["o", "ne", "", "two", "ok", ""]
    assert SEAL.open(parts[3]["thoughtSignature"]) == {"id": "rs_1", "part": 1}
    decoded = [opened(i) for i in done_items(decode(write(events))[0])]
    assert decoded[:2] == [first, second]


def test_an_image_is_one_inline_data_part() -> None:
    image = {"type": "inline_data.done", "data": b"\x89PNG..", "mime_type": "image/png"}
    events = turn_events([image], "stop", USAGE, cuts=[[2, 4]])
    chunks = sse_chunks(write(events))
    assert chunks[0]["candidates"][0]["content"]["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(b"\x89PNG..").decode()}}
    ]


def test_audio_streams_chunk_by_chunk_and_decodes_as_one_clip() -> None:
    clip = {
        "type": "inline_data.done",
        "data": bytes(range(30)),
        "mime_type": "audio/L16;codec=pcm;rate=24000",
    }
    events = turn_events([clip], "stop", USAGE, cuts=[[10, 20]])
    body = write(events)
    assert len(sse_chunks(body)) == 4
    assert done_items(decode(body)[0]) == [clip]


def test_a_thinking_image_is_an_inline_data_part_marked_thought() -> None:
    image = {"type": "inline_thinking.done", "data": b"draft", "mime_type": "image/png"}
    events = turn_events([image, {"type": "text.done", "text": "done"}], "stop", USAGE)
    chunks = sse_chunks(write(events))
    assert chunks[0]["candidates"][0]["content"]["parts"][0]["thought"] is True
    assert done_items(decode(write(events))[0])[0] == image


def test_an_embedding_ends_the_stream_with_an_error_naming_it() -> None:
    w = writer(context(request(), SEAL))
    frames = w.feed(delta({"type": "embedding.delta", "embedding": [0.1]}))
    assert len(frames) == 1
    error = json.loads(frames[0][len(b"data: ") :])["error"]
    assert error["code"] == 502 and "embedding" in error["message"]
    with pytest.raises(StreamProtocolError):
        w.feed(delta({"type": "embedding.done", "embedding": [0.1]}))


def test_the_writer_refuses_events_that_break_the_grammar() -> None:
    w = writer(context(request(), SEAL))
    w.feed(delta({"type": "text.delta", "text": "a"}))
    with pytest.raises(GrammarViolation):
        w.feed(delta({"type": "thinking.delta", "thinking": "b"}))


def test_nothing_is_written_after_stop() -> None:
    w = writer(context(request(), SEAL))
    w.feed(stop("stop", USAGE))
    with pytest.raises(StreamProtocolError):
        w.feed(stop("stop", USAGE))
    assert w.fail(GatewayError(500, "ServerError", "late")) == []


def test_fail_writes_geminis_error_object_and_leaves_the_open_item_unfinished() -> None:
    w = writer(context(request(), SEAL))
    frames = w.feed(delta({"type": "text.delta", "text": "partial"}))
    frames += w.fail(GatewayError(429, "RateLimitError", "slow down", retry_after=3))
    body = b"".join(frames)
    chunks = sse_chunks(body)
    assert chunks[-1] == {
        "error": {
            "code": 429,
            "message": "slow down",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3s"}],
        }
    }
    assert all("finishReason" not in json.dumps(c) for c in chunks)
    assert w.fail(GatewayError(500, "ServerError", "again")) == []
    decoder = StreamDecoder(PROTOCOL)
    with pytest.raises(Exception, match="slow down"):
        decoder.feed(body)
        decoder.end()


def test_without_alt_sse_the_stream_is_one_json_array_written_element_by_element() -> None:
    events = turn_events([{"type": "text.done", "text": "Hello"}], "stop", USAGE, cuts=[[2]])
    w = writer(context(request(alt="json"), SEAL))
    frames = [frame for event in events for frame in w.feed(event)]
    assert frames[0].startswith(b'[{"candidates"')
    assert all(frame.startswith(b"\n,\r\n{") for frame in frames[1:])
    assert frames[-1].endswith(b"}]")
    array = json.loads(b"".join(frames))
    assert [c["candidates"][0]["content"]["parts"][0]["text"] for c in array] == ["He", "llo", ""]
    assert array[-1]["usageMetadata"]["totalTokenCount"] == 25


def test_a_json_array_stream_that_fails_is_still_one_array_ending_in_the_error() -> None:
    w = writer(context(request(alt="json"), SEAL))
    frames = w.feed(delta({"type": "text.delta", "text": "a"}))
    frames += w.fail(GatewayError(503, "OverloadedError", "busy"))
    array = json.loads(b"".join(frames))
    assert array[-1] == {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}
    w2 = writer(context(request(alt="json"), SEAL))
    assert json.loads(b"".join(w2.fail(GatewayError(499, "StreamCancelledError", "gone")))) == [
        {"error": {"code": 499, "message": "gone", "status": "CANCELLED"}}
    ]


# --- the non-stream body ---------------------------------------------------------------------


def test_the_final_body_is_one_response_with_every_item_as_a_part() -> None:
    items_ = [
        {"type": "thinking.done", "thinking": "hmm", "fidelity": {"signature": "s1"}},
        {
            "type": "text.done",
            "text": "Calling.",
            "fidelity": {"thought_signature": NATIVE_SIGNATURE},
        },
        {"type": "tool_call.done", "tool_call_id": "toolu_9", "name": "f", "arguments": {"a": 1}},
    ]
    events = turn_events(items_, "tool_call", USAGE)
    body = final_body(context(request(stream=False), SEAL), final_message(events))
    candidate = body["candidates"][0]
    parts = candidate["content"]["parts"]
    assert parts[0]["text"] == "hmm" and parts[0]["thought"] is True
    assert SEAL.open(parts[0]["thoughtSignature"]) == {"signature": "s1"}
    assert parts[1] == {"text": "Calling.", "thoughtSignature": NATIVE_SIGNATURE}
    assert parts[2] == {"functionCall": {"name": "f", "args": {"a": 1}, "id": "toolu_9"}}
    assert candidate["finishReason"] == "STOP" and candidate["index"] == 0
    assert body["usageMetadata"]["totalTokenCount"] == 25
    assert body["modelVersion"] == "gemini-2.5-flash" and body["responseId"] == "resp-7Qz"
    again = decode_body({"contents": [user(), candidate["content"]]})
    assert again.messages[1]["content_items"] == items_


# --- error bodies, models, keys, routes ------------------------------------------------------


def test_error_bodies_are_googles_with_retry_info_and_the_field_at_fault() -> None:
    assert error_body(
        GatewayError(400, "InvalidRequest", "bad", param="generationConfig.topP")
    ) == {
        "error": {
            "code": 400,
            "message": "bad",
            "status": "INVALID_ARGUMENT",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [{"field": "generationConfig.topP", "description": "bad"}],
                }
            ],
        }
    }
    assert error_body(GatewayError(404, "NotFound", "no model"))["error"]["status"] == "NOT_FOUND"
    assert (
        error_body(GatewayError(502, "IncompleteStreamError", "cut"))["error"]["status"]
        == "UNAVAILABLE"
    )
    assert error_object(418, "teapot") == {
        "error": {"code": 418, "message": "teapot", "status": "UNKNOWN"}
    }


def test_the_emulator_writes_its_error_bodies_with_the_wire_writer() -> None:
    from modelstream.protocols.gemini_generate_content.emulator import gemini_error_body

    assert gemini_error_body(429, "slow", retry_after=1.5) == (
        b'{\n  "error": {\n    "code": 429,\n    "message": "slow",\n    "status": '
        b'"RESOURCE_EXHAUSTED",\n    "details": [\n      {\n        "@type": '
        b'"type.googleapis.com/google.rpc.RetryInfo",\n        "retryDelay": "1.5s"\n      }\n'
        b"    ]\n  }\n}\n"
    )


def test_models_are_listed_as_gemini_model_resources() -> None:
    assert models_body([ServedModel("gemini-2.5-flash", "google")]) == {
        "models": [
            {
                "name": "models/gemini-2.5-flash",
                "displayName": "gemini-2.5-flash",
                "supportedGenerationMethods": [
                    "generateContent",
                    "streamGenerateContent",
                    "countTokens",
                ],
            }
        ]
    }


def test_the_key_is_read_from_the_header_then_the_query() -> None:
    assert read_key({"x-goog-api-key": "h"}, {"key": "q"}) == "h"
    assert read_key({}, {"key": "q"}) == "q"
    assert read_key({"authorization": "Bearer b"}, {}) is None


def test_the_protocol_offers_this_gateway() -> None:
    assert protocol_named(PROTOCOL).gateway is GATEWAY
    assert {(r.method, r.path, r.kind, r.stream) for r in GATEWAY.routes} == {
        ("POST", "/{version}/models/{model}:streamGenerateContent", "generate", True),
        ("POST", "/{version}/models/{model}:generateContent", "generate", False),
        ("POST", "/{version}/models/{model}:countTokens", "count_tokens", None),
        ("GET", "/{version}/models", "models", None),
    }


def test_starlette_matches_a_model_followed_by_its_method_suffix() -> None:
    from starlette.routing import Match, Route

    def endpoint() -> None:  # pragma: no cover - never called
        pass

    stream = Route(STREAM_ROUTE.path, endpoint, methods=["POST"])
    generate = Route(GENERATE_ROUTE.path, endpoint, methods=["POST"])
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    }
    match, child = stream.matches(scope)
    assert match is Match.FULL and child["path_params"] == {
        "version": "v1beta",
        "model": "gemini-2.5-flash",
    }
    assert generate.matches(scope)[0] is Match.NONE
    colon = {**scope, "path": "/v1/models/us.model-v1:0:generateContent"}
    assert generate.matches(colon)[1]["path_params"]["model"] == "us.model-v1:0"


# --- fidelity across wires: the writer's output sent back as the next request ----------------


def without_synthesized_ids(turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Calls the upstream gave no id come back numbered through the request (`call_<n>`)."""
    out, ordinal = [], 0
    for item in turn:
        if item["type"] == "tool_call.done" and item["tool_call_id"].startswith("call_"):
            ordinal += 1
            item = {**item, "tool_call_id": f"call_{ordinal}"}
        out.append(item)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turn=turns(), upstream=st.sampled_from(["anthropic-messages", "openai-responses", PROTOCOL]))
def test_fidelity_written_in_a_stream_comes_back_exactly_from_the_clients_next_request(
    turn: tuple[list[dict[str, Any]], list[list[int]], list[bool]], upstream: str
) -> None:
    items_, cuts, first = turn
    body = write(turn_events(items_, "stop", USAGE, cuts, first), upstream=upstream)
    contents = [user("Q"), *model_contents(sse_chunks(body)), user("next")]
    decoded = decode_body({"contents": contents})
    assert [m["role"] for m in decoded.messages] == ["user", "assistant", "user"]
    assert decoded.messages[1]["content_items"] == without_synthesized_ids(items_)


@pytest.mark.parametrize(
    "fidelity",
    [
        {"signature": "EqQBCkYIBxgCKkA"},  # Anthropic / Bedrock thinking
        {"id": "rs_68a1", "part": "summary_text", "encrypted_content": "gAAAAABo..."},
        {"reasoning_field": "reasoning_content"},  # Chat
        {"thought_signature": "not base64!"},  # not canonical: google-genai would change it
        {"thought_signature": "MSF1AAAA"},  # looks sealed: would be misread
    ],
)
def test_fidelity_a_gemini_field_cannot_hold_natively_is_sealed_in_the_thought_signature(
    fidelity: dict[str, Any],
) -> None:
    item = {"type": "thinking.done", "thinking": "why", "fidelity": fidelity}
    body = write(turn_events([item, {"type": "text.done", "text": "so"}], "stop", USAGE))
    signature = sse_chunks(body)[1]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert is_sealed(signature) and signature.isalnum() and len(signature) % 4 == 0
    contents = [user(), *model_contents(sse_chunks(body))]
    assert decode_body({"contents": contents}).messages[1]["content_items"][0] == item


def test_an_edited_sealed_signature_is_a_400_naming_the_field() -> None:
    item = {"type": "thinking.done", "thinking": "why", "fidelity": {"signature": "abc"}}
    chunks = sse_chunks(
        write(turn_events([item, {"type": "text.done", "text": "x"}], "stop", USAGE))
    )
    contents = [user(), *model_contents(chunks)]
    part = contents[2]["parts"][0]
    token = part["thoughtSignature"]
    part["thoughtSignature"] = token[:-8] + ("A" if token[-8] != "A" else "B") + token[-7:]
    with pytest.raises(InboundRequestError) as error:
        decode_body({"contents": contents})
    assert error.value.status == 400
    assert error.value.param == "contents[2].parts[0].thoughtSignature"
    assert "altered" in str(error.value)


def test_a_native_signature_written_back_url_safe_is_restored_to_geminis_alphabet() -> None:
    url_safe = NATIVE_SIGNATURE.replace("+", "-").replace("/", "_")
    contents = [user(), {"role": "model", "parts": [{"text": "a", "thoughtSignature": url_safe}]}]
    item = decode_body({"contents": contents}).messages[1]["content_items"][0]
    assert item == {
        "type": "text.done",
        "text": "a",
        "fidelity": {"thought_signature": NATIVE_SIGNATURE},
    }


def test_signature_only_thinking_round_trips_as_an_empty_thought_part() -> None:
    redacted = {"type": "thinking.done", "thinking": "", "fidelity": {"redacted_thinking": "Eu8="}}
    events = turn_events([redacted, {"type": "text.done", "text": "hi"}], "stop", USAGE)
    body = write(events)
    assert [opened(i) for i in done_items(decode(body)[0])] == [
        redacted,
        {"type": "text.done", "text": "hi"},
    ]
    contents = [user(), *model_contents(sse_chunks(body))]
    assert decode_body({"contents": contents}).messages[1]["content_items"][0] == redacted


# --- the inbound request: the encoder's bodies read back ------------------------------------

schemas = st.fixed_dictionaries(
    {
        "type": st.just("object"),
        "properties": st.dictionaries(
            st.sampled_from(["city", "days", "unit"]),
            st.sampled_from([{"type": "string"}, {"type": "integer"}, {"enum": ["c", "f"]}]),
            min_size=1,
            max_size=3,
        ),
    }
)
tool_schemas = st.fixed_dictionaries(
    {"name": st.sampled_from(["get_weather", "search", "lookup"])},
    optional={
        "description": st.text(string.ascii_letters, min_size=1, max_size=20),
        "parameters": schemas,
    },
)
ids = st.text(string.ascii_letters + string.digits, min_size=6, max_size=12).map(
    lambda s: "toolu_" + s
)
data_urls = st.binary(min_size=1, max_size=20).map(
    lambda b: "data:image/png;base64," + base64.b64encode(b).decode()
)
image_urls = st.one_of(data_urls, st.just("https://example.com/cat.png"))


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """user / assistant turns as the encoder takes them: a user turn answers every call of the
    assistant turn before it, its tool results first; an assistant turn's adjacent items of one
    kind are signed (an unsigned one would join its neighbour: Gemini has no boundary)."""
    messages: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(0, 2)) * 2 + 1):
        if turn % 2 == 0:
            results = [
                {"type": "tool_result.done", "tool_call_id": c["tool_call_id"], "text": draw(texts)}
                for c in calls
            ]
            rest = draw(
                st.lists(
                    st.one_of(
                        texts.map(lambda t: {"type": "text.done", "text": t}),
                        image_urls.map(lambda u: {"type": "image_url.done", "image_url": u}),
                    ),
                    min_size=0 if results else 1,
                    max_size=3,
                )
            )
            messages.append({"role": "user", "content_items": results + rest})
            continue
        content: list[dict[str, Any]] = []
        calls = []
        for _ in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(["text", "thinking", "tool_call"]))
            signature = draw(st.one_of(st.none(), native_signatures))
            if kind == "tool_call":
                item: dict[str, Any] = {
                    "type": "tool_call.done",
                    "tool_call_id": draw(ids),
                    "name": draw(st.sampled_from(["get_weather", "search"])),
                    "arguments": draw(arguments),
                }
                calls.append(item)
            else:
                item = {"type": f"{kind}.done", kind: draw(texts)}
                if content and content[-1]["type"] == item["type"] and signature is None:
                    signature = "c2lnbmVk"
            if signature is not None:
                item["fidelity"] = {"thought_signature": signature}
            content.append(item)
        messages.append({"role": "assistant", "content_items": content})
    return messages


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    config: dict[str, Any] = {}
    optional = {
        "system_prompt": texts,
        "max_tokens": st.integers(1, 65536),
        "temperature": st.floats(0, 2),
        "top_p": st.floats(0, 1),
        "stop": st.lists(texts, min_size=1, max_size=3),
        "seed": st.integers(0, 2**31),
        "thinking_level": st.sampled_from(["none", "low", "medium", "high", "xhigh", "max"]),
        "thinking_summary": st.booleans(),
        "response_format": st.one_of(st.just({"type": "json_object"}), schemas),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            config[key] = draw(strategy)
    tools = draw(st.lists(tool_schemas, max_size=3, unique_by=lambda t: t["name"]))
    if tools:
        config["tools"] = tools
        config["tool_choice"] = draw(
            st.one_of(
                st.sampled_from(["auto", "required", "none"]),
                st.lists(st.sampled_from([t["name"] for t in tools]), min_size=1, unique=True),
            )
        )
    media = draw(st.sampled_from(["none", "image", "speech"]))
    if media == "image":
        config["image_output"] = draw(
            st.one_of(st.just(True), st.just({"aspect_ratio": "16:9", "size": "2K"}))
        )
    elif media == "speech":
        config["speech_output"] = draw(
            st.sampled_from(
                [
                    True,
                    {"voice": "Kore", "language": "en-US"},
                    {"speakers": {"Joe": "Kore", "Jane": "Puck"}},
                ]
            )
        )
    return config


def expected_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config as it comes back (documented losses): a thinking level is read from Gemini
    2.5's budget (xhigh and max share high's), a response format as the Responses-shaped JSON
    schema, a tool without parameters or description as its name."""
    out = copy.deepcopy(config)
    if "thinking_level" in out:
        out["thinking_level"] = {"xhigh": "high", "max": "high"}.get(
            out["thinking_level"], out["thinking_level"]
        )
    if "response_format" in out and out["response_format"] != {"type": "json_object"}:
        out["response_format"] = {
            "type": "json_schema",
            "name": "response",
            "schema": config["response_format"],
        }
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=conversations(), config=configs())
def test_encoded_requests_decode_to_the_same_messages_and_config(
    messages: list[dict[str, Any]], config: dict[str, Any]
) -> None:
    encoded = encode_request(PROTOCOL, "gemini-2.5-flash", messages, config)  # type: ignore[arg-type]
    assert encoded.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    decoded = decode_body(json.loads(json.dumps(encoded.json)))
    assert decoded.model == "gemini-2.5-flash" and decoded.stream is True
    assert decoded.options["alt"] == "sse"
    assert decoded.messages == messages
    assert decoded.config == expected_config(config)
    assert decoded.native_fields == {} and decoded.ignored == ()


def test_thinking_levels_come_back_from_gemini_3_levels_by_name() -> None:
    for level, expected in [
        ("none", "none"),
        ("low", "low"),
        ("medium", "medium"),
        ("max", "high"),
    ]:
        body = encode_request(
            PROTOCOL,
            "gemini-3-flash-preview",
            [{"role": "user", "content_items": [{"type": "text.done", "text": "q"}]}],
            {"thinking_level": level},
        ).json  # type: ignore[typeddict-item]
        assert body["generationConfig"]["thinkingConfig"]["thinkingLevel"] in (
            "minimal",
            "low",
            "medium",
            "high",
        )
        assert decode_body(body).config["thinking_level"] == expected


@pytest.mark.parametrize(
    ("budget", "level"),
    [
        (0, "none"),
        (128, "low"),
        (1024, "low"),
        (3000, "medium"),
        (8192, "medium"),
        (20000, "high"),
        (32768, "xhigh"),
        (-1, None),
    ],
)
def test_a_thinking_budget_maps_to_the_nearest_level(budget: int, level: str | None) -> None:
    body = {
        "contents": [user()],
        "generationConfig": {"thinkingConfig": {"thinkingBudget": budget}},
    }
    assert decode_body(body).config.get("thinking_level") == level


def test_google_genai_snake_case_fields_are_read_like_camel_case() -> None:
    body = {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "look"},
                    {"inline_data": {"mime_type": "image/png", "data": "iVBORw=="}},
                    {"file_data": {"file_uri": "https://x.test/y.png", "mime_type": "image/png"}},
                ],
            }
        ],
        "system_instruction": {"parts": [{"text": "be brief"}], "role": "user"},
        "tools": [
            {"function_declarations": [{"name": "f", "parameters_json_schema": {"type": "object"}}]}
        ],
        "generation_config": {
            "max_output_tokens": 9,
            "thinking_config": {"include_thoughts": True, "thinking_budget": 0},
        },
    }
    decoded = decode_body(body)
    assert decoded.messages == [
        {
            "role": "user",
            "content_items": [
                {"type": "text.done", "text": "look"},
                {"type": "image_url.done", "image_url": "data:image/png;base64,iVBORw=="},
                {"type": "image_url.done", "image_url": "https://x.test/y.png"},
            ],
        }
    ]
    assert decoded.config == {
        "system_prompt": "be brief",
        "tools": [{"name": "f", "parameters": {"type": "object"}}],
        "max_tokens": 9,
        "thinking_summary": True,
        "thinking_level": "none",
    }


def test_gemini_openapi_parameters_become_json_schema() -> None:
    parameters = {
        "type": "OBJECT",
        "properties": {
            "city": {"type": "STRING", "description": "a city", "nullable": True},
            "days": {"type": "INTEGER", "minimum": 1, "max_items": "3"},
            "tags": {
                "type": "ARRAY",
                "items": {"type": "STRING", "enum": ["a", "b"]},
                "example": ["a"],
            },
            "any": {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}], "nullable": True},
        },
        "required": ["city"],
        "propertyOrdering": ["city", "days"],
    }
    body = {
        "contents": [user()],
        "tools": [{"functionDeclarations": [{"name": "f", "parameters": parameters}]}],
    }
    assert decode_body(body).config["tools"] == [
        {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": ["string", "null"], "description": "a city"},
                    "days": {"type": "integer", "minimum": 1, "maxItems": 3},
                    "tags": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["a", "b"]},
                        "examples": [["a"]],
                    },
                    "any": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "null"}]},
                },
                "required": ["city"],
                "propertyOrdering": ["city", "days"],
            },
        }
    ]


@pytest.mark.parametrize(
    ("config", "choice"),
    [
        ({"mode": "AUTO"}, "auto"),
        ({"mode": "ANY"}, "required"),
        ({"mode": "any", "allowedFunctionNames": ["f", "g", "f"]}, ["f", "g"]),
        ({"mode": "NONE"}, "none"),
        ({}, None),
    ],
)
def test_function_calling_modes_become_tool_choice(config: dict[str, Any], choice: Any) -> None:
    body = {
        "contents": [user()],
        "tools": [{"functionDeclarations": [{"name": "f"}, {"name": "g"}]}],
        "toolConfig": {"functionCallingConfig": config},
    }
    assert decode_body(body).config.get("tool_choice") == choice


def test_validated_mode_is_auto_with_strict_tools_and_goes_native_to_gemini() -> None:
    tool_config = {"functionCallingConfig": {"mode": "VALIDATED"}}
    body = {
        "contents": [user()],
        "tools": [{"functionDeclarations": [{"name": "f"}]}],
        "toolConfig": tool_config,
    }
    decoded = decode_body(body)
    assert decoded.config["tool_choice"] == "auto"
    assert decoded.config["tools"] == [{"name": "f", "strict": True}]
    assert decoded.native_fields == {"toolConfig": tool_config}


def test_built_in_search_and_code_tools_go_native_to_a_gemini_upstream_only() -> None:
    tools = [{"googleSearch": {}}, {"codeExecution": {}}, {"functionDeclarations": [{"name": "f"}]}]
    decoded = decode_body({"contents": [user()], "tools": tools})
    assert decoded.config["tools"] == [{"name": "f"}]
    assert decoded.native_fields == {"tools": tools}


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (
            {"contents": [{"role": "user", "parts": [{"text": "x"}]}], "frequencyPenalty": 1},
            "frequencyPenalty",
        ),
        (
            {"contents": [user()], "generationConfig": {"presencePenalty": 0.5}},
            "generationConfig.presencePenalty",
        ),
        (
            {"contents": [user()], "generationConfig": {"candidateCount": 2}},
            "generationConfig.candidateCount",
        ),
        ({"contents": [user()], "cachedContent": "cachedContents/abc"}, "cachedContent"),
        ({"contents": [user()], "tools": [{"fileSearch": {}}]}, "tools[0].fileSearch"),
        ({"contents": [user()], "tools": [{"mystery": {}}]}, "tools[0].mystery"),
        (
            {"contents": [user()], "generationConfig": {"responseMimeType": "text/x.enum"}},
            "generationConfig.responseMimeType",
        ),
        (
            {"contents": [user()], "generationConfig": {"responseSchema": {"type": "STRING"}}},
            "generationConfig.responseMimeType",
        ),
        (
            {"contents": [user()], "generationConfig": {"responseModalities": ["VIDEO"]}},
            "generationConfig.responseModalities",
        ),
        (
            {
                "contents": [user()],
                "toolConfig": {
                    "functionCallingConfig": {"mode": "AUTO", "allowedFunctionNames": ["f"]}
                },
            },
            "toolConfig.functionCallingConfig.allowedFunctionNames",
        ),
        (
            {"contents": [user()], "toolConfig": {"retrievalConfig": {}}},
            "toolConfig.retrievalConfig",
        ),
        ({"contents": [{"role": "system", "parts": [{"text": "x"}]}]}, "contents[0].role"),
        (
            {"contents": [{"role": "user", "parts": [{"executableCode": {"code": "1"}}]}]},
            "contents[0].parts[0].executableCode",
        ),
        (
            {"contents": [{"role": "user", "parts": [{"fileData": {"fileUri": "gs://b/x.pdf"}}]}]},
            "contents[0].parts[0].fileData.fileUri",
        ),
        (
            {
                "contents": [
                    user(),
                    {"role": "model", "parts": [{"functionResponse": {"name": "f"}}]},
                ]
            },
            "contents[1].parts[0].functionResponse",
        ),
        (
            {
                "contents": [
                    {
                        "role": "user",
                        "parts": [{"text": "a", "inlineData": {"mimeType": "x/y", "data": ""}}],
                    }
                ]
            },
            "contents[0].parts[0]",
        ),
        (
            {
                "contents": [user()],
                "generationConfig": {
                    "thinkingConfig": {"thinkingBudget": 5, "thinkingLevel": "LOW"}
                },
            },
            "generationConfig.thinkingConfig",
        ),
        (
            {"contents": [user()], "generationConfig": {"temperature": "hot"}},
            "generationConfig.temperature",
        ),
        ({"contents": []}, "contents"),
        ({"systemInstruction": {"parts": [{"text": "x"}]}}, "contents"),
    ],
)
def test_a_field_the_gateway_cannot_serve_is_a_400_naming_it(
    body: dict[str, Any], param: str
) -> None:
    with pytest.raises(InboundRequestError) as error:
        decode_body(body)
    assert error.value.status == 400
    assert error.value.param == param


def test_a_body_that_is_not_an_object_is_a_400() -> None:
    with pytest.raises(InboundRequestError, match="JSON object"):
        decode_body([{"contents": []}])


def test_ignored_fields_are_listed_for_the_log() -> None:
    body = {
        "contents": [user()],
        "safetySettings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}],
        "labels": {"team": "a"},
        "tools": [
            {"functionDeclarations": [{"name": "f", "responseJsonSchema": {"type": "string"}}]}
        ],
    }
    decoded = decode_body(body)
    assert decoded.ignored == (
        "safetySettings",
        "labels",
        "tools[0].functionDeclarations[0].responseJsonSchema",
    )


def test_top_k_goes_native_to_a_gemini_upstream() -> None:
    decoded = decode_body({"contents": [user()], "generationConfig": {"topK": 3.0, "topP": 0.5}})
    assert decoded.native_fields == {"generationConfig": {"topK": 3.0}}
    assert decoded.config == {"top_p": 0.5}


def test_response_schemas_become_a_response_format() -> None:
    json_schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    cases = [
        ({"responseMimeType": "application/json"}, {"type": "json_object"}),
        (
            {"responseMimeType": "application/json", "responseJsonSchema": json_schema},
            {"type": "json_schema", "name": "response", "schema": json_schema},
        ),
        (
            {
                "responseMimeType": "application/json",
                "responseSchema": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}},
            },
            {"type": "json_schema", "name": "response", "schema": json_schema},
        ),
        ({"responseMimeType": "text/plain"}, None),
    ]
    for generation, expected in cases:
        decoded = decode_body({"contents": [user()], "generationConfig": generation})
        assert decoded.config.get("response_format") == expected


def test_media_output_settings_come_back() -> None:
    image = {"responseModalities": ["TEXT", "IMAGE"], "imageConfig": {"aspectRatio": "1:1"}}
    assert decode_body({"contents": [user()], "generationConfig": image}).config == {
        "image_output": {"aspect_ratio": "1:1"}
    }
    speech = {
        "responseModalities": ["AUDIO"],
        "speechConfig": {
            "voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Kore"}},
            "languageCode": "de-DE",
        },
    }
    assert decode_body({"contents": [user()], "generationConfig": speech}).config == {
        "speech_output": {"voice": "Kore", "language": "de-DE"}
    }


def test_function_responses_without_ids_answer_the_calls_of_their_name_in_order() -> None:
    body = {
        "contents": [
            user(),
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "f", "args": {"n": 1}}},
                    {"functionCall": {"name": "g", "args": {}}},
                    {"functionCall": {"name": "f", "args": {"n": 2}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "f", "response": {"result": "one"}}},
                    {"functionResponse": {"name": "f", "response": {"output": 2}}},
                    {"functionResponse": {"name": "g", "response": {"result": [1]}}},
                ],
            },
        ]
    }
    decoded = decode_body(body)
    assert [item["tool_call_id"] for item in decoded.messages[1]["content_items"]] == [
        "call_1",
        "call_2",
        "call_3",
    ]  # type: ignore[typeddict-item]
    assert decoded.messages[2]["content_items"] == [
        {"type": "tool_result.done", "tool_call_id": "call_1", "text": "one"},
        {"type": "tool_result.done", "tool_call_id": "call_3", "text": '{"output":2}'},
        {"type": "tool_result.done", "tool_call_id": "call_2", "text": "[1]"},
    ]
    # ids the assembler made up are not sent on to Gemini, which matches results by name
    encoded = encode_request(PROTOCOL, "gemini-2.5-flash", decoded.messages, decoded.config).json
    assert "id" not in encoded["contents"][1]["parts"][0]["functionCall"]


def test_a_function_response_that_answers_no_call_is_a_400() -> None:
    body = {
        "contents": [
            user(),
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ]
    }
    with pytest.raises(InboundRequestError, match="answers no functionCall named 'f'"):
        decode_body(body)


def test_function_response_parts_become_the_results_images() -> None:
    body = {
        "contents": [
            user(),
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "shot", "args": {}, "id": "c1"}}],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "shot",
                            "id": "c1",
                            "response": {"result": "see image"},
                            "parts": [
                                {"inlineData": {"mimeType": "image/png", "data": "iVBORw=="}}
                            ],
                        }
                    }
                ],
            },
        ]
    }
    assert decode_body(body).messages[2]["content_items"] == [
        {
            "type": "tool_result.done",
            "tool_call_id": "c1",
            "text": "see image",
            "images": ["data:image/png;base64,iVBORw=="],
        }
    ]


def test_a_chat_history_of_one_model_content_per_chunk_is_one_assistant_message() -> None:
    body = {
        "contents": [
            user(),
            {"role": "model", "parts": [{"text": "Hel"}]},
            {"role": "model", "parts": [{"text": "lo"}]},
            {"role": "model", "parts": [{"text": "", "thoughtSignature": NATIVE_SIGNATURE}]},
            {"role": "model", "parts": [{"text": ""}]},
            {"role": "model", "parts": []},
            user("again"),
        ]
    }
    decoded = decode_body(body)
    assert decoded.messages[1] == {
        "role": "assistant",
        "content_items": [
            {
                "type": "text.done",
                "text": "Hello",
                "fidelity": {"thought_signature": NATIVE_SIGNATURE},
            }
        ],
    }


def test_user_audio_stays_inline_data() -> None:
    body = {
        "contents": [
            {
                "role": "user",
                "parts": [{"inlineData": {"mimeType": "audio/wav", "data": "UklGRg=="}}],
            }
        ]
    }
    assert decode_body(body).messages[0]["content_items"] == [
        {"type": "inline_data.done", "data": b"RIFF", "mime_type": "audio/wav"}
    ]


def test_count_tokens_reads_contents_or_a_whole_generate_request() -> None:
    counted = decode_body({"contents": [user("count me")]}, COUNT_TOKENS_ROUTE)
    assert counted.stream is False and counted.messages[0]["content_items"][0]["text"] == "count me"  # type: ignore[typeddict-item]
    whole = {
        "generateContentRequest": {
            "model": "models/gemini-2.5-flash",
            "contents": [user()],
            "systemInstruction": {"parts": [{"text": "s"}]},
        }
    }
    counted = decode_body(whole, COUNT_TOKENS_ROUTE)
    assert counted.config == {"system_prompt": "s"}
    assert counted.ignored == ("generateContentRequest.model",)
    with pytest.raises(InboundRequestError):
        decode_body({}, COUNT_TOKENS_ROUTE)


def test_routes_set_streaming_and_answer_shape() -> None:
    assert decode_body({"contents": [user()]}, GENERATE_ROUTE, query={}).stream is False
    as_array = decode_body({"contents": [user()]}, STREAM_ROUTE, query={})
    assert as_array.stream is True and as_array.options == {"alt": "json"}
    assert as_array.content_type == "application/json; charset=utf-8"
    with pytest.raises(InboundRequestError) as error:
        decode_body({"contents": [user()]}, STREAM_ROUTE, query={"alt": "proto"})
    assert error.value.param == "alt"


def test_the_model_comes_from_the_path_and_the_version_must_be_served() -> None:
    assert decode_body({"contents": [user()]}, model="tuned%2Fx").model == "tuned/x"
    with pytest.raises(InboundRequestError) as error:
        decode_body({"contents": [user()]}, version="v2")
    assert error.value.status == 404


# --- the official SDK over loopback HTTP -------------------------------------------------------

WEATHER = genai_types.FunctionDeclaration(
    name="get_weather",
    description="The weather in a city.",
    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)
SDK_CONFIG = genai_types.GenerateContentConfig(
    thinking_config=genai_types.ThinkingConfig(include_thoughts=True),
    tools=[genai_types.Tool(function_declarations=[WEATHER])],
    automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
)
# an Anthropic turn: signed thinking, text, a call with Anthropic's id
ANTHROPIC_TURN = [
    {
        "type": "thinking.done",
        "thinking": "The user wants weather.",
        "fidelity": {"signature": "EqQBCkYIBxgC"},
    },
    {"type": "text.done", "text": "Let me check."},
    {
        "type": "tool_call.done",
        "tool_call_id": "toolu_01Xk",
        "name": "get_weather",
        "arguments": {"city": "Paris"},
    },
]
# a Gemini turn: its signatures in the standard alphabet, calls without ids
GEMINI_TURN = [
    {
        "type": "thinking.done",
        "thinking": "Weather, then.",
        "fidelity": {"thought_signature": NATIVE_SIGNATURE},
    },
    {
        "type": "tool_call.done",
        "tool_call_id": "call_1",
        "name": "get_weather",
        "arguments": {"city": "Oslo"},
        "fidelity": {"thought_signature": "EpEgCo4+/w=="},
    },
]


@pytest.fixture(scope="module")
def loopback() -> Iterator[tuple[LoopbackGateway, str]]:
    gateway = LoopbackGateway()
    with BackgroundServer(gateway.app) as server:
        yield gateway, server.url


@pytest.fixture
def gateway(loopback: tuple[LoopbackGateway, str]) -> LoopbackGateway:
    gateway, _ = loopback
    gateway.requests.clear()
    gateway.keys.clear()
    gateway.script = Script()
    return gateway


@pytest.fixture
def client(loopback: tuple[LoopbackGateway, str], gateway: LoopbackGateway) -> genai.Client:
    options = genai_types.HttpOptions(base_url=loopback[1])
    return genai.Client(api_key=KEY, http_options=options)


def parts_of(chunks: list[genai_types.GenerateContentResponse]) -> list[genai_types.Part]:
    return [
        part
        for chunk in chunks
        for candidate in chunk.candidates or []
        if candidate.content
        for part in candidate.content.parts or []
    ]


def test_the_sdk_streams_thoughts_text_a_call_usage_and_finish(
    gateway: LoopbackGateway, client: genai.Client
) -> None:
    gateway.script = Script(
        turn_events(ANTHROPIC_TURN, "tool_call", USAGE, cuts=[[4, 9], [3], [6]])
    )
    chunks = list(
        client.models.generate_content_stream(
            model="gemini-2.5-flash", contents="Weather in Paris?", config=SDK_CONFIG
        )
    )
    parts = parts_of(chunks)
    assert "".join(p.text for p in parts if p.thought and p.text) == "The user wants weather."
    assert "".join(p.text for p in parts if not p.thought and p.text) == "Let me check."
    calls = [p.function_call for p in parts if p.function_call]
    assert [(c.id, c.name, c.args) for c in calls] == [
        ("toolu_01Xk", "get_weather", {"city": "Paris"})
    ]
    assert chunks[-1].function_calls is None  # the last chunk holds the finish only
    last = chunks[-1].candidates[0]  # type: ignore[index]
    assert last.finish_reason == genai_types.FinishReason.STOP
    usage = chunks[-1].usage_metadata
    assert usage is not None
    assert (usage.prompt_token_count, usage.cached_content_token_count) == (14, 4)
    assert (usage.candidates_token_count, usage.thoughts_token_count, usage.total_token_count) == (
        5,
        6,
        25,
    )
    assert gateway.keys == [KEY]
    sent = gateway.requests[-1]
    assert sent.stream is True and sent.options["alt"] == "sse"
    assert sent.messages == [
        {"role": "user", "content_items": [{"type": "text.done", "text": "Weather in Paris?"}]}
    ]
    assert sent.config["thinking_summary"] is True
    assert sent.config["tools"] == [
        {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]


@pytest.mark.parametrize(
    ("turn", "upstream"), [(ANTHROPIC_TURN, "anthropic-messages"), (GEMINI_TURN, PROTOCOL)]
)
def test_the_sdks_own_response_sent_back_restores_every_items_fidelity(
    gateway: LoopbackGateway, client: genai.Client, turn: list[dict[str, Any]], upstream: str
) -> None:
    gateway.script = Script(
        turn_events(turn, "tool_call", USAGE, cuts=[[5], [2]]), upstream=upstream
    )
    chat = client.chats.create(model="gemini-2.5-flash", config=SDK_CONFIG)
    chunks = list(chat.send_message_stream("Weather?"))
    calls = [p.function_call for p in parts_of(chunks) if p.function_call]
    gateway.script = Script(turn_events([{"type": "text.done", "text": "Sunny."}], "stop", USAGE))
    answers = [
        genai_types.Part.from_function_response(name=c.name or "", response={"result": "sunny"})
        for c in calls
    ]
    for answer, c in zip(answers, calls, strict=True):
        answer.function_response.id = c.id  # type: ignore[union-attr]
    reply = chat.send_message(answers)
    assert reply.text == "Sunny."
    history = gateway.requests[-1].messages
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert history[1]["content_items"] == turn
    call_id = turn[-1]["tool_call_id"]
    assert history[2]["content_items"] == [
        {"type": "tool_result.done", "tool_call_id": call_id, "text": "sunny"}
    ]


def test_a_call_the_upstream_gave_no_id_is_answered_by_name(
    gateway: LoopbackGateway, client: genai.Client
) -> None:
    gateway.script = Script(turn_events(GEMINI_TURN, "tool_call", USAGE), upstream=PROTOCOL)
    response = client.models.generate_content(
        model="gemini-2.5-flash", contents="Weather?", config=SDK_CONFIG
    )
    assert response.function_calls is not None and response.function_calls[0].id is None
    model_turn = response.candidates[0].content  # type: ignore[index]
    answer = genai_types.Part.from_function_response(
        name="get_weather", response={"result": "cold"}
    )
    contents = [
        genai_types.Content(role="user", parts=[genai_types.Part(text="Weather?")]),
        model_turn,
        genai_types.Content(role="user", parts=[answer]),
    ]
    gateway.script = Script(turn_events([{"type": "text.done", "text": "Cold."}], "stop", USAGE))
    client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=SDK_CONFIG)  # type: ignore[arg-type]
    history = gateway.requests[-1].messages
    assert history[1]["content_items"] == GEMINI_TURN
    assert history[2]["content_items"] == [
        {"type": "tool_result.done", "tool_call_id": "call_1", "text": "cold"}
    ]


def test_the_sdk_reads_a_whole_answer(gateway: LoopbackGateway, client: genai.Client) -> None:
    gateway.script = Script(turn_events(ANTHROPIC_TURN, "tool_call", USAGE))
    response = client.models.generate_content(
        model="gemini-2.5-flash", contents="Weather?", config=SDK_CONFIG
    )
    assert gateway.requests[-1].stream is False
    assert response.text == "Let me check."
    assert response.function_calls is not None
    assert [(c.id, c.name, c.args) for c in response.function_calls] == [
        ("toolu_01Xk", "get_weather", {"city": "Paris"})
    ]
    candidate = response.candidates[0]  # type: ignore[index]
    assert candidate.finish_reason == genai_types.FinishReason.STOP
    thought = candidate.content.parts[0]  # type: ignore[union-attr, index]
    assert thought.thought is True and thought.text == "The user wants weather."
    assert response.usage_metadata is not None and response.usage_metadata.total_token_count == 25
    assert response.response_id == "resp-7Qz" and response.model_version == "gemini-2.5-flash"


def test_a_429_raises_the_sdks_client_error_with_its_retry_delay(
    gateway: LoopbackGateway, client: genai.Client
) -> None:
    gateway.script = Script(
        http_error=GatewayError(429, "RateLimitError", "Quota exceeded", retry_after=7)
    )
    with pytest.raises(genai_errors.ClientError) as error:
        list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    assert error.value.code == 429
    assert error.value.status == "RESOURCE_EXHAUSTED"
    assert error.value.message == "Quota exceeded"
    assert error.value.response.headers["retry-after"] == "7"
    assert error.value.details["error"]["details"][0]["retryDelay"] == "7s"


@pytest.mark.parametrize(
    ("status", "raised"), [(500, genai_errors.ServerError), (429, genai_errors.ClientError)]
)
def test_an_in_stream_error_makes_the_sdk_raise_after_the_parts_before_it(
    gateway: LoopbackGateway, client: genai.Client, status: int, raised: type[Exception]
) -> None:
    events = group({"type": "text.done", "text": "partial answer"}, ["partial", " answer"])[:2]
    gateway.script = Script(
        events, then_fail=GatewayError(status, "ProviderError", "upstream broke")
    )
    seen: list[str] = []
    with pytest.raises(raised) as error:
        for chunk in client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"):
            seen.append(chunk.text or "")
    assert seen == ["partial", " answer"]
    assert error.value.code == status  # type: ignore[attr-defined]
    assert error.value.message == "upstream broke"  # type: ignore[attr-defined]


def test_a_request_field_the_gateway_cannot_serve_is_the_sdks_400(
    gateway: LoopbackGateway, client: genai.Client
) -> None:
    config = genai_types.GenerateContentConfig(presence_penalty=0.5)
    with pytest.raises(genai_errors.ClientError) as error:
        client.models.generate_content(model="gemini-2.5-flash", contents="hi", config=config)
    assert error.value.code == 400 and error.value.status == "INVALID_ARGUMENT"
    assert "presencePenalty" in (error.value.message or "")


def test_the_sdk_counts_tokens_and_lists_models(
    gateway: LoopbackGateway, client: genai.Client
) -> None:
    assert (
        client.models.count_tokens(model="gemini-2.5-flash", contents="count me").total_tokens == 42
    )
    assert gateway.requests[-1].messages[0]["content_items"] == [
        {"type": "text.done", "text": "count me"}
    ]
    assert [m.name for m in client.models.list()] == ["models/gemini-2.5-flash", "models/claude"]


def test_a_rest_client_without_alt_sse_reads_one_json_array_and_may_send_its_key_in_the_query(
    loopback: tuple[LoopbackGateway, str], gateway: LoopbackGateway
) -> None:
    gateway.script = Script(
        turn_events([{"type": "text.done", "text": "Hello"}], "stop", USAGE, cuts=[[2]])
    )
    url = loopback[1] + "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    response = httpx.post(url, params={"key": KEY}, json={"contents": [user()]})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    chunks = response.json()
    assert [c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks] == ["He", "llo", ""]
    assert gateway.keys == [KEY]


def test_the_sdk_on_the_v1beta_version_is_served_alike(
    loopback: tuple[LoopbackGateway, str], gateway: LoopbackGateway
) -> None:
    options = genai_types.HttpOptions(base_url=loopback[1], api_version="v1beta")
    beta = genai.Client(api_key=KEY, http_options=options)
    gateway.script = Script(turn_events([{"type": "text.done", "text": "Hi!"}], "stop", USAGE))
    assert beta.models.generate_content(model="gemini-2.5-flash", contents="hi").text == "Hi!"
    assert gateway.requests[-1].model == "gemini-2.5-flash"
