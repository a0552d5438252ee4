"""The OpenAI Chat Completions gateway wire (protocols/openai_chat: inbound.py, writer.py).

Events → writer → bytes → the openai-chat StreamDecoder gives the same turn back; a client's
request → decode_request gives the SPEC request the encoder would have sent it as; fidelity of
any upstream comes back from the client's next request; and the official `openai` SDK parses
what the writer writes, over real loopback HTTP.
"""

from __future__ import annotations

import json
import random
import string
from typing import Any

import openai
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk
from pydantic import BaseModel

from modelstream import GrammarChecker, ProviderError
from modelstream.protocols import encode_request
from modelstream.protocols.common.fidelity_seal import FidelitySeal, is_sealed
from modelstream.protocols.common.gateway import GatewayError, InboundRequestError, ServedModel
from modelstream.protocols.openai_chat.emulator import openai_error_body
from modelstream.protocols.openai_chat.writer import UnsupportedOutputError
from support import decode_chunks
from support.gateway import (
    call_arguments,
    delta,
    draw_pieces,
    random_cuts,
    stop,
    strict_objects,
    words,
)
from support.gateway_openai_chat import (
    GATEWAY,
    MODEL,
    SEAL,
    chunks_of,
    context,
    decode,
    deltas_of,
    loopback,
    request,
    text,
    thinking,
    tool_call,
    write,
)

USAGE = {"cached_tokens": 5, "prompt_tokens": 20, "thoughts_tokens": 7, "response_tokens": 11}
UPSTREAMS = [
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "gemini-generate-content",
    "gemini-interactions",
    "bedrock-converse-stream",
]
# upstreams whose tool calls can carry fidelity (written whole, at the call's end)
FIDELITY_CALLS = {"openai-responses", "gemini-generate-content", "gemini-interactions"}
FOREIGN_THINKING = [
    {"thought_signature": "CiQBVKhc7vB2"},
    {"id": "rs_68a1", "encrypted_content": "gAAAAABo-encrypted=="},
    {"signature": "EqQBCkYIBxgCKkB"},
    {"redacted_thinking": "EmwKAhgBEgy3va"},
    {"reasoning_field": "reasoning_content"},
    {"reasoning_field": "reasoning", "format": "anthropic-claude-v1", "signature": "sig"},
]


def split_seal(value: str) -> tuple[str, dict[str, Any] | None]:
    head, _, token = value.rpartition("-")
    return (head, SEAL.open(token)) if head and is_sealed(token) else (value, None)


# --- the stream round trip: events → writer → bytes → decoder ---------------------------------


@st.composite
def turns(draw: Any) -> dict[str, Any]:
    """A random turn: its events and what the Chat decoder must read back from the writer."""
    upstream = draw(st.sampled_from(UPSTREAMS))
    events: list[Any] = []
    plan: list[tuple[str, Any]] = []  # (kind, facts) per item, for the expectation
    calls = 0
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["text", "text", "thinking", "tool_call"]))
        if kind == "text":
            value = draw(words)
            refusal = draw(st.sampled_from([None, "first", "last"]))
            fidelity = {"refusal": True} if refusal else None
            events += text(
                value, fidelity, pieces=draw_pieces(draw, value), fidelity_first=refusal == "first"
            )
            plan.append(("refusal" if refusal == "first" else "text", value))
        elif kind == "thinking":
            fidelity = draw(st.sampled_from([None, *FOREIGN_THINKING]))
            value = draw(words if fidelity is None else st.one_of(st.just(""), words))
            first = draw(st.booleans())
            events += thinking(
                value, fidelity, pieces=draw_pieces(draw, value), fidelity_first=first
            )
            plan.append(("thinking", (value, fidelity)))
        else:
            calls += 1
            arguments = draw(call_arguments)
            fidelity = None
            if upstream in FIDELITY_CALLS:
                fidelity = draw(
                    st.sampled_from([None, {"thought_signature": "Cs8BAY"}, {"id": "fc_9"}])
                )
            raw = orjson.dumps(arguments).decode()
            call_id, name = f"call_{calls}x", draw(st.sampled_from(["get_weather", "search", "f"]))
            events += tool_call(call_id, name, arguments, fidelity, pieces=draw_pieces(draw, raw))
            plan.append(("tool_call", (call_id, name, arguments, fidelity)))
    if not any(kind in ("text", "refusal", "tool_call") for kind, _ in plan):
        events += text("Done.")
        plan.append(("text", "Done."))
    finish = draw(st.sampled_from(["stop", "length", "tool_call", "unknown"]))
    counts = st.one_of(st.none(), st.integers(0, 10**6))
    usage = {key: draw(counts) for key in USAGE}
    include_usage = draw(st.booleans())
    events.append(stop(finish, usage))  # type: ignore[arg-type]
    return {
        "upstream": upstream,
        "events": events,
        "plan": plan,
        "finish": finish,
        "usage": usage,
        "include_usage": include_usage,
        "seed": draw(st.integers(0, 2**32)),
    }


# an openai-chat upstream's own thinking fidelity: written as it is, not sealed (SPEC §8)
CHAT_THINKING_KEYS = {"reasoning_field", "signature", "format", "reasoning_id"}


def expected_items(plan: list[tuple[str, Any]], upstream: str) -> list[dict[str, Any]]:
    """The items the Chat decoder reads back, before fidelity tokens are opened: adjacent texts
    of one kind join (Chat text has no block identity); a refusal marked only at its end went
    out as content (documented); thinking comes back marked `reasoning` (the decoder's name
    for text mirrored in `reasoning_details`) with its fidelity sealed in `signature`, or, from
    an openai-chat upstream, its own fidelity as it was written (`signature`, `format`; the
    `reasoning_field` is where the writer put the text)."""
    out: list[dict[str, Any]] = []
    for kind, facts in plan:
        if kind in ("text", "refusal"):
            fidelity = {"refusal": True} if kind == "refusal" else None
            last = out[-1] if out else None
            if last and last["type"] == "text.done" and last.get("fidelity") == fidelity:
                last["text"] += facts
                continue
            item: dict[str, Any] = {"type": "text.done", "text": facts}
            if fidelity:
                item["fidelity"] = fidelity
            out.append(item)
        elif kind == "thinking":
            value, fidelity = facts
            native = upstream == "openai-chat" and set(fidelity or {}) <= CHAT_THINKING_KEYS
            written = {k: v for k, v in (fidelity or {}).items() if k != "reasoning_field"}
            if not value and not (written if native else fidelity):
                continue
            item = {"type": "thinking.done", "thinking": value, "fidelity": {}}
            if value:
                item["fidelity"]["reasoning_field"] = "reasoning"
            if native:
                item["fidelity"].update(written)
            elif fidelity:
                item["fidelity"]["signature"] = fidelity  # compared after opening the token
            out.append(item)
        else:
            call_id, name, arguments, fidelity = facts
            item = {"type": "tool_call.done", "tool_call_id": (call_id, fidelity), "name": name}
            item["arguments"] = arguments
            out.append(item)
    return out


