"""The emulator's Anthropic Messages: the turn written by the gateway's Anthropic writer
(`writer.py`), as an anthropic-messages upstream's events. `thinking` blocks ending in a
`signature_delta`, `redacted_thinking` blocks whole; usage in `message_delta` (thinking counted
in `output_tokens` and split out in `output_tokens_details`); an `unknown` finish is
`pause_turn`, which the decoder reads back as unknown."""

from __future__ import annotations

from typing import Any

from ...testing.emulation import (
    EmulatedStream,
    EventStyle,
    GatewayWrite,
    StreamEmulator,
    compact_json,
    joined_text,
    last_text,
)
from .writer import AnthropicStreamWriter, error_object

STYLE = EventStyle(call_id_prefix="toolu_")


def _options(stream: EmulatedStream) -> dict[str, Any]:
    return {"unknown_stop_reason": "pause_turn"}


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
    write=GatewayWrite("anthropic-messages", AnthropicStreamWriter, STYLE, _options),
    error_body=_error_body,
    last_user_text=lambda body: last_text(body.get("messages"), _anthropic_text),
    response_id_prefix="msg_emu",
    redacted_thinking=True,
)
