"""Synthetic openai-chat bodies for the bench (see `synthetic.py`)."""

from __future__ import annotations

import random
from typing import Any

from synthetic import TOOL_NAME, compact, ident, split

# Words per text chunk and mean characters per raw argument fragment on this wire (corpus
# captures: OpenAI streams about a token per chunk; Anthropic and Gemini send phrases).
WORDS_PER_CHUNK = (1, 1)
ARGUMENT_CHARS_PER_FRAGMENT = 4


def _chat_frame(payload: Any) -> bytes:
    return b"data: " + compact(payload) + b"\n\n"


def _chat_envelope(rng: random.Random) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{ident(rng, 29)}",
        "object": "chat.completion.chunk",
        "created": 1727346168,
        "model": "gpt-4o-2024-08-06",
        "system_fingerprint": "fp_5050236cbd",
    }


def _chat_chunk(envelope: dict[str, Any], delta: Any, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return _chat_frame({**envelope, "choices": [choice]})


def _chat_tail(envelope: dict[str, Any], finish: str, completion_tokens: int) -> list[bytes]:
    usage = {
        "prompt_tokens": 14,
        "completion_tokens": completion_tokens,
        "total_tokens": 14 + completion_tokens,
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    return [
        _chat_chunk(envelope, {}, finish),
        _chat_frame({**envelope, "choices": [], "usage": usage}),
        b"data: [DONE]\n\n",
    ]


def text(rng: random.Random, pieces: list[str]) -> bytes:
    """Shaped on corpus openaipy-text-usage: role chunk, content chunks, finish, usage, [DONE]."""
    envelope = _chat_envelope(rng)
    frames = [_chat_chunk(envelope, {"role": "assistant", "content": "", "refusal": None})]
    frames += [_chat_chunk(envelope, {"content": piece}) for piece in pieces]
    frames += _chat_tail(envelope, "stop", len(pieces))
    return b"".join(frames)


def tool_call(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    """Shaped on corpus openaipy-tool-call: a call opened with id and name, arguments deltas."""
    envelope = _chat_envelope(rng)
    opening = {
        "index": 0,
        "id": f"call_{ident(rng, 24)}",
        "type": "function",
        "function": {"name": TOOL_NAME, "arguments": ""},
    }
    frames = [
        _chat_chunk(
            envelope,
            {"role": "assistant", "content": None, "tool_calls": [opening], "refusal": None},
        )
    ]
    for piece in split(rng, compact(arguments).decode(), count):
        delta = {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}
        frames.append(_chat_chunk(envelope, delta))
    frames += _chat_tail(envelope, "tool_calls", count)
    return b"".join(frames)
