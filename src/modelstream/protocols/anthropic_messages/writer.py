"""Anthropic Messages outbound: SPEC events written as Anthropic streams them (SPEC §8).

Theory of operation. One `AnthropicStreamWriter` per stream, fed the events in order:

  first event      `message_start` (id `msg_…`, usage all 0: nothing is known yet; the SDKs take
                   the counts of `message_delta`, which are cumulative and overwrite these)
  K.delta+ K.done  one content block per group, indices 0, 1, … allocated here; a block opens
                   at its first fragment with content (`content_block_start`, then a `ping` after
                   the turn's first one, as Anthropic sends it) and closes at `.done`
                   (`content_block_stop`)
     text          `text_delta` per fragment; a text whose fidelity is `{"refusal": true}`
                   makes the stop reason `refusal` (an empty one writes no block)
     thinking      `thinking_delta` per fragment; at `.done` a `signature_delta` with the
                   fidelity: `{"signature"}` as it is (Anthropic's and Bedrock's), any other
                   sealed (`FidelitySeal`); an empty thinking with `{"redacted_thinking"}` (or
                   Bedrock's `{"redacted_content"}`, sealed) is a `redacted_thinking` block
                   written whole; an empty thinking without fidelity writes nothing
     tool_call     `tool_use` {id, name, input {}} then `input_json_delta` per fragment; call
                   fidelity (Anthropic has none) is sealed onto the id after
                   `TOOL_ID_SEPARATOR`. The item assembler gives fidelity on the group's last
                   fragment (rule C), after the id is due: so the calls of an upstream whose
                   calls may carry fidelity (all but Anthropic, Chat and Bedrock) are held until
                   `.done` and written whole; the others stream their arguments as they come
  stop             `message_delta` {stop_reason, stop_sequence null, usage} and `message_stop`

Finish: stop → end_turn (refusal when a refusal text was written), length → max_tokens,
tool_call → tool_use, unknown → refusal (the nearest of Anthropic's reasons to a content filter
or a safety stop; this project's decoder reads it back as stop), or the request option
`unknown_stop_reason` when given (the emulator's `pause_turn`, which Anthropic sends and the
decoder reads back as unknown).
Usage (SPEC §2): input_tokens = prompt, cache_read_input_tokens = cached,
cache_creation_input_tokens = 0 (the SPEC does not split cache writes out of prompt),
output_tokens = thoughts + response, `output_tokens_details.thinking_tokens` = thoughts when
known; an unknown count is written 0.

`fail` writes `event: error` and nothing after it; an open block stays open. An item Anthropic
cannot carry in an answer (inline_data, inline_thinking, embedding), and events that break the
grammar, end the stream the same way, naming what happened.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ...types import Event, Message, Usage
from ..common.fidelity_seal import FidelitySeal, is_sealed
from ..common.gateway import GatewayError, ServedModel, UnsupportedOutputError, WriteContext

# a sealed call fidelity rides after this on a tool_use id; the seal's tokens hold letters and
# digits only, so the last separator is always the one written here, and the id stays within
# the `^[a-zA-Z0-9_-]+$` Anthropic gives its own ids
TOOL_ID_SEPARATOR = "__"
# upstreams whose tool calls never carry fidelity (docs/providers.md, "Fidelity keys"): their
# calls stream; any other's are held until `.done`, when the fidelity for the id is known
_CALLS_WITHOUT_FIDELITY = frozenset(
    {"anthropic-messages", "openai-chat", "bedrock-converse-stream"}
)
_FINISH = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_call": "tool_use",
    "unknown": "refusal",
}
_UNCARRIED = ("inline_data", "inline_thinking", "embedding")

# Anthropic's error types by HTTP status (docs.anthropic.com, "Errors"); the emulator's too
ERROR_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_object(status: int, message: str) -> dict[str, Any]:
    """Anthropic's error JSON for an HTTP status: `{"type": "error", "error": {type, message}}`."""
    return {
        "type": "error",
        "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
    }


def error_body(error: GatewayError) -> dict[str, Any]:
    return error_object(error.status, error.message)


def count_tokens_body(input_tokens: int) -> dict[str, Any]:
    """The answer of `POST /v1/messages/count_tokens`."""
    return {"input_tokens": input_tokens}


