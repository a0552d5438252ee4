"""Synthetic gemini-interactions bodies for the bench (see `synthetic.py`), in the current event
vocabulary as the corpus captures send it (vercel-interactions-tool-call): named SSE events whose
payload repeats the type in `event_type`, compact JSON."""

from __future__ import annotations

import random
from typing import Any

from synthetic import TOOL_NAME, compact, ident, split

# Gemini sends phrases per text delta, as on generateContent (pydanticai-google-text).
WORDS_PER_CHUNK = (2, 8)
ARGUMENT_CHARS_PER_FRAGMENT = 10


class _Writer:
    def __init__(self, rng: random.Random) -> None:
        self.interaction_id = f"v1_{ident(rng, 70)}"
        self.frames: list[bytes] = []

    def emit(self, event_type: str, payload: dict[str, Any]) -> None:
        payload["event_type"] = event_type
        self.frames.append(
            b"event: " + event_type.encode() + b"\ndata: " + compact(payload) + b"\n\n"
        )

    def start(self) -> None:
        interaction = {
            "id": self.interaction_id,
            "status": "in_progress",
            "object": "interaction",
            "model": "gemini-2.5-flash",
        }
        self.emit("interaction.created", {"interaction": interaction})
        self.emit(
            "interaction.status_update",
            {"interaction_id": self.interaction_id, "status": "in_progress"},
        )

    def end(self, status: str, output_tokens: int) -> bytes:
        usage = {
            "total_tokens": 377 + output_tokens,
            "total_input_tokens": 377,
            "input_tokens_by_modality": [{"modality": "text", "tokens": 377}],
            "total_cached_tokens": 0,
            "total_output_tokens": output_tokens,
            "total_tool_use_tokens": 0,
            "total_thought_tokens": 0,
        }
        interaction = {
            "id": self.interaction_id,
            "status": status,
            "usage": usage,
            "created": "2026-05-15T18:51:57Z",
            "updated": "2026-05-15T18:51:57Z",
            "service_tier": "standard",
            "object": "interaction",
            "model": "gemini-2.5-flash",
        }
        self.emit("interaction.completed", {"interaction": interaction})
        return b"".join(self.frames)


def text(rng: random.Random, pieces: list[str]) -> bytes:
    out = _Writer(rng)
    out.start()
    out.emit("step.start", {"index": 0, "step": {"type": "model_output"}})
    for piece in pieces:
        out.emit("step.delta", {"index": 0, "delta": {"text": piece, "type": "text"}})
    out.emit("step.stop", {"index": 0})
    return out.end("completed", len(pieces))


def tool_call(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    out = _Writer(rng)
    out.start()
    step = {
        "id": ident(rng, 8).lower(),
        "signature": "",
        "type": "function_call",
        "name": TOOL_NAME,
        "arguments": {},
    }
    out.emit("step.start", {"index": 0, "step": step})
    for piece in split(rng, compact(arguments).decode(), count):
        out.emit(
            "step.delta", {"index": 0, "delta": {"arguments": piece, "type": "arguments_delta"}}
        )
    out.emit("step.stop", {"index": 0})
    return out.end("requires_action", count)
