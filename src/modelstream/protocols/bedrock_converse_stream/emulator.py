"""The emulator's Bedrock ConverseStream: a binary AWS event stream, one message per event, as
the real bodies in the corpus are (`pydanticai-bedrock-*`, `vercel-bedrock-claude-sonnet-4-6-
live`): headers `:event-type`, `:content-type`, `:message-type` in that order, compact JSON
payloads with sorted keys and a `p` padding field of varying length. Text blocks open with
their first delta (no `contentBlockStart`, as Claude on Bedrock sends them), reasoning streams
`reasoningContent.text` then one `signature` delta, a tool call opens with
`contentBlockStart.start.toolUse` and streams its input as JSON text; `messageStop` carries the
stop reason and `metadata` the usage (output tokens include reasoning, as Bedrock counts them).
The payloads never name the model. HTTP errors are `{"message": ...}` with the error's type in
`x-amzn-ErrorType`; an in-stream error is an exception message (`:message-type exception`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from ...framing.eventstream import HeaderValue, encode_message
from ...testing.emulation import (
    EmulatedStream,
    StreamEmulator,
    StreamError,
    arguments_json,
    count,
    last_text,
)
from ...testing.turns import Text, Thinking, ToolCall

_STOP_REASON = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_call": "tool_use",
    "unknown": "content_filtered",
}
_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
EVENT_STREAM = "application/vnd.amazon.eventstream"


def event_message(event_type: str, payload: dict[str, Any], number: int = 0) -> bytes:
    """One event message; `number` varies the padding the way AWS's random `p` does."""
    padded = {**payload, "p": _PADDING[: 1 + (number * 7 + len(event_type)) % len(_PADDING)]}
    headers: dict[str, HeaderValue] = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_message(headers, orjson.dumps(padded, option=orjson.OPT_SORT_KEYS))


def exception_message(exception_type: str, payload: dict[str, Any]) -> bytes:
    """An exception message, as the service model's stream errors arrive."""
    headers: dict[str, HeaderValue] = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, orjson.dumps(payload, option=orjson.OPT_SORT_KEYS))


def _bedrock(s: EmulatedStream) -> Iterator[bytes]:
    events: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
    for index, item in enumerate(s.turn.items):
        if isinstance(item, Text):
            deltas: list[dict[str, Any]] = [{"text": piece} for piece in s.pieces(item.text)]
            if not deltas:
                deltas.append({"text": ""})
        elif isinstance(item, Thinking) and item.redacted is not None:
            deltas = [{"reasoningContent": {"redactedContent": item.redacted}}]
        elif isinstance(item, Thinking):
            deltas = [{"reasoningContent": {"text": p}} for p in s.pieces(item.thinking)]
            if item.signature is not None:
                deltas.append({"reasoningContent": {"signature": item.signature}})
            if not deltas:
                deltas.append({"reasoningContent": {"text": ""}})
        elif isinstance(item, ToolCall):
            tool = {"name": item.name, "toolUseId": s.call_id(item, index, "tooluse_")}
            events.append(
                ("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": tool}})
            )
            deltas = [{"toolUse": {"input": piece}} for piece in s.pieces(arguments_json(item))]
        else:
            continue
        events.extend(
            ("contentBlockDelta", {"contentBlockIndex": index, "delta": d}) for d in deltas
        )
        events.append(("contentBlockStop", {"contentBlockIndex": index}))
    events.append(("messageStop", {"stopReason": _STOP_REASON[s.finish]}))
    if s.include_usage:
        usage = s.usage
        cached = count(usage, "cached_tokens")
        counts = {
            "inputTokens": count(usage, "prompt_tokens"),
            "outputTokens": count(usage, "response_tokens") + count(usage, "thoughts_tokens"),
        }
        if cached:  # Bedrock reports it when a cache point was read
            counts["cacheReadInputTokens"] = cached
        counts["totalTokens"] = sum(counts.values())
        events.append(("metadata", {"metrics": {"latencyMs": 42}, "usage": counts}))
    for number, (event_type, payload) in enumerate(events):
        yield event_message(event_type, payload, number)


def _stream_error(error: StreamError, s: EmulatedStream) -> bytes:
    payload: dict[str, Any] = {"message": error.message}
    if error.status is not None:  # modelStreamErrorException: the model's own failure
        payload["originalStatusCode"] = error.status
    return exception_message(error.kind, payload)


# The error types Bedrock Runtime answers an HTTP status with (its service model's errors).
_ERROR_TYPES = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}


def error_type_for(status: int) -> str:
    return _ERROR_TYPES.get(
        status, "ValidationException" if status < 500 else "InternalServerException"
    )


def _error_body(
    status: int, message: str, *, retry_after: float | None, endpoint: bool = True
) -> bytes:
    return orjson.dumps({"message": message})


def _error_headers(status: int) -> dict[str, str]:
    # AWS appends the service's namespace after a colon; readers keep the part before it
    return {
        "x-amzn-errortype": f"{error_type_for(status)}:http://internal.amazon.com/coral/com.amazon.bedrock/"
    }


def _bedrock_text(message: dict[str, Any]) -> str | None:
    if message.get("role") != "user" or not isinstance(message.get("content"), list):
        return None
    texts = []
    for block in message["content"]:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif isinstance(block.get("toolResult"), dict):
            for part in block["toolResult"].get("content") or ():
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif isinstance(part, dict) and "json" in part:
                    texts.append(orjson.dumps(part["json"]).decode())
    return " ".join(text for text in texts if text)


EMULATOR = StreamEmulator(
    write=_bedrock,
    error_body=_error_body,
    last_user_text=lambda body: last_text(body.get("messages"), _bedrock_text),
    content_type=EVENT_STREAM,
    error_headers=_error_headers,
    malformed_frame=encode_message(
        {
            ":event-type": "contentBlockDelta",
            ":content-type": "application/json",
            ":message-type": "event",
        },
        b"{not json",
    ),
    stream_error=_stream_error,
    names_model=False,
    redacted_thinking=True,
)