def opened(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Decoded items with their sealed tokens opened, in the shape of `expected_items`."""
    out = []
    for item in items:
        item = dict(item)
        if item["type"] == "thinking.done":
            fidelity = dict(item.get("fidelity") or {})
            if is_sealed(fidelity.get("signature")):
                fidelity["signature"] = SEAL.open(fidelity["signature"])
            item["fidelity"] = fidelity
        if item["type"] == "tool_call.done":
            item["tool_call_id"] = split_seal(item["tool_call_id"])
        out.append(item)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns())
def test_any_turn_written_as_chat_decodes_to_the_same_items_finish_and_usage(
    turn: dict[str, Any],
) -> None:
    ctx = context(turn["upstream"], include_usage=turn["include_usage"])
    checker = GrammarChecker()
    for e in turn["events"]:
        checker.feed(e)  # the input is itself a valid stream
    body = write(turn["events"], ctx)

    decoded = decode_chunks("openai-chat", random_cuts(body, random.Random(turn["seed"])))

    assert decoded.error is None, decoded.error
    assert opened(decoded.done_items) == expected_items(turn["plan"], turn["upstream"])
    calls = any(kind == "tool_call" for kind, _ in turn["plan"])
    finish = "tool_call" if turn["finish"] == "stop" and calls else turn["finish"]
    assert decoded.stop is not None and decoded.stop["finish_reason"] == finish
    usage = turn["usage"]
    if turn["include_usage"]:
        assert decoded.stop["usage_metadata"] == {
            "cached_tokens": usage["cached_tokens"],
            "prompt_tokens": usage["prompt_tokens"] or 0,  # Chat has no unknown count
            "thoughts_tokens": usage["thoughts_tokens"],
            "response_tokens": usage["response_tokens"] or 0,
        }
    else:  # no usage chunk without stream_options.include_usage, as OpenAI does
        assert set(decoded.stop["usage_metadata"].values()) == {None}


# --- the frames --------------------------------------------------------------------------------


def test_a_text_stream_has_openais_frames_role_first_then_finish_usage_and_done() -> None:
    body = write([*text("Hello there"), stop("stop", USAGE)])  # type: ignore[arg-type]

    chunks = chunks_of(body)

    assert chunks[-1] == "[DONE]"
    first = chunks[0]
    assert first["id"] == "chatcmpl-gw_5f1c2a"
    assert (first["object"], first["created"], first["model"]) == (
        "chat.completion.chunk",
        1727346168,
        "gpt-4o",
    )
    assert first["choices"] == [
        {
            "index": 0,
            "delta": {"role": "assistant", "content": "", "refusal": None},
            "logprobs": None,
            "finish_reason": None,
        }
    ]
    assert [c["choices"][0]["delta"] for c in chunks[1:3]] == [
        {"content": "Hello"},
        {"content": " there"},
    ]
    assert chunks[3]["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "stop",
    }
    assert all(c["usage"] is None for c in chunks[:4])
    assert chunks[4]["choices"] == []
    assert chunks[4]["usage"] == {
        "prompt_tokens": 25,
        "completion_tokens": 18,
        "total_tokens": 43,
        "prompt_tokens_details": {"cached_tokens": 5},
        "completion_tokens_details": {"reasoning_tokens": 7},
    }
    assert len(chunks) == 6


def test_without_include_usage_there_is_no_usage_chunk_and_no_usage_key() -> None:
    body = write([*text("Hi"), stop("stop", USAGE)], context(include_usage=False))  # type: ignore[arg-type]

    chunks = chunks_of(body)

    assert chunks[-1] == "[DONE]"
    assert all("usage" not in c for c in chunks[:-1])
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize(
    ("finish", "wire"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("tool_call", "tool_calls"),
        ("unknown", "content_filter"),
    ],
)
def test_finish_reasons_map_to_chats_values(finish: str, wire: str) -> None:
    chunks = chunks_of(write([*text("x"), stop(finish)], context(include_usage=False)))

    assert chunks[-2]["choices"][0]["finish_reason"] == wire


def test_unknown_usage_counts_are_zero_and_unknown_details_are_left_out() -> None:
    usage = {
        "cached_tokens": None,
        "prompt_tokens": 9,
        "thoughts_tokens": None,
        "response_tokens": None,
    }

    chunks = chunks_of(write([*text("x"), stop("stop", usage)]))  # type: ignore[arg-type]

    assert chunks[-2]["usage"] == {"prompt_tokens": 9, "completion_tokens": 0, "total_tokens": 9}


def test_thinking_streams_in_reasoning_content_mirrored_per_item_in_reasoning_details() -> None:
    events = [*thinking("Let me see."), *thinking("Hmm", {"thought_signature": "abc"}), *text("4")]

    deltas = deltas_of(write([*events, stop()]))

    assert deltas[1] == {
        "reasoning_content": "Let m",
        "reasoning_details": [{"type": "reasoning.text", "text": "Let m", "index": 0}],
    }
    assert deltas[3]["reasoning_details"][0]["index"] == 1
    signed = deltas[5]["reasoning_details"][0]
    assert (signed["type"], signed["index"]) == ("reasoning.text", 1)
    assert SEAL.open(signed["signature"]) == {"thought_signature": "abc"}
    assert "reasoning_content" not in deltas[5]


def test_a_refusal_marked_on_its_first_fragment_streams_in_delta_refusal() -> None:
    events = text("I can't help with that.", {"refusal": True}, fidelity_first=True)

    deltas = deltas_of(write([*events, stop()]))

    assert deltas[0] == {"role": "assistant", "content": None, "refusal": ""}
    assert [d.get("refusal") for d in deltas[1:3]] == ["I can't hel", "p with that."]
    assert all("content" not in d for d in deltas[1:3])


def test_a_refusal_marked_only_at_its_end_has_already_streamed_as_content() -> None:
    # the assembler puts fidelity on the last fragment (rule C): documented loss
    events = text("No.", {"refusal": True})

    deltas = deltas_of(write([*events, stop()]))

    assert [d.get("content") for d in deltas[1:]] == ["N", "o.", None]


def test_tool_call_arguments_stream_as_they_arrive_from_an_upstream_without_call_fidelity() -> None:
    writer = GATEWAY.writer(context("anthropic-messages"))
    events = tool_call("toolu_01", "get_weather", {"city": "Paris"})

    frames = [writer.feed(e) for e in events]

    assert len(frames[0]) == 3  # role chunk, the call's id and name, its first fragment
    first = json.loads(frames[0][1][6:])["choices"][0]["delta"]["tool_calls"][0]
    assert first == {
        "index": 0,
        "id": "toolu_01",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    assert json.loads(frames[1][0][6:])["choices"][0]["delta"]["tool_calls"] == [
        {"index": 0, "function": {"arguments": '"Paris"}'}}
    ]
    assert frames[2] == []


def test_a_call_from_gemini_is_written_at_its_end_with_its_signature_sealed_in_the_id() -> None:
    writer = GATEWAY.writer(context("gemini-generate-content"))
    events = tool_call("call_1", "get_weather", {"city": "Paris"}, {"thought_signature": "Cs8B"})

    frames = [writer.feed(e) for e in events]

    assert [len(f) for f in frames] == [1, 0, 0, 3]  # the role chunk, then all at the .done
    calls = [json.loads(f[6:])["choices"][0]["delta"]["tool_calls"][0] for f in frames[3]]
    assert split_seal(calls[0]["id"]) == ("call_1", {"thought_signature": "Cs8B"})
    assert [c["index"] for c in calls] == [0, 0, 0]
    assert "".join(c["function"]["arguments"] for c in calls) == '{"city":"Paris"}'


def test_parallel_calls_get_their_own_indices() -> None:
    events = [*tool_call("a", "f", {}), *tool_call("b", "g", {"x": 1}), stop("tool_call")]

    deltas = deltas_of(write(events))

    starts = [c for d in deltas for c in d.get("tool_calls", []) if "id" in c]
    assert [(c["index"], c["id"], c["function"]["name"]) for c in starts] == [
        (0, "a", "f"),
        (1, "b", "g"),
    ]


def test_fail_writes_one_error_chunk_and_nothing_after_it_leaving_the_open_item_unfinished() -> (
    None
):
    writer = GATEWAY.writer(context())
    frames = [f for e in text("partial answer")[:2] for f in writer.feed(e)]

    frames += writer.fail(GatewayError(status=429, type="RateLimitError", message="slow down"))

    assert frames[-1] == (
        b'data: {"error":{"message":"slow down","type":"requests","param":null,'
        b'"code":"rate_limit_exceeded"}}\n\n'
    )
    assert writer.feed(stop()) == []
    assert writer.fail(GatewayError(500, "ServerError", "again")) == []
    decoded = decode_chunks("openai-chat", [b"".join(frames)])
    assert isinstance(decoded.error, ProviderError)
    assert "slow down" in str(decoded.error)
    assert decoded.done_items == []  # the open text never finished


def test_an_item_chat_cannot_carry_ends_the_stream_with_an_error_naming_it() -> None:
    image = {"type": "inline_data.delta", "data": b"\x89PNG", "mime_type": "image/png"}
    writer = GATEWAY.writer(context("gemini-generate-content"))

    frames = writer.feed(delta(image))

    error = json.loads(frames[-1][6:])["error"]
    assert "inline_data" in error["message"] and "image/png" in error["message"]
    assert error["code"] == "unsupported_content"
    assert writer.feed(stop()) == []


def test_events_that_break_the_grammar_end_the_stream_with_an_error_not_a_finish() -> None:
    writer = GATEWAY.writer(context())
    events = thinking("abc")[:1] + text("x")[:1]

    frames = [f for e in events for f in writer.feed(e)]

    assert b"error" in frames[-1] and b"text fragment inside an open thinking" in frames[-1]
    assert writer.feed(stop()) == []


# --- fidelity of any upstream comes back from the client's next request -----------------------


def _client_message(body: bytes) -> dict[str, Any]:
    """What a client sends back: the openai SDK's accumulated message, dumped as it sends it."""
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks_of(body):
        if chunk != "[DONE]":
            state.handle_chunk(ChatCompletionChunk.construct(**chunk))
    message = state.get_final_completion().choices[0].message
    return message.model_dump(exclude_none=True, exclude={"parsed"})


@pytest.mark.parametrize("fidelity", FOREIGN_THINKING, ids=lambda f: "+".join(f))
@pytest.mark.parametrize(
    "upstream", ["anthropic-messages", "gemini-generate-content", "openai-responses"]
)
def test_thinking_fidelity_comes_back_exactly_from_the_clients_next_request(
    fidelity: dict[str, Any], upstream: str
) -> None:
    value = "" if "redacted_thinking" in fidelity else "The user wants a number."
    events = [*thinking("Plan first."), *thinking(value, fidelity), *text("42"), stop()]
    message = _client_message(write(events, context(upstream)))

    sent = decode(
        request({"role": "user", "content": "Q"}, message, {"role": "user", "content": "More"})
    )

    assert sent.messages[1]["content_items"] == [
        {
            "type": "thinking.done",
            "thinking": "Plan first.",
            "fidelity": {"reasoning_field": "reasoning_content"},
        },
        {"type": "thinking.done", "thinking": value, "fidelity": fidelity},
        {"type": "text.done", "text": "42"},
    ]


def test_a_gemini_call_signature_comes_back_from_the_call_id_and_its_tool_result() -> None:
    events = [
        *tool_call("call_1", "get_weather", {"city": "Oslo"}, {"thought_signature": "Cs8BAY=="}),
        stop("tool_call"),
    ]
    message = _client_message(write(events, context("gemini-generate-content")))
    tool_message = {
        "role": "tool",
        "tool_call_id": message["tool_calls"][0]["id"],
        "content": "-3 C",
    }

    sent = decode(request({"role": "user", "content": "Weather?"}, message, tool_message))

    assert sent.messages[1]["content_items"] == [
        {
            "type": "tool_call.done",
            "tool_call_id": "call_1",
            "name": "get_weather",
            "arguments": {"city": "Oslo"},
            "fidelity": {"thought_signature": "Cs8BAY=="},
        }
    ]
    assert sent.messages[2]["content_items"] == [
        {"type": "tool_result.done", "tool_call_id": "call_1", "text": "-3 C"}
    ]


def test_the_non_stream_body_carries_the_same_fidelity_back() -> None:
    ctx = context("openai-responses", stream=False)
    message = {
        "role": "assistant",
        "content_items": [
            {
                "type": "thinking.done",
                "thinking": "t",
                "fidelity": {"id": "rs_1", "encrypted_content": "E"},
            },
            {"type": "text.done", "text": "Calling."},
            {
                "type": "tool_call.done",
                "tool_call_id": "call_7",
                "name": "f",
                "arguments": {"a": [1]},
                "fidelity": {"id": "fc_7"},
            },
        ],
        "usage_metadata": USAGE,
        "finish_reason": "tool_call",
    }

    body = GATEWAY.final_body(ctx, message)  # type: ignore[arg-type]
    returned = body["choices"][0]["message"]
    tool = {"role": "tool", "tool_call_id": returned["tool_calls"][0]["id"], "content": "ok"}
    sent = decode(request({"role": "user", "content": "Q"}, returned, tool))

    assert sent.messages[1]["content_items"] == message["content_items"]


@pytest.mark.parametrize("where", ["signature", "call id", "tool result id"])
def test_an_edited_sealed_token_is_a_400_naming_the_field(where: str) -> None:
    events = [
        *thinking("x", {"signature": "S"}),
        *tool_call("call_1", "f", {}, {"thought_signature": "T"}),
        stop("tool_call"),
    ]
    message = _client_message(write(events, context("gemini-generate-content")))
    call_id = message["tool_calls"][0]["id"]
    tool = {"role": "tool", "tool_call_id": call_id, "content": "ok"}

    def edit(token: str) -> str:
        return token[:-6] + ("A" if token[-6] != "A" else "B") + token[-5:]

    if where == "signature":
        detail = message["reasoning_details"][0]
        detail["signature"] = edit(detail["signature"])
        param = "messages[1].reasoning_details[0].signature"
    elif where == "call id":
        message["tool_calls"][0]["id"] = edit(call_id)
        param = "messages[1].tool_calls[0].id"
    else:
        tool["tool_call_id"] = edit(call_id)
        param = "messages[2].tool_call_id"

    with pytest.raises(InboundRequestError) as caught:
        decode(request({"role": "user", "content": "Q"}, message, tool))

    assert caught.value.param == param
    assert caught.value.status == 400
    assert "altered" in str(caught.value)


def test_a_token_sealed_by_another_server_is_refused() -> None:
    events = [*thinking("x", {"signature": "S"}), *text("y"), stop()]
    message = _client_message(write(events, context("anthropic-messages")))

    with pytest.raises(InboundRequestError, match="another"):
        decode(
            request({"role": "user", "content": "Q"}, message),
            FidelitySeal(b"another-key-0123456789"),
        )


def test_text_fidelity_other_than_refusal_has_no_field_in_chat_and_is_lost() -> None:
    # documented loss: a Responses message id / phase, a Gemini signature on a text part
    events = [*text("Answer.", {"id": "msg_1", "phase": "final_answer"}), stop()]
    message = _client_message(write(events, context("openai-responses")))

    sent = decode(request({"role": "user", "content": "Q"}, message))

    assert sent.messages[1]["content_items"] == [{"type": "text.done", "text": "Answer."}]


def test_an_openrouter_reasoning_detail_without_a_seal_is_chats_own_fidelity() -> None:
    message = {
        "role": "assistant",
        "content": "Hi",
        "reasoning": "Think",
        "reasoning_details": [
            {
                "type": "reasoning.text",
                "text": "Think",
                "format": "anthropic-claude-v1",
                "index": 0,
            },
            {"type": "reasoning.text", "signature": "EqQB", "index": 0},
        ],
    }

    sent = decode(request({"role": "user", "content": "Q"}, message))

    assert sent.messages[1]["content_items"][0] == {
        "type": "thinking.done",
        "thinking": "Think",
        "fidelity": {
            "reasoning_field": "reasoning",
            "format": "anthropic-claude-v1",
            "signature": "EqQB",
        },
    }


# --- the request round trip: SPEC request → encoder → body → decode_request ------------------

_name = st.text(string.ascii_lowercase + "_", min_size=1, max_size=10)
_image = st.sampled_from(
    [
        "https://example.com/cat.png",
        "data:image/png;base64,iVBORw0KGgo=",
        "data:image/jpeg;base64,/9j/4AAQ",
    ]
)
_schema = strict_objects(_name)


@st.composite
def histories(draw: Any) -> list[dict[str, Any]]:
    """Alternating user / assistant messages, in the canonical form the encoder keeps."""
    messages: list[dict[str, Any]] = []
    pending: list[str] = []
    calls = 0
    for turn in range(draw(st.integers(0, 3)) * 2 + 1):
        if turn % 2 == 0:
            items: list[dict[str, Any]] = []
            for call_id in pending:
                result: dict[str, Any] = {
                    "type": "tool_result.done",
                    "tool_call_id": call_id,
                    "text": draw(words),
                }
                images = draw(st.lists(_image, max_size=2))
                if images:
                    result["images"] = images
                items.append(result)
            own = draw(
                st.lists(
                    st.one_of(
                        words.map(lambda t: {"type": "text.done", "text": t}),
                        _image.map(lambda u: {"type": "image_url.done", "image_url": u}),
                    ),
                    min_size=0 if pending else 1,
                    max_size=3,
                )
            )
            if any("images" in i for i in items) and own and own[0]["type"] == "image_url.done":
                # the encoder's label form cannot tell them from the last result's: documented
                own.insert(0, {"type": "text.done", "text": "Look:"})
            messages.append({"role": "user", "content_items": items + own})
            pending = []
            continue
        items = []
        field = draw(
            st.sampled_from(
                [None, "reasoning_content", "reasoning", "content.thinking", "openrouter"]
            )
        )
        if field == "openrouter":
            fidelity = {
                "reasoning_field": "reasoning",
                "format": "anthropic-claude-v1",
                "signature": draw(_name),
            }
            items.append({"type": "thinking.done", "thinking": draw(words), "fidelity": fidelity})
        elif field is not None:
            items.append(
                {
                    "type": "thinking.done",
                    "thinking": draw(words),
                    "fidelity": {"reasoning_field": field},
                }
            )
        if draw(st.booleans()):
            items.append({"type": "text.done", "text": draw(words)})
        if draw(st.integers(0, 4)) == 0:
            items.append({"type": "text.done", "text": draw(words), "fidelity": {"refusal": True}})
        said = any(item["type"] == "text.done" for item in items)
        for _ in range(draw(st.integers(0 if said else 1, 2))):  # else the encoder drops it
            calls += 1
            call_id = f"call_{calls}{draw(st.text(string.ascii_letters, max_size=6))}"
            pending.append(call_id)
            items.append(
                {
                    "type": "tool_call.done",
                    "tool_call_id": call_id,
                    "name": draw(_name),
                    "arguments": draw(call_arguments),
                }
            )
        if field == "content.thinking" and not any(i["type"] == "text.done" for i in items):
            items.insert(1, {"type": "text.done", "text": "ok"})
        messages.append({"role": "assistant", "content_items": items})
    if pending:
        messages.append(
            {
                "role": "user",
                "content_items": [
                    {"type": "tool_result.done", "tool_call_id": c, "text": "r"} for c in pending
                ],
            }
        )
    return messages


@st.composite
def configs(draw: Any) -> dict[str, Any]:
    config: dict[str, Any] = {}
    optional = {
        "system_prompt": words,
        "max_tokens": st.integers(1, 10**6),
        "temperature": st.floats(0, 2),
        "top_p": st.floats(0, 1),
        "stop": st.lists(words, min_size=1, max_size=3),
        "seed": st.integers(-(2**31), 2**31),
        "thinking_level": st.sampled_from(["none", "low", "medium", "high", "xhigh", "max"]),
        "response_format": st.one_of(
            st.just({"type": "json_object"}),
            st.builds(
                lambda name, schema, strict: {
                    "type": "json_schema",
                    "json_schema": {
                        "name": name,
                        "schema": schema,
                        **({"strict": strict} if strict is not None else {}),
                    },
                },
                _name,
                _schema,
                st.none() | st.booleans(),
            ),
        ),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            config[key] = draw(strategy)
    if draw(st.booleans()):
        names = draw(st.lists(_name, min_size=1, max_size=3, unique=True))
        tools = []
        for name in names:
            tool: dict[str, Any] = {"name": name}
            if draw(st.booleans()):
                tool["description"] = draw(words)
            if draw(st.booleans()):
                tool["parameters"] = draw(_schema)
            if draw(st.booleans()):
                tool["strict"] = draw(st.booleans())
            tools.append(tool)
        config["tools"] = tools
        choice = draw(st.sampled_from(["auto", "none", "required", "one", "some", None]))
        if choice == "one":
            config["tool_choice"] = [names[0]]
        elif choice == "some":
            config["tool_choice"] = names
        elif choice is not None:
            config["tool_choice"] = choice
        if draw(st.booleans()):
            config["parallel_tool_calls"] = draw(st.booleans())
    return config


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    histories(), configs(), st.sampled_from(["gpt-4o", "deepseek-chat", "o4-mini"]), st.booleans()
)
def test_any_request_the_encoder_writes_decodes_to_the_same_messages_and_config(
    messages: list[dict[str, Any]], config: dict[str, Any], model: str, stream: bool
) -> None:
    body = encode_request("openai-chat", model, messages, config).json  # type: ignore[arg-type]
    if not stream:
        del body["stream"], body["stream_options"]

    sent = decode(body)

    assert (sent.model, sent.stream) == (model, stream)
    assert sent.options == ({"include_usage": True} if stream else {})
    assert sent.messages == messages
    assert sent.config == config
    assert sent.native_fields == {} and sent.ignored == ()


# --- request fields, one by one ----------------------------------------------------------------

USER = {"role": "user", "content": "Hi"}


@pytest.mark.parametrize(
    ("fields", "config"),
    [
        ({"max_tokens": 100}, {"max_tokens": 100}),
        ({"max_completion_tokens": 100}, {"max_tokens": 100}),
        ({"max_tokens": 50, "max_completion_tokens": 50}, {"max_tokens": 50}),
        ({"temperature": 1}, {"temperature": 1.0}),
        ({"top_p": 0.5}, {"top_p": 0.5}),
        ({"seed": 7}, {"seed": 7}),
        ({"stop": "END"}, {"stop": ["END"]}),
        ({"stop": ["a", "b"]}, {"stop": ["a", "b"]}),
        ({"reasoning_effort": "minimal"}, {"thinking_level": "low"}),
        ({"reasoning_effort": "high"}, {"thinking_level": "high"}),
        ({"response_format": {"type": "text"}}, {}),
        (
            {"response_format": {"type": "json_object"}},
            {"response_format": {"type": "json_object"}},
        ),
        ({"parallel_tool_calls": False}, {"parallel_tool_calls": False}),
        ({"n": 1, "logprobs": False, "modalities": ["text"]}, {}),
        ({"tool_choice": "required"}, {"tool_choice": "required"}),
        ({"tool_choice": {"type": "function", "function": {"name": "f"}}}, {"tool_choice": ["f"]}),
        (
            {
                "tool_choice": {
                    "type": "allowed_tools",
                    "allowed_tools": {
                        "mode": "required",
                        "tools": [{"type": "function", "function": {"name": "f"}}],
                    },
                }
            },
            {"tool_choice": ["f"]},
        ),
    ],
)
def test_each_request_field_maps_to_its_config_key(
    fields: dict[str, Any], config: dict[str, Any]
) -> None:
    assert decode(request(USER, **fields)).config == config


def test_tools_keep_name_description_parameters_and_strict() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather.",
                "parameters": {"type": "object"},
                "strict": True,
            },
        },
        {"type": "function", "function": {"name": "now"}},
    ]

    assert decode(request(USER, tools=tools)).config["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather.",
            "parameters": {"type": "object"},
            "strict": True,
        },
        {"name": "now"},
    ]


