"""Synthetic bedrock-converse-stream bodies for the bench (see `synthetic.py`): binary AWS
event-stream messages, each with AWS's random-length `p` padding field."""

from __future__ import annotations

import random
import struct
import zlib
from typing import Any

import orjson

from synthetic import TOOL_NAME, compact, ident, split

# Claude on Bedrock sends phrases, as on Anthropic's API.
WORDS_PER_CHUNK = (1, 4)
ARGUMENT_CHARS_PER_FRAGMENT = 8

_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _aws_message(event_type: str, payload: dict[str, Any]) -> bytes:
    """One AWS event-stream message as Bedrock sends it (corpus pydanticai-bedrock-nova-text):
    string headers :event-type, :content-type, :message-type; compact JSON with sorted keys."""
    headers = b""
    for name, value in (
        (":event-type", event_type),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ):
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    body = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    prelude = struct.pack(">II", 16 + len(headers) + len(body), len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


class _Writer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.messages: list[bytes] = []

    def emit(self, event_type: str, payload: dict[str, Any]) -> None:
        padded = {**payload, "p": _PADDING[: self.rng.randint(1, len(_PADDING))]}
        self.messages.append(_aws_message(event_type, padded))

    def end(self, reason: str, output_tokens: int) -> bytes:
        self.emit("contentBlockStop", {"contentBlockIndex": 0})
        self.emit("messageStop", {"stopReason": reason})
        usage = {"inputTokens": 377, "outputTokens": output_tokens}
        usage["totalTokens"] = 377 + output_tokens
        self.emit("metadata", {"metrics": {"latencyMs": 2281}, "usage": usage})
        return b"".join(self.messages)


def text(rng: random.Random, pieces: list[str]) -> bytes:
    out = _Writer(rng)
    out.emit("messageStart", {"role": "assistant"})
    for piece in pieces:
        out.emit("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}})
    return out.end("end_turn", len(pieces))


def tool_call(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    out = _Writer(rng)
    out.emit("messageStart", {"role": "assistant"})
    tool = {"name": TOOL_NAME, "toolUseId": f"tooluse_{ident(rng, 22)}"}
    out.emit("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": tool}})
    for piece in split(rng, compact(arguments).decode(), count):
        out.emit(
            "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": piece}}}
        )
    return out.end("tool_use", count)
