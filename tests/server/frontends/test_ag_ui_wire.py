"""AG-UI as a front-end wire (`modelstream.protocols.ag_ui`), without a server: a `RunAgentInput`
read as the SPEC request, and SPEC events written as AG-UI events. The judge of the frames is
AG-UI itself: @ag-ui/core's zod schemas, @ag-ui/client's `verifyEvents`, and its `HttpAgent`,
whose history after the run must read back as the same turn.

The npm packages are installed into `.frontend/` by `.ci/run` (`npm install --prefix .frontend
@ag-ui/core @ag-ui/client`); missing, that test skips with the reason (and fails under CI).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from modelstream.protocols.ag_ui import GATEWAY, ROUTES
from modelstream.protocols.ag_ui.inbound import CONTEXT_HEADING
from modelstream.protocols.common.fidelity_seal import FidelitySeal
from modelstream.protocols.common.gateway import (
    GatewayError,
    InboundCall,
    InboundRequest,
    InboundRequestError,
    UnsupportedOutputError,
    WriteContext,
)
from modelstream.types import Event, Message
from support.frontend import run_node
from support.gateway import delta, group, stop, text, thinking, tool_call

SEAL = FidelitySeal(b"ag-ui-wire-tests-key-0123456789ab")
CALL = InboundCall(ROUTES[0])
RESPONSE_ID = "resp_0a1b2c"
USAGE = {"cached_tokens": 4, "prompt_tokens": 6, "thoughts_tokens": 3, "response_tokens": 7}


def run_input(messages: list[Any] | None = None, **more: Any) -> dict[str, Any]:
    """A RunAgentInput as `HttpAgent` posts it."""
    body: dict[str, Any] = {
        "threadId": "thread-1",
        "runId": "run-1",
        "state": {},
        "messages": [{"id": "u1", "role": "user", "content": "Hello?"}]
        if messages is None
        else messages,
        "tools": [],
        "context": [],
        "forwardedProps": {"model": "chat"},
    }
    return {**body, **more}


def decode(body: Any, seal: FidelitySeal = SEAL) -> InboundRequest:
    return GATEWAY.decode_request(body, CALL, seal)


def refused(body: Any) -> InboundRequestError:
    with pytest.raises(InboundRequestError) as caught:
        decode(body)
    return caught.value


def context(request: InboundRequest | None = None) -> WriteContext:
    request = request or decode(run_input())
    return WriteContext(RESPONSE_ID, "chat", 1_700_000_000, "anthropic-messages", SEAL, request)


def frames(events: Sequence[Event], ctx: WriteContext | None = None) -> list[bytes]:
    assert GATEWAY.writer is not None
    writer = GATEWAY.writer(ctx or context())
    return [frame for event in events for frame in writer.feed(event)]


def agui_events(written: Sequence[bytes]) -> list[dict[str, Any]]:
    """The AG-UI events of the frames, checking their framing: one `data:` line each."""
    out = []
    for frame in written:
        assert frame.startswith(b"data: ") and frame.endswith(b"\n\n"), frame
        assert frame.count(b"\n") == 2, frame
        out.append(json.loads(frame[6:]))
    return out


def write(events: Sequence[Event], ctx: WriteContext | None = None) -> list[dict[str, Any]]:
    return agui_events(frames(events, ctx))


def types(found: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in found]


def user(text_: str) -> Message:
    return {"role": "user", "content_items": [{"type": "text.done", "text": text_}]}


# --- decode_request --------------------------------------------------------------------------


def test_a_run_is_a_stream_of_the_forwarded_model_that_keeps_its_thread_and_run_ids() -> None:
    request = decode(run_input())
    assert request.model == "chat"
    assert request.stream is True
    assert request.messages == [user("Hello?")]
    assert request.config == {}
    assert dict(request.options) == {"thread_id": "thread-1", "run_id": "run-1"}
    json.dumps(dict(request.options))  # kept with the stream, so JSON
    assert request.ignored == ()


def test_forwarded_config_is_the_spec_config() -> None:
    config = {"max_tokens": 50, "temperature": 0.2, "thinking_level": "low"}
    request = decode(run_input(forwardedProps={"model": "chat", "config": config}))
    assert request.config == config


def test_system_and_developer_messages_then_the_config_prompt_then_context_make_the_prompt() -> (
    None
):
    body = run_input(
        [
            {"id": "s", "role": "system", "content": "Be brief."},
            {"id": "u", "role": "user", "content": "Hi"},
            {"id": "d", "role": "developer", "content": "Answer in French."},
        ],
        context=[{"description": "the user's city", "value": "Oslo"}],
        forwardedProps={"model": "chat", "config": {"system_prompt": "You help."}},
    )
    request = decode(body)
    assert request.config["system_prompt"] == (
        f"Be brief.\n\nAnswer in French.\n\nYou help.\n\n{CONTEXT_HEADING}\nthe user's city: Oslo"
    )
    assert request.messages == [user("Hi")]


def test_user_parts_are_text_and_images_by_url_or_inline_data() -> None:
    content = [
        {"type": "text", "text": "What is this?"},
        {"type": "image", "source": {"type": "url", "value": "https://example.com/a.png"}},
        {"type": "image", "source": {"type": "data", "value": "iVBORw0K", "mimeType": "image/png"}},
    ]
    [message] = decode(run_input([{"id": "u", "role": "user", "content": content}])).messages
    assert message["content_items"] == [
        {"type": "text.done", "text": "What is this?"},
        {"type": "image_url.done", "image_url": "https://example.com/a.png"},
        {"type": "image_url.done", "image_url": "data:image/png;base64,iVBORw0K"},
    ]


def test_reasoning_and_assistant_messages_in_a_row_are_one_assistant_turn() -> None:
    history = [
        {"id": "u", "role": "user", "content": "Weather?"},
        {"id": "r", "role": "reasoning", "content": "Look it up."},
        {
            "id": "a",
            "role": "assistant",
            "content": "Checking.",
            "toolCalls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"id": "a2", "role": "assistant", "content": "One moment."},
    ]
    messages = decode(run_input(history)).messages
    assert messages[1] == {
        "role": "assistant",
        "content_items": [
            {"type": "thinking.done", "thinking": "Look it up."},
            {"type": "text.done", "text": "Checking."},
            {
                "type": "tool_call.done",
                "tool_call_id": "call_1",
                "name": "weather",
                "arguments": {"city": "Oslo"},
            },
            {"type": "text.done", "text": "One moment."},
        ],
    }
    assert len(messages) == 2


def test_tool_messages_are_the_results_of_one_user_message_that_the_next_user_message_joins() -> (
    None
):
    calls = [
        {"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for n in (1, 2)
    ]
    image = {"type": "image", "source": {"type": "url", "value": "https://example.com/map.png"}}
    history = [
        {"id": "u", "role": "user", "content": "Go"},
        {"id": "a", "role": "assistant", "toolCalls": calls},
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "sunny"},
        {
            "id": "t2",
            "role": "tool",
            "toolCallId": "c2",
            "content": [{"type": "text", "text": "partial"}, image],
            "error": "timed out",
        },
        {"id": "u2", "role": "user", "content": "And tomorrow?"},
    ]
    messages = decode(run_input(history)).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[2]["content_items"] == [
        {"type": "tool_result.done", "tool_call_id": "c1", "text": "sunny"},
        {
            "type": "tool_result.done",
            "tool_call_id": "c2",
            "text": "partial\n\nError: timed out",
            "images": ["https://example.com/map.png"],
        },
        {"type": "text.done", "text": "And tomorrow?"},
    ]


def test_tool_results_last_in_the_history_are_a_user_message_of_their_own() -> None:
    history = [
        {"id": "u", "role": "user", "content": "Go"},
        {
            "id": "a",
            "role": "assistant",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
            ],
        },
        {"id": "t", "role": "tool", "toolCallId": "c1", "content": "", "error": "no such city"},
    ]
    messages = decode(run_input(history)).messages
    assert messages[1]["content_items"][0]["arguments"] == {}  # type: ignore[typeddict-item]
    assert messages[2] == {
        "role": "user",
        "content_items": [
            {"type": "tool_result.done", "tool_call_id": "c1", "text": "Error: no such city"}
        ],
    }


def test_encrypted_values_give_back_the_sealed_fidelity() -> None:
    signature = {"signature": "sig-abc"}
    call_fidelity = {"thought_signature": "ts-1"}
    history = [
        {"id": "u", "role": "user", "content": "Hi"},
        {
            "id": "r",
            "role": "reasoning",
            "content": "",
            "encryptedValue": SEAL.seal({"redacted": "opaque"}),
        },
        {
            "id": "r2",
            "role": "reasoning",
            "content": "Hmm.",
            "encryptedValue": SEAL.seal(signature),
        },
        {
            "id": "a",
            "role": "assistant",
            "content": "No.",
            "encryptedValue": SEAL.seal({"refusal": True}),
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "f", "arguments": "{}"},
                    "encryptedValue": SEAL.seal(call_fidelity),
                }
            ],
        },
    ]
    items = decode(run_input(history)).messages[1]["content_items"]
    assert items == [
        {"type": "thinking.done", "thinking": "", "fidelity": {"redacted": "opaque"}},
        {"type": "thinking.done", "thinking": "Hmm.", "fidelity": signature},
        {"type": "text.done", "text": "No.", "fidelity": {"refusal": True}},
        {
            "type": "tool_call.done",
            "tool_call_id": "c1",
            "name": "f",
            "arguments": {},
            "fidelity": call_fidelity,
        },
    ]


def test_an_encrypted_value_sealed_by_another_key_is_refused_naming_it() -> None:
    other = FidelitySeal(b"another-key-entirely-0123456789ab")
    history = [
        {"id": "u", "role": "user", "content": "Hi"},
        {"id": "r", "role": "reasoning", "content": "x", "encryptedValue": other.seal({"a": 1})},
    ]
    error = refused(run_input(history))
    assert error.param == "messages[1].encryptedValue"
    assert error.status == 400


def test_tools_are_the_config_tools() -> None:
    tools = [
        {
            "name": "weather",
            "description": "The weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        {"name": "now", "description": ""},
    ]
    request = decode(run_input(tools=tools))
    assert request.config["tools"] == [tools[0], {"name": "now"}]


def test_tools_given_twice_are_refused() -> None:
    props = {"model": "chat", "config": {"tools": [{"name": "f"}]}}
    error = refused(run_input(tools=[{"name": "g", "description": "g"}], forwardedProps=props))
    assert error.param == "forwardedProps.config.tools"


def test_activity_messages_state_and_the_applications_own_props_are_ignored_and_logged() -> None:
    history = [
        {"id": "w", "role": "activity", "activityType": "plan", "content": {"steps": []}},
        {"id": "u", "role": "user", "content": "Hi"},
    ]
    body = run_input(history, state={"cart": [1]}, forwardedProps={"model": "chat", "page": "x"})
    request = decode(body)
    assert request.messages == [user("Hi")]
    assert set(request.ignored) == {"messages[].activity", "state", "forwardedProps.page"}


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"forwardedProps": {}}, "forwardedProps.model"),
        ({"forwardedProps": None}, "forwardedProps.model"),
        ({"forwardedProps": "chat"}, "forwardedProps"),
        ({"forwardedProps": {"model": "chat", "config": []}}, "forwardedProps.config"),
        ({"threadId": ""}, "threadId"),
        ({"runId": 7}, "runId"),
        ({"messages": {}}, "messages"),
        ({"tools": {"name": "f"}}, "tools"),
        ({"tools": [{"name": ""}]}, "tools[0].name"),
        ({"tools": [{"name": "f", "parameters": "{}"}]}, "tools[0].parameters"),
        ({"context": [{"description": "d"}]}, "context[0].value"),
        ({"resume": [{"interruptId": "i", "status": "resolved"}]}, "resume"),
        ({"model": "chat"}, "model"),
        ({"protocolVersion": 1}, "protocolVersion"),
    ],
)
def test_a_bad_run_input_is_refused_naming_the_field(change: dict[str, Any], param: str) -> None:
    error = refused(run_input(**change))
    assert error.param == param
    assert param in str(error)


@pytest.mark.parametrize(
    ("message", "param"),
    [
        ({"role": "robot", "content": "x"}, "messages[0].role"),
        ({"role": "user", "content": 3}, "messages[0].content"),
        ({"role": "user", "content": "x", "mood": "glad"}, "messages[0].mood"),
        ({"role": "system", "content": ["x"]}, "messages[0].content"),
        (
            {
                "role": "user",
                "content": [{"type": "audio", "source": {"type": "url", "value": "u"}}],
            },
            "messages[0].content[0].type",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "file", "value": "file-1"}}],
            },
            "messages[0].content[0].source",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "url", "value": "ftp://x"}}],
            },
            "messages[0].content[0].source.value",
        ),
        (
            {
                "role": "user",
                "content": [
                    {"type": "image", "source": {"type": "data", "value": "AA", "mimeType": "x"}}
                ],
            },
            "messages[0].content[0].source.mimeType",
        ),
        ({"role": "tool", "content": "x"}, "messages[0].toolCallId"),
        (
            {
                "role": "assistant",
                "toolCalls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "[1]"}}
                ],
            },
            "messages[0].toolCalls[0].function.arguments",
        ),
        (
            {"role": "assistant", "toolCalls": [{"id": "", "function": {"name": "f"}}]},
            "messages[0].toolCalls[0].id",
        ),
        ({"role": "reasoning", "content": "x", "encryptedValue": 5}, "messages[0].encryptedValue"),
    ],
)
def test_a_bad_message_is_refused_naming_the_field(message: dict[str, Any], param: str) -> None:
    error = refused(run_input([{"id": "m", **message}]))
    assert error.param == param


# --- the writer ------------------------------------------------------------------------------


def test_a_text_turn_runs_from_started_to_finished_with_its_finish_reason_and_usage() -> None:
    found = write([*group(text("Hello there."), ["", "Hello", " there."]), stop("stop", USAGE)])  # type: ignore[arg-type]
    assert types(found) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert found[0] == {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "run-1"}
    message_id = found[1]["messageId"]
    assert found[1] == {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"}
    assert [e["delta"] for e in found[2:4]] == ["Hello", " there."]  # the empty one is not sent
    assert {e["messageId"] for e in found[1:5]} == {message_id}
    assert found[-1] == {
        "type": "RUN_FINISHED",
        "threadId": "thread-1",
        "runId": "run-1",
        "result": {"finishReason": "stop", "responseId": RESPONSE_ID},
        "outcome": {"type": "success"},
        "usage": [
            {
                "model": "chat",
                "inputTokens": 10,
                "outputTokens": 10,
                "totalTokens": 20,
                "reasoningTokens": 3,
                "cachedInputTokens": 4,
            }
        ],
    }


def test_message_ids_come_from_the_stream_id_and_the_same_events_write_the_same_bytes() -> None:
    events = [*group(thinking("Hm.")), *group(text("Hi.")), stop()]
    first = frames(events)
    assert first == frames(events)
    ids = [e["messageId"] for e in agui_events(first) if e["type"].endswith("MESSAGE_START")]
    assert ids == ["msg_0a1b2c_1", "msg_0a1b2c_2"]


def test_thinking_is_a_reasoning_span_holding_one_reasoning_message() -> None:
    found = write([*group(thinking("Let me think.")), *group(text("Done.")), stop()])
    assert types(found)[:6] == [
        "RUN_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
    ]
    assert found[6] == {"type": "REASONING_END", "messageId": found[1]["messageId"]}
    assert found[2]["role"] == "reasoning"
    assert "".join(e["delta"] for e in found if e["type"] == "REASONING_MESSAGE_CONTENT") == (
        "Let me think."
    )


def test_a_tool_call_streams_its_arguments_in_the_message_of_the_text_before_it() -> None:
    call = tool_call("call_1", "weather", {"city": "Oslo"})
    found = write(
        [*group(text("Checking.")), *group(call, ["", '{"city":', '"Oslo"}']), stop("tool_call")]
    )
    start = found[types(found).index("TOOL_CALL_START")]
    assert start == {
        "type": "TOOL_CALL_START",
        "toolCallId": "call_1",
        "toolCallName": "weather",
        "parentMessageId": found[1]["messageId"],
    }
    args = [e for e in found if e["type"] == "TOOL_CALL_ARGS"]
    assert [a["delta"] for a in args] == ['{"city":', '"Oslo"}']
    assert {a["toolCallId"] for a in args} == {"call_1"}
    assert found[-2] == {"type": "TOOL_CALL_END", "toolCallId": "call_1"}
    assert found[-1]["result"]["finishReason"] == "tool_call"
    assert found[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["call_1"]}


def test_a_tool_call_after_reasoning_or_first_in_the_turn_has_an_assistant_message_of_its_own() -> (
    None
):
    events = [
        *group(tool_call("c1", "f", {})),
        *group(tool_call("c2", "g", {"a": 1})),
        *group(thinking("Next.")),
        *group(tool_call("c3", "h", {})),
        stop("tool_call"),
    ]
    found = write(events)
    parents = [e["parentMessageId"] for e in found if e["type"] == "TOOL_CALL_START"]
    reasoning = next(e["messageId"] for e in found if e["type"] == "REASONING_START")
    assert parents[0] == parents[1]
    assert len({parents[0], reasoning, parents[2]}) == 3
    assert found[-1]["outcome"]["pendingToolCallIds"] == ["c1", "c2", "c3"]


def test_fidelity_rides_sealed_in_an_encrypted_value_after_its_items_end() -> None:
    events = [
        *group(thinking("Hm.", {"signature": "sig"})),
        *group(text("No.", {"refusal": True})),
        *group(tool_call("c1", "f", {}, {"thought_signature": "ts"})),
        stop("tool_call"),
    ]
    found = write(events)
    values = [e for e in found if e["type"] == "REASONING_ENCRYPTED_VALUE"]
    assert [(v["subtype"], SEAL.open(v["encryptedValue"])) for v in values] == [
        ("message", {"signature": "sig"}),
        ("message", {"refusal": True}),
        ("tool-call", {"thought_signature": "ts"}),
    ]
    kinds = types(found)
    assert kinds.index("REASONING_MESSAGE_END") < kinds.index("REASONING_ENCRYPTED_VALUE")
    assert kinds.index("REASONING_ENCRYPTED_VALUE") < kinds.index("REASONING_END")
    reasoning_id = found[kinds.index("REASONING_START")]["messageId"]
    text_id = found[kinds.index("TEXT_MESSAGE_START")]["messageId"]
    assert [v["entityId"] for v in values] == [reasoning_id, text_id, "c1"]


def test_unknown_usage_counts_are_left_out_and_no_count_known_is_no_usage() -> None:
    partly = {
        "cached_tokens": None,
        "prompt_tokens": 5,
        "thoughts_tokens": None,
        "response_tokens": None,
    }
    [entry] = write([*group(text("x")), stop("length", partly)])[-1]["usage"]  # type: ignore[arg-type]
    assert entry == {"model": "chat", "inputTokens": 5}
    finished = write([*group(text("x")), stop("length")])[-1]
    assert "usage" not in finished
    assert finished["result"]["finishReason"] == "length"


def test_fail_ends_the_run_with_run_error_and_nothing_after_it() -> None:
    assert GATEWAY.writer is not None
    writer = GATEWAY.writer(context())
    writer.feed(group(text("Partial answer"))[0])
    error = GatewayError(429, "RateLimitError", "slow down", retry_after=2)
    ended = agui_events(writer.fail(error))
    assert ended == [{"type": "RUN_ERROR", "message": "slow down", "code": "RateLimitError"}]
    assert writer.feed(stop()) == []
    assert writer.fail(error) == []


def test_fail_before_any_event_still_starts_the_run_first() -> None:
    assert GATEWAY.writer is not None
    writer = GATEWAY.writer(context())
    found = agui_events(writer.fail(GatewayError(502, "IncompleteStreamError", "cut off")))
    assert types(found) == ["RUN_STARTED", "RUN_ERROR"]


def test_an_image_in_the_answer_ends_the_run_with_an_error_naming_it() -> None:
    image = {"type": "inline_data.delta", "data": b"\x89PNG", "mime_type": "image/png"}
    assert GATEWAY.writer is not None
    writer = GATEWAY.writer(context())
    found = agui_events(
        [frame for e in [*group(text("Here:")), delta(image)] for frame in writer.feed(e)]
    )
    assert found[-1]["type"] == "RUN_ERROR"
    assert found[-1]["code"] == "UnsupportedOutputError"
    assert "inline_data" in found[-1]["message"] and "image/png" in found[-1]["message"]
    assert writer.feed(stop()) == []


def test_events_that_break_the_grammar_end_the_run_with_a_protocol_error() -> None:
    found = write([group(text("ab"))[0], stop()])
    assert found[-1]["type"] == "RUN_ERROR"
    assert found[-1]["code"] == "StreamProtocolError"
    assert "open text item" in found[-1]["message"]


def test_ag_ui_has_no_non_stream_answer_and_errors_before_the_stream_are_json() -> None:
    message: Message = {"role": "assistant", "content_items": [{"type": "text.done", "text": "x"}]}
    with pytest.raises(UnsupportedOutputError):
        GATEWAY.final_body(context(), message)
    error = GatewayError(
        400, "InvalidRequest", "forwardedProps.model is required", param="forwardedProps.model"
    )
    assert GATEWAY.error_body(error) == {
        "error": {
            "type": "InvalidRequest",
            "message": "forwardedProps.model is required",
            "param": "forwardedProps.model",
        }
    }
    assert GATEWAY.error_body(GatewayError(502, "ServerError", "down")) == {
        "error": {"type": "ServerError", "message": "down"}
    }


def test_the_wire_answers_one_streaming_route_with_a_bearer_key() -> None:
    assert [(r.method, r.path, r.kind) for r in GATEWAY.routes] == [
        ("POST", "/v1/stream/ag-ui", "generate")
    ]
    assert GATEWAY.read_key({"authorization": "Bearer msk-1"}, {}) == "msk-1"
    assert GATEWAY.content_type.startswith("text/event-stream")


# --- AG-UI itself as the judge ---------------------------------------------------------------

# Reads {frames, input} on stdin: checks every frame against @ag-ui/core's EventSchema and the
# sequence with @ag-ui/client's verifyEvents, then runs an HttpAgent whose fetch answers the
# frames, and prints what each found and the agent's history after the run.
JUDGE = r"""
const { EventSchema } = require("@ag-ui/core/schemas");
const { HttpAgent, verifyEvents } = require("@ag-ui/client");
const { from, lastValueFrom, toArray } = require("rxjs");

