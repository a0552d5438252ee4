"""The Gemini embeddings decoder: a JSON body (one embedding, or a batch) replayed over loopback
HTTP, cut into pieces, becomes one embedding item per input, in order, then the stop."""

from __future__ import annotations

import json
from typing import Any

from modelstream import FinalResponse, IncompleteStreamError, ProviderError
from support import Capture, decode_over_http

EMBEDDING = "gemini-embedding"


def embedding_body(payload: dict[str, Any]) -> Capture:
    return Capture(EMBEDDING, "body", json.dumps(payload).encode(), {})


def test_a_batch_response_is_one_embedding_item_per_input_in_order_then_stop(replay_server):
    payload = {
        "embeddings": [{"values": [0.25, -1.5, 3e-05]}, {"values": [0.5, 0.125]}],
        "usageMetadata": {"promptTokenCount": 9},
    }
    decoded = decode_over_http(replay_server, embedding_body(payload), slices=[7])
    items = [e["content_items"][0] for e in decoded.events if e["content_items"]]
    vectors = [entry["values"] for entry in payload["embeddings"]]
    assert items == [
        {"type": "embedding.delta", "embedding": vectors[0]},
        {"type": "embedding.done", "embedding": vectors[0]},
        {"type": "embedding.delta", "embedding": vectors[1]},
        {"type": "embedding.done", "embedding": vectors[1]},
    ]
    assert decoded.stop is not None
    assert decoded.stop["finish_reason"] == "stop"
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": 0,
        "prompt_tokens": 9,
        "thoughts_tokens": 0,
        "response_tokens": 0,
    }


def test_a_single_embedding_without_usage_finishes_with_unknown_usage(replay_server):
    decoded = decode_over_http(replay_server, embedding_body({"embedding": {"values": [1.0]}}))
    assert decoded.done_items == [{"type": "embedding.done", "embedding": [1.0]}]
    assert decoded.stop is not None
    assert set(decoded.stop["usage_metadata"].values()) == {None}
    assert isinstance(decoded.decoder.result, FinalResponse)


def test_an_embedding_error_body_is_a_provider_error(replay_server):
    payload = {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}
    decoded = decode_over_http(replay_server, embedding_body(payload))
    assert isinstance(decoded.error, ProviderError)
    assert decoded.error.provider_message == "Quota exceeded"
    assert (decoded.error.error_type, decoded.error.code) == ("RESOURCE_EXHAUSTED", 429)
    assert decoded.error.retryable
    assert decoded.events == []


def test_an_embedding_body_without_vectors_is_incomplete(replay_server):
    decoded = decode_over_http(replay_server, embedding_body({"unexpected": True}))
    assert isinstance(decoded.error, IncompleteStreamError)
    assert decoded.error.missing == "embedding"
