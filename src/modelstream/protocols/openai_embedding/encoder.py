"""OpenAI embeddings request encoder (`POST /embeddings`).

One input string per message: the message's text items joined with a newline. Anything that is
not text, and every config key except `extra_body` and `trace_id` (never sent), raises before
the request is made: an embedding call has no sampling, tools or reasoning. Vectors are asked
for as floats; `extra_body` adds the rest (`dimensions`, `user`, ...).
"""

from __future__ import annotations

from typing import Any

from ...errors import InvalidMessageError, UnsupportedParameterError
from ...types import Config, Message
from ..common.encoding import ProviderRequest, check_messages, items_of
from ..common.options import check_embedding_config, merge_extra_body, read_config

PROTOCOL = "openai-embedding"


class OpenAIEmbeddingEncoder:
    protocol = PROTOCOL

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        check_messages(messages)
        options = read_config(config, self.protocol)
        check_embedding_config(options, self.protocol)
        if not messages:
            raise InvalidMessageError("embeddings need at least one message to embed")
        body: dict[str, Any] = {
            "model": model,
            "input": [embedding_input(index, message) for index, message in enumerate(messages)],
            "encoding_format": "float",
        }
        body = merge_extra_body(body, options.get("extra_body"), self.protocol)
        return ProviderRequest("POST", "/embeddings", body)


def embedding_input(index: int, message: Message) -> str:
    """The text of one message; any other item cannot be embedded by this endpoint."""
    texts: list[str] = []
    for item in items_of(message):
        if item["type"] != "text.done":
            raise UnsupportedParameterError(
                "content_items",
                PROTOCOL,
                f"message {index} holds {item['type']}; only text can be embedded",
            )
        texts.append(item["text"])
    text = "\n".join(texts)
    if not text:
        raise InvalidMessageError(f"message {index} has no text to embed")
    return text
