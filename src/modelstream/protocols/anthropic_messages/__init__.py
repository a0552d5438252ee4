"""Anthropic Messages (`POST /v1/messages`, SSE with named events)."""

from __future__ import annotations

from ...auth.keys import anthropic_key
from ...framing import SSE
from ..common.model_lists import ANTHROPIC_MODELS
from ..common.providers import ANTHROPIC
from ..descriptor import Emulation, ModelRoute, Protocol
from .decoder import AnthropicMessagesDecoder
from .encoder import AnthropicMessagesEncoder
from .errors import ERROR_WORDS
from .gateway import GATEWAY

PROTOCOL = Protocol(
    name="anthropic-messages",
    decoder=AnthropicMessagesDecoder,
    encoder=AnthropicMessagesEncoder,
    framing=SSE,
    error_words=ERROR_WORDS,
    auth=anthropic_key,
    provider=ANTHROPIC,
    routes=(ModelRoute(("claude-",), ANTHROPIC),),
    example_model="claude-sonnet-4-5",
    emulation=Emulation(
        "modelstream.protocols.anthropic_messages.emulator",
        (r"/v1/messages",),
    ),
    models=ANTHROPIC_MODELS,
    gateway=GATEWAY,
    selectors=("container",),
)
