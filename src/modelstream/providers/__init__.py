"""Provider adapters, one module each, looked up by protocol name."""

from __future__ import annotations

from ..errors import ConfigurationError
from .anthropic_messages import AnthropicMessagesDecoder
from .base import StreamDecoderAdapter
from .bedrock_converse_stream import BedrockConverseStreamDecoder
from .gemini_embedding import GeminiEmbeddingDecoder
from .gemini_generate_content import GeminiGenerateContentDecoder
from .modelstream import ModelstreamDecoder
from .openai_chat import OpenAIChatDecoder
from .openai_embedding import OpenAIEmbeddingDecoder
from .openai_responses import OpenAIResponsesDecoder

DECODERS: dict[str, type[StreamDecoderAdapter]] = {
    "openai-chat": OpenAIChatDecoder,
    "openai-responses": OpenAIResponsesDecoder,
    "anthropic-messages": AnthropicMessagesDecoder,
    "gemini-generate-content": GeminiGenerateContentDecoder,
    "openai-embedding": OpenAIEmbeddingDecoder,
    "gemini-embedding": GeminiEmbeddingDecoder,
    "bedrock-converse-stream": BedrockConverseStreamDecoder,
    "modelstream": ModelstreamDecoder,  # a modelstream server's relayed events
}

# The providers' streaming protocols: what `modelstream replay` and the corpus speak (a decoder
# with `relayed = True` reads events a modelstream server relays, not a provider's wire).
PROTOCOLS: tuple[str, ...] = tuple(
    p
    for p, d in DECODERS.items()
    if d.framing in ("sse", "eventstream") and not getattr(d, "relayed", False)
)


def decoder_class(protocol: str) -> type[StreamDecoderAdapter]:
    try:
        return DECODERS[protocol]
    except KeyError:
        raise ConfigurationError(
            f"unknown protocol {protocol!r}; choose one of: {', '.join(PROTOCOLS)}"
        ) from None


__all__ = ["DECODERS", "PROTOCOLS", "StreamDecoderAdapter", "decoder_class"]
