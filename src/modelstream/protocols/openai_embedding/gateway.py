"""OpenAI embeddings as a gateway wire (`POST /v1/embeddings`, SPEC §8): the openai SDKs'
`embeddings.create` on any served embedding model.

    model                   the served model
    input                   a string or a list of strings: one user message each, in order
                            (token arrays are refused: the upstream may not share the tokenizer)
    encoding_format         "float" or "base64" (the openai SDK's default: little-endian float32)
    dimensions              passed natively, and required: an upstream of another protocol
                            would answer vectors of another size, so it refuses the request
    user                    ignored

The answer is never streamed: the vectors come back as OpenAI's list body.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from ...types import Message
from ..common.fidelity_seal import FidelitySeal
from ..common.gateway import (
    GatewayRoute,
    GatewayWire,
    InboundCall,
    InboundRequest,
    InboundRequestError,
    UnsupportedOutputError,
    WriteContext,
    bearer_key,
)
from ..openai_chat.writer import error_body

ROUTES = (GatewayRoute("POST", "/v1/embeddings", "generate", stream=False),)
_FIELDS = {"model", "input", "encoding_format", "dimensions", "user"}


def decode_request(body: Any, call: InboundCall, seal: FidelitySeal) -> InboundRequest:
    del call, seal  # no route parameters, and embeddings carry no fidelity
    if not isinstance(body, dict):
        raise InboundRequestError("the request body must be a JSON object")
    unknown = sorted(key for key, value in body.items() if key not in _FIELDS and value is not None)
    if unknown:
        raise InboundRequestError(f"unknown field {unknown[0]!r}", param=unknown[0])
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise InboundRequestError("'model' must be a non-empty string", param="model")
    given = body.get("input")
    inputs = [given] if isinstance(given, str) else given
    if not isinstance(inputs, list) or not inputs or not all(isinstance(i, str) for i in inputs):
        raise InboundRequestError(
            "'input' must be a string or a non-empty list of strings (token arrays are not "
            "served: send the text)",
            param="input",
        )
    if not all(inputs):
        raise InboundRequestError("'input' holds an empty string", param="input")
    encoding = body.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise InboundRequestError(
            "'encoding_format' must be 'float' or 'base64'", param="encoding_format"
        )
    native: dict[str, Any] = {}
    dimensions = body.get("dimensions")
    if dimensions is not None:
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
            raise InboundRequestError("'dimensions' must be a positive integer", param="dimensions")
        native["dimensions"] = dimensions
    messages: list[Message] = [
        {"role": "user", "content_items": [{"type": "text.done", "text": text}]} for text in inputs
    ]
    return InboundRequest(
        model=model,
        messages=messages,
        config={},
        stream=False,
        options={"encoding_format": encoding},
        native_fields=native,
        native_required=("dimensions",) if native else (),
        ignored=("user",) if body.get("user") is not None else (),
    )


def final_body(ctx: WriteContext, message: Message) -> dict[str, Any]:
    """OpenAI's list of embeddings, in input order, with the input token count."""
    as_base64 = ctx.request.options.get("encoding_format") == "base64"
    data = []
    for index, item in enumerate(message["content_items"]):
        if item["type"] != "embedding.done":
            raise UnsupportedOutputError(f"an embeddings answer cannot hold {item['type']}")
        vector = item["embedding"]
        value: Any = vector
        if as_base64:
            value = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
        data.append({"object": "embedding", "index": index, "embedding": value})
    usage = message.get("usage_metadata")
    prompt = 0
    if usage is not None:
        prompt = (usage["prompt_tokens"] or 0) + (usage["cached_tokens"] or 0)
    return {
        "object": "list",
        "data": data,
        "model": ctx.model,
        "usage": {"prompt_tokens": prompt, "total_tokens": prompt},
    }


GATEWAY = GatewayWire(
    routes=ROUTES,
    read_key=bearer_key,
    decode_request=decode_request,
    writer=None,
    final_body=final_body,
    error_body=error_body,
    content_type="application/json",
)

__all__ = ["GATEWAY", "ROUTES", "decode_request", "final_body"]
