"""The emulator's OpenAI Chat Completions: thinking without a signature as `reasoning_content`
(DeepSeek); with one as `reasoning` + `reasoning_details` carrying the signature (OpenRouter).
Usage in a trailing `choices: []` chunk, only when the request's `stream_options.include_usage`
asks for it. Two adjacent texts join into one item here (no block identity on this wire).
"""

from __future__ import annotations

import base64
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
from ...testing.turns import Media, Text, Thinking, ToolCall
from .writer import openai_error_body

_CHAT_FINISH = {"stop": "stop", "length": "length", "tool_call": "tool_calls"}


def _chat(s: EmulatedStream) -> Iterator[bytes]:
    envelope: dict[str, Any] = {
        "id": s.id,
        "object": "chat.completion.chunk",
        "created": s.created,
        "model": s.model,
        "system_fingerprint": "fp_emulator",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = {**envelope, "choices": [choice]}
        if s.include_usage:  # OpenAI sends `usage: null` on every chunk when asked for usage
            body["usage"] = None
        return b"data: " + compact_json(body) + b"\n\n"

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    calls = details = clips = 0
    for item in s.turn.items:
        if isinstance(item, Text):
            for piece in s.pieces(item.text):
                yield chunk({"content": piece})
        elif isinstance(item, Thinking) and item.signature is None:
            for piece in s.pieces(item.thinking):  # DeepSeek: content null beside it
                yield chunk({"content": None, "reasoning_content": piece})
        elif isinstance(item, Thinking):
            # OpenRouter carries signed reasoning as reasoning_details, mirrored in `reasoning`
            # (corpus pydanticai-openrouter-reasoning-signature); a new detail index is a new item.
            for piece in s.pieces(item.thinking):
                detail = {"type": "reasoning.text", "text": piece, "index": details}
                yield chunk({"content": "", "reasoning": piece, "reasoning_details": [detail]})
            signed = {"type": "reasoning.text", "signature": item.signature, "index": details}
            yield chunk({"content": "", "reasoning": None, "reasoning_details": [signed]})
            details += 1
        elif isinstance(item, ToolCall):
            start = {
                "index": calls,
                "id": s.call_id(item, calls, "call_"),
                "type": "function",
                "function": {"name": item.name, "arguments": ""},
            }
            yield chunk({"tool_calls": [start]})
            for piece in s.pieces(arguments_json(item)):
                yield chunk({"tool_calls": [{"index": calls, "function": {"arguments": piece}}]})
            calls += 1
        elif isinstance(item, Media):  # an audio answer: its id on every chunk, then expiry
            clip_id = f"audio_{s.id[-12:]}{clips}"
            for chunk_bytes in s.byte_pieces(item.data):
                data = base64.b64encode(chunk_bytes).decode()
                yield chunk({"audio": {"id": clip_id, "data": data}})
            yield chunk({"audio": {"id": clip_id, "expires_at": s.created + 3600}})
            clips += 1
    yield chunk({}, _CHAT_FINISH.get(s.finish, "content_filter"))
    if s.include_usage:
        usage = s.usage
        cached = count(usage, "cached_tokens")
        prompt = count(usage, "prompt_tokens") + cached
        reasoning = count(usage, "thoughts_tokens")
        completion = count(usage, "response_tokens") + reasoning
        body = {
            **envelope,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0},
            },
        }
        yield b"data: " + compact_json(body) + b"\n\n"
    yield b"data: [DONE]\n\n"


def _wants_usage(body: dict[str, Any]) -> bool:
    """Chat Completions reports usage only when the request asks for it."""
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _chat_text(message: dict[str, Any]) -> str | None:
    if message.get("role") not in ("user", "tool"):
        return None
    return joined_text(message.get("content"), "text")


EMULATOR = StreamEmulator(
    write=_chat,
    error_body=openai_error_body,
    last_user_text=lambda body: last_text(body.get("messages"), _chat_text),
    response_id_prefix="chatcmpl-emu",
    wants_usage=_wants_usage,
    media=frozenset({"audio"}),  # streamed as pcm16 whatever the clip's mime type says
)
