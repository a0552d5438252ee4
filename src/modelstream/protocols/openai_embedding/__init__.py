"""OpenAI embeddings (`POST /embeddings`, one JSON body)."""

from __future__ import annotations

from ...auth.keys import BearerSigner
from ...framing import JSON_BODY
from ..common.model_lists import OPENAI_MODELS
from ..common.providers import OPENAI
from ..descriptor import Emulation, ModelRoute, Protocol
from ..openai_chat.errors import ERROR_WORDS
from .decoder import OpenAIEmbeddingDecoder
from .encoder import OpenAIEmbeddingEncoder
from .gateway import GATEWAY

PROTOCOL = Protocol(
    name="openai-embedding",
    decoder=OpenAIEmbeddingDecoder,
    encoder=OpenAIEmbeddingEncoder,
    framing=JSON_BODY,
    error_words=ERROR_WORDS,
    auth=BearerSigner,
    provider=OPENAI,
    routes=(ModelRoute(("text-embedding-",), OPENAI),),
    accept="application/json",
    otel_operation="embeddings",
    example_model="text-embedding-3-small",
    emulation=Emulation(
        "modelstream.protocols.openai_embedding.emulator", (r"/v1/embeddings",), "/v1"
    ),
    embedding=True,
    models=OPENAI_MODELS,
    gateway=GATEWAY,
)