def test_a_json_schema_response_format_is_kept_as_the_encoder_reads_it() -> None:
    wrapper = {"name": "answer", "schema": {"type": "object"}, "strict": True}

    config = decode(
        request(USER, response_format={"type": "json_schema", "json_schema": wrapper})
    ).config

    assert config == {"response_format": {"type": "json_schema", "json_schema": wrapper}}


def test_stream_and_include_usage_go_to_the_request_and_its_options() -> None:
    sent = decode(
        request(
            USER, stream=True, stream_options={"include_usage": True, "include_obfuscation": False}
        )
    )

    assert sent.stream is True
    assert sent.options == {"include_usage": True}
    assert "stream_options.include_obfuscation" in sent.ignored
    assert decode(request(USER)).stream is False


def test_system_and_developer_messages_join_the_system_prompt_wherever_they_stand() -> None:
    sent = decode(
        request(
            {"role": "system", "content": "Be brief.", "name": "ops"},
            {"role": "developer", "content": [{"type": "text", "text": "Answer in French."}]},
            USER,
            {"role": "assistant", "content": "Salut"},
            {"role": "system", "content": "Now in German."},
            {"role": "user", "content": "Again"},
        )
    )

    assert sent.config == {"system_prompt": "Be brief.\n\nAnswer in French.\n\nNow in German."}
    assert [m["role"] for m in sent.messages] == ["user", "assistant", "user"]
    assert sent.ignored == ("messages[].name",)