async function main() {
  const { frames, input } = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const schemaErrors = [];
  const events = frames.map((frame, index) => {
    const event = JSON.parse(frame.slice("data: ".length));
    const parsed = EventSchema.safeParse(event);
    if (!parsed.success) {
      schemaErrors.push({ index, type: event.type, issues: parsed.error.issues });
    }
    return event;
  });
  let verifyError = null;
  try {
    await lastValueFrom(from(events).pipe(verifyEvents(false), toArray()));
  } catch (error) {
    verifyError = String(error && error.message || error);
  }
  const body = frames.join("");
  const agent = new HttpAgent({
    url: "http://ag-ui.invalid/v1/stream/ag-ui",
    threadId: input.threadId,
    initialMessages: input.messages,
    fetch: async () =>
      new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }),
  });
  let runError = null;
  let result = null;
  try {
    const options = { runId: input.runId, forwardedProps: input.forwardedProps };
    ({ result } = await agent.runAgent(options));
  } catch (error) {
    runError = String(error && error.message || error);
  }
  const messages = agent.messages;
  process.stdout.write(JSON.stringify({ schemaErrors, verifyError, runError, result, messages }));
}
main().catch((error) => { console.error(error); process.exit(1); });
"""


def judge(written: list[bytes], input_: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    stdin = {"frames": [f.decode() for f in written], "input": input_}
    found: dict[str, Any] = run_node(JUDGE, stdin, ("@ag-ui/core", "@ag-ui/client"), tmp_path)
    return found


def test_ag_ui_accepts_every_frame_and_its_client_history_reads_back_as_the_same_turn(
    tmp_path: Path,
) -> None:
    """A thinking, text and tool-call turn with fidelity, through HttpAgent: its history, with
    the tool's answer, is the next run's input, which decodes to the turn it streamed."""
    thought = thinking("Which city?", {"signature": "sig-1"})
    answer = text("Checking the weather.")
    call = tool_call("call_7", "weather", {"city": "Oslo", "days": 2}, {"thought_signature": "t"})
    events = [*group(thought), *group(answer), *group(call), stop("tool_call", USAGE)]  # type: ignore[arg-type]
    first = run_input()
    written = frames(events, context(decode(first)))
    found = judge(written, first, tmp_path)
    assert found["schemaErrors"] == []
    assert found["verifyError"] is None
    assert found["runError"] is None
    assert found["result"] == {"finishReason": "tool_call", "responseId": RESPONSE_ID}
    history = found["messages"]
    assert [m["role"] for m in history] == ["user", "reasoning", "assistant"]
    history.append({"id": "t1", "role": "tool", "toolCallId": "call_7", "content": "sunny"})
    later = decode(run_input(history, runId="run-2"))
    assert later.messages == [
        user("Hello?"),
        {"role": "assistant", "content_items": [thought, answer, call]},
        {
            "role": "user",
            "content_items": [
                {"type": "tool_result.done", "tool_call_id": "call_7", "text": "sunny"}
            ],
        },
    ]


def test_ag_ui_accepts_a_run_that_fails_inside_an_open_message(tmp_path: Path) -> None:
    assert GATEWAY.writer is not None
    writer = GATEWAY.writer(context())
    written = [frame for event in group(text("Half an ans"))[:1] for frame in writer.feed(event)]
    written += writer.fail(GatewayError(502, "IncompleteStreamError", "the upstream broke off"))
    found = judge(written, run_input(), tmp_path)
    assert found["schemaErrors"] == []
    assert found["verifyError"] is None
