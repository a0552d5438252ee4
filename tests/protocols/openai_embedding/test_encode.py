"""Request encoder of OpenAI embeddings (`/embeddings`)."""

from __future__ import annotations

import copy

import pytest

from modelstream.errors import InvalidMessageError
from modelstream.protocols import encode_request
from support.openai_encoding import (
    EMBEDDING,
    SCHEMA,
    WEATHER,
    encode,
    unsupported,
    user,
)


def test_embeddings_post_one_input_string_per_message_as_floats():
    request = encode_request(EMBEDDING, "text-embedding-3-small", [user("a", "b"), user("c")], {})
    assert (request.method, request.path) == ("POST", "/embeddings")
    assert request.json == {
        "model": "text-embedding-3-small",
        "input": ["a\nb", "c"],
        "encoding_format": "float",
    }


def test_an_unknown_config_key_is_refused_and_points_to_extra_body():
    error = unsupported(EMBEDDING, {"presence_penalty": 0.5})
    assert (error.parameter, error.protocol) == ("presence_penalty", EMBEDDING)
    assert "extra_body" in str(error)


# --- embeddings config ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key,value",
    [
        ("system_prompt", "x"),
        ("max_tokens", 5),
        ("temperature", 0.1),
        ("top_p", 0.5),
        ("stop", ["x"]),
        ("seed", 1),
        ("tools", [WEATHER]),
        ("tool_choice", "auto"),
        ("parallel_tool_calls", True),
        ("response_format", SCHEMA),
        ("thinking_level", "low"),
        ("thinking_summary", True),
        ("prompt_caching", True),
    ],
)
def test_embeddings_refuse_every_config_key_that_does_not_apply(key, value):
    error = unsupported(EMBEDDING, {key: value})
    assert (error.parameter, error.protocol) == (key, EMBEDDING)


def test_embeddings_take_extra_body_and_ignore_the_trace_id():
    body = encode(EMBEDDING, {"extra_body": {"dimensions": 256}, "trace_id": "trace-1"})
    assert body == {
        "model": "gpt-5",
        "input": ["Hello"],
        "encoding_format": "float",
        "dimensions": 256,
    }


def test_embeddings_refuse_anything_but_text():
    image = {"type": "image_url.done", "image_url": "https://example.com/a.png"}
    error = unsupported(EMBEDDING, {}, [user("a caption", image)])
    assert error.protocol == EMBEDDING
    assert "image_url.done" in str(error)


def test_embeddings_need_a_message_with_text():
    with pytest.raises(InvalidMessageError):
        encode_request(EMBEDDING, "text-embedding-3-small", [], {})
    with pytest.raises(InvalidMessageError):
        encode(EMBEDDING, {}, [user("")])


def test_embedding_encoding_never_changes_the_callers_messages_or_config():
    messages, config = [user("a", "b")], {"extra_body": {"dimensions": 8}}
    before = copy.deepcopy((messages, config))
    encode(EMBEDDING, config, messages)
    assert (messages, config) == before
