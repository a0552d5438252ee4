"""OpenAI Responses (`POST /v1/responses`, `stream: true`) stream decoder.

The stream is a list of output items (`response.output_item.added` … `.done`), each with an `id`
that every later event names as `item_id`. Items may interleave and finish out of order
(OpenRouter finishes its reasoning item after the message: corpus
`pydanticai-openrouter-raw-reasoning`). The turn keeps the provider's output order
(`output_index`, the order of the `.added` events), which replay needs: the API rejects a
reasoning item not followed by its item. So the items this decoder turns into grammar items are
decoded one at a time in that order: the events of an item announced while an earlier one is
still open wait, in arrival order, until every item before it is done (or the response ends),
then go through as if they had come then. Blocks are keyed by the provider's identity, and one
grammar item is:

  text       one content part of a `message` item, key (item_id, content_index): `output_text`
             and `refusal` parts alike. It ends at `content_part.done` (or its item's done).
  thinking   one part of a `reasoning` item: a summary part, key (item_id, "summary",
             summary_index), or a raw content part (`reasoning_text`, DeepSeek and OpenRouter),
             key (item_id, "content", content_index). A part ends when the next part of its item
             starts; the last part ends at the item's `output_item.done`, because that event
             brings the final `encrypted_content` (the one on `.added` is superseded: corpus
             `pydanticai-moderation`), which rides on the item's last part. A reasoning item
             with no text (encrypted only, or empty) is one thinking item with empty thinking,
             so replay can still send the item back.
  tool_call  one `function_call` item, key item_id: name and `call_id` (the tool_call_id) at
             `output_item.added` (a name left empty there is taken from `output_item.done`),
             `function_call_arguments.delta` fragments, ends at `output_item.done`.
  inline_data  one `image_generation_call` item's `result` (base64), whole at its
             `output_item.done`, mime type `image/<output_format>` (png when absent). The
             `partial_image` previews before it are skipped and counted (SPEC §3: the image is
             the result); a call that ends without a result makes no item.

Fidelity (what Responses replay needs, SPEC §2 rule 6). The provider's item id rides as "id":
MMSP reserves the fidelity key "item_id" for its own bookkeeping and strips it.
  thinking   {"id": "rs_…", "part": "summary_text" | "reasoning_text"}, plus
             "encrypted_content" on the item's last part; an item with no text has no "part".
             Replay joins consecutive thinking items with one id into one reasoning item.
  text       {"id": "msg_…"}, plus "phase" when the item has one, and "refusal": true on a
             refusal part (SPEC §2: a refusal is the model's answer).
  tool_call  {"id": "fc_…"} (replay sends it so the call stays paired with its reasoning).
  inline_data  {"id": "ig_…"} (replay sends the image back as its `image_generation_call`).

Skipped and counted (`metadata.skipped`): built-in tool items (web search, code interpreter,
MCP, file search, …) as `item:<type>`, and their events (image generation's too) as
`event:<type>`; an image result that is not base64 as `image_undecodable`;
annotations as `annotation`; non-empty logprobs on text deltas as `logprobs`; any other unknown
event as `event:<type>`.

Usage arithmetic (SPEC §2), from the `usage` of response.completed / incomplete / failed:
  cached_tokens   = input_tokens_details.cached_tokens (null when absent)
  prompt_tokens   = input_tokens − cached_tokens (input_tokens when cached is unknown)
  thoughts_tokens = output_tokens_details.reasoning_tokens (null when absent)
  response_tokens = output_tokens − reasoning_tokens (output_tokens when reasoning is unknown)

Finish: `response.completed` → "stop" (the assembler makes it "tool_call" when a call was
emitted); `response.incomplete` → by incomplete_details.reason (max_output_tokens → "length",
anything else, e.g. content_filter → "unknown"). Both are the terminal event. `error` and
`response.failed` raise ProviderError. Events need no `sequence_number` (early captures have
none), and a stream resumed mid-way decodes what it has; but where events are numbered, a jump
in the numbers means events were lost, and raises `SequenceGapError` (SPEC §4) before the event
after the gap is decoded (when lenient, `StreamDecoder` notes the gap and decodes it again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orjson import loads

from ...error_bodies import ErrorWords, provider_error
from ...errors import SequenceGapError
from ...types import FinishReason, Usage
from ..common.decoding import int_or_none, malformed_frame
from ..common.inline_media import decode_base64

_TEXT_DELTA = "response.output_text.delta"
_INCOMPLETE: dict[str, FinishReason] = {"max_output_tokens": "length"}
_RETRYABLE = {"server_error", "rate_limit_exceeded", "server_is_overloaded", "slow_down"}
_FAILURES = ("error", "response.failed")  # end the turn as ProviderError
# Output items that become grammar items, decoded one at a time in output order.
_ORDERED = frozenset(("message", "reasoning", "function_call", "image_generation_call"))
# Understood and carrying nothing new: their content already arrived as deltas.
_ECHOES = (
    "response.output_text.done",
    "response.refusal.done",
    "response.reasoning_summary_text.done",
    "response.reasoning_summary_part.done",
    "response.reasoning_text.done",
    "response.function_call_arguments.done",
)

Key = tuple[Any, ...]


class _Item:
    """The adapter's state for one output item it turns into grammar items."""

    __slots__ = ("encrypted", "ended", "fidelity", "last", "parts", "streamed", "whole")

    def __init__(self, fidelity: dict[str, Any]) -> None:
        self.fidelity = fidelity  # the item's own fidelity, shared by its parts
        self.parts: dict[Key, dict[str, Any]] = {}  # part key -> the part's fidelity
        self.ended: set[Key] = set()
        self.last: Key | None = None  # reasoning: the part streaming now
        self.encrypted: str | None = None  # reasoning: encrypted_content seen at `.added`
        self.streamed = False  # function call: arguments arrived (at `.added` or as deltas)
        self.whole = False  # function call: `.added` held the whole arguments


