"""Gemini embeddings (`:embedContent`, `:batchEmbedContents`) response decoder.

The body is one JSON document (framing "json"): `{"embedding": {"values": [...]}}` for one
input, `{"embeddings": [{"values": [...]}, ...]}` for a batch, in the order of the inputs. Each
vector is one `embedding` item (delta + done), then the turn finishes with "stop": an embedding
response has no finish reason of its own, its arrival is the end.

Usage (SPEC §2), when the body has `usageMetadata` (the embedding API mostly sends none: then
usage is all unknown, with the assembler's `usage_missing` diagnostic):
  cached_tokens   = cachedContentTokenCount (absent → 0 when promptTokenCount is present)
  prompt_tokens   = promptTokenCount − cached
  thoughts_tokens = 0, response_tokens = 0 (an embedding generates no tokens)

Errors: an `{"error": {code, message, status}}` body is a `ProviderError`; a body with no
vector at all is an `IncompleteStreamError`.
"""

from __future__ import annotations

from typing import Any

from ...error_bodies import ErrorWords
from ...errors import IncompleteStreamError
from ..common.decoding import int_or_none, load_json
from ..gemini_generate_content.decoder import gemini_error


class GeminiEmbeddingDecoder:
    protocol = "gemini-embedding"
    default_provider = "google"

    def __init__(self, sink: Any, error_words: ErrorWords) -> None:
        self.sink = sink
        self.error_words = error_words  # every provider's (`error_bodies.provider_error`)

    def on_frame(self, event: str, data: str) -> None:
        body = load_json(self.sink, data)
        if not isinstance(body, dict):
            raise IncompleteStreamError("embedding", "the body is not a JSON object")
        if "error" in body:
            self._error(body["error"])
        if "embeddings" in body:
            entries = body["embeddings"]
        elif "embedding" in body:
            entries = [body["embedding"]]
        else:
            raise IncompleteStreamError("embedding", "the body holds no embedding")
        if not isinstance(entries, list):
            raise IncompleteStreamError("embedding", "`embeddings` is not a list")
        sink = self.sink
        for key, entry in enumerate(entries):
            values = entry.get("values") if isinstance(entry, dict) else None
            if not isinstance(values, list):
                raise IncompleteStreamError("embedding", f"embedding {key} has no values")
            sink.embedding(key, values)
        usage = body.get("usageMetadata")
        if isinstance(usage, dict):
            self._usage(usage)
        sink.finish("stop", None)
        sink.terminal()

    def on_end(self) -> None:
        pass

    def _usage(self, usage: dict[str, Any]) -> None:
        prompt = int_or_none(usage.get("promptTokenCount"))
        if prompt is None:
            return
        cached = int_or_none(usage.get("cachedContentTokenCount")) or 0
        self.sink.usage_update(
            {
                "cached_tokens": cached,
                "prompt_tokens": prompt - cached,
                "thoughts_tokens": 0,
                "response_tokens": 0,
            }
        )

    def _error(self, error: Any) -> None:
        self.sink.provider_error(gemini_error(error, self.sink.metadata.provider, self.error_words))
