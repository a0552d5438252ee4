"""Gemini Interactions API (`POST /v1beta/interactions`, `"stream": true`) stream decoder.

Every frame's type is read from its payload's `event_type`, not from the SSE `event:` line
(the corpus README: Google's own clients read only `data:`). Two vocabularies exist, and both
are read by one table: the current `interaction.created`, `step.start` / `step.delta` /
`step.stop`, `interaction.completed`, and the legacy (before the May 2026 steps schema)
`interaction.start`, `content.start` / `content.delta` / `content.stop`, `interaction.complete`.
Both send `interaction.status_update`. A legacy content block is a step here: its `content` is
read like a step's `step`, so a legacy `text` or `image` block is a `model_output` step.

A step is keyed by its `index`; within a step, each run of deltas of one kind is one item, keyed
(index, n) (SPEC §3):
  thought        `thought_summary` deltas: text → `thinking`, an image → `inline_thinking`
                 (each image its own item). A step that only carries a signature is one
                 `thinking` item with empty text, so replay can send the signature back.
  model_output   `text` → `text`; `image`, `video` → one `inline_data` item each; `audio`
                 chunks of one mime type join one `inline_data` item. Base64 that does not
                 decode is skipped and counted, with a diagnostic.
  function_call  one `tool_call` item: `id`, `name` at the step's start, or on the
                 `function_call` delta after a start that carries only the `id` (the assembler
                 holds the call until its name is known; a call never named is not a call, the
                 turn ends incomplete); the arguments whole (`arguments` object on the start, or
                 on a legacy `function_call` delta) or streamed as JSON text (`arguments_delta`,
                 corpus `vercel-interactions-tool-call`, whose start carries `arguments: {}` as
                 a placeholder). An item ends at its step's stop.
  anything else  built-in tool steps (google_search_call/result, code_execution_call/result,
                 url_context_call/result, mcp_server_tool_call/result, file_search_*, ...) are
                 skipped and counted as `step:<type>`, their deltas as `delta:<type>`;
                 `text_annotation` deltas (citations) as `annotation`.

Fidelity (SPEC §2 rule 6, §3): `{"thought_signature": ...}` on the item whose run carried the
signature (a `thought_signature` delta, a step's `signature` field, or an output content
block's `signature`; the empty string is no signature). A signature never ends an item; a
second one within the run begins a new item at the delta that carries it. A signature on a
skipped built-in step cannot be kept: a diagnostic says so.

Usage arithmetic (SPEC §2), from the interaction's `usage` (on `interaction.completed`):
`total_tokens` = input + output + thought + tool-use tokens in every capture (e.g.
`vercel-interactions-legacy-google-search-handwritten`: 12 + 200 + 58 + 50 = 320), so
  cached_tokens   = total_cached_tokens (absent → 0 when total_input_tokens is present)
  prompt_tokens   = total_input_tokens − total_cached_tokens + total_tool_use_tokens
                    (built-in tools' results fed back to the model are input, as in
                    generateContent's toolUsePromptTokenCount)
  thoughts_tokens = total_thought_tokens; absent → 0 when total_output_tokens is present and no
                    thought summary streamed, else null
  response_tokens = total_output_tokens (excludes thoughts)

Finish: the terminal event (`interaction.completed` / `interaction.complete`) ends the turn by
its interaction's `status`: completed → stop; requires_action (the model asks for function
results) → stop, which the assembler makes tool_call when a call was emitted; incomplete →
length (the turn was cut short); any other status → unknown. A `finish_reason`/`stop_reason` on
the interaction, where one is sent, is read through generateContent's table (MAX_TOKENS →
length, SAFETY, ... → unknown). The raw status (or reason) is kept. A stream without its
terminal event is incomplete (SPEC §3).

Errors: an `error` event, and a `failed` or `cancelled` status (on the terminal event, or on a
status update the stream then ends after), are `ProviderError`s. The error object is read like
generateContent's (`code`, `status`, `message`, `details`): retryable by its code or status
(429, 5xx, RESOURCE_EXHAUSTED, UNAVAILABLE, ...), with RetryInfo's delay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ...error_bodies import ErrorWords, provider_error
from ...types import FinishReason, Usage
from ..common.decoding import int_or_none, load_json
from ..common.inline_media import decode_base64
from ..gemini_generate_content.decoder import gemini_error

_FINISH_BY_STATUS: dict[str, FinishReason] = {
    "completed": "stop",
    "requires_action": "stop",
    "incomplete": "length",
}
_FINISH_BY_REASON: dict[str, FinishReason] = {"STOP": "stop", "MAX_TOKENS": "length"}
_FAILED = ("failed", "cancelled")
# Step types whose content this decoder turns into items; any other type is skipped.
_MODEL_OUTPUT = "model_output"
_THOUGHT = "thought"
_FUNCTION_CALL = "function_call"
# Legacy content blocks that are model output under the steps schema.
_LEGACY_OUTPUT = frozenset({"text", "image", "audio", "video", "document"})

Key = tuple[int, int]


class _Step:
    """The decoder's state for one step (or legacy content block)."""

    __slots__ = (
        "call_open",
        "call_streamed",
        "call_whole",
        "item_kind",
        "kind",
        "mime",
        "number",
        "signature",
        "signed",
    )

    def __init__(self, kind: str) -> None:
        self.kind = kind  # model_output, thought, function_call, or a skipped type
        self.number = 0  # the open item's number within the step
        self.item_kind: str | None = None  # the open item's kind: text, thinking, ...
        self.mime = ""  # the open inline item's mime type (audio chunks join while it matches)
        self.signed = False  # the open item carries a signature already
        self.call_open = False  # function call: its item began (its id or name is known)
        self.call_whole: Any = None  # function call: the whole arguments given so far
        self.call_streamed = False  # function call: arguments arrived as JSON text
        self.signature = ""  # function call: a signature that came before the call began