def models_body(models: Sequence[ServedModel]) -> dict[str, Any]:
    """`GET /v1/models` in Anthropic's shape (one page: `has_more` false)."""
    data = [
        {
            "type": "model",
            "id": model.id,
            "display_name": model.id,
            "created_at": _rfc3339(model.created),
        }
        for model in models
    ]
    return {
        "data": data,
        "has_more": False,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
    }


def _rfc3339(seconds: int) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def message_id(ctx: WriteContext) -> str:
    """The `msg_…` id of the turn, from the gateway's stream id."""
    rid = ctx.response_id
    return rid if rid.startswith("msg_") else f"msg_{rid}"


def wire_usage(usage: Usage | None) -> dict[str, Any]:
    """SPEC usage as Anthropic's cumulative usage (module docstring)."""
    counts: dict[str, Any] = dict(usage) if usage is not None else {}
    thoughts = counts.get("thoughts_tokens")
    out: dict[str, Any] = {
        "input_tokens": counts.get("prompt_tokens") or 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": counts.get("cached_tokens") or 0,
        "output_tokens": (thoughts or 0) + (counts.get("response_tokens") or 0),
    }
    if thoughts is not None:
        out["output_tokens_details"] = {"thinking_tokens": thoughts}
    return out


def tool_use_id(call_id: str, fidelity: dict[str, Any] | None, seal: FidelitySeal) -> str:
    """The id a tool_use block carries: the call's, with its fidelity sealed after it."""
    return f"{call_id}{TOOL_ID_SEPARATOR}{seal.seal(fidelity)}" if fidelity else call_id


def _signature(fidelity: dict[str, Any], seal: FidelitySeal) -> str:
    signature = fidelity.get("signature")
    if set(fidelity) == {"signature"} and isinstance(signature, str) and not is_sealed(signature):
        return signature  # Anthropic's own (Bedrock's is the same Claude signature)
    return seal.seal(fidelity)


def _redacted_data(fidelity: dict[str, Any], seal: FidelitySeal) -> str | None:
    """The data of a redacted_thinking block for an empty thinking's fidelity, or None."""
    if set(fidelity) == {"redacted_thinking"} and isinstance(fidelity["redacted_thinking"], str):
        return fidelity["redacted_thinking"]
    if set(fidelity) == {"redacted_content"}:  # Bedrock's redacted reasoning: sealed
        return seal.seal(fidelity)
    return None


def _stop_reason(ctx: WriteContext, finish: str | None, refusal: bool) -> str:
    """The `stop_reason` of a finish (module docstring, "Finish")."""
    reason = _FINISH.get(finish or "unknown", "refusal")
    if reason == "end_turn" and refusal:
        return "refusal"
    unknown = ctx.request.options.get("unknown_stop_reason")
    if finish in (None, "unknown") and isinstance(unknown, str) and unknown:
        return unknown
    return reason


def _is_refusal(fidelity: Any) -> bool:
    return isinstance(fidelity, dict) and fidelity.get("refusal") is True


def _frame(kind: str, fields: dict[str, Any]) -> bytes:
    return (
        b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **fields}) + b"\n\n"
    )


_PING = b'event: ping\ndata: {"type": "ping"}\n\n'


class _GrammarBreak(Exception):
    """The events broke the grammar, or hold what this wire cannot carry: the stream fails."""

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