def test_user_images_are_kept_as_urls_and_consecutive_tool_messages_join_one_user_message() -> None:
    sent = decode(
        request(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.com/a.png", "detail": "high"},
                    },
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}},
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "g", "arguments": '{"q": 1}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "one"},
            {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "two"}]},
        )
    )

    assert sent.messages[0]["content_items"] == [
        {"type": "text.done", "text": "What is this?"},
        {"type": "image_url.done", "image_url": "https://example.com/a.png"},
        {"type": "image_url.done", "image_url": "data:image/png;base64,iVBORw0KGgo="},
    ]
    assert [i["arguments"] for i in sent.messages[1]["content_items"]] == [{}, {"q": 1}]  # type: ignore[typeddict-item]
    assert sent.messages[2] == {
        "role": "user",
        "content_items": [
            {"type": "tool_result.done", "tool_call_id": "c1", "text": "one"},
            {"type": "tool_result.done", "tool_call_id": "c2", "text": "two"},
        ],
    }
    assert "image_url.detail" in sent.ignored


def test_assistant_content_refusal_and_reasoning_content_become_items() -> None:
    message = {
        "role": "assistant",
        "content": "Sure.",
        "refusal": "But not that.",
        "reasoning_content": "Hmm",
    }

    sent = decode(request(USER, message, {"role": "user", "content": "ok"}))

    assert sent.messages[1]["content_items"] == [
        {
            "type": "thinking.done",
            "thinking": "Hmm",
            "fidelity": {"reasoning_field": "reasoning_content"},
        },
        {"type": "text.done", "text": "Sure."},
        {"type": "text.done", "text": "But not that.", "fidelity": {"refusal": True}},
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("user", "u-42"),
        ("metadata", {"k": "v"}),
        ("store", True),
        ("service_tier", "flex"),
        ("prompt_cache_key", "key"),
        ("safety_identifier", "sid"),
        ("frequency_penalty", 0.5),
        ("logit_bias", {"50256": -100}),
    ],
)
def test_fields_only_an_openai_upstream_can_use_go_as_native_fields(field: str, value: Any) -> None:
    sent = decode(request(USER, **{field: value}))

    assert sent.native_fields == {field: value}
    assert sent.config == {}