class GeminiInteractionsDecoder:
    protocol = "gemini-interactions"
    default_provider = "google"

    def __init__(self, sink: Any, error_words: ErrorWords) -> None:
        self.sink = sink
        self.error_words = error_words  # every provider's (`error_bodies.provider_error`)
        self._steps: dict[int, _Step] = {}
        self._stopped = False
        self._failed_status: str | None = None  # a status update said failed / cancelled
        self._thought_seen = False
        self._handlers: dict[str, Callable[[dict[str, Any]], object]] = {
            "step.delta": self._delta,
            "content.delta": self._delta,
            "step.start": self._start,
            "content.start": self._start,
            "step.stop": self._stop_step,
            "content.stop": self._stop_step,
            "interaction.created": self._interaction,
            "interaction.start": self._interaction,
            "interaction.status_update": self._status_update,
            "interaction.completed": self._completed,
            "interaction.complete": self._completed,
            "error": self._error,
        }

    def on_frame(self, event: str, data: str) -> None:
        try:
            payload = orjson.loads(data)
        except orjson.JSONDecodeError:
            if data.strip() == "[DONE]":
                return  # a sentinel some gateways append after the terminal event
            payload = load_json(self.sink, data)  # raises MalformedFrameError
        if not isinstance(payload, dict):
            self.sink.skip("event:not_an_object")
            return
        kind = payload.get("event_type")
        if kind == "step.delta" and not self._stopped:
            # the hot path: a plain text or argument fragment of a step we are streaming
            index = payload.get("index")
            delta = payload.get("delta")
            step = self._steps.get(index) if type(index) is int else None
            if step is not None and type(delta) is dict and "signature" not in delta:
                delta_type = delta.get("type")
                if delta_type == "text" and step.item_kind == "text":
                    text = delta.get("text")
                    if isinstance(text, str):
                        if text:
                            self.sink.text((index, step.number), text)
                        return
                elif delta_type == "arguments_delta" and step.call_streamed:
                    fragment = delta.get("arguments")
                    if isinstance(fragment, str) and step.call_whole is None:
                        self.sink.tool_call((index, 0), fragment)
                        return
        if not isinstance(kind, str):
            kind = event  # no type in the payload: the SSE event name is all there is
        if self._stopped:
            self.sink.skip("after_stop")
            return
        handler = self._handlers.get(kind)
        if handler is None:
            self.sink.skip(f"event:{kind}")
        else:
            handler(payload)

    def on_end(self) -> None:
        if not self._stopped and self._failed_status is not None:
            self._raise({}, self._failed_status)

    # --- steps ----------------------------------------------------------------------------

    def _start(self, event: dict[str, Any]) -> None:
        index = event.get("index")
        body = event.get("step", event.get("content"))
        if not isinstance(index, int) or not isinstance(body, dict):
            self.sink.skip("step:malformed")
            return
        kind = body.get("type")
        kind = _MODEL_OUTPUT if kind in _LEGACY_OUTPUT else kind
        if not isinstance(kind, str):
            kind = "unknown"
        previous = self._steps.get(index)
        if previous is not None:  # a step restarted at an index still open: end it first
            self._end_item(index, previous)
        step = self._steps[index] = _Step(kind)
        signature = body.get("signature")
        if kind == _FUNCTION_CALL:
            self._call_start(index, step, body)
        elif kind == _THOUGHT:
            for content in body.get("summary") or ():
                self._summary(index, step, content)
            if signature:
                self._signature(index, step, signature)
        elif kind == _MODEL_OUTPUT:
            legacy = body.get("type") in _LEGACY_OUTPUT
            for content in [body] if legacy else body.get("content") or ():
                self._output(index, step, content)
        else:
            self._skipped_step(kind, signature)

    def _delta(self, event: dict[str, Any]) -> None:
        index = event.get("index")
        delta = event.get("delta")
        if not isinstance(index, int) or not isinstance(delta, dict):
            self.sink.skip("delta:malformed")
            return
        step = self._steps.get(index)
        if step is None:  # a delta without its start: its kind says what it is
            step = self._steps[index] = _Step(_step_kind_of(delta.get("type")))
        kind = delta.get("type")
        if kind == "thought_signature":
            self._signature(index, step, delta.get("signature"))
        elif step.kind == _MODEL_OUTPUT:
            self._output(index, step, delta)
        elif step.kind == _THOUGHT:
            if kind == "thought_summary":
                self._summary(index, step, delta.get("content"))
            else:
                self.sink.skip(f"delta:{kind}")
        elif step.kind == _FUNCTION_CALL:
            self._call_delta(index, step, delta)
        else:
            self.sink.skip(f"delta:{kind}")

    def _stop_step(self, event: dict[str, Any]) -> None:
        index = event.get("index")
        step = self._steps.pop(index, None) if isinstance(index, int) else None
        if step is None or index is None:
            return
        if step.kind == _FUNCTION_CALL:
            self._call_end(index, step)
        else:
            self._end_item(index, step)

    def _skipped_step(self, kind: str, signature: Any) -> None:
        """A step the provider executed or holds (search, code execution, url context, ...)."""
        self.sink.skip(f"step:{kind}")
        if signature:
            self.sink.diagnostic({"type": "thought_signature_dropped", "step": kind})

    # --- thought and model output ---------------------------------------------------------

    def _summary(self, index: int, step: _Step, content: Any) -> None:
        if not isinstance(content, dict):
            self.sink.skip("thought_summary:malformed")
            return
        kind = content.get("type")
        if kind == "text":
            text = content.get("text")
            if isinstance(text, str) and text:
                self._thought_seen = True
                key = self._item(index, step, "thinking")
                self.sink.thinking(key, text)
        elif kind == "image":
            self._media(index, step, content, "inline_thinking")
        else:
            self.sink.skip(f"thought_summary:{kind}")

    def _output(self, index: int, step: _Step, content: dict[str, Any]) -> None:
        kind = content.get("type")
        signature = content.get("signature")
        if kind == "text":
            text = content.get("text")
            if signature:  # on the open text item, or a new one if that one is signed
                self._signature(index, step, signature, "text")
            if isinstance(text, str) and text:
                self.sink.text(self._item(index, step, "text"), text)
            # an empty text opens nothing and ends nothing (a legacy block's start)
        elif kind in ("image", "audio", "video", "document"):
            if content.get("data") is None and content.get("uri") is None:
                return  # a legacy block's start names only its type
            self._media(index, step, content, "inline_data")
        elif kind == "text_annotation":
            self.sink.skip("annotation")
        else:
            self.sink.skip(f"delta:{kind}")

    def _media(self, index: int, step: _Step, content: dict[str, Any], kind: str) -> None:
        sink = self.sink
        mime = content.get("mime_type") or "application/octet-stream"
        encoded = content.get("data")
        data = decode_base64(encoded) if isinstance(encoded, str) else None
        if data is None:  # a `uri` (not fetched) or text that is not base64
            sink.skip(f"{content.get('type')}_undecodable")
            sink.diagnostic({"type": "inline_data_undecodable", "mime_type": mime})
            return
        joins = (
            kind == "inline_data"
            and mime.startswith("audio/")
            and step.item_kind == kind
            and step.mime == mime
        )
        if not joins or (content.get("signature") and step.signed):
            self._new_item(index, step, kind)
            step.mime = mime
        key = (index, step.number)
        signature = content.get("signature")
        fidelity = None
        if signature and isinstance(signature, str):
            fidelity = {"thought_signature": signature}
            step.signed = True
        if kind == "inline_thinking":
            self._thought_seen = True
            sink.inline_thinking(key, data, mime, fidelity)
        else:
            sink.inline_data(key, data, mime, fidelity)
        if not mime.startswith("audio/"):
            self._end_item(index, step)  # every image or video is its own item

    def _signature(self, index: int, step: _Step, signature: Any, kind: str = "") -> None:
        """A signature rides on the step's open item (of `kind`, when given); it begins a new
        item only when none is open or the open one is signed already (SPEC §3)."""
        if not signature or not isinstance(signature, str):
            return
        fidelity = {"thought_signature": signature}
        if step.kind == _FUNCTION_CALL:
            if step.call_open:
                self.sink.tool_call((index, 0), "", fidelity=fidelity)
            else:  # the call begins later (its start named only its type): it rides on it then
                step.signature = signature
            return
        if step.kind not in (_THOUGHT, _MODEL_OUTPUT):
            self.sink.diagnostic({"type": "thought_signature_dropped", "step": step.kind})
            return
        if step.item_kind is None or step.signed or (kind and step.item_kind != kind):
            self._new_item(index, step, kind or ("thinking" if step.kind == _THOUGHT else "text"))
        step.signed = True
        key, open_kind = (index, step.number), step.item_kind
        if open_kind == "thinking":
            self.sink.thinking(key, "", fidelity)
        elif open_kind == "text":
            self.sink.text(key, "", fidelity)
        elif open_kind == "inline_data":
            self.sink.inline_data(key, b"", step.mime, fidelity)
        else:
            self.sink.inline_thinking(key, b"", step.mime, fidelity)

    def _item(self, index: int, step: _Step, kind: str) -> Key:
        """The key of the step's open item of `kind`, beginning one if the kind changes."""
        if step.item_kind != kind:
            self._new_item(index, step, kind)
        return (index, step.number)

    def _new_item(self, index: int, step: _Step, kind: str) -> None:
        self._end_item(index, step)
        step.number += 1
        step.item_kind = kind
        step.signed = False

    def _end_item(self, index: int, step: _Step) -> None:
        if step.item_kind is not None:
            self.sink.end_item((index, step.number))
            step.item_kind = None

    # --- function calls -------------------------------------------------------------------

    def _call_start(self, index: int, step: _Step, body: dict[str, Any]) -> None:
        """Begin the call's item from a body naming it; a legacy block's start names only its
        type, and its call begins at the `function_call` delta that follows."""
        name = body.get("name")
        call_id = body.get("id")
        if name is None and call_id is None and body.get("arguments") is None:
            return
        signature = body.get("signature") or step.signature
        fidelity = {"thought_signature": signature} if signature else None
        self.sink.tool_call(
            (index, 0),
            "",
            name=name if isinstance(name, str) else "",
            tool_call_id=call_id if isinstance(call_id, str) else "",
            fidelity=fidelity,
        )
        step.call_open = True
        self._call_arguments(index, step, body.get("arguments"))

    def _call_arguments(self, index: int, step: _Step, arguments: Any) -> None:
        """Arguments given on a start or a whole-call delta: an object, or JSON text."""
        if isinstance(arguments, dict) and arguments:
            step.call_whole = arguments
        elif isinstance(arguments, str) and arguments:
            self._call_text(index, step, arguments)

    def _call_delta(self, index: int, step: _Step, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "arguments_delta":
            fragment = delta.get("arguments")
            if isinstance(fragment, str):
                self._call_text(index, step, fragment)
            elif isinstance(fragment, dict):
                step.call_whole = fragment
        elif kind == "function_call":  # legacy: the whole call in one delta
            if not step.call_open:
                self._call_start(index, step, delta)
            else:  # a start that gave only the id: the name (held for) and arguments are here
                name = delta.get("name")
                if isinstance(name, str) and name:
                    self.sink.tool_call((index, 0), "", name=name)
                self._call_arguments(index, step, delta.get("arguments"))
            signature = delta.get("signature")
            if signature:
                self._signature(index, step, signature)
        else:
            self.sink.skip(f"delta:{kind}")

    def _call_text(self, index: int, step: _Step, fragment: str) -> None:
        if step.call_whole is not None:
            self.sink.skip("arguments_delta_after_whole_arguments")
            return
        step.call_streamed = step.call_open = True  # (a call never named has no name to run)
        self.sink.tool_call((index, 0), fragment)

    def _call_end(self, index: int, step: _Step) -> None:
        if not step.call_open:
            self.sink.skip("function_call_without_call")
            return
        if not step.call_streamed:
            whole = step.call_whole if isinstance(step.call_whole, dict) else {}
            self.sink.tool_call((index, 0), orjson.dumps(whole).decode())
        self.sink.end_item((index, 0))

    # --- the interaction ------------------------------------------------------------------

    def _interaction(self, event: dict[str, Any]) -> dict[str, Any]:
        interaction = event.get("interaction")
        if not isinstance(interaction, dict):
            return {}
        metadata = self.sink.metadata
        # A stateless (`store: false`) interaction's id is "" throughout: no id.
        metadata.response_id = interaction.get("id") or metadata.response_id
        metadata.model = interaction.get("model") or metadata.model
        usage = interaction.get("usage")
        if isinstance(usage, dict):
            self.sink.usage_update(self._usage(usage))
        return interaction

    def _status_update(self, event: dict[str, Any]) -> None:
        status = event.get("status")
        if status in _FAILED:
            self._failed_status = status  # raised at the end unless an error event says more

    def _completed(self, event: dict[str, Any]) -> None:
        interaction = self._interaction(event)
        status = interaction.get("status")
        status = status if isinstance(status, str) else "completed"
        if status in _FAILED:
            error = interaction.get("error")
            self._raise(error if isinstance(error, dict) else {}, status)
            return
        for index, step in list(self._steps.items()):  # steps the provider left open
            if step.kind == _FUNCTION_CALL:
                self._call_end(index, step)
            else:
                self._end_item(index, step)
        self._steps.clear()
        reason = interaction.get("finish_reason") or interaction.get("stop_reason")
        if isinstance(reason, str) and reason:
            self.sink.finish(_FINISH_BY_REASON.get(reason.upper(), "unknown"), reason)
        else:
            self.sink.finish(_FINISH_BY_STATUS.get(status, "unknown"), status)
        self._stopped = True
        self.sink.terminal()

    def _error(self, event: dict[str, Any]) -> None:
        error = event.get("error")
        self._raise(error if isinstance(error, dict) else event, "error")

    def _raise(self, error: dict[str, Any], status: str) -> None:
        if error.get("message") or error.get("code") or error.get("status"):
            raised = gemini_error(error, self.sink.metadata.provider, self.error_words)
        else:
            raised = provider_error(
                f"the interaction ended with status {status!r}",
                error_type=status,
                provider=self.sink.metadata.provider,
                words=self.error_words,
            )
        self.sink.provider_error(raised)

    def _usage(self, usage: dict[str, Any]) -> Usage:
        """Map Interactions usage (module docstring: usage arithmetic)."""
        input_tokens = int_or_none(usage.get("total_input_tokens"))
        output_tokens = int_or_none(usage.get("total_output_tokens"))
        thoughts = int_or_none(usage.get("total_thought_tokens"))
        cached = int_or_none(usage.get("total_cached_tokens"))
        prompt = None
        if input_tokens is not None:
            cached = cached or 0
            prompt = input_tokens - cached + (int_or_none(usage.get("total_tool_use_tokens")) or 0)
        if thoughts is None and output_tokens is not None and not self._thought_seen:
            thoughts = 0
        return {
            "cached_tokens": cached,
            "prompt_tokens": prompt,
            "thoughts_tokens": thoughts,
            "response_tokens": output_tokens,
        }


def _step_kind_of(delta_type: Any) -> str:
    """The step a delta belongs to when its start was not seen (a resumed stream)."""
    if delta_type in ("thought_summary", "thought_signature"):
        return _THOUGHT
    if delta_type in ("arguments_delta", "function_call"):
        return _FUNCTION_CALL
    if delta_type in _LEGACY_OUTPUT or delta_type == "text_annotation":
        return _MODEL_OUTPUT
    return str(delta_type)