class AnthropicStreamWriter:
    """SPEC events → Anthropic Messages SSE frames (module docstring)."""

    def __init__(self, ctx: WriteContext) -> None:
        self.ctx = ctx
        self._started = False
        self._ended = False
        self._pinged = False
        self._next_index = 0
        self._refusal = False
        # the open group
        self._kind: str | None = None
        self._index: int | None = None  # its block's index, once the block is written
        self._call: dict[str, Any] = {}  # a tool call: id, name, fidelity, held fragments
        self._held: list[str] | None = None  # a held call's argument fragments

    def feed(self, event: Event) -> list[bytes]:
        if self._ended:
            return []
        out: list[bytes] = []
        if not self._started:
            self._started = True
            out.append(self._message_start())
        try:
            kind = event.get("event_type")
            if kind == "delta":
                items = event.get("content_items") or []
                if len(items) != 1:
                    raise _GrammarBreak(f"a delta event carries one item, got {len(items)}")
                out += self._item(dict(items[0]))
            elif kind == "stop":
                if self._kind is not None:
                    raise _GrammarBreak(f"the turn stopped while its {self._kind} was open")
                out += self._stop(event)
            else:
                raise _GrammarBreak(f"an event of type {kind!r}")
        except _GrammarBreak as exc:
            out += self.fail(GatewayError(exc.status, "StreamProtocolError", str(exc)))
        return out

    def fail(self, error: GatewayError) -> list[bytes]:
        if self._ended:
            return []
        self._ended = True
        return [_frame("error", {"error": error_object(error.status, error.message)["error"]})]

    # --- frames -----------------------------------------------------------------------------

    def _message_start(self) -> bytes:
        message: dict[str, Any] = {
            "id": message_id(self.ctx),
            "type": "message",
            "role": "assistant",
            "model": self.ctx.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 0,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 0,
            },
        }
        return _frame("message_start", {"message": message})

    def _start(self, block: dict[str, Any]) -> list[bytes]:
        self._index = index = self._next_index
        self._next_index += 1
        out = [_frame("content_block_start", {"index": index, "content_block": block})]
        if not self._pinged:
            self._pinged = True
            out.append(_PING)
        return out

    def _delta(self, delta: dict[str, Any]) -> bytes:
        return _frame("content_block_delta", {"index": self._index, "delta": delta})

    def _block_stop(self) -> bytes:
        index, self._index = self._index, None
        return _frame("content_block_stop", {"index": index})

    def _stop(self, event: Event) -> list[bytes]:
        self._ended = True
        reason = _stop_reason(self.ctx, event.get("finish_reason"), self._refusal)
        delta = {"stop_reason": reason, "stop_sequence": None}
        usage = wire_usage(event.get("usage_metadata"))
        return [
            _frame("message_delta", {"delta": delta, "usage": usage}),
            _frame("message_stop", {}),
        ]

    # --- groups -----------------------------------------------------------------------------

    def _item(self, item: dict[str, Any]) -> list[bytes]:
        kind, _, phase = str(item.get("type")).partition(".")
        if kind in _UNCARRIED:
            raise _GrammarBreak(
                f"the model answered with {kind} ({item.get('mime_type') or 'data'}), which an "
                "Anthropic message cannot carry; ask this model through a wire that can",
                status=500,
            )
        if kind not in ("text", "thinking", "tool_call") or phase not in ("delta", "done"):
            raise _GrammarBreak(f"{item.get('type')!r} is no item of an answer")
        if phase == "delta":
            if self._kind is None:
                self._kind = kind
                self._call = {}
                self._held = None
            elif self._kind != kind:
                raise _GrammarBreak(f"a {kind} fragment came while a {self._kind} was open")
            return (
                self._text_delta(item)
                if kind == "text"
                else (self._thinking_delta(item) if kind == "thinking" else self._call_delta(item))
            )
        if self._kind != kind:
            raise _GrammarBreak(f"{kind}.done came while {self._kind or 'nothing'} was open")
        self._kind = None
        if kind == "text":
            return self._text_done(item)
        return self._thinking_done(item) if kind == "thinking" else self._call_done(item)

    def _text_delta(self, item: dict[str, Any]) -> list[bytes]:
        text = item.get("text") or ""
        if not text:
            return []
        out = self._start({"type": "text", "text": ""}) if self._index is None else []
        out.append(self._delta({"type": "text_delta", "text": text}))
        return out

    def _text_done(self, item: dict[str, Any]) -> list[bytes]:
        # other text fidelity (Responses' id/phase, Gemini's thought_signature) has no field
        # on an Anthropic text block: lost (docs/gateway.md)
        if _is_refusal(item.get("fidelity")):
            self._refusal = True
        return [self._block_stop()] if self._index is not None else []

    def _thinking_delta(self, item: dict[str, Any]) -> list[bytes]:
        thinking = item.get("thinking") or ""
        if not thinking:
            return []
        out = (
            self._start({"type": "thinking", "thinking": "", "signature": ""})
            if self._index is None
            else []
        )
        out.append(self._delta({"type": "thinking_delta", "thinking": thinking}))
        return out

    def _thinking_done(self, item: dict[str, Any]) -> list[bytes]:
        fidelity = item.get("fidelity") or None
        seal = self.ctx.seal
        out: list[bytes] = []
        if self._index is None:  # nothing written: an empty thinking
            if fidelity is None:
                return []
            data = _redacted_data(fidelity, seal)
            if data is not None:
                out += self._start({"type": "redacted_thinking", "data": data})
                out.append(self._block_stop())
                return out
            out += self._start({"type": "thinking", "thinking": "", "signature": ""})
        if fidelity is not None:
            out.append(
                self._delta({"type": "signature_delta", "signature": _signature(fidelity, seal)})
            )
        out.append(self._block_stop())
        return out

    def _call_delta(self, item: dict[str, Any]) -> list[bytes]:
        out: list[bytes] = []
        fidelity = item.get("fidelity") or None
        arguments = item.get("arguments") or ""
        if not self._call:  # the first fragment: the call's id and name
            self._call = {"id": item.get("tool_call_id") or "", "name": item.get("name") or ""}
            if fidelity is None and self.ctx.upstream not in _CALLS_WITHOUT_FIDELITY:
                self._held = []  # its fidelity may come later: the id waits for it
            else:
                out += self._call_start(fidelity)
        elif fidelity is not None:
            if self._held is None:
                raise _GrammarBreak(
                    "a tool call's fidelity came after its id was written; it cannot be kept"
                )
            self._call["fidelity"] = fidelity
        if arguments:
            if self._held is not None:
                self._held.append(arguments)
            else:
                out.append(self._delta({"type": "input_json_delta", "partial_json": arguments}))
        return out

    def _call_start(self, fidelity: dict[str, Any] | None) -> list[bytes]:
        block = {
            "type": "tool_use",
            "id": tool_use_id(self._call["id"], fidelity, self.ctx.seal),
            "name": self._call["name"],
            "input": {},
        }
        return self._start(block)

    def _call_done(self, item: dict[str, Any]) -> list[bytes]:
        out: list[bytes] = []
        if self._held is not None:
            out += self._call_start(item.get("fidelity") or self._call.get("fidelity"))
            arguments = "".join(self._held)
            if arguments:
                out.append(self._delta({"type": "input_json_delta", "partial_json": arguments}))
            self._held = None
        out.append(self._block_stop())
        return out


