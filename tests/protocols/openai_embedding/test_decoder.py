"""The OpenAI embeddings decoder: a JSON body, fed in two pieces like a network read, becomes
one embedding item per input in index order, then the stop with the input's usage."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import pytest

from modelstream import EmptyResponseError, ProviderError
from modelstream.results import StreamMetadata
from support import decode_chunks

EMBEDDING = "openai-embedding"


def decode_embeddings(body: dict[str, Any]) -> tuple[list[Any], StreamMetadata]:
    """Decode a JSON body through StreamDecoder, fed in two pieces like a network read."""
    raw = json.dumps(body).encode()
    decoded = decode_chunks(EMBEDDING, [raw[:7], raw[7:]])
    if decoded.error is not None:
        raise decoded.error
    assert decoded.decoder is not None
    return decoded.events, decoded.decoder.metadata


EMBEDDINGS_BODY = {
    "object": "list",
    "data": [
        {"object": "embedding", "index": 1, "embedding": [0.5, -1.0]},
        {"object": "embedding", "index": 0, "embedding": [0.25, 2]},
    ],
    "model": "text-embedding-3-small",
    "usage": {"prompt_tokens": 8, "total_tokens": 8},
}


def test_embeddings_decode_to_one_delta_and_done_per_input_in_index_order_then_stop():
    events, metadata = decode_embeddings(EMBEDDINGS_BODY)
    items = [event["content_items"][0] for event in events[:-1]]
    assert items == [
        {"type": "embedding.delta", "embedding": [0.25, 2.0]},
        {"type": "embedding.done", "embedding": [0.25, 2.0]},
        {"type": "embedding.delta", "embedding": [0.5, -1.0]},
        {"type": "embedding.done", "embedding": [0.5, -1.0]},
    ]
    stop = events[-1]
    assert stop["event_type"] == "stop"
    assert stop["finish_reason"] == "stop"
    assert metadata.model == "text-embedding-3-small"


def test_embeddings_usage_counts_the_input_and_no_output():
    events, _ = decode_embeddings(EMBEDDINGS_BODY)
    assert events[-1]["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 8,
        "thoughts_tokens": 0,
        "response_tokens": 0,
    }


def test_embeddings_without_usage_have_unknown_usage_and_say_so():
    body = {key: value for key, value in EMBEDDINGS_BODY.items() if key != "usage"}
    events, metadata = decode_embeddings(body)
    assert set(events[-1]["usage_metadata"].values()) == {None}
    assert {"type": "usage_missing"} in metadata.diagnostics


def test_base64_embeddings_decode_to_the_same_floats():
    packed = base64.b64encode(struct.pack("<3f", 0.5, -2.0, 0.125)).decode()
    body = {**EMBEDDINGS_BODY, "data": [{"index": 0, "embedding": packed}]}
    events, _ = decode_embeddings(body)
    assert events[1]["content_items"][0] == {
        "type": "embedding.done",
        "embedding": [0.5, -2.0, 0.125],
    }


def test_an_embeddings_error_body_is_a_provider_error():
    body = {
        "error": {
            "message": "This model's maximum context length is 8192 tokens.",
            "type": "invalid_request_error",
            "param": None,
            "code": "context_length_exceeded",
        }
    }
    with pytest.raises(ProviderError) as caught:
        decode_embeddings(body)
    assert caught.value.error_type == "invalid_request_error"
    assert caught.value.code == "context_length_exceeded"
    assert "8192" in caught.value.provider_message
    assert caught.value.retryable is False


def test_an_embeddings_body_with_no_vectors_is_an_empty_response():
    with pytest.raises(EmptyResponseError):
        decode_embeddings({**EMBEDDINGS_BODY, "data": []})
