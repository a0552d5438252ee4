"""The JSON wire: SPEC §2 event shapes and key order, bytes as base64, error objects (SPEC §7)."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from modelstream import (
    ConfigurationError,
    EmptyResponseError,
    FrameTooLargeError,
    GrammarViolation,
    IncompleteStreamError,
    ItemAssembler,
    ProviderError,
    StreamMetadata,
    StreamProtocolError,
    ToolCallArgumentParseError,
    UnsupportedParameterError,
)
from modelstream.jsonwire import dumps, error_object, loads_event
from modelstream.results import PartialResponse

# The two example events of SPEC §2, verbatim.
SPEC_DELTA = (
    '{"role": "assistant", "event_type": "delta", "content_items": [{"type": "text.delta", '
    '"text": "Hel"}], "usage_metadata": null, "finish_reason": null, "created_at": 1694502400000}'
)
SPEC_STOP = (
    '{"role": "assistant", "event_type": "stop", "content_items": [], "usage_metadata": '
    '{"cached_tokens": 0, "prompt_tokens": 10, "thoughts_tokens": null, "response_tokens": 5}, '
    '"finish_reason": "stop", "created_at": 1694502400100}'
)


def compact(text: str) -> bytes:
    """The JSON text without insignificant whitespace, keys in their written order."""
    return orjson.dumps(orjson.loads(text))


def key_paths(value: Any, path: str = "") -> list[str]:
    """Every key with its path, in document order: two equal lists mean equal key order."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in [f"{path}.{k}", *key_paths(v, f"{path}.{k}")]]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in key_paths(v, f"{path}[{i}]")]
    return []


