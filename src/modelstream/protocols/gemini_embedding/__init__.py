"""Gemini embeddings (`:embedContent` / `:batchEmbedContents`, one JSON body)."""

from __future__ import annotations

from ...auth.keys import gemini_key
from ...framing import JSON_BODY
from ..common.model_lists import GEMINI_MODELS
from ..common.providers import GOOGLE
from ..descriptor import Emulation, ModelRoute, Protocol
from ..gemini_generate_content.errors import ERROR_WORDS
from .decoder import GeminiEmbeddingDecoder
from .encoder import GeminiEmbeddingEncoder

PROTOCOL = Protocol(
    name="gemini-embedding",
    decoder=GeminiEmbeddingDecoder,
    encoder=GeminiEmbeddingEncoder,
    framing=JSON_BODY,
    error_words=ERROR_WORDS,
    auth=gemini_key,
    provider=GOOGLE,
    routes=(ModelRoute(("gemini-embedding-", "text-embedding-004"), GOOGLE),),
    accept="application/json",
    otel_operation="embeddings",
    example_model="gemini-embedding-001",
    emulation=Emulation(
        "modelstream.protocols.gemini_embedding.emulator",
        (r"/v1beta/models/(?P<model>[^/:]+):(?:embedContent|batchEmbedContents)",),
    ),
    embedding=True,
    models=GEMINI_MODELS,
)
