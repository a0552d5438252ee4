"""The emulator's OpenAI Chat Completions: the turn written by the gateway's Chat writer
(`writer.py`), as an openai-chat upstream's events. Thinking streams as `reasoning_content`
mirrored in OpenRouter's `reasoning_details`, a signature in a closing detail; an audio answer as
`delta.audio` chunks. Usage in a trailing `choices: []` chunk, only when the request's
`stream_options.include_usage` asks for it. Two adjacent texts join into one item here (no block
identity on this wire).
"""

from __future__ import annotations

from typing import Any

from ...testing.emulation import (
    EmulatedStream,
    EventStyle,
    GatewayWrite,
    StreamEmulator,
    joined_text,
    last_text,
)
from ...testing.turns import Media
from .writer import openai_error_body, writer

# how long OpenAI keeps an audio answer for the next turn (`audio.expires_at`)
AUDIO_LIFETIME_S = 3600


def _audio(stream: EmulatedStream, media: Media, number: int) -> dict[str, Any]:
    """An audio clip's fidelity as the decoder reads it: the clip's id and its expiry."""
    return {
        "audio_id": f"audio_{stream.id[-12:]}{number}",
        "expires_at": stream.created + AUDIO_LIFETIME_S,
    }


# the decoder reads the writer's thinking (`reasoning_content` mirrored in `reasoning_details`)
# as field `reasoning`, its name for mirrored text
STYLE = EventStyle(thinking={"reasoning_field": "reasoning"}, media=_audio)


def _options(stream: EmulatedStream) -> dict[str, Any]:
    return {"include_usage": stream.include_usage}


def _wants_usage(body: dict[str, Any]) -> bool:
    """Chat Completions reports usage only when the request asks for it."""
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _chat_text(message: dict[str, Any]) -> str | None:
    if message.get("role") not in ("user", "tool"):
        return None
    return joined_text(message.get("content"), "text")


EMULATOR = StreamEmulator(
    write=GatewayWrite("openai-chat", writer, STYLE, _options),
    error_body=openai_error_body,
    last_user_text=lambda body: last_text(body.get("messages"), _chat_text),
    response_id_prefix="chatcmpl-emu",
    wants_usage=_wants_usage,
    media=frozenset({"audio"}),  # streamed as pcm16 whatever the clip's mime type says
)