# --- the non-stream body ----------------------------------------------------------------------


def final_body(ctx: WriteContext, message: Message) -> dict[str, Any]:
    """The finished turn as Anthropic's Message object (the same blocks as the stream)."""
    seal = ctx.seal
    content: list[dict[str, Any]] = []
    refusal = False
    for raw in message.get("content_items") or []:
        item: dict[str, Any] = dict(raw)
        kind = item.get("type")
        fidelity = item.get("fidelity") or None
        if kind == "text.done":
            refusal = refusal or _is_refusal(fidelity)
            if item.get("text"):
                content.append({"type": "text", "text": item["text"]})
        elif kind == "thinking.done":
            thinking = item.get("thinking") or ""
            if not thinking and fidelity is None:
                continue
            data = _redacted_data(fidelity, seal) if fidelity and not thinking else None
            if data is not None:
                content.append({"type": "redacted_thinking", "data": data})
            else:
                signature = _signature(fidelity, seal) if fidelity else ""
                content.append({"type": "thinking", "thinking": thinking, "signature": signature})
        elif kind == "tool_call.done":
            content.append(
                {
                    "type": "tool_use",
                    "id": tool_use_id(item["tool_call_id"], fidelity, seal),
                    "name": item["name"],
                    "input": item["arguments"],
                }
            )
        else:
            raise UnsupportedOutputError(
                f"the model answered with {kind}, which an Anthropic message cannot carry"
            )
    reason = _stop_reason(ctx, message.get("finish_reason"), refusal)
    return {
        "id": message_id(ctx),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        "stop_reason": reason,
        "stop_sequence": None,
        "usage": wire_usage(message.get("usage_metadata")),
    }


__all__ = [
    "ERROR_TYPES",
    "TOOL_ID_SEPARATOR",
    "AnthropicStreamWriter",
    "UnsupportedOutputError",
    "count_tokens_body",
    "error_body",
    "error_object",
    "final_body",
    "message_id",
    "models_body",
    "tool_use_id",
    "wire_usage",
]