def test_null_values_and_zero_penalties_are_ignored_as_documented() -> None:
    message = {"role": "user", "content": "Hi", "tool_calls": None}
    sent = decode(request(message, user=None, presence_penalty=0, temperature=None, top_k=None))

    assert sent.native_fields == {}
    assert sent.config == {}
    assert set(sent.ignored) == {"user", "presence_penalty", "top_k"}


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"n": 2}, "n"),
        ({"logprobs": True}, "logprobs"),
        ({"top_logprobs": 3}, "top_logprobs"),
        ({"modalities": ["text", "audio"]}, "modalities"),
        ({"audio": {"voice": "alloy", "format": "wav"}}, "audio"),
        ({"functions": [{"name": "f"}]}, "functions"),
        ({"web_search_options": {}}, "web_search_options"),
        ({"top_k": 40}, "top_k"),
        ({"reasoning": {"effort": "high"}}, "reasoning"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": 10, "max_completion_tokens": 20}, "max_completion_tokens"),
        ({"temperature": "hot"}, "temperature"),
        ({"stop": [1]}, "stop"),
        ({"stream": "yes"}, "stream"),
        ({"stream_options": {"include_usage": True, "extra": 1}}, "stream_options.extra"),
        ({"tools": [{"type": "custom", "custom": {"name": "x"}}]}, "tools[0].type"),
        (
            {
                "tool_choice": {
                    "type": "allowed_tools",
                    "allowed_tools": {"mode": "auto", "tools": []},
                }
            },
            "tool_choice.allowed_tools.mode",
        ),
        (
            {"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
            "response_format.json_schema",
        ),
    ],
)
def test_a_field_the_gateway_cannot_serve_is_a_400_naming_it(
    fields: dict[str, Any], param: str
) -> None:
    with pytest.raises(InboundRequestError) as caught:
        decode(request(USER, **fields))

    assert caught.value.param == param
    assert caught.value.status == 400


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ([], None),
        ({"messages": [USER]}, "model"),
        ({"model": "m"}, "messages"),
        ({"model": "m", "messages": []}, "messages"),
        ({"model": "m", "messages": [{"role": "function", "content": "x"}]}, "messages[0].role"),
        (
            {"model": "m", "messages": [{"role": "user", "content": "x", "cache_control": {}}]},
            "messages[0].cache_control",
        ),
        (
            {"model": "m", "messages": [{"role": "user", "content": [{"type": "input_audio"}]}]},
            "messages[0].content[0].type",
        ),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "file:///x.png"}}],
                    }
                ],
            },
            "messages[0].content[0].image_url.url",
        ),
        (
            {"model": "m", "messages": [{"role": "tool", "content": "x"}]},
            "messages[0].tool_call_id",
        ),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "c",
                                "type": "function",
                                "function": {"name": "f", "arguments": "[1]"},
                            }
                        ],
                    }
                ],
            },
            "messages[0].tool_calls[0].function.arguments",
        ),
    ],
)
def test_a_malformed_request_is_a_400_a_user_can_act_on(body: Any, param: str | None) -> None:
    with pytest.raises(InboundRequestError) as caught:
        decode(body)

    assert caught.value.param == param


