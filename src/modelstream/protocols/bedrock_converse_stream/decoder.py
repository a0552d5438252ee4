"""Amazon Bedrock ConverseStream (`POST /model/{modelId}/converse-stream`) stream decoder.

The body is a binary AWS event stream (`framing/eventstream.py`); each message's `:event-type`
is the frame's event and its payload the event's JSON. Blocks are keyed by `contentBlockIndex`;
a text or reasoning block may come without `contentBlockStart` (its first delta opens it), a
tool call opens with `contentBlockStart.start.toolUse` (`toolUseId`, `name`), and every block
ends at `contentBlockStop`. `messageStop` carries the finish reason and `metadata` the usage;
they come in either order, and the turn stops when both have arrived (or at the end of the body,
when only `messageStop` came). An exception message (`exception:<type>`) is a `ProviderError`.

Usage arithmetic (SPEC §2): `metadata.usage` is reported once, for the whole turn. Bedrock's
`inputTokens` excludes the input read from and written to the prompt cache (`totalTokens` =
input + output + cache read + cache write), as Anthropic's `input_tokens` does:
  cached_tokens   = cacheReadInputTokens (0 when absent: Bedrock reports it when a cache
                    point was read)
  prompt_tokens   = inputTokens + cacheWriteInputTokens   (input not served from cache)
  thoughts_tokens = null (unknown: `outputTokens` includes reasoning and is not split)
  response_tokens = outputTokens
`metrics` (latency), `trace` and the other metadata fields are skipped.

Fidelity: reasoning `{"signature": ...}` (sent back with the reasoning text), redacted reasoning
`{"redacted_content": <base64>}` (an item with empty thinking).

Skipped and counted: citations, images, provider-executed tools (`toolUse` of type
`server_tool_use`) and their results (`toolResult` blocks), and any delta or event this decoder
does not know.
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
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_call",
}
# The exceptions that ask to retry the request (the service model: throttling 429, timeout
# 408, not ready 429, internal 500, unavailable 503, stream error "Retry your request").
_RETRYABLE = {
    "throttlingException",
    "serviceUnavailableException",
    "internalServerException",
    "modelStreamErrorException",
    "modelTimeoutException",
    "modelNotReadyException",
}
_SKIPPED = "skipped"  # the kind of a block this decoder does not stream (server tools, results)


class BedrockConverseStreamDecoder:
    protocol = "bedrock-converse-stream"
    default_provider = "bedrock"

    def __init__(self, sink: Any, error_words: ErrorWords) -> None:
        self.sink = sink
        self.error_words = error_words  # every provider's (`error_bodies.provider_error`)
        self._kinds: dict[Any, str] = {}  # block index -> "text" | "thinking" | "tool_call" | ...
        self._finished = False  # messageStop arrived
        self._usage = False  # metadata arrived
        # the indexes of the last text and tool call blocks: their fragments need no lookup
        self._text_block: Any = object()
        self._tool_block: Any = object()

    def on_frame(self, name: str, data: str) -> None:
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            if name.startswith("error:"):  # an error message: its text is the frame's data
                self._error(name, {"message": data})
                return
            event = load_json(self.sink, data)  # raises MalformedFrameError
        if not isinstance(event, dict):
            self.sink.skip(f"event:{name}")
            return
        if name == "contentBlockDelta":
            # the hot path: a fragment of the text or tool call block being streamed
            index = event.get("contentBlockIndex")
            delta = event.get("delta")
            if delta.__class__ is dict:
                if index == self._text_block:
                    text = delta.get("text")
                    if text.__class__ is str:
                        self.sink.text(index, text)
                        return
                elif index == self._tool_block:
                    tool = delta.get("toolUse")
                    arguments = tool.get("input") if tool.__class__ is dict else None
                    if arguments.__class__ is str:
                        self.sink.tool_call(index, arguments)
                        return
            self._delta(index, delta)
        elif name == "contentBlockStart":
            self._start(event)
        elif name == "contentBlockStop":
            self.sink.end_item(event.get("contentBlockIndex"))
        elif name == "messageStart":
            pass  # role "assistant": nothing to stream
        elif name == "messageStop":
            reason = event.get("stopReason")
            raw = reason if isinstance(reason, str) else None
            self._finished = True
            self.sink.finish(_FINISH.get(raw or "", "unknown"), raw)
            if self._usage:
                self.sink.terminal()
        elif name == "metadata":
            self._metadata(event)
        elif name.startswith(("exception:", "error:")):
            self._error(name, event)
        else:
            self.sink.skip(f"event:{name}")

    def on_end(self) -> None:
        pass

    def _start(self, event: dict[str, Any]) -> None:
        index = event.get("contentBlockIndex")
        start = event.get("start")
        if not isinstance(start, dict) or not start:
            return  # a text block announced with `start: {}`: its deltas open it
        tool = start.get("toolUse")
        if isinstance(tool, dict) and tool.get("type") != "server_tool_use":
            self._kinds[index] = "tool_call"
            self._tool_block = index
            self.sink.tool_call(
                index,
                "",
                name=str(tool.get("name") or ""),
                tool_call_id=str(tool.get("toolUseId") or ""),
            )
            return
        self._kinds[index] = _SKIPPED  # a provider-executed tool, its result, an image
        what = "server_tool_use" if isinstance(tool, dict) else next(iter(start), "unknown")
        self.sink.skip(f"block:{what}")

    def _delta(self, index: Any, delta: Any) -> None:
        sink = self.sink
        if not isinstance(delta, dict):
            sink.skip("delta:empty")
            return
        kind = self._kinds.get(index)
        if kind == _SKIPPED:
            sink.skip(f"delta:{next(iter(delta), 'empty')}")
            return
        text = delta.get("text")
        if text is not None and kind in (None, "text"):
            self._kinds[index] = "text"
            self._text_block = index
            sink.text(index, text if isinstance(text, str) else "")
            return
        reasoning = delta.get("reasoningContent")
        tool = delta.get("toolUse")
        if isinstance(reasoning, dict) and kind in (None, "thinking"):
            self._kinds[index] = "thinking"
            text = reasoning.get("text")
            if isinstance(text, str):
                sink.thinking(index, text)
            signature = reasoning.get("signature")
            if isinstance(signature, str):
                sink.thinking(index, "", {"signature": signature})
            redacted = reasoning.get("redactedContent")
            if isinstance(redacted, str):
                sink.thinking(index, "", {"redacted_content": redacted})
        elif isinstance(tool, dict) and kind in (None, "tool_call"):
            self._kinds[index] = "tool_call"
            self._tool_block = index
            arguments = tool.get("input")
            sink.tool_call(index, arguments if isinstance(arguments, str) else "")
        else:  # citations, toolResult, images, and whatever comes next
            sink.skip(f"delta:{next(iter(delta), 'empty')}")

    def _metadata(self, event: dict[str, Any]) -> None:
        usage = event.get("usage")
        if isinstance(usage, dict):
            self.sink.usage_update(_mapped(usage))
            self.sink.metadata.cache_write_tokens = int_or_none(usage.get("cacheWriteInputTokens"))
        self._usage = True
        if self._finished:
            self.sink.terminal()

    def _error(self, name: str, event: dict[str, Any]) -> None:
        error_type = name.partition(":")[2]
        message = event.get("message")
        original = event.get("originalMessage")
        text = str(message or error_type or "the stream reported an error")
        if isinstance(original, str) and original:
            text = f"{text}: {original}"
        status = int_or_none(event.get("originalStatusCode"))
        self.sink.provider_error(
            provider_error(
                text,
                error_type=error_type or None,
                code=status,
                retryable=error_type in _RETRYABLE,
                provider="bedrock",
                words=self.error_words,
            )
        )


def _mapped(usage: dict[str, Any]) -> Usage:
    fresh = int_or_none(usage.get("inputTokens"))
    read = int_or_none(usage.get("cacheReadInputTokens"))
    written = int_or_none(usage.get("cacheWriteInputTokens"))
    return {
        "cached_tokens": (read or 0) if fresh is not None or read is not None else None,
        "prompt_tokens": fresh + (written or 0) if fresh is not None else None,
        "thoughts_tokens": None,
        "response_tokens": int_or_none(usage.get("outputTokens")),
    }
