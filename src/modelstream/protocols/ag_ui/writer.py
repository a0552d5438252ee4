"""SPEC events written as an AG-UI event stream (@ag-ui/core 1.0): one `data: <event JSON>`
frame per AG-UI event, as `HttpAgent` reads it; no `[DONE]`, the run's last event ends it.

    first event   `RUN_STARTED` {threadId, runId} (the request's, `inbound.py` keeps them)
    text          `TEXT_MESSAGE_START` {messageId, role: assistant}, `TEXT_MESSAGE_CONTENT`
                  {messageId, delta} per non-empty fragment, `TEXT_MESSAGE_END`
    thinking      `REASONING_START` {messageId}, `REASONING_MESSAGE_START` {messageId, role:
                  reasoning}, `REASONING_MESSAGE_CONTENT` per non-empty fragment,
                  `REASONING_MESSAGE_END`, `REASONING_END`: one span, one message per item
    tool call     `TOOL_CALL_START` {toolCallId, toolCallName, parentMessageId},
                  `TOOL_CALL_ARGS` {toolCallId, delta} per non-empty fragment, `TOOL_CALL_END`
    fidelity      an item's fidelity, sealed, in `REASONING_ENCRYPTED_VALUE` {subtype: message
                  (a text or reasoning message) | tool-call, entityId, encryptedValue} after
                  the item's end: the client keeps it as the message's or call's
                  `encryptedValue` and sends it back on the next run
    stop          `RUN_FINISHED` {threadId, runId, result: {finishReason, responseId},
                  outcome: {type: success, pendingToolCallIds?: the turn's calls, for the
                  front-end to answer}, usage?: [{model, inputTokens, outputTokens, ...}]}
    error         `RUN_ERROR` {message, code: the error's type}, and nothing after it

Message ids are `msg_<stream id>_<n>`, n counting the turn's messages. A tool call belongs to
the assistant message of the text before it (`parentMessageId`), or to a message of its own
when a reasoning message or nothing came before, so the client's history keeps the turn's
order. Items AG-UI cannot carry from a model (images and other inline data, inline thinking,
embeddings) end the stream with `RUN_ERROR` naming them. AG-UI has no non-stream answer.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...types import Event, Message, Usage
from ..common.gateway import GatewayError, UnsupportedOutputError, WriteContext
from ..common.item_writer import ItemWriter, message_id_of


class AgUiStreamWriter(ItemWriter):
    """One AG-UI run: SPEC events in, `data:` frames out (module docstring)."""

    wire = "an AG-UI event stream"

    def __init__(self, ctx: WriteContext) -> None:
        super().__init__(ctx)
        options = ctx.request.options
        self._run = {
            "threadId": str(options.get("thread_id") or ctx.response_id),
            "runId": str(options.get("run_id") or ctx.response_id),
        }
        self._stem = message_id_of(ctx)
        self._messages = 0  # message ids handed out
        self._id = ""  # the open item's message id, or its tool call id
        self._parent: str | None = None  # the assistant message a tool call joins
        self._calls: list[str] = []  # the turn's tool call ids

    def _error(self, error: GatewayError) -> list[bytes]:
        return [_frame({"type": "RUN_ERROR", "message": error.message, "code": error.type})]

    # --- items -------------------------------------------------------------------------------

    def _new_message_id(self) -> str:
        self._messages += 1
        return f"{self._stem}_{self._messages}"

    def _open_item(self, kind: str, item: dict[str, Any]) -> list[bytes]:
        if kind == "tool_call":
            if self._parent is None:  # the calls' own assistant message, made by the client
                self._parent = self._new_message_id()
            self._id = item["tool_call_id"]
            self._calls.append(self._id)
            start = {"type": "TOOL_CALL_START", "toolCallId": self._id}
            return [
                _frame({**start, "toolCallName": item["name"], "parentMessageId": self._parent})
            ]
        self._id = self._new_message_id()
        if kind == "text":
            self._parent = self._id  # the calls after this text are this message's
            return [
                _frame({"type": "TEXT_MESSAGE_START", "messageId": self._id, "role": "assistant"})
            ]
        self._parent = None  # a call after the reasoning goes after it in the history
        return [
            _frame({"type": "REASONING_START", "messageId": self._id}),
            _frame({"type": "REASONING_MESSAGE_START", "messageId": self._id, "role": "reasoning"}),
        ]

    def _fragment(self, kind: str, item: dict[str, Any]) -> list[bytes]:
        if kind == "tool_call":
            if not item["arguments"]:
                return []
            return [
                _frame(
                    {"type": "TOOL_CALL_ARGS", "toolCallId": self._id, "delta": item["arguments"]}
                )
            ]
        text = item["text"] if kind == "text" else item["thinking"]
        if not text:  # AG-UI content events carry a non-empty delta
            return []
        name = "TEXT_MESSAGE_CONTENT" if kind == "text" else "REASONING_MESSAGE_CONTENT"
        return [_frame({"type": name, "messageId": self._id, "delta": text})]

    def _close_item(self, kind: str, item: dict[str, Any]) -> list[bytes]:
        if kind == "tool_call":
            frames = [_frame({"type": "TOOL_CALL_END", "toolCallId": self._id})]
            return frames + self._fidelity("tool-call", item)
        if kind == "text":
            frames = [_frame({"type": "TEXT_MESSAGE_END", "messageId": self._id})]
            return frames + self._fidelity("message", item)
        return [
            _frame({"type": "REASONING_MESSAGE_END", "messageId": self._id}),
            *self._fidelity("message", item),
            _frame({"type": "REASONING_END", "messageId": self._id}),
        ]

    def _fidelity(self, subtype: str, item: dict[str, Any]) -> list[bytes]:
        """The item's fidelity, sealed, for the client to keep and send back (SPEC §8)."""
        fidelity = item.get("fidelity")
        if not fidelity:
            return []
        sealed = self._ctx.seal.seal(fidelity)
        value = {"subtype": subtype, "entityId": self._id, "encryptedValue": sealed}
        return [_frame({"type": "REASONING_ENCRYPTED_VALUE", **value})]

    # --- start and end -----------------------------------------------------------------------

    def _start(self) -> list[bytes]:
        return [_frame({"type": "RUN_STARTED", **self._run})]

    def _stop(self, event: Event) -> list[bytes]:
        outcome: dict[str, Any] = {"type": "success"}
        if self._calls:
            outcome["pendingToolCallIds"] = list(self._calls)
        finished: dict[str, Any] = {
            "type": "RUN_FINISHED",
            **self._run,
            "result": {
                "finishReason": event["finish_reason"] or "unknown",
                "responseId": self._ctx.response_id,
            },
            "outcome": outcome,
        }
        usage = usage_entries(event["usage_metadata"], self._ctx.model)
        if usage:
            finished["usage"] = usage
        return [_frame(finished)]


