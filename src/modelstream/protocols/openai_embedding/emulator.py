"""The emulator's OpenAI embeddings: one pretty-printed JSON body of vectors."""

from __future__ import annotations

import json
from typing import Any

from ...testing.emulation import EmbeddingEmulator, count, dimensions_within
from ...testing.turns import Embedding
from ...types import Usage
from ..openai_chat.writer import openai_error_body


def _write(embeddings: list[Embedding], model: str, usage: Usage, batch: bool | None) -> bytes:
    prompt = count(usage, "prompt_tokens") + count(usage, "cached_tokens")
    body = {
        "object": "list",
        "data": [
            {"object": "embedding", "index": index, "embedding": list(item.values)}
            for index, item in enumerate(embeddings)
        ],
        "model": model,
        "usage": {"prompt_tokens": prompt, "total_tokens": prompt},
    }
    return json.dumps(body, indent=2).encode() + b"\n"  # OpenAI pretty-prints this body


def _inputs(path: str, body: dict[str, Any]) -> list[str]:
    given = body.get("input")
    if isinstance(given, str):
        return [given]
    if isinstance(given, list):
        if given and all(isinstance(token, int) for token in given):
            return [json.dumps(given)]  # one input given as token ids
        return [entry if isinstance(entry, str) else json.dumps(entry) for entry in given]
    return []


EMULATOR = EmbeddingEmulator(
    write=_write,
    error_body=openai_error_body,
    inputs=_inputs,
    dimensions=lambda path, body: dimensions_within(body.get("dimensions")),
)