def test_read_key_takes_the_bearer_token() -> None:
    assert GATEWAY.read_key({"authorization": "Bearer sk-abc"}, {}) == "sk-abc"
    assert GATEWAY.read_key({"authorization": "bearer  sk-abc "}, {}) == "sk-abc"
    assert GATEWAY.read_key({"authorization": "Basic xyz"}, {}) is None
    assert GATEWAY.read_key({}, {"key": "sk"}) is None


def test_the_route_is_openais_and_the_body_decides_streaming() -> None:
    assert [(r.method, r.path, r.kind, r.stream) for r in GATEWAY.routes] == [
        ("POST", "/v1/chat/completions", "generate", None)
    ]


# --- bodies: non-stream, errors, models --------------------------------------------------------


def test_the_non_stream_body_is_a_chat_completion() -> None:
    message = {
        "role": "assistant",
        "content_items": [
            {"type": "thinking.done", "thinking": "Think."},
            {"type": "text.done", "text": "Hello"},
        ],
        "usage_metadata": USAGE,
        "finish_reason": "stop",
    }

    body = GATEWAY.final_body(context(stream=False), message)  # type: ignore[arg-type]

    assert body == {
        "id": "chatcmpl-gw_5f1c2a",
        "object": "chat.completion",
        "created": 1727346168,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hello",
                    "refusal": None,
                    "annotations": [],
                    "reasoning_content": "Think.",
                    "reasoning_details": [{"type": "reasoning.text", "text": "Think.", "index": 0}],
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 25,
            "completion_tokens": 18,
            "total_tokens": 43,
            "prompt_tokens_details": {"cached_tokens": 5},
            "completion_tokens_details": {"reasoning_tokens": 7},
        },
    }


