"""Gemini generateContent (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`)."""

from __future__ import annotations

from ...auth.keys import gemini_key
from ...framing import SSE
from ..common.model_lists import GEMINI_MODELS
from ..common.providers import GOOGLE
from ..descriptor import Emulation, ModelRoute, Protocol
from .decoder import GeminiGenerateContentDecoder
from .encoder import GeminiGenerateContentEncoder
from .errors import ERROR_WORDS
from .gateway import GATEWAY

PROTOCOL = Protocol(
    name="gemini-generate-content",
    decoder=GeminiGenerateContentDecoder,
    encoder=GeminiGenerateContentEncoder,
    framing=SSE,
    error_words=ERROR_WORDS,
    auth=gemini_key,
    provider=GOOGLE,
    routes=(ModelRoute(("gemini-",), GOOGLE),),
    otel_operation="generate_content",  # the GenAI conventions' name for Gemini's API
    example_model="gemini-2.5-flash",
    emulation=Emulation(
        "modelstream.protocols.gemini_generate_content.emulator",
        (r"/v1beta/models/(?P<model>[^/:]+):streamGenerateContent",),
    ),
    models=GEMINI_MODELS,
    gateway=GATEWAY,
    selectors=("cachedContent", "cached_content"),
)
