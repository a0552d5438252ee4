"""Synthetic gemini-generate-content bodies for the bench (see `synthetic.py`)."""

from __future__ import annotations

import random
from typing import Any

from synthetic import TOOL_NAME, ident, spaced, split

# Words per text chunk and mean characters per raw argument fragment on this wire (corpus
# captures: OpenAI streams about a token per chunk; Anthropic and Gemini send phrases).
WORDS_PER_CHUNK = (2, 8)
ARGUMENT_CHARS_PER_FRAGMENT = 10


def _gemini_frame(payload: dict[str, Any]) -> bytes:
    return b"data: " + spaced(payload) + b"\r\n\r\n"


def text(rng: random.Random, pieces: list[str]) -> bytes:
    """Shaped on corpus pydanticai-google-text: usageMetadata on every chunk, finishReason on
    the last chunk together with its text, CRLF framing."""
    response_id = ident(rng, 23)
    prompt = {
        "promptTokenCount": 15,
        "totalTokenCount": 15,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 15}],
    }
    final_usage = {
        "promptTokenCount": 15,
        "candidatesTokenCount": len(pieces),
        "totalTokenCount": 15 + len(pieces),
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 15}],
        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": len(pieces)}],
    }
    frames = []
    last = len(pieces) - 1
    for n, piece in enumerate(pieces):
        candidate: dict[str, Any] = {"content": {"parts": [{"text": piece}], "role": "model"}}
        if n == last:
            candidate["finishReason"] = "STOP"
        frames.append(
            _gemini_frame(
                {
                    "candidates": [candidate],
                    "usageMetadata": final_usage if n == last else prompt,
                    "modelVersion": "gemini-2.5-flash",
                    "responseId": response_id,
                }
            )
        )
    return b"".join(frames)


def tool_call(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    """Shaped on corpus vercel-vertex-stream-tool-call-args(-nested) (Vertex AI streamed
    function-call arguments): `functionCall {name, willContinue}` with a thoughtSignature, then
    `count` partialArgs chunks (string values in pieces, each closed by an empty stringValue
    without willContinue; a numberValue whole), then an empty `functionCall {}` with
    finishReason STOP. Written with the Gemini spacing of the original-framing Vertex capture
    pydanticai-vertex-flex."""
    envelope = {"modelVersion": "gemini-3.1-pro-preview", "createTime": "2026-04-02T17:03:50Z"}
    envelope["responseId"] = ident(rng, 23)
    traffic = {"trafficType": "ON_DEMAND"}

    def chunk(part: dict[str, Any], usage: dict[str, Any], finish: bool = False) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}}
        if finish:
            candidate["finishReason"] = "STOP"
        return _gemini_frame({"candidates": [candidate], "usageMetadata": usage, **envelope})

    def partial(arg: dict[str, Any]) -> bytes:
        return chunk({"functionCall": {"partialArgs": [arg], "willContinue": True}}, traffic)

    opening = {
        "functionCall": {"name": TOOL_NAME, "willContinue": True},
        "thoughtSignature": ident(rng, 120),
    }
    frames = [chunk(opening, traffic)]
    # $.path (value + close), $.content (count - 4 pieces + close), $.revision: count chunks.
    frames.append(
        partial({"jsonPath": "$.path", "stringValue": arguments["path"], "willContinue": True})
    )
    frames.append(partial({"jsonPath": "$.path", "stringValue": ""}))
    for piece in split(rng, arguments["content"], count - 4):
        frames.append(
            partial({"jsonPath": "$.content", "stringValue": piece, "willContinue": True})
        )
    frames.append(partial({"jsonPath": "$.content", "stringValue": ""}))
    frames.append(partial({"jsonPath": "$.revision", "numberValue": arguments["revision"]}))
    final_usage = {
        "promptTokenCount": 26,
        "candidatesTokenCount": count,
        "totalTokenCount": 26 + count,
        "trafficType": "ON_DEMAND",
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 26}],
        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": count}],
    }
    frames.append(chunk({"functionCall": {}}, final_usage, finish=True))
    return b"".join(frames)
