"""Gemini embeddings request encoder: one vector per input message.

One message → `POST /v1beta/models/{model}:embedContent` with `{content}`; several →
`:batchEmbedContents` with `{requests: [{model, content}, ...]}` in message order, so the
response's vectors come back in that order. A message's text items become text parts, its
images `inlineData` / `fileData` parts (for multimodal embedding models).

Config: only `extra_body` (e.g. `taskType`, `outputDimensionality`, `title`) and `trace_id`
(not sent) apply; `extra_body` is merged into every request of a batch, where those fields live.
Any other key has no meaning for an embedding and raises `UnsupportedParameterError`.
"""

from __future__ import annotations

from typing import Any

from ...errors import InvalidMessageError
from ...types import Config, Message
from ..common.encoding import ProviderRequest, check_messages, items_of
from ..common.options import check_embedding_config, merge_extra_body, read_config
from ..gemini_generate_content.encoder import media_part, model_resource

PROTOCOL = "gemini-embedding"


class GeminiEmbeddingEncoder:
    protocol = PROTOCOL

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        check_messages(messages)
        if not messages:
            raise InvalidMessageError("there is nothing to embed: give at least one message")
        settings = read_config(config, PROTOCOL)
        check_embedding_config(settings, PROTOCOL)
        extra = settings.get("extra_body")
        resource = model_resource(model)
        requests = []
        for index, message in enumerate(messages):
            request: dict[str, Any] = {"content": {"parts": _parts(message, index)}}
            requests.append(merge_extra_body(request, extra, PROTOCOL))
        if len(requests) == 1:
            return ProviderRequest("POST", f"/v1beta/{resource}:embedContent", requests[0], {})
        body = {"requests": [{"model": resource, **request} for request in requests]}
        return ProviderRequest("POST", f"/v1beta/{resource}:batchEmbedContents", body, {})


def _parts(message: Message, index: int) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for item in items_of(message):
        kind = item["type"]
        if kind == "text.done":
            if item["text"]:
                parts.append({"text": item["text"]})
        elif kind == "image_url.done":
            parts.append(media_part(item["image_url"]))
        else:
            raise InvalidMessageError(
                f"message {index}: an embedding input holds text and images, not {kind}"
            )
    if not parts:
        raise InvalidMessageError(f"message {index} has nothing to embed")
    return parts