def spec_example_events(usage: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The SPEC's delta and stop, as the assembler produces them."""
    assembler = ItemAssembler(StreamMetadata(protocol="test"))
    assembler.now_ms = 1694502400000
    assembler.text(0, "Hel")
    (delta,) = assembler.drain()
    assembler.text(0, "lo")
    assembler.usage_update(usage)
    assembler.finish("stop", "end_turn")
    assembler.now_ms = 1694502400100
    assembler.terminal()
    stop = assembler.drain()[-1]
    return delta, stop


SPEC_USAGE = {
    "cached_tokens": 0,
    "prompt_tokens": 10,
    "thoughts_tokens": None,
    "response_tokens": 5,
}


def test_the_spec_delta_example_serializes_byte_for_byte():
    delta, _ = spec_example_events(SPEC_USAGE)
    assert dumps(delta) == compact(SPEC_DELTA)


def test_the_spec_stop_example_serializes_byte_for_byte():
    _, stop = spec_example_events(SPEC_USAGE)
    assert dumps(stop) == compact(SPEC_STOP)


def test_serialized_events_keep_the_spec_key_order():
    delta, stop = spec_example_events(SPEC_USAGE)
    assert key_paths(orjson.loads(dumps(delta))) == key_paths(orjson.loads(SPEC_DELTA))
    assert key_paths(orjson.loads(dumps(stop))) == key_paths(orjson.loads(SPEC_STOP))


def test_usage_built_in_another_order_is_written_in_spec_order():
    scrambled = dict(reversed(list(SPEC_USAGE.items())))
    _, stop = spec_example_events(scrambled)
    assert dumps(stop) == compact(SPEC_STOP)


def test_an_event_built_in_another_key_order_is_written_in_spec_order():
    event = orjson.loads(SPEC_STOP)
    reordered = dict(reversed(list(event.items())))
    assert dumps(reordered) == compact(SPEC_STOP)


def test_a_message_keeps_its_spec_key_order():
    message = {
        "created_at": 5,
        "finish_reason": "stop",
        "usage_metadata": None,
        "content_items": [{"type": "text.done", "text": "hi"}],
        "role": "assistant",
    }
    assert list(orjson.loads(dumps(message))) == [
        "role",
        "content_items",
        "usage_metadata",
        "finish_reason",
        "created_at",
    ]


def test_a_serialized_event_loads_back_equal():
    delta, stop = spec_example_events(SPEC_USAGE)
    assert loads_event(dumps(delta)) == delta
    assert loads_event(dumps(stop)) == stop


def test_inline_data_bytes_travel_as_base64_and_load_back_as_bytes():
    raw = bytes(range(256))
    event = {
        "role": "assistant",
        "event_type": "delta",
        "content_items": [{"type": "inline_data.delta", "data": raw, "mime_type": "audio/wav"}],
        "usage_metadata": None,
        "finish_reason": None,
        "created_at": 1,
    }
    wire = orjson.loads(dumps(event))
    assert wire["content_items"][0]["data"] == base64.b64encode(raw).decode("ascii")
    assert loads_event(dumps(event)) == event


def test_inline_thinking_bytes_load_back_as_bytes():
    item = {"type": "inline_thinking.done", "data": b"\x00\xff", "mime_type": "image/png"}
    event = {"role": "assistant", "event_type": "delta", "content_items": [item]}
    assert loads_event(dumps(event))["content_items"][0]["data"] == b"\x00\xff"


def test_text_that_looks_like_base64_is_not_decoded():
    event = {"event_type": "delta", "content_items": [{"type": "text.delta", "text": "AAAA"}]}
    assert loads_event(dumps(event))["content_items"][0]["text"] == "AAAA"


def test_bytearray_and_memoryview_serialize_as_base64():
    assert dumps({"a": bytearray(b"hi"), "b": memoryview(b"hi")}) == b'{"a":"aGk=","b":"aGk="}'


def test_a_value_json_cannot_hold_is_refused():
    with pytest.raises(TypeError, match="object"):
        dumps({"a": object()})


# --- error objects ---------------------------------------------------------------------------


def test_a_tool_argument_error_object_names_the_call():
    error = ToolCallArgumentParseError(name="f", tool_call_id="c1", raw='{"a": ', reason="cut")
    body = error_object(error)["error"]
    assert body == {
        "type": "ToolCallArgumentParseError",
        "message": str(error),
        "name": "f",
        "tool_call_id": "c1",
        "raw_length": 6,
        "preview": '{"a": ',
        "cut_off": False,
    }


def test_an_empty_response_error_object_carries_finish_reason_and_usage():
    error = EmptyResponseError(finish_reason="length", usage=SPEC_USAGE, thinking_only=True)
    body = error_object(error)["error"]
    assert body == {
        "type": "EmptyResponseError",
        "message": str(error),
        "finish_reason": "length",
        "usage": SPEC_USAGE,
    }


def test_an_incomplete_stream_error_object_says_what_was_missing():
    error = IncompleteStreamError("finish reason", "the body ended first")
    assert error_object(error) == {
        "error": {
            "type": "IncompleteStreamError",
            "message": str(error),
            "missing": "finish reason",
        }
    }


def test_a_frame_too_large_error_object_carries_limit_and_size():
    body = error_object(FrameTooLargeError(100, 150))["error"]
    assert body["type"] == "FrameTooLargeError"
    assert (body["limit"], body["size"], body["missing"]) == (100, 150, "complete frame")


def test_a_provider_error_object_carries_the_provider_facts():
    error = ProviderError(
        "Overloaded", status=529, error_type="overloaded_error", retryable=True, retry_after=2.0
    )
    assert error_object(error)["error"] == {
        "type": "ProviderError",
        "message": str(error),
        "status": 529,
        "error_type": "overloaded_error",
        "code": None,
        "provider_message": "Overloaded",
        "retryable": True,
        "retry_after": 2.0,
        "provider": None,
        "model": None,
    }


def test_a_stream_protocol_error_object_names_the_rule():
    body = error_object(StreamProtocolError("G", "a block opened after stop"))["error"]
    assert (body["type"], body["rule"], body["detail"]) == (
        "StreamProtocolError",
        "G",
        "a block opened after stop",
    )


def test_a_grammar_violation_object_names_rule_and_index():
    body = error_object(GrammarViolation("4", "stop twice", 7))["error"]
    assert (body["rule"], body["index"]) == ("4", 7)


def test_a_configuration_error_object_has_type_and_message_only():
    error = ConfigurationError("no API key")
    assert error_object(error) == {"error": {"type": "ConfigurationError", "message": "no API key"}}


def test_an_unsupported_parameter_object_names_the_parameter_and_protocol():
    error = UnsupportedParameterError("seed", "openai-responses")
    assert error_object(error) == {
        "error": {
            "type": "UnsupportedParameterError",
            "message": str(error),
            "parameter": "seed",
            "protocol": "openai-responses",
        }
    }


def test_an_error_object_carries_the_partial_status_when_there_is_a_partial():
    error = IncompleteStreamError("finish reason")
    error.partial = PartialResponse(
        status="incomplete",
        reason=str(error),
        items=[],
        open_item=None,
        usage=None,
        metadata=StreamMetadata(protocol="test"),
    )
    assert error_object(error)["error"]["partial_status"] == "incomplete"


def test_every_error_object_is_json_serializable():
    errors = [
        ToolCallArgumentParseError(name="f", tool_call_id="c", raw="x", reason="r"),
        EmptyResponseError(finish_reason="stop", usage=SPEC_USAGE, thinking_only=False),
        IncompleteStreamError("finish reason"),
        FrameTooLargeError(1, 2),
        ProviderError("nope", status=400, code=123),
        StreamProtocolError("2", "x"),
        ValueError("plain"),
    ]
    for error in errors:
        assert orjson.loads(dumps(error_object(error)))["error"]["type"] == type(error).__name__
