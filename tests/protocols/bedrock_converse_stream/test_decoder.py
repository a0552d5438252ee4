"""The Bedrock ConverseStream decoder on what the corpus lacks: cache usage, every stop reason,
provider-executed tools and their results, exception types and their retryability.

Bodies are written with the independent event-stream writer of support/eventstream.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from modelstream import FinalResponse, IncompleteStreamError, ProviderError
from support import decode_chunks
from support.eventstream import event, exception

PROTOCOL = "bedrock-converse-stream"


def body(*events: tuple[str, dict[str, Any]]) -> bytes:
    return b"".join(event(name, json.dumps(payload)) for name, payload in events)


def delta(index: int, value: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ("contentBlockDelta", {"contentBlockIndex": index, "delta": value})


def stop(index: int) -> tuple[str, dict[str, Any]]:
    return ("contentBlockStop", {"contentBlockIndex": index})


def end(reason: str, **usage: int) -> list[tuple[str, dict[str, Any]]]:
    usage = usage or {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
    return [
        ("messageStop", {"stopReason": reason}),
        ("metadata", {"usage": usage, "metrics": {"latencyMs": 100}}),
    ]


def final(data: bytes) -> FinalResponse:
    decoded = decode_chunks(PROTOCOL, [data[i : i + 5] for i in range(0, len(data), 5)])
    assert decoded.error is None, decoded.error
    assert decoded.decoder is not None
    result = decoded.decoder.result
    assert isinstance(result, FinalResponse)
    return result


HELLO = [delta(0, {"text": "Hello"}), stop(0)]


def test_cache_reads_and_writes_split_the_input_as_documented() -> None:
    result = final(
        body(
            *HELLO,
            *end(
                "end_turn",
                inputTokens=4,
                outputTokens=367,
                cacheReadInputTokens=5036,
                cacheWriteInputTokens=120,
                totalTokens=5527,
            ),
        )
    )
    assert result.message["usage_metadata"] == {
        "cached_tokens": 5036,
        "prompt_tokens": 124,  # input not served from cache: fresh input + what was written
        "thoughts_tokens": None,
        "response_tokens": 367,
    }


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("guardrail_intervened", "unknown"),
        ("content_filtered", "unknown"),
        ("malformed_tool_use", "unknown"),
    ],
)
def test_stop_reasons_map_and_the_raw_reason_is_kept(reason: str, finish: str) -> None:
    result = final(body(*HELLO, *end(reason)))
    assert result.message["finish_reason"] == finish
    assert result.metadata.raw_finish_reason == reason


def test_a_tool_use_turn_finishes_with_tool_call() -> None:
    tool = {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather"}}
    result = final(
        body(
            ("contentBlockStart", {"contentBlockIndex": 0, "start": tool}),
            delta(0, {"toolUse": {"input": '{"city": '}}),
            delta(0, {"toolUse": {"input": '"Paris"}'}}),
            stop(0),
            *end("tool_use"),
        )
    )
    [call] = result.message["content_items"]
    assert call == {
        "type": "tool_call.done",
        "tool_call_id": "tooluse_1",
        "name": "get_weather",
        "arguments": {"city": "Paris"},
    }
    assert result.message["finish_reason"] == "tool_call"


def test_provider_executed_tools_and_their_results_are_skipped_and_counted() -> None:
    server_tool = {
        "toolUse": {"toolUseId": "srv_1", "name": "web_search", "type": "server_tool_use"}
    }
    result_start = {"toolResult": {"toolUseId": "srv_1", "type": "web_search_result"}}
    result = final(
        body(
            ("contentBlockStart", {"contentBlockIndex": 0, "start": server_tool}),
            delta(0, {"toolUse": {"input": '{"query": "weather"}'}}),
            stop(0),
            ("contentBlockStart", {"contentBlockIndex": 1, "start": result_start}),
            delta(1, {"toolResult": [{"json": {"hits": 3}}]}),
            stop(1),
            delta(2, {"text": "It is sunny."}),
            delta(2, {"citation": {"title": "weather.example"}}),
            stop(2),
            *end("end_turn"),
        )
    )
    assert result.message["content_items"] == [{"type": "text.done", "text": "It is sunny."}]
    assert result.metadata.skipped == {
        "block:server_tool_use": 1,
        "delta:toolUse": 1,
        "block:toolResult": 1,
        "delta:toolResult": 1,
        "delta:citation": 1,
    }


def test_unknown_events_are_skipped_and_counted() -> None:
    result = final(body(("somethingNew", {"x": 1}), *HELLO, *end("end_turn")))
    assert result.metadata.skipped == {"event:somethingNew": 1}
    assert result.message["content_items"] == [{"type": "text.done", "text": "Hello"}]


def test_the_turn_stops_when_message_stop_and_metadata_have_both_arrived() -> None:
    decoded = decode_chunks(PROTOCOL, [body(*HELLO, ("messageStop", {"stopReason": "end_turn"}))])
    assert decoded.stop is not None  # the body ended: stop, with the usage unknown
    assert decoded.stop["usage_metadata"] == {
        "cached_tokens": None,
        "prompt_tokens": None,
        "thoughts_tokens": None,
        "response_tokens": None,
    }
    usage = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
    reversed_order = body(
        *HELLO, ("metadata", {"usage": usage}), ("messageStop", {"stopReason": "end_turn"})
    )
    result = final(reversed_order)
    assert result.message["usage_metadata"]["response_tokens"] == 5


def test_a_body_that_ends_before_message_stop_is_incomplete_with_the_text_kept() -> None:
    decoded = decode_chunks(PROTOCOL, [body(delta(0, {"text": "Hel"}))])
    assert isinstance(decoded.error, IncompleteStreamError)
    partial = decoded.error.partial
    assert partial is not None and partial.status == "incomplete"
    assert partial.open_item == {"type": "text.delta", "text": "Hel"}


@pytest.mark.parametrize(
    ("exception_type", "retryable"),
    [
        ("throttlingException", True),
        ("serviceUnavailableException", True),
        ("internalServerException", True),
        ("modelStreamErrorException", True),
        ("modelTimeoutException", True),
        ("validationException", False),
        ("accessDeniedException", False),
    ],
)
def test_exceptions_are_provider_errors_with_retryable_right(
    exception_type: str, retryable: bool
) -> None:
    message = f"{exception_type} says no"
    data = body(delta(0, {"text": "partial answer"})) + exception(
        exception_type, json.dumps({"message": message})
    )
    decoded = decode_chunks(PROTOCOL, [data])
    error = decoded.error
    assert isinstance(error, ProviderError)
    assert (error.error_type, error.retryable, error.provider) == (
        exception_type,
        retryable,
        "bedrock",
    )
    assert error.provider_message == message
    assert error.partial is not None and error.partial.status == "failed"
    assert error.partial.open_item == {"type": "text.delta", "text": "partial answer"}
