"""OpenAI embeddings (`POST /v1/embeddings`) response decoder.

The body is one JSON document (framing "json"): `data[]` holds one vector per input, which
becomes one `embedding.delta` + `.done` each, in `index` order, then `stop` with finish "stop".
A base64 vector (`encoding_format: "base64"` through extra_body) is decoded to floats
(little-endian float32). An `{"error": {...}}` body raises ProviderError.

Usage arithmetic (SPEC §2), from `usage` (an embedding generates no tokens, and the endpoint
has no prompt cache):
  cached_tokens   = 0 (null when prompt_tokens is missing)
  prompt_tokens   = prompt_tokens
  thoughts_tokens = 0, response_tokens = 0
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from ...error_bodies import ErrorWords, provider_error
from ...types import Usage
from ..common.decoding import int_or_none, load_json

_RETRYABLE = {"server_error", "rate_limit_exceeded", "insufficient_quota_retry"}


class OpenAIEmbeddingDecoder:
    protocol = "openai-embedding"
    default_provider = "openai"

    def __init__(self, sink: Any, error_words: ErrorWords) -> None:
        self.sink = sink
        self.error_words = error_words  # every provider's (`error_bodies.provider_error`)

    def on_frame(self, event: str, data: str) -> None:
        body = load_json(self.sink, data)
        if body is None:
            return
        if not isinstance(body, dict):
            self.sink.skip("malformed_body")
            return
        if body.get("error"):
            self._raise(body["error"])
        if isinstance(body.get("model"), str):
            self.sink.metadata.model = body["model"]
        entries = body.get("data")
        if not isinstance(entries, list):
            self.sink.skip("malformed_body")
            return
        ordered = sorted((entry for entry in entries if isinstance(entry, dict)), key=_index)
        for position, entry in enumerate(ordered):
            vector = _vector(entry.get("embedding"))
            if vector is None:
                self.sink.skip("malformed_embedding")
                continue
            self.sink.embedding(("embedding", position), vector)
        usage = body.get("usage")
        if isinstance(usage, dict):
            self.sink.usage_update(_usage(usage))
        self.sink.finish("stop", None)
        self.sink.terminal()

    def on_end(self) -> None:
        pass

    def _raise(self, error: Any) -> None:
        if not isinstance(error, dict):
            error = {"message": str(error)}
        code = error.get("code")
        if code is not None and not isinstance(code, str | int):
            code = str(code)
        error_type = error.get("type")
        self.sink.provider_error(
            provider_error(
                str(error.get("message") or "the embeddings request failed"),
                error_type=str(error_type) if error_type is not None else None,
                code=code,
                retryable=error_type in _RETRYABLE or code in _RETRYABLE,
                provider=self.sink.metadata.provider,
                words=self.error_words,
            )
        )


def _index(entry: dict[str, Any]) -> int:
    index = entry.get("index")
    return index if isinstance(index, int) else 0


def _vector(value: Any) -> list[float] | None:
    if isinstance(value, list) and all(isinstance(x, int | float) for x in value):
        return [float(x) for x in value]
    if isinstance(value, str):  # encoding_format "base64": packed little-endian float32
        try:
            raw = base64.b64decode(value, validate=True)
        except ValueError:
            return None
        if len(raw) % 4:
            return None
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    return None


def _usage(usage: dict[str, Any]) -> Usage:
    prompt = int_or_none(usage.get("prompt_tokens"))
    return {
        "cached_tokens": 0 if prompt is not None else None,
        "prompt_tokens": prompt,
        "thoughts_tokens": 0,
        "response_tokens": 0,
    }
