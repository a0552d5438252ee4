"""Anthropic Messages (`POST /v1/messages`, `stream: true`) stream decoder.

Blocks are keyed by the event `index`; a block ends at `content_block_stop`, the turn's finish
reason comes in `message_delta`, and `message_stop` is the terminal event.

Usage arithmetic (SPEC §2): `message_start` and every `message_delta` report cumulative counts,
so the latest value of each field wins (never summed). The `output_tokens` of `message_start` is
a placeholder (1, before anything was generated), never the turn's output: only a
`message_delta` reports output. A turn whose `message_delta` reported none keeps its output
unknown (null) and gets the `usage_missing` diagnostic, like a turn with no usage at all.
  cached_tokens   = cache_read_input_tokens
  prompt_tokens   = input_tokens + cache_creation_input_tokens   (input not served from cache)
  thoughts_tokens = output_tokens_details.thinking_tokens, else null (unknown: Anthropic's
                    output count includes thinking and most responses do not split it)
  response_tokens = output_tokens − thoughts_tokens (or output_tokens when thoughts are unknown)

Fidelity: thinking `{"signature": ...}`, redacted thinking `{"redacted_thinking": <data>}`
(an item with empty thinking), refusal text `{"refusal": true}`.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...error_bodies import ErrorWords, provider_error
from ...types import FinishReason, Usage
from ..common.decoding import int_or_none, load_json

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "refusal": "stop",  # a refusal is the model's answer (SPEC §2)
    "tool_use": "tool_call",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
_RETRYABLE = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
_INPUT_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
_USAGE_KEYS = (*_INPUT_KEYS, "output_tokens")


class AnthropicMessagesDecoder:
    protocol = "anthropic-messages"
    default_provider = "anthropic"

    def __init__(self, sink: Any, error_words: ErrorWords) -> None:
        self.sink = sink
        self.error_words = error_words  # every provider's (`error_bodies.provider_error`)
        self._kinds: dict[int, str] = {}  # block index -> "text" | "thinking" | "tool_call"
        self._counts: dict[str, int | None] = {}
        self._thinking_tokens: int | None = None

    def on_frame(self, name: str, data: str) -> None:
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            event = load_json(self.sink, data)  # raises MalformedFrameError
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "content_block_delta":
            # the hot path: a text or argument fragment of a block we are streaming
            index = event.get("index")
            delta = event.get("delta") or {}
            delta_type = delta.get("type")
            block_kind = self._kinds.get(index)  # type: ignore[arg-type]
            if delta_type == "text_delta" and block_kind == "text":
                self.sink.text(index, delta.get("text") or "")
            elif delta_type == "input_json_delta" and block_kind == "tool_call":
                self.sink.tool_call(index, delta.get("partial_json") or "")
            else:
                self._delta(index, block_kind, delta, delta_type)
        elif kind == "content_block_start":
            self._start(event)
        elif kind == "content_block_stop":
            index = event.get("index")
            if index in self._kinds:
                self.sink.end_item(index)
        elif kind == "message_start":
            message = event.get("message") or {}
            self.sink.metadata.response_id = message.get("id")
            self.sink.metadata.model = message.get("model")
            self._usage(message.get("usage"), _INPUT_KEYS)
        elif kind == "message_delta":
            self._usage(event.get("usage"), _USAGE_KEYS)
            delta = event.get("delta") or {}
            reason = delta.get("stop_reason")
            if reason:
                if reason == "refusal":
                    self._refusal(delta)
                if self._counts and self._counts.get("output_tokens") is None:
                    # input came with message_start, output never: usage_update was called,
                    # so the assembler will not note the missing usage itself
                    self.sink.diagnostic({"type": "usage_missing"})
                self.sink.finish(_FINISH.get(reason, "unknown"), reason)
        elif kind == "message_stop":
            self.sink.terminal()
        elif kind == "ping":
            self.sink.skip("ping")
        elif kind == "error":
            error = event.get("error") or {}
            error_type = error.get("type")
            self.sink.provider_error(
                provider_error(
                    str(error.get("message") or "the stream reported an error"),
                    error_type=error_type,
                    retryable=error_type in _RETRYABLE,
                    provider="anthropic",
                    words=self.error_words,
                )
            )
        else:
            self.sink.skip(f"event:{kind}")

    def on_end(self) -> None:
        pass

    def _start(self, event: dict[str, Any]) -> None:
        index = event.get("index")
        block = event.get("content_block") or {}
        block_type = block.get("type")
        sink = self.sink
        if block_type == "text":
            self._kinds[index] = "text"  # type: ignore[index]
            sink.text(index, block.get("text") or "")
        elif block_type == "thinking":
            self._kinds[index] = "thinking"  # type: ignore[index]
            signature = block.get("signature")
            sink.thinking(
                index, block.get("thinking") or "", {"signature": signature} if signature else None
            )
        elif block_type == "redacted_thinking":
            self._kinds[index] = "thinking"  # type: ignore[index]
            sink.thinking(index, "", {"redacted_thinking": block.get("data", "")})
        elif block_type == "tool_use":
            self._kinds[index] = "tool_call"  # type: ignore[index]
            # The arguments stream as input_json_delta and `input` is a placeholder `{}`;
            # a gateway that gives the whole input here sends no deltas after it.
            initial = block.get("input")
            whole = orjson.dumps(initial).decode() if isinstance(initial, dict) and initial else ""
            if whole:  # its input is complete: a later input_json_delta is skipped
                self._kinds[index] = "tool_call_whole"  # type: ignore[index]
            sink.tool_call(
                index, whole, name=block.get("name") or "", tool_call_id=block.get("id") or ""
            )
        else:  # server tools, their results, MCP blocks: executed by the provider
            sink.skip(f"block:{block_type}")

    def _delta(self, index: Any, kind: str | None, delta: dict[str, Any], delta_type: Any) -> None:
        if kind is None:
            self.sink.skip(f"delta:{delta_type}")  # a server tool's block
        elif kind == "tool_call_whole" and delta_type == "input_json_delta":
            self.sink.skip("delta:input_json_delta_after_whole_input")
        elif delta_type == "thinking_delta":
            self.sink.thinking(index, delta.get("thinking") or "")
        elif delta_type == "signature_delta":
            self.sink.thinking(index, "", {"signature": delta.get("signature", "")})
        else:  # citations_delta and anything newer
            self.sink.skip(f"delta:{delta_type}")

    def _refusal(self, delta: dict[str, Any]) -> None:
        """Mark the refusal as the model's answer; an empty refusal still is one."""
        self.sink.text(("refusal",), "", {"refusal": True})
        details = delta.get("stop_details")
        if details:
            self.sink.diagnostic({"type": "refusal", "details": details})

    def _usage(self, usage: Any, keys: tuple[str, ...]) -> None:
        if not isinstance(usage, dict):
            return
        counts = self._counts
        for key in keys:
            value = int_or_none(usage.get(key))
            if value is not None:
                counts[key] = value
        details = usage.get("output_tokens_details")
        if isinstance(details, dict):
            thinking = int_or_none(details.get("thinking_tokens"))
            if thinking is not None:
                self._thinking_tokens = thinking
        if counts:  # nothing known yet (only the placeholder): usage stays missing
            self.sink.usage_update(self._mapped())
            self.sink.metadata.cache_write_tokens = counts.get("cache_creation_input_tokens")

    def _mapped(self) -> Usage:
        counts = self._counts
        fresh = counts.get("input_tokens")
        created = counts.get("cache_creation_input_tokens")
        output = counts.get("output_tokens")
        thoughts = self._thinking_tokens
        response = output - thoughts if output is not None and thoughts is not None else output
        return {
            "cached_tokens": counts.get("cache_read_input_tokens"),
            "prompt_tokens": fresh + (created or 0) if fresh is not None else None,
            "thoughts_tokens": thoughts,
            "response_tokens": response,
        }
