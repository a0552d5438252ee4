"""The emulator's Gemini generateContent: `thought: true` parts with `thoughtSignature` on the
last one; function calls arrive whole (`args`), as the Gemini API sends them, with `id` only when
the call has one. CRLF framing and `"key": value` spacing, as the captures show."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

from ...testing.emulation import (
    EmulatedStream,
    StreamEmulator,
    count,
    last_text,
    parts_text,
)
from ...testing.turns import Media, Text, Thinking, ToolCall
from .writer import error_object

_GEMINI_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_call": "STOP", "unknown": "SAFETY"}


def _gemini_json(value: Any) -> bytes:
    # Gemini writes `{"key": value,"key2": ...}`: a space after the colon, none after the comma
    return json.dumps(value, ensure_ascii=False, separators=(",", ": ")).encode()


def _blob(mime_type: str, data: bytes) -> dict[str, str]:
    return {"mimeType": mime_type, "data": base64.b64encode(data).decode()}


def _gemini(s: EmulatedStream) -> Iterator[bytes]:
    parts: list[dict[str, Any]] = []  # one part per chunk, in order
    for item in s.turn.items:
        if isinstance(item, Text):
            parts.extend({"text": piece} for piece in s.pieces(item.text))
        elif isinstance(item, Thinking):
            thoughts = [{"text": piece, "thought": True} for piece in s.pieces(item.thinking)]
            if item.signature is not None:
                if not thoughts:
                    thoughts.append({"text": "", "thought": True})
                thoughts[-1]["thoughtSignature"] = item.signature  # on the part it came with
            parts.extend(thoughts)
        elif isinstance(item, ToolCall):
            call: dict[str, Any] = {"name": item.name, "args": dict(item.arguments)}
            if item.id is not None:
                call["id"] = item.id
            part: dict[str, Any] = {"functionCall": call}
            if item.signature is not None:
                part["thoughtSignature"] = item.signature
            parts.append(part)
        elif isinstance(item, Media):  # an image whole; a spoken answer in chunks (TTS)
            pieces = [item.data] if item.kind == "image" else s.byte_pieces(item.data)
            parts.extend({"inlineData": _blob(item.mime_type, piece)} for piece in pieces)
    if not parts:
        parts.append({"text": ""})
    usage = s.usage
    cached = count(usage, "cached_tokens")
    prompt = count(usage, "prompt_tokens") + cached
    thoughts_total = count(usage, "thoughts_tokens")
    response_total = count(usage, "response_tokens")
    for number, part in enumerate(parts, start=1):
        # usageMetadata is a snapshot of the turn so far; proto3 JSON omits zero counts
        response = -(-response_total * number // len(parts))
        counts: dict[str, int] = {"promptTokenCount": prompt}
        if response:
            counts["candidatesTokenCount"] = response
        counts["totalTokenCount"] = prompt + response + thoughts_total
        if cached:
            counts["cachedContentTokenCount"] = cached
        if thoughts_total:
            counts["thoughtsTokenCount"] = thoughts_total
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}}
        if number == len(parts):
            candidate["finishReason"] = _GEMINI_FINISH[s.finish]
        candidate["index"] = 0
        chunk = {
            "candidates": [candidate],
            "usageMetadata": counts,
            "modelVersion": s.model,
            "responseId": s.id,
        }
        yield b"data: " + _gemini_json(chunk) + b"\r\n\r\n"


def gemini_error_body(
    status: int, message: str, *, retry_after: float | None, endpoint: bool = True
) -> bytes:
    """Google's error body, with a RetryInfo detail when the reply has a retry delay (the
    gateway's writer owns its shape)."""
    return (
        json.dumps(error_object(status, message, retry_after=retry_after), indent=2).encode()
        + b"\n"
    )


def _gemini_text(content: dict[str, Any]) -> str | None:
    if content.get("role", "user") != "user":
        return None
    return parts_text(content)


EMULATOR = StreamEmulator(
    write=_gemini,
    error_body=gemini_error_body,
    last_user_text=lambda body: last_text(body.get("contents"), _gemini_text),
    media=frozenset({"image", "audio"}),
)