class OpenAIResponsesDecoder:
    protocol = "openai-responses"
    default_provider = "openai"

    def __init__(self, sink: Any, error_words: ErrorWords) -> None:
        self.sink = sink
        self.error_words = error_words  # every provider's (`error_bodies.provider_error`)
        self._items: dict[Any, _Item] = {}
        # Open items of _ORDERED types in output order -> their events waiting for the first to
        # be done ([] for the first, whose events go through).
        self._order: dict[Any, list[dict[str, Any]]] = {}
        self._holding = False  # an item behind the first is open: its events wait
        self._releasing = False
        self._stopped = False
        self._next = -1  # the `sequence_number` the next event should carry; -1: none yet
        # after frames that were not JSON: (the number expected, how many such frames)
        self._held: tuple[int, int] | None = None
        self._handlers: dict[str, Callable[[dict[str, Any]], object]] = {
            _TEXT_DELTA: self._text_delta,  # (inlined in `on_frame`: the hot path)
            "response.reasoning_summary_text.delta": self._summary_delta,
            "response.reasoning_text.delta": self._reasoning_text_delta,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.refusal.delta": self._refusal_delta,
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "response.content_part.added": self._part_added,
            "response.content_part.done": self._part_done,
            "response.reasoning_summary_part.added": self._summary_part_added,
            "response.output_text.annotation.added": self._annotation,
            "response.created": self._response_metadata,
            "response.queued": self._response_metadata,
            "response.in_progress": self._response_metadata,
            "response.completed": self._completed,
            "response.incomplete": self._incomplete,
            "response.failed": self._failed,
            "error": self._error,
            **dict.fromkeys(_ECHOES, _ignore),
        }

    def on_frame(self, name: str, data: str) -> None:
        try:
            event = loads(data)
            kind = event["type"]
        except (ValueError, TypeError, KeyError):
            self._odd_frame(data)
            return
        sequence = event.get("sequence_number")
        if sequence == self._next:  # the hot path: the next number, as expected
            self._next = sequence + 1
        elif sequence.__class__ is int and kind not in _FAILURES:
            self._sequence_jump(sequence)  # (a failure after a gap says more than the gap)
        if self._stopped:
            self.sink.skip("after_stop")
        elif self._holding and self._waits(event):
            pass  # an event of an item behind the first open one: it waits its turn
        elif kind == _TEXT_DELTA:  # the hot path: most frames of a turn
            self.sink.text(
                (event.get("item_id"), event.get("content_index", 0)), event.get("delta", "")
            )
            if event.get("logprobs"):  # an empty list on most deltas
                self.sink.skip("logprobs")
        else:
            self._dispatch(kind, event)

    def _dispatch(self, kind: str, event: dict[str, Any]) -> None:
        handler = self._handlers.get(kind)
        if handler is None:  # built-in tool progress, code deltas, and anything newer
            self.sink.skip(f"event:{kind}")
        else:
            handler(event)

    def on_end(self) -> None:
        pass

    def _odd_frame(self, data: str) -> None:
        if data.strip() == "[DONE]":
            return  # OpenRouter's trailing sentinel (pydanticai-openrouter-raw-reasoning)
        try:
            loads(data)
        except ValueError:
            if self._next >= 0 or self._held is not None:
                # it may have had a number: one more number may be missing without a gap
                expected, broken = self._held or (self._next, 0)
                self._held, self._next = (expected, broken + 1), -1
            raise malformed_frame(data) from None
        self.sink.skip("event:untyped")  # JSON, but not an event object with a type

    def _sequence_jump(self, sequence: int) -> None:
        """Events are numbered one by one, so a jump means events were lost on the way. The
        first number may be anything (a resumed background stream starts mid-way), and after a
        frame that was not JSON the number it may have carried is skipped."""
        expected, broken = self._held or (self._next, 0)
        self._next, self._held = sequence + 1, None
        if expected >= 0 and not expected <= sequence <= expected + broken:
            self._next = sequence  # when lenient, StreamDecoder decodes this event again
            raise SequenceGapError(expected - 1, sequence)

    # --- output order -----------------------------------------------------------------------

    def _waits(self, event: dict[str, Any]) -> bool:
        """Keep the event if it belongs to an item behind the first open one."""
        item_id = event.get("item_id")
        if item_id is None:
            item = event.get("item")
            item_id = item.get("id") if isinstance(item, dict) else None
        held = self._order.get(item_id)
        if held is None or item_id == next(iter(self._order)):
            return False
        held.append(event)
        return True

    def _advance(self) -> None:
        """The first open item is done: the events of the items after it go through, in order,
        up to the first item still open."""
        if self._releasing:
            return  # (an item done among released events: the loop below goes on)
        self._releasing = True
        try:
            while self._order:
                item_id = next(iter(self._order))
                held = self._order[item_id]
                if not held:
                    break
                self._order[item_id] = []
                for event in held:
                    self._dispatch(event["type"], event)
        finally:
            self._releasing = False
        self._holding = len(self._order) > 1

    def _release_all(self) -> None:
        """The response ended: the events of items still open go through in output order (the
        finish closes the items)."""
        while self._order:
            self._advance()
            if self._order:
                del self._order[next(iter(self._order))]
        self._holding = False

    # --- output items ---------------------------------------------------------------------

    def _item_added(self, event: dict[str, Any]) -> None:
        item = event.get("item") or {}
        item_type = item.get("type")
        item_id = item.get("id")
        if item_type in _ORDERED and item_id is not None and item_id not in self._order:
            if self._order:  # an earlier item is still open: this one waits its turn
                self._order[item_id] = [event]
                self._holding = True
                return
            self._order[item_id] = []
        if item_type == "message":
            self._items[item_id] = _Item(_message_fidelity(item))
        elif item_type == "reasoning":
            state = self._items[item_id] = _Item({"id": item_id})
            state.encrypted = item.get("encrypted_content")
        elif item_type == "image_generation_call":
            pass  # its image arrives whole at `output_item.done`
        elif item_type == "function_call":
            self._items[item_id] = state = _Item({"id": item_id})
            arguments = item.get("arguments") or ""
            state.whole = state.streamed = bool(arguments)
            self.sink.tool_call(
                item_id,
                arguments,
                name=item.get("name") or "",
                tool_call_id=item.get("call_id") or "",
                fidelity=state.fidelity,
            )
        else:  # executed by the provider (web_search_call, code_interpreter_call, mcp_call, ...)
            self.sink.skip(f"item:{item_type}")

    def _item_done(self, event: dict[str, Any]) -> None:
        item = event.get("item") or {}
        item_type = item.get("type")
        item_id = item.get("id")
        state = self._items.pop(item_id, None)
        if item_type == "message":
            self._message_done(item, item_id, state)
        elif item_type == "reasoning":
            self._reasoning_done(item, item_id, state)
        elif item_type == "function_call":
            self._function_call_done(item, item_id, state)
        elif item_type == "image_generation_call":
            self._image_done(item, item_id)
        # a built-in tool item's done: already counted at `.added`
        if item_id in self._order:
            del self._order[item_id]
            self._advance()

    def _message_done(self, item: dict[str, Any], item_id: Any, state: _Item | None) -> None:
        if state is None:  # a resumed stream that began after `.added`
            state = _Item(_message_fidelity(item))
        keys = dict.fromkeys(state.parts)
        content = item.get("content")
        if isinstance(content, list):
            keys.update(dict.fromkeys((item_id, index) for index in range(len(content))))
        for key in keys:
            if key not in state.ended and self.sink.has_open(key):
                self._end_text(state, key)

    def _reasoning_done(self, item: dict[str, Any], item_id: Any, state: _Item | None) -> None:
        if state is None:
            state = _Item({"id": item_id})
        encrypted = item.get("encrypted_content") or state.encrypted
        last = state.last
        if last is None:  # no text streamed: one empty thinking item
            key: Key = (item_id, "item")
            fidelity = dict(state.fidelity)
            if encrypted:
                fidelity["encrypted_content"] = encrypted
            self.sink.thinking(key, "", fidelity)
            self.sink.end_item(key)
            return
        if encrypted:
            self.sink.thinking(last, "", {"encrypted_content": encrypted})
        for key in state.parts:
            if key not in state.ended:
                self.sink.end_item(key)

    def _function_call_done(self, item: dict[str, Any], item_id: Any, state: _Item | None) -> None:
        arguments = item.get("arguments") or ""
        if state is None:  # a resumed stream that began after `.added`: the done item is whole
            self.sink.tool_call(
                item_id,
                arguments,
                name=item.get("name") or "",
                tool_call_id=item.get("call_id") or "",
                fidelity={"id": item_id},
            )
        else:
            # the arguments only on the finished item; the name too where `.added` left it
            # empty (the assembler held the call until now)
            rest = "" if state.streamed else arguments
            name = item.get("name") or ""
            if rest or name:
                self.sink.tool_call(item_id, rest, name=name)
        self.sink.end_item(item_id)

    def _image_done(self, item: dict[str, Any], item_id: Any) -> None:
        result = item.get("result")
        if not result or not isinstance(result, str):
            self.sink.skip("image_generation_call_without_result")
            return
        data = decode_base64(result)
        if data is None:
            self.sink.skip("image_undecodable")
            return
        mime_type = f"image/{item.get('output_format') or 'png'}"
        self.sink.inline_data(item_id, data, mime_type, {"id": item_id})
        self.sink.end_item(item_id)

    # --- parts and deltas -----------------------------------------------------------------

    def _part_added(self, event: dict[str, Any]) -> None:
        part = event.get("part") or {}
        part_type = part.get("type")
        item_id = event.get("item_id")
        index = event.get("content_index", 0)
        if part_type == "reasoning_text":
            key: Key = (item_id, "content", index)
            if self._thinking_part(item_id, key, "reasoning_text"):
                self.sink.thinking(key, part.get("text") or "")
        elif part_type == "output_text" or part_type == "refusal":
            state = self._message(item_id)
            key = (item_id, index)
            fidelity = state.fidelity
            if part_type == "refusal":
                fidelity = {**fidelity, "refusal": True}
            state.parts[key] = fidelity
            self.sink.text(key, part.get("text") or part.get("refusal") or "", fidelity)
        else:
            self.sink.skip(f"part:{part_type}")

    def _part_done(self, event: dict[str, Any]) -> None:
        part_type = (event.get("part") or {}).get("type")
        if part_type == "output_text" or part_type == "refusal":
            item_id = event.get("item_id")
            key = (item_id, event.get("content_index", 0))
            state = self._message(item_id)
            if key not in state.ended and self.sink.has_open(key):
                self._end_text(state, key)
        # a reasoning part stays open for its item's encrypted_content (module docstring)

    def _text_delta(self, event: dict[str, Any]) -> None:
        self.sink.text(
            (event.get("item_id"), event.get("content_index", 0)), event.get("delta", "")
        )
        if event.get("logprobs"):  # an empty list on most deltas
            self.sink.skip("logprobs")

    def _refusal_delta(self, event: dict[str, Any]) -> None:
        key = (event.get("item_id"), event.get("content_index", 0))
        self.sink.text(key, event.get("delta") or "", {"refusal": True})

    def _summary_part_added(self, event: dict[str, Any]) -> None:
        item_id = event.get("item_id")
        key = (item_id, "summary", event.get("summary_index", 0))
        if self._thinking_part(item_id, key, "summary_text"):
            self.sink.thinking(key, (event.get("part") or {}).get("text") or "")

    def _summary_delta(self, event: dict[str, Any]) -> None:
        item_id = event.get("item_id")
        key = (item_id, "summary", event.get("summary_index", 0))
        state = self._items.get(item_id)
        if (state is None or state.last != key) and not self._thinking_part(
            item_id, key, "summary_text"
        ):
            return
        self.sink.thinking(key, event.get("delta") or "")

    def _reasoning_text_delta(self, event: dict[str, Any]) -> None:
        item_id = event.get("item_id")
        key = (item_id, "content", event.get("content_index", 0))
        state = self._items.get(item_id)
        if (state is None or state.last != key) and not self._thinking_part(
            item_id, key, "reasoning_text"
        ):
            return
        self.sink.thinking(key, event.get("delta") or "")

    def _thinking_part(self, item_id: Any, key: Key, part_type: str) -> bool:
        """Make `key` the reasoning item's streaming part, ending the one before it."""
        state = self._items.get(item_id)
        if state is None:  # a resumed stream that began after `.added`
            state = self._items[item_id] = _Item({"id": item_id})
        if key == state.last:
            return True
        if key in state.ended:  # a part revisited after the next one began: not representable
            self.sink.skip("late_reasoning_delta")
            return False
        if state.last is not None:
            self.sink.end_item(state.last)
            state.ended.add(state.last)
        state.last = key
        fidelity = {**state.fidelity, "part": part_type}
        state.parts[key] = fidelity
        self.sink.thinking(key, "", fidelity)
        return True

    def _arguments_delta(self, event: dict[str, Any]) -> None:
        item_id = event.get("item_id")
        state = self._items.get(item_id)
        if state is None:  # no `.added` seen: a call without a name cannot be executed
            self.sink.skip("orphan_arguments_delta")
        elif state.whole:
            self.sink.skip("arguments_delta_after_whole_arguments")
        else:
            state.streamed = True
            self.sink.tool_call(item_id, event.get("delta") or "")

    def _annotation(self, event: dict[str, Any]) -> None:
        self.sink.skip("annotation")

    def _message(self, item_id: Any) -> _Item:
        state = self._items.get(item_id)
        if state is None:  # a resumed stream that began after `.added`
            state = self._items[item_id] = _Item({"id": item_id})
        return state

    def _end_text(self, state: _Item, key: Key) -> None:
        # The fidelity again: a part that streamed without `content_part.added` gets it here
        # (merging the same values is a no-op for a part that had it from the start).
        self.sink.text(key, "", state.parts.get(key) or state.fidelity)
        self.sink.end_item(key)
        state.ended.add(key)

    # --- the response -----------------------------------------------------------------------

    def _response_metadata(self, event: dict[str, Any]) -> dict[str, Any]:
        response = event.get("response")
        if not isinstance(response, dict):
            return {}
        metadata = self.sink.metadata
        metadata.response_id = response.get("id") or metadata.response_id
        metadata.model = response.get("model") or metadata.model
        usage = response.get("usage")
        if isinstance(usage, dict):
            self.sink.usage_update(_usage(usage))
        return response

    def _completed(self, event: dict[str, Any]) -> None:
        self._release_all()
        response = self._response_metadata(event)
        self.sink.finish("stop", response.get("status") or "completed")
        self._terminal()

    def _incomplete(self, event: dict[str, Any]) -> None:
        self._release_all()
        response = self._response_metadata(event)
        details = response.get("incomplete_details") or {}
        reason = details.get("reason") or "incomplete"
        self.sink.finish(_INCOMPLETE.get(reason, "unknown"), reason)
        self._terminal()

    def _terminal(self) -> None:
        self._stopped = True
        self.sink.terminal()

    def _failed(self, event: dict[str, Any]) -> None:
        response = self._response_metadata(event)
        self._raise(response.get("error") or {}, "the response failed")

    def _error(self, event: dict[str, Any]) -> None:
        # vercel-openai-error nests the facts in "error"; the SDK's ResponseErrorEvent has them
        # at the top level.
        error = event.get("error")
        self._raise(error if isinstance(error, dict) else event, "the stream reported an error")

    def _raise(self, error: dict[str, Any], fallback: str) -> None:
        code = error.get("code")
        error_type = error.get("type")
        if error_type == "error":  # the top-level event's own type, not an error type
            error_type = None
        self.sink.provider_error(
            provider_error(
                str(error.get("message") or fallback),
                error_type=error_type,
                code=code,
                retryable=code in _RETRYABLE or error_type in _RETRYABLE,
                provider=self.sink.metadata.provider,
                words=self.error_words,
            )
        )


