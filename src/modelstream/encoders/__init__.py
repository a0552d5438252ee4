"""Request encoders, one module per client type: messages + config → one HTTP request."""

from __future__ import annotations

import importlib

from ..errors import ConfigurationError
from ..types import Config, Message
from .base import ProviderRequest, RequestEncoder

# client type -> (module, class); imported on first use
_ENCODERS: dict[str, tuple[str, str]] = {
    "openai-chat": ("openai_chat", "OpenAIChatEncoder"),
    "openai-responses": ("openai_responses", "OpenAIResponsesEncoder"),
    "anthropic-messages": ("anthropic_messages", "AnthropicMessagesEncoder"),
    "gemini-generate-content": ("gemini_generate_content", "GeminiGenerateContentEncoder"),
    "gemini-interactions": ("gemini_interactions", "GeminiInteractionsEncoder"),
    "openai-embedding": ("openai_embedding", "OpenAIEmbeddingEncoder"),
    "gemini-embedding": ("gemini_embedding", "GeminiEmbeddingEncoder"),
    "bedrock-converse-stream": ("bedrock_converse_stream", "BedrockConverseStreamEncoder"),
    "modelstream": ("modelstream", "ModelstreamEncoder"),  # a modelstream server (docs/server.md)
}

CLIENT_TYPES: tuple[str, ...] = tuple(_ENCODERS)


def encoder_for(client_type: str) -> RequestEncoder:
    try:
        module_name, class_name = _ENCODERS[client_type]
    except KeyError:
        raise ConfigurationError(
            f"unknown client type {client_type!r}; choose one of: {', '.join(CLIENT_TYPES)}"
        ) from None
    module = importlib.import_module(f"{__name__}.{module_name}")
    encoder: RequestEncoder = getattr(module, class_name)()
    return encoder


def encode_request(
    client_type: str, model: str, messages: list[Message], config: Config | None = None
) -> ProviderRequest:
    """The HTTP request (without credentials or base URL) for one turn."""
    return encoder_for(client_type).encode(model, messages, config or {})


__all__ = ["CLIENT_TYPES", "ProviderRequest", "RequestEncoder", "encode_request", "encoder_for"]