def test_a_non_stream_answer_holding_an_image_cannot_be_written() -> None:
    message = {
        "role": "assistant",
        "content_items": [{"type": "inline_data.done", "data": b"x", "mime_type": "image/png"}],
    }

    with pytest.raises(UnsupportedOutputError, match="inline_data"):
        GATEWAY.final_body(context(), message)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "kind", "code"),
    [
        (400, "invalid_request_error", None),
        (401, "invalid_request_error", "invalid_api_key"),
        (404, "invalid_request_error", "model_not_found"),
        (429, "requests", "rate_limit_exceeded"),
        (500, "server_error", None),
        (502, "server_error", None),
    ],
)
def test_error_bodies_are_openais(status: int, kind: str, code: str | None) -> None:
    error = GatewayError(status=status, type="X", message="went wrong", param="temperature")

    assert GATEWAY.error_body(error) == {
        "error": {"message": "went wrong", "type": kind, "param": "temperature", "code": code}
    }


def test_a_context_window_error_has_openais_code() -> None:
    error = GatewayError(status=400, type="ContextWindowExceededError", message="too long")

    assert GATEWAY.error_body(error)["error"]["code"] == "context_length_exceeded"


def test_the_emulators_error_bytes_are_unchanged() -> None:
    assert openai_error_body(429, "Rate limit reached", retry_after=2) == (
        b'{\n  "error": {\n    "message": "Rate limit reached",\n    "type": "requests",\n'
        b'    "param": null,\n    "code": "rate_limit_exceeded"\n  }\n}\n'
    )


def test_the_models_body_is_openais_list() -> None:
    assert GATEWAY.models_body is not None
    body = GATEWAY.models_body([ServedModel("fast", "modelstream", 1700000000)])

    assert body == {
        "object": "list",
        "data": [
            {"id": "fast", "object": "model", "created": 1700000000, "owned_by": "modelstream"}
        ],
    }


# --- the official openai SDK, over loopback HTTP ----------------------------------------------


class Weather(BaseModel):
    city: str
    unit: str


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0)


def _sdk_turn() -> list[Any]:
    return [
        *thinking("The user asks about Paris."),
        *text("Let me check."),
        *tool_call("call_abc", "Weather", {"city": "Paris", "unit": "C"}),
        *tool_call("call_def", "Weather", {"city": "Lyon", "unit": "C"}),
        stop("tool_call", USAGE),  # type: ignore[arg-type]
    ]


def test_the_sdk_stream_helper_accumulates_text_thinking_calls_and_parsed_arguments() -> None:
    with loopback() as server:
        server.stream(write(_sdk_turn(), context("anthropic-messages")))
        client = _client(server.url)
        with client.chat.completions.stream(
            model=MODEL,
            messages=[{"role": "user", "content": "Weather in Paris and Lyon?"}],
            tools=[openai.pydantic_function_tool(Weather)],
            stream_options={"include_usage": True},
        ) as stream:
            contents = [e.delta for e in stream if e.type == "content.delta"]
            final = stream.get_final_completion()

    assert contents == ["Let me", " check."]
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check."
    assert choice.message.reasoning_content == "The user asks about Paris."  # type: ignore[attr-defined]
    calls = choice.message.tool_calls or []
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
        ("call_abc", "Weather", '{"city":"Paris","unit":"C"}'),
        ("call_def", "Weather", '{"city":"Lyon","unit":"C"}'),
    ]
    assert [c.function.parsed_arguments for c in calls] == [
        Weather(city="Paris", unit="C"),
        Weather(city="Lyon", unit="C"),
    ]
    assert final.usage is not None
    assert (final.usage.prompt_tokens, final.usage.completion_tokens, final.usage.total_tokens) == (
        25,
        18,
        43,
    )
    assert final.usage.prompt_tokens_details.cached_tokens == 5  # type: ignore[union-attr]
    assert final.usage.completion_tokens_details.reasoning_tokens == 7  # type: ignore[union-attr]
    assert server.requests[0].body["stream"] is True


