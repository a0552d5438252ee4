"""OpenAI Responses (`POST /responses`, SSE with named events)."""

from __future__ import annotations

from ...auth.keys import BearerSigner
from ...framing import SSE
from ..common.model_lists import OPENAI_MODELS
from ..common.providers import OPENAI
from ..descriptor import Emulation, ModelRoute, Protocol
from .decoder import OpenAIResponsesDecoder
from .encoder import OpenAIResponsesEncoder
from .errors import ERROR_WORDS
from .gateway import GATEWAY

PROTOCOL = Protocol(
    name="openai-responses",
    decoder=OpenAIResponsesDecoder,
    encoder=OpenAIResponsesEncoder,
    framing=SSE,
    error_words=ERROR_WORDS,
    auth=BearerSigner,
    provider=OPENAI,
    routes=(ModelRoute(("gpt-", "o1", "o3", "o4", "chatgpt-"), OPENAI),),
    example_model="gpt-5-mini",
    emulation=Emulation(
        "modelstream.protocols.openai_responses.emulator",
        (r"/v1/responses",),
        "/v1",
    ),
    models=OPENAI_MODELS,
    gateway=GATEWAY,
    selectors=("previous_response_id", "conversation", "prompt"),
)
