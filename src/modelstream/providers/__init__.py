"""Provider adapters, one module each, looked up by protocol name."""

from __future__ import annotations

from ..errors import ConfigurationError
from .anthropic_messages import AnthropicMessagesDecoder
from .base import StreamDecoderAdapter
from .gemini_generate_content import GeminiGenerateContentDecoder
from .openai_chat import OpenAIChatDecoder
from .openai_responses import OpenAIResponsesDecoder

DECODERS: dict[str, type[StreamDecoderAdapter]] = {
    "openai-chat": OpenAIChatDecoder,
    "openai-responses": OpenAIResponsesDecoder,
    "anthropic-messages": AnthropicMessagesDecoder,
    "gemini-generate-content": GeminiGenerateContentDecoder,
}

PROTOCOLS: tuple[str, ...] = tuple(DECODERS)


def decoder_class(protocol: str) -> type[StreamDecoderAdapter]:
    try:
        return DECODERS[protocol]
    except KeyError:
        raise ConfigurationError(
            f"unknown protocol {protocol!r}; choose one of: {', '.join(PROTOCOLS)}"
        ) from None


__all__ = ["DECODERS", "PROTOCOLS", "StreamDecoderAdapter", "decoder_class"]