def _ignore(event: dict[str, Any]) -> None:
    pass


def _message_fidelity(item: dict[str, Any]) -> dict[str, Any]:
    fidelity: dict[str, Any] = {"id": item.get("id")}
    phase = item.get("phase")
    if phase:  # gpt-5.5 marks narration as "commentary" (pydanticai-phase)
        fidelity["phase"] = phase
    return fidelity


def _usage(usage: dict[str, Any]) -> Usage:
    """Map Responses usage (module docstring: usage arithmetic)."""
    input_tokens = int_or_none(usage.get("input_tokens"))
    output_tokens = int_or_none(usage.get("output_tokens"))
    input_details = usage.get("input_tokens_details")
    output_details = usage.get("output_tokens_details")
    cached = (
        int_or_none(input_details.get("cached_tokens")) if isinstance(input_details, dict) else None
    )
    reasoning = (
        int_or_none(output_details.get("reasoning_tokens"))
        if isinstance(output_details, dict)
        else None
    )
    return {
        "cached_tokens": cached,
        "prompt_tokens": (
            input_tokens - cached
            if input_tokens is not None and cached is not None
            else input_tokens
        ),
        "thoughts_tokens": reasoning,
        "response_tokens": (
            output_tokens - reasoning
            if output_tokens is not None and reasoning is not None
            else output_tokens
        ),
    }
