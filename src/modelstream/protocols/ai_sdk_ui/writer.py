"""SPEC events written as the AI SDK's UI message stream (protocol v1, the body a `useChat`
front-end reads with `DefaultChatTransport`): one `data: <chunk JSON>` frame per chunk, then
`data: [DONE]`. The response carries `x-vercel-ai-ui-message-stream: v1`.

    first event   `start` {messageId, messageMetadata: {responseId, model}}, then `start-step`
    text          `text-start` {id}, `text-delta` {id, delta} per non-empty fragment, `text-end`
    thinking      `reasoning-start`, `reasoning-delta`, `reasoning-end` (the same way)
    tool call     `tool-input-start` {toolCallId, toolName}, `tool-input-delta` {toolCallId,
                  inputTextDelta} per fragment, `tool-input-available` {..., input} at its end
    structured    with a JSON-schema `response_format`, the answer's value so far as a
                  `data-object` part {id: "object", data}, again after each text fragment that
                  changes it (the client keeps one part per id, replaced each time: the page
                  shows `parts.find(p => p.type === "data-object").data` as it grows; a
                  half-written string shows, a half-written number, literal or enum value
                  does not)
    stop          `finish-step`, `finish` {finishReason: stop | length | tool-calls | other,
                  messageMetadata: {responseId, model, usage}}, `data: [DONE]`
    error         `error` {errorText}, then `data: [DONE]`: the client's chat ends in its
                  error state, never as finished, and keeps what it showed

A resume replays the stream from its start (the transport's `resumeStreamIsReplay`): the same
`messageId`, so the client starts the message over and ends with the exact text.

Items a UI message cannot carry from a model (images and other inline data, inline thinking,
embeddings) end the stream with an `error` naming them.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...structured.output import output_type
from ...structured.streaming import PartialReader
from ...types import Event, FinishReason, Message, Usage
from ..common.gateway import GatewayError, UnsupportedOutputError, WriteContext
from ..common.item_writer import ItemWriter, message_id_of

STREAM_HEADERS = {"x-vercel-ai-ui-message-stream": "v1"}
OBJECT_PART_ID = "object"

FINISH_REASON: dict[FinishReason, str] = {
    "stop": "stop",
    "length": "length",
    "tool_call": "tool-calls",
    "unknown": "other",
}
_DONE_FRAME = b"data: [DONE]\n\n"


class UIMessageStreamWriter(ItemWriter):
    """One UI message stream: SPEC events in, `data:` frames out (module docstring)."""

    wire = "a UI message stream"

    def __init__(self, ctx: WriteContext) -> None:
        super().__init__(ctx)
        self._metadata = {"responseId": ctx.response_id, "model": ctx.model}
        self._parts = 0  # text and reasoning parts so far, for their ids
        self._part_id = ""
        self._call_id = ""
        self._call_name = ""
        # the answer's value as it grows, when the request asked for one (`inbound.py` keeps
        # its response_format in the options, so a replay has it too)
        output = output_type(ctx.request.options.get("response_format"))
        self._object = None if output is None else PartialReader(output)

    def _error(self, error: GatewayError) -> list[bytes]:
        return [_frame({"type": "error", "errorText": error.message}), _DONE_FRAME]

    # --- items -------------------------------------------------------------------------------

    def _open_item(self, kind: str, item: dict[str, Any]) -> list[bytes]:
        if kind == "tool_call":
            self._call_id, self._call_name = item["tool_call_id"], item["name"]
            start = {"type": "tool-input-start", "toolCallId": self._call_id}
            return [_frame({**start, "toolName": self._call_name})]
        self._parts += 1
        self._part_id = f"{'t' if kind == 'text' else 'r'}{self._parts}"
        part = "text" if kind == "text" else "reasoning"
        return [_frame({"type": f"{part}-start", "id": self._part_id})]

    def _fragment(self, kind: str, item: dict[str, Any]) -> list[bytes]:
        if kind == "tool_call":
            if not item["arguments"]:
                return []
            delta = {"type": "tool-input-delta", "toolCallId": self._call_id}
            return [_frame({**delta, "inputTextDelta": item["arguments"]})]
        text = item["text"] if kind == "text" else item["thinking"]
        if not text:
            return []
        part = "text" if kind == "text" else "reasoning"
        frames = [_frame({"type": f"{part}-delta", "id": self._part_id, "delta": text})]
        if kind == "text" and self._object is not None:
            frames += self._object_frames(item)
        return frames

    def _close_item(self, kind: str, item: dict[str, Any]) -> list[bytes]:
        if kind == "tool_call":
            available = {"type": "tool-input-available", "toolCallId": self._call_id}
            return [_frame({**available, "toolName": self._call_name, "input": item["arguments"]})]
        part = "text" if kind == "text" else "reasoning"
        return [_frame({"type": f"{part}-end", "id": self._part_id})]

    def _object_frames(self, item: dict[str, Any]) -> list[bytes]:
        """The `data-object` part again, when this fragment changed what may be shown of the
        answer's value (`structured.streaming`: never a half-written number, literal or enum
        value; text that is no JSON shows no object)."""
        assert self._object is not None
        partial = self._object.feed({"event_type": "delta", "content_items": [item]})  # type: ignore[typeddict-item]
        if partial is None:
            return []
        return [_frame({"type": "data-object", "id": OBJECT_PART_ID, "data": partial.value})]

    # --- start and end -----------------------------------------------------------------------

    def _start(self) -> list[bytes]:
        start = {"type": "start", "messageId": message_id_of(self._ctx)}
        return [
            _frame({**start, "messageMetadata": self._metadata}),
            _frame({"type": "start-step"}),
        ]

    def _stop(self, event: Event) -> list[bytes]:
        finish = FINISH_REASON.get(event["finish_reason"] or "stop", "other")
        metadata = {**self._metadata, "usage": usage_fields(event["usage_metadata"])}
        return [
            _frame({"type": "finish-step"}),
            _frame({"type": "finish", "finishReason": finish, "messageMetadata": metadata}),
            _DONE_FRAME,
        ]


def writer(ctx: WriteContext) -> UIMessageStreamWriter:
    return UIMessageStreamWriter(ctx)


def usage_fields(usage: Usage | None) -> dict[str, int]:
    """The turn's usage as the AI SDK names it (`inputTokens`, `outputTokens`, ...); a count
    the upstream did not give is left out, never sent as 0."""
    if not usage:
        return {}
    response, thoughts = usage["response_tokens"], usage["thoughts_tokens"]
    fields = {
        "inputTokens": usage["prompt_tokens"],
        "outputTokens": None if response is None else response + (thoughts or 0),
        "reasoningTokens": thoughts,
        "cachedInputTokens": usage["cached_tokens"],
    }
    return {name: count for name, count in fields.items() if count is not None}


def final_body(ctx: WriteContext, message: Message) -> dict[str, Any]:
    """A UI message stream is only ever streamed (`decode_request` always asks for it)."""
    del ctx, message
    raise UnsupportedOutputError("the AI SDK's UI message stream has no non-stream answer")


def error_body(error: GatewayError) -> dict[str, Any]:
    """An error before the stream began: the HTTP status, and this body, which the transport
    shows as the chat's error message (it reads the body's text)."""
    return {"error": {"type": error.type, "message": error.message}}


def _frame(chunk: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(chunk) + b"\n\n"