def test_plain_create_stream_yields_chunks_the_sdk_types() -> None:
    with loopback() as server:
        server.stream(
            write([*text("Bonjour"), stop("length", USAGE)], context(include_usage=False))
        )  # type: ignore[arg-type]
        chunks = list(
            _client(server.url).chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "Hi"}], stream=True
            )
        )

    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Bonjour"
    assert chunks[-1].choices[0].finish_reason == "length"
    assert all(c.usage is None and c.id == "chatcmpl-gw_5f1c2a" for c in chunks)


def test_a_refusal_reaches_the_sdk_as_message_refusal() -> None:
    events = [*text("I can't help with that.", {"refusal": True}, fidelity_first=True), stop()]
    with loopback() as server:
        server.stream(write(events))
        with _client(server.url).chat.completions.stream(
            model=MODEL, messages=[{"role": "user", "content": "?"}]
        ) as stream:
            final = stream.get_final_completion()

    assert final.choices[0].message.refusal == "I can't help with that."
    assert final.choices[0].message.content is None


def test_an_in_stream_error_makes_the_sdk_raise_api_error() -> None:
    writer = GATEWAY.writer(context())
    body = b"".join(f for e in text("partial")[:2] for f in writer.feed(e))
    body += b"".join(
        writer.fail(GatewayError(502, "IncompleteStreamError", "the upstream stream broke off"))
    )
    with loopback() as server:
        server.stream(body)
        with pytest.raises(openai.APIError, match="the upstream stream broke off") as caught:
            list(
                _client(server.url).chat.completions.create(
                    model=MODEL, messages=[{"role": "user", "content": "Hi"}], stream=True
                )
            )

    assert caught.value.body == {
        "message": "the upstream stream broke off",
        "type": "server_error",
        "param": None,
        "code": None,
    }


def test_the_non_stream_body_parses_as_the_sdks_chat_completion() -> None:
    message = {
        "role": "assistant",
        "content_items": [
            {
                "type": "thinking.done",
                "thinking": "Quick.",
                "fidelity": {"thought_signature": "sig"},
            },
            {"type": "text.done", "text": "Sunny."},
            {
                "type": "tool_call.done",
                "tool_call_id": "call_1",
                "name": "Weather",
                "arguments": {"city": "Nice", "unit": "C"},
            },
        ],
        "usage_metadata": USAGE,
        "finish_reason": "tool_call",
    }
    ctx = context("gemini-generate-content", stream=False)
    with loopback() as server:
        server.json(200, GATEWAY.final_body(ctx, message))  # type: ignore[arg-type]
        completion = _client(server.url).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Weather?"}]
        )

    answer = completion.choices[0]
    assert completion.object == "chat.completion"
    assert answer.finish_reason == "tool_calls"
    assert answer.message.content == "Sunny."
    assert answer.message.reasoning_content == "Quick."  # type: ignore[attr-defined]
    call = (answer.message.tool_calls or [])[0]
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_1",
        "Weather",
        {"city": "Nice", "unit": "C"},
    )
    assert completion.usage is not None and completion.usage.total_tokens == 43


def test_a_429_raises_the_sdks_rate_limit_error_with_retry_after() -> None:
    error = GatewayError(
        status=429, type="RateLimitError", message="Rate limit reached", retry_after=7
    )
    with loopback() as server:
        server.json(429, GATEWAY.error_body(error), headers=error.headers)
        with pytest.raises(openai.RateLimitError) as caught:
            _client(server.url).chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "Hi"}]
            )

    assert caught.value.status_code == 429
    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.response.headers["retry-after"] == "7"


def test_the_sdk_lists_models_from_the_models_body() -> None:
    assert GATEWAY.models_body is not None
    with loopback() as server:
        server.json(
            200,
            GATEWAY.models_body([ServedModel("fast", "acme", 1), ServedModel("deep", "acme", 2)]),
        )
        models = list(_client(server.url).models.list())

    assert [(m.id, m.owned_by, m.created) for m in models] == [
        ("fast", "acme", 1),
        ("deep", "acme", 2),
    ]


def test_the_sdk_sends_back_what_restores_every_fidelity_on_the_next_turn() -> None:
    events = [
        *thinking("Need the weather.", {"signature": "EqQBCkYIBxgCKkB"}),
        *tool_call("toolu_01", "Weather", {"city": "Rome", "unit": "C"}),
        stop("tool_call", USAGE),  # type: ignore[arg-type]
    ]
    with loopback() as server:
        server.stream(write(events, context("anthropic-messages")))
        server.stream(write([*text("22 C."), stop()]))
        client = _client(server.url)
        history: list[Any] = [{"role": "user", "content": "Rome?"}]
        with client.chat.completions.stream(model=MODEL, messages=history) as stream:
            message = stream.get_final_completion().choices[0].message
        history += [
            message,
            {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "22 C"},
        ]  # type: ignore[index]
        with client.chat.completions.stream(model=MODEL, messages=history) as stream:
            stream.get_final_completion()
        second = server.requests[1].body

    sent = decode(second)

    assert sent.messages[1]["content_items"] == [
        {
            "type": "thinking.done",
            "thinking": "Need the weather.",
            "fidelity": {"signature": "EqQBCkYIBxgCKkB"},
        },
        {
            "type": "tool_call.done",
            "tool_call_id": "toolu_01",
            "name": "Weather",
            "arguments": {"city": "Rome", "unit": "C"},
        },
    ]
    assert sent.messages[2]["content_items"] == [
        {"type": "tool_result.done", "tool_call_id": "toolu_01", "text": "22 C"}
    ]
