"""The emulator's Anthropic Messages: `thinking` blocks ending in a `signature_delta`; usage in
`message_start` and `message_delta` (thinking counted in `output_tokens`, as Anthropic does)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...testing.emulation import (
    EmulatedStream,
    StreamEmulator,
    arguments_json,
    compact_json,
    count,
    joined_text,
    last_text,
)
from ...testing.turns import Text, Thinking, ToolCall
from .writer import error_object

_ANTHROPIC_FINISH = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_call": "tool_use",
    "unknown": "pause_turn",
}


def _anthropic(s: EmulatedStream) -> Iterator[bytes]:
    def event(kind: str, **fields: Any) -> bytes:
        return (
            b"event: "
            + kind.encode()
            + b"\ndata: "
            + compact_json({"type": kind, **fields})
            + b"\n\n"
        )

    usage = s.usage
    output_tokens = count(usage, "response_tokens") + count(usage, "thoughts_tokens")
    yield event(
        "message_start",
        message={
            "id": s.id,
            "type": "message",
            "role": "assistant",
            "model": s.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": count(usage, "prompt_tokens"),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": count(usage, "cached_tokens"),
                "output_tokens": 1,
                "service_tier": "standard",
            },
        },
    )
    for index, item in enumerate(s.turn.items):
        if isinstance(item, Text):
            block: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in s.pieces(item.text)]
        elif isinstance(item, Thinking) and item.redacted is not None:
            block = {"type": "redacted_thinking", "data": item.redacted}
            deltas = []  # the block arrives whole
        elif isinstance(item, Thinking):
            block = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": piece} for piece in s.pieces(item.thinking)
            ]
            if item.signature is not None:
                deltas.append({"type": "signature_delta", "signature": item.signature})
        elif isinstance(item, ToolCall):
            block = {
                "type": "tool_use",
                "id": s.call_id(item, index, "toolu_"),
                "name": item.name,
                "input": {},
            }
            pieces = [
                "",
                *s.pieces(arguments_json(item)),
            ]  # the first fragment is empty on the wire
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
        else:
            continue
        yield event("content_block_start", index=index, content_block=block)
        if index == 0:
            yield b'event: ping\ndata: {"type": "ping"}\n\n'
        for delta in deltas:
            yield event("content_block_delta", index=index, delta=delta)
        yield event("content_block_stop", index=index)
    yield event(
        "message_delta",
        delta={"stop_reason": _ANTHROPIC_FINISH[s.finish], "stop_sequence": None},
        usage={"output_tokens": output_tokens},
    )
    yield event("message_stop")


def _error_body(
    status: int, message: str, *, retry_after: float | None, endpoint: bool = True
) -> bytes:
    return compact_json(error_object(status, message))  # Anthropic's error bodies are compact


def _anthropic_text(message: dict[str, Any]) -> str | None:
    if message.get("role") != "user":
        return None
    content = message.get("content")
    if isinstance(content, list):
        texts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                texts.append(joined_text(block.get("content"), "text"))
        return " ".join(text for text in texts if text)
    return joined_text(content, "text")


EMULATOR = StreamEmulator(
    write=_anthropic,
    error_body=_error_body,
    last_user_text=lambda body: last_text(body.get("messages"), _anthropic_text),
    response_id_prefix="msg_emu",
    redacted_thinking=True,
)
