"""The Gemini Interactions API (`POST /v1beta/interactions` with `"stream": true`), stateless:
the whole history goes with every turn and nothing is stored server-side. Chosen with
`client_type="gemini-interactions"`; the `gemini-` model prefix stays on generateContent."""

from __future__ import annotations

from ...auth.keys import gemini_key
from ...framing import SSE
from ..common.model_lists import GEMINI_MODELS
from ..common.providers import GOOGLE
from ..descriptor import Emulation, Protocol
from ..gemini_generate_content.errors import ERROR_WORDS
from .decoder import GeminiInteractionsDecoder
from .encoder import GeminiInteractionsEncoder

PROTOCOL = Protocol(
    name="gemini-interactions",
    decoder=GeminiInteractionsDecoder,
    encoder=GeminiInteractionsEncoder,
    framing=SSE,
    error_words=ERROR_WORDS,
    auth=gemini_key,
    provider=GOOGLE,
    otel_operation="generate_content",
    example_model="gemini-2.5-flash",
    emulation=Emulation(
        "modelstream.protocols.gemini_interactions.emulator", (r"/v1beta/interactions",)
    ),
    models=GEMINI_MODELS,
    selectors=("agent", "previous_interaction_id"),
)
