"""A tool call cut by the output limit is reported as that (issue 20 item 5), on each wire that
can cut one: the error names max_tokens and never suggests running a recovered prefix."""

from __future__ import annotations

import orjson
import pytest

from modelstream import ToolCallArgumentParseError
from modelstream.testing import Emulator, Reply
from support.client import MODELS, Drive

CUT = '{"path": "notes.txt", "text": "The first li'


def _sse(frames: list[tuple[str | None, object]]) -> bytes:
    out = b""
    for name, data in frames:
        if name is not None:
            out += b"event: " + name.encode() + b"\n"
        body = data if isinstance(data, bytes) else orjson.dumps(data)
        out += b"data: " + body + b"\n\n"
    return out


def _anthropic(stop_reason: str) -> bytes:
    # the block ends before the turn says why: the call must wait for the finish reason
    return _sse(
        [
            ("message_start", {"type": "message_start", "message": {"id": "msg_1", "usage": {}}}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "write",
                        "input": {},
                    },
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": CUT},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason},
                    "usage": {"output_tokens": 16},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


def _chat(finish_reason: str) -> bytes:
    call = {"index": 0, "id": "call_1", "type": "function"}
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
    return _sse(
        [
            (
                None,
                {
                    **chunk,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {
                                "role": "assistant",
                                "tool_calls": [
                                    {**call, "function": {"name": "write", "arguments": CUT}}
                                ],
                            },
                        }
                    ],
                },
            ),
            (
                None,
                {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}]},
            ),
            (None, b"[DONE]"),
        ]
    )


@pytest.mark.parametrize(
    ("client_type", "body"),
    [("anthropic-messages", _anthropic("max_tokens")), ("openai-chat", _chat("length"))],
)
def test_a_call_cut_by_the_output_limit_says_to_raise_max_tokens(
    drive: Drive, emu: Emulator, client_type: str, body: bytes
) -> None:
    emu.queue(Reply.body(body, content_type="text/event-stream"))
    outcome = drive.stream(MODELS[client_type])

    error = outcome.error
    assert isinstance(error, ToolCallArgumentParseError)
    assert error.cut_off is True
    message = str(error)
    assert "the output limit (max_tokens) was reached inside the tool call's arguments" in message
    assert message.endswith("raise max_tokens.")
    assert "lenient" not in message
    assert outcome.done_items == []  # the cut call never becomes a tool call
    assert outcome.result is not None and outcome.result.status == "failed"
    assert len(emu.requests) == 1


@pytest.mark.parametrize(
    ("client_type", "body"),
    [("anthropic-messages", _anthropic("tool_use")), ("openai-chat", _chat("tool_calls"))],
)
def test_arguments_broken_under_a_normal_finish_keep_the_malformed_message(
    drive: Drive, emu: Emulator, client_type: str, body: bytes
) -> None:
    emu.queue(Reply.body(body, content_type="text/event-stream"))
    outcome = drive.stream(MODELS[client_type])

    error = outcome.error
    assert isinstance(error, ToolCallArgumentParseError)
    assert error.cut_off is False
    assert "lenient_tool_arguments=True" in str(error)