def writer(ctx: WriteContext) -> AgUiStreamWriter:
    return AgUiStreamWriter(ctx)


def usage_entries(usage: Usage | None, model: str) -> list[dict[str, Any]]:
    """The turn's usage as AG-UI's `TokenUsage` entries (totals include their parts: input
    includes cached, output includes reasoning); a count not known is left out, never 0, and
    no count known is no entry."""
    if not usage:
        return []
    cached, prompt = usage["cached_tokens"], usage["prompt_tokens"]
    thoughts, response = usage["thoughts_tokens"], usage["response_tokens"]
    inputs = None if prompt is None else prompt + (cached or 0)
    outputs = None if response is None else response + (thoughts or 0)
    counts = {
        "inputTokens": inputs,
        "outputTokens": outputs,
        "totalTokens": None if inputs is None or outputs is None else inputs + outputs,
        "reasoningTokens": thoughts,
        "cachedInputTokens": cached,
    }
    known = {name: count for name, count in counts.items() if count is not None}
    return [{"model": model, **known}] if known else []


def final_body(ctx: WriteContext, message: Message) -> dict[str, Any]:
    """AG-UI only streams (`decode_request` always asks for a stream): there is no body."""
    del ctx, message
    raise UnsupportedOutputError("AG-UI has no non-stream answer: a run is an event stream")


def error_body(error: GatewayError) -> dict[str, Any]:
    """An error before the stream began: the HTTP status and this body (`HttpAgent` raises an
    `Error("HTTP <status>: <body>")` carrying it as `payload`)."""
    body: dict[str, Any] = {"type": error.type, "message": error.message}
    if error.param is not None:
        body["param"] = error.param
    return {"error": body}


def _frame(event: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(event) + b"\n\n"


__all__ = [
    "AgUiStreamWriter",
    "error_body",
    "final_body",
    "usage_entries",
    "writer",
]
