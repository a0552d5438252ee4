"""Request encoder for Gemini embeddings (`embedContent`, `batchEmbedContents`).

Expected values come from the mapping tables in docs/requests-anthropic-gemini.md.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from modelstream.errors import InvalidMessageError, UnsupportedParameterError
from support.encoding import (
    CONFIG_KEYS,
    EMBEDDING,
    PNG,
    RAISES,
    UNCHANGED,
    check_config_key,
    encode,
    scribble,
)
from support.messages import assistant, call, image, result, text, user

# --- every config key ---------------------------------------------------------------------

# key -> (config, what the body holds)
KEY_CASES: dict[str, tuple[dict[str, Any], Any]] = {
    **{key: ({}, RAISES) for key in CONFIG_KEYS},
    "extra_body": ({}, {"content": {"parts": [{"text": "Hello"}]}, "top_k": 5}),
    "trace_id": ({}, UNCHANGED),
}


@pytest.mark.parametrize("key", CONFIG_KEYS)
def test_every_config_key_is_encoded_or_refused_by_name(key):
    check_config_key(EMBEDDING, key, *KEY_CASES[key])


def test_a_key_that_is_not_in_config_is_refused_rather_than_ignored():
    with pytest.raises(UnsupportedParameterError, match=r"top_k.*extra_body"):
        encode(EMBEDDING, config={"top_k": 5})


def test_an_empty_history_is_refused_before_sending():
    with pytest.raises(InvalidMessageError):
        encode(EMBEDDING, [])


# --- the request --------------------------------------------------------------------------


def test_one_message_is_embedded_with_embed_content():
    request = encode(EMBEDDING, [user(text("cats"), text("and dogs"))])
    assert (request.method, request.path) == ("POST", "/v1beta/models/text-embed-1:embedContent")
    assert request.json == {"content": {"parts": [{"text": "cats"}, {"text": "and dogs"}]}}


def test_several_messages_are_one_batch_request_each_in_order_with_extra_body():
    request = encode(
        EMBEDDING,
        [user(text("one")), user(text("two"), image(PNG))],
        {"extra_body": {"taskType": "RETRIEVAL_DOCUMENT", "outputDimensionality": 256}},
    )
    assert request.path == "/v1beta/models/text-embed-1:batchEmbedContents"
    assert request.json == {
        "requests": [
            {
                "model": "models/text-embed-1",
                "content": {"parts": [{"text": "one"}]},
                "taskType": "RETRIEVAL_DOCUMENT",
                "outputDimensionality": 256,
            },
            {
                "model": "models/text-embed-1",
                "content": {
                    "parts": [
                        {"text": "two"},
                        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                    ]
                },
                "taskType": "RETRIEVAL_DOCUMENT",
                "outputDimensionality": 256,
            },
        ]
    }


@pytest.mark.parametrize(
    "message",
    [user(result("c", "x")), assistant(call("c", "f", {})), user(text(""))],
)
def test_an_embedding_input_must_hold_text_or_images(message):
    with pytest.raises(InvalidMessageError):
        encode(EMBEDDING, [message])


# --- the caller's objects are never changed ---------------------------------------------------

FULL_CONFIG: dict[str, Any] = {
    "extra_body": {"taskType": "CLUSTERING", "nested": {"a": [1]}},
    "trace_id": "t",
}


def test_encoding_never_changes_the_callers_messages_or_config():
    history, config = [user(text("a")), user(image(PNG))], copy.deepcopy(FULL_CONFIG)
    history_before, config_before = copy.deepcopy(history), copy.deepcopy(config)
    request = encode(EMBEDDING, history, config)
    assert (history, config) == (history_before, config_before)
    scribble(request.json)
    assert (history, config) == (history_before, config_before)
