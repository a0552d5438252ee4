"""Synthetic anthropic-messages bodies for the bench (see `synthetic.py`)."""

from __future__ import annotations

import json
import random
from typing import Any

from synthetic import TOOL_NAME, compact, ident, split

# Words per text chunk and mean characters per raw argument fragment on this wire (corpus
# captures: OpenAI streams about a token per chunk; Anthropic and Gemini send phrases).
WORDS_PER_CHUNK = (1, 4)
ARGUMENT_CHARS_PER_FRAGMENT = 8


def _anthropic_frame(payload: dict[str, Any]) -> bytes:
    kind: str = payload["type"]
    return b"event: " + kind.encode() + b"\ndata: " + compact(payload) + b"\n\n"


def _anthropic_start(rng: random.Random) -> bytes:
    message: dict[str, Any] = {
        "model": "claude-sonnet-4-5-20250929",
        "id": f"msg_01{ident(rng, 22)}",
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 377,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 1,
            "service_tier": "standard",
        },
    }
    return _anthropic_frame({"type": "message_start", "message": message})


def _anthropic_end(reason: str, output_tokens: int) -> list[bytes]:
    usage = {
        "input_tokens": 377,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }
    delta = {"stop_reason": reason, "stop_sequence": None}
    return [
        _anthropic_frame({"type": "content_block_stop", "index": 0}),
        _anthropic_frame({"type": "message_delta", "delta": delta, "usage": usage}),
        _anthropic_frame({"type": "message_stop"}),
    ]


def text(rng: random.Random, pieces: list[str]) -> bytes:
    """Shaped on corpus vercel-anthropic-text: message_start, one text block, ping, message_stop."""
    block = {"type": "text", "text": ""}
    frames = [
        _anthropic_start(rng),
        _anthropic_frame({"type": "content_block_start", "index": 0, "content_block": block}),
        b'event: ping\ndata: {"type": "ping"}\n\n',
    ]
    for piece in pieces:
        delta = {"type": "text_delta", "text": piece}
        frames.append(_anthropic_frame({"type": "content_block_delta", "index": 0, "delta": delta}))
    frames += _anthropic_end("end_turn", len(pieces))
    return b"".join(frames)


def tool_call(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    """Shaped on corpus anthropicsdk-tool-use: tool_use block with `input: {}`, then an empty
    input_json_delta, then the arguments in `count` input_json_delta pieces (`": "` spacing)."""
    raw = json.dumps(arguments, ensure_ascii=False)
    block = {"type": "tool_use", "id": f"toolu_01{ident(rng, 22)}", "name": TOOL_NAME, "input": {}}
    frames = [
        _anthropic_start(rng),
        _anthropic_frame({"type": "content_block_start", "index": 0, "content_block": block}),
        b'event: ping\ndata: {"type": "ping"}\n\n',
    ]
    for piece in ["", *split(rng, raw, count)]:
        delta = {"type": "input_json_delta", "partial_json": piece}
        frames.append(_anthropic_frame({"type": "content_block_delta", "index": 0, "delta": delta}))
    frames += _anthropic_end("tool_use", count)
    return b"".join(frames)
