"""The emulator's Gemini generateContent: the turn written by the gateway's Gemini writer
(`writer.py`), as a gemini-generate-content upstream's events. `thought: true` parts with the
`thoughtSignature` on a part of its own after them; function calls arrive whole (`args`), as the
Gemini API sends them, with `id` only when the call has one; images whole and audio in chunks as
`inlineData`; usage and the finish reason on a last chunk. CRLF framing and `"key": value`
spacing, as the captures show; an `unknown` finish is `SAFETY`."""

from __future__ import annotations

import json
from typing import Any

from ...testing.emulation import (
    EmulatedStream,
    EventStyle,
    GatewayWrite,
    StreamEmulator,
    last_text,
    parts_text,
)
from .writer import error_object, writer

STYLE = EventStyle(
    signature="thought_signature",
    call_signature="thought_signature",
    synthesized_call_ids=True,
)


def _options(stream: EmulatedStream) -> dict[str, Any]:
    return {"alt": "sse", "unknown_finish_reason": "SAFETY"}


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
    write=GatewayWrite("gemini-generate-content", writer, STYLE, _options),
    error_body=gemini_error_body,
    last_user_text=lambda body: last_text(body.get("contents"), _gemini_text),
    media=frozenset({"image", "audio"}),
)
