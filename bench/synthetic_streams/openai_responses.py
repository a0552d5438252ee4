"""Synthetic openai-responses bodies for the bench (see `synthetic.py`)."""

from __future__ import annotations

import random
from typing import Any

from synthetic import TOOL_NAME, compact, hex_digits, ident, split

# Words per text chunk and mean characters per raw argument fragment on this wire (corpus
# captures: OpenAI streams about a token per chunk; Anthropic and Gemini send phrases).
WORDS_PER_CHUNK = (1, 1)
ARGUMENT_CHARS_PER_FRAGMENT = 4


class _ResponsesWriter:
    """Numbers `sequence_number` and writes `event:` + `data:` frames (corpus pydanticai-phase)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sequence = 0
        self.frames: list[bytes] = []
        self.response_id = f"resp_{hex_digits(rng, 50)}"

    def emit(self, payload: dict[str, Any]) -> None:
        payload["sequence_number"] = self.sequence
        self.sequence += 1
        self.frames.append(
            b"event: " + payload["type"].encode() + b"\ndata: " + compact(payload) + b"\n\n"
        )

    def obfuscation(self) -> str:
        return ident(self.rng, self.rng.randint(4, 15))

    def response(self, status: str, output: list[Any], usage: Any) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": 1785273853,
            "status": status,
            "background": False,
            "completed_at": 1785273855 if status == "completed" else None,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": None,
            "model": "gpt-5.1-2025-11-13",
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": "none", "summary": None},
            "service_tier": "default",
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [
                {
                    "type": "function",
                    "description": None,
                    "name": TOOL_NAME,
                    "parameters": {"type": "object", "additionalProperties": True},
                    "strict": False,
                }
            ],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "user": None,
            "metadata": {},
        }

    def start(self) -> None:
        self.emit({"type": "response.created", "response": self.response("in_progress", [], None)})
        self.emit(
            {"type": "response.in_progress", "response": self.response("in_progress", [], None)}
        )

    def complete(self, output: list[Any], output_tokens: int) -> bytes:
        usage = {
            "input_tokens": 278,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 278 + output_tokens,
        }
        self.emit(
            {"type": "response.completed", "response": self.response("completed", output, usage)}
        )
        return b"".join(self.frames)


def text(rng: random.Random, pieces: list[str]) -> bytes:
    """Shaped on corpus pydanticai-phase / pydanticai-text: message item, output_text deltas."""
    out = _ResponsesWriter(rng)
    item_id = f"msg_{hex_digits(rng, 50)}"
    text = "".join(pieces)
    part = {"type": "output_text", "annotations": [], "logprobs": []}
    out.start()
    item = {"id": item_id, "type": "message", "status": "in_progress", "content": []}
    out.emit(
        {
            "type": "response.output_item.added",
            "item": {**item, "role": "assistant"},
            "output_index": 0,
        }
    )
    where = {"content_index": 0, "item_id": item_id, "output_index": 0}
    out.emit({"type": "response.content_part.added", **where, "part": {**part, "text": ""}})
    for piece in pieces:
        out.emit(
            {
                "type": "response.output_text.delta",
                **where,
                "delta": piece,
                "logprobs": [],
                "obfuscation": out.obfuscation(),
            }
        )
    out.emit({"type": "response.output_text.done", **where, "logprobs": [], "text": text})
    out.emit({"type": "response.content_part.done", **where, "part": {**part, "text": text}})
    done_item = {
        **item,
        "status": "completed",
        "content": [{**part, "text": text}],
        "role": "assistant",
    }
    out.emit({"type": "response.output_item.done", "item": done_item, "output_index": 0})
    return out.complete([done_item], len(pieces))


def tool_call(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    """Shaped on corpus pydanticai-phase: function_call item, function_call_arguments deltas."""
    out = _ResponsesWriter(rng)
    item_id = f"fc_{hex_digits(rng, 50)}"
    raw = compact(arguments).decode()
    item = {
        "id": item_id,
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": f"call_{ident(rng, 24)}",
        "name": TOOL_NAME,
    }
    out.start()
    out.emit({"type": "response.output_item.added", "item": item, "output_index": 0})
    for piece in split(rng, raw, count):
        out.emit(
            {
                "type": "response.function_call_arguments.delta",
                "delta": piece,
                "item_id": item_id,
                "obfuscation": out.obfuscation(),
                "output_index": 0,
            }
        )
    out.emit(
        {
            "type": "response.function_call_arguments.done",
            "arguments": raw,
            "item_id": item_id,
            "output_index": 0,
        }
    )
    done_item = {**item, "status": "completed", "arguments": raw}
    out.emit({"type": "response.output_item.done", "item": done_item, "output_index": 0})
    return out.complete([done_item], count)
