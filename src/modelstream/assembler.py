"""The item assembler: provider fragments in, grammar-valid events out (SPEC §2–3).

Theory of operation
-------------------
Provider adapters know their wire format and nothing else. They call this object for what they
read: a fragment of a block (`text`, `thinking`, `tool_call`, `inline_data`, `inline_thinking`,
`embedding`), the end of a block (`end_item`), usage, the turn's finish reason (`finish`), the
provider's terminal event (`terminal`), an error (`provider_error`), or something with no item in
the grammar (`skip`). Every block is keyed by the provider's own block identity (an index, an
item id, ...), never by "what is open now".

The assembler turns that into the one public grammar, by these rules:

A. Groups never interleave (SPEC §2 rule 2). The open blocks form a queue in order of first
   appearance. Only the head's fragments are emitted as they arrive; a later block's fragments
   are held until every block before it is done, then released in order.
B. A block is done when its provider says so (`end_item`), when the turn's finish reason
   arrives (`finish`), or when `stop` is emitted; never otherwise (SPEC §3). A stream that
   breaks off leaves its open block without a `.done`.
C. Fidelity (SPEC §2 rule 6) may arrive on any fragment, in pieces (a signature after the
   thinking text, a phase at the start). It is merged per block and emitted once, on a fragment
   with an empty growing field right before the `.done`, which carries the same value.
D. A fragment with nothing in it (empty growing field, no fidelity, not the start of a tool
   call) opens nothing and emits nothing: gateways send `"content": ""` on every chunk.
E. A `.done` is the block's first fragment with its growing field replaced by the join
   (SPEC §2 rule 3). A tool call's joined arguments must be a JSON object: strictly, else
   `ToolCallArgumentParseError` is raised in place of the `.done`; leniently, the arguments are
   recovered and a `tool_arguments_recovered` diagnostic says how. Strict arguments that stop
   mid-object before the finish reason is known (Anthropic and Responses end the block, then
   say `max_tokens`) wait for it, so the error can say the output limit cut the call. A tool
   call with no id gets `call_<n>` (its ordinal in the turn) and a `tool_call_id_synthesized`
   diagnostic.
F. `stop` is emitted once, at the terminal event or at the end of input, and only if a finish
   reason was received; otherwise the stream ends in `IncompleteStreamError`. A finish of
   `stop` with at least one tool call becomes `tool_call` (SPEC §2). Missing usage becomes all
   null with a `usage_missing` diagnostic. A turn with nothing but thinking ends in
   `EmptyResponseError` instead of `stop`.
G. After `stop`, whatever arrives is counted as skipped (`after_stop`) and changes nothing.
H. A block keeps its kind. A fragment of another kind under a key already used in this turn
   (`thinking` then `text` on one block index) would emit an invalid stream (a `text.delta`
   inside a thinking group, or a `.done` of the wrong kind): it raises `StreamProtocolError`
   naming the key and both kinds. The adapter must key the new kind as a new block.
I. A tool call's first fragment carries its name (SPEC §2). A call opened before its name is
   known (an Interactions start with only the call's id, a Chat chunk naming the call after the
   one that gave its id) is held: nothing of it is emitted, its fragments are kept, until a
   later fragment brings the name (the first name wins). A call that is done without a name
   never becomes a tool call: `IncompleteStreamError` is raised in place of its group, as the
   provider never sent what the call needs to run (lenient or not: a name cannot be recovered).

What a kind is (its growing field, how fragments join, its empty value, whether it counts as
content) comes from the one table, `modelstream.items`; this module only orders and closes.
(The adapter methods below build each kind's delta as a literal in its `types` shape: they are
the hot path, and `tests/core/test_items.py` checks that every kind joins as the table
says.)

The assembler is sans-IO: `now_ms` is set by whoever feeds it and stamped on each event.
"""

from __future__ import annotations

from typing import Any

from .errors import (
    EmptyResponseError,
    IncompleteStreamError,
    ProviderError,
    StreamProtocolError,
    ToolCallArgumentParseError,
)
from .items import BY_TYPE, EMBEDDING, INLINE_DATA, INLINE_THINKING, TEXT, THINKING, TOOL_CALL, Kind
from .results import StreamMetadata
from .tool_arguments import is_cut_off, parse_strict, recover
from .types import (
    DeltaItem,
    DoneItem,
    Event,
    EventItem,
    Fidelity,
    FinishReason,
    ToolCallDelta,
    Usage,
    unknown_usage,
)


class _Block:
    __slots__ = ("closed", "fidelity", "first", "kind", "parts", "pending", "started")

    def __init__(self, kind: Kind, first: dict[str, Any]) -> None:
        self.kind = kind
        self.first = first  # the first fragment's fixed fields (name, tool_call_id, mime_type)
        self.parts: list[Any] = []
        self.fidelity: Fidelity | None = None
        self.pending: list[DeltaItem] = []  # fragments held while an earlier block is open
        self.started = False  # a delta of this block has been emitted
        self.closed = False


class ItemAssembler:
    """Owns the grammar: see the module docstring for the rules A–I."""

    def __init__(self, metadata: StreamMetadata, *, lenient_tool_arguments: bool = False) -> None:
        self.metadata = metadata
        self.lenient_tool_arguments = lenient_tool_arguments
        self.now_ms = 0
        self.usage: Usage | None = None
        self.final_usage: Usage | None = None  # what the stop event carried
        self.finished = False  # a finish reason was received
        self.stopped = False  # the stop event was emitted
        self._blocks: dict[Any, _Block] = {}  # open blocks, in order of first appearance
        self._head: _Block | None = None
        self._kinds: dict[Any, Kind] = {}  # the kind of every key opened this turn (rule H)
        self._out: list[Event] = []
        self.done_items: list[DoneItem] = []  # every `.done` emitted, in order
        self._tool_calls = 0

    # --- what adapters call ---------------------------------------------------------------

    def text(self, key: Any, text: str, fidelity: Fidelity | None = None) -> None:
        block = self._blocks.get(key)
        if block is None:
            if self._after_stop():
                return
            if not text and not fidelity:
                return  # rule D
            block = self._open(key, TEXT, {})
        elif block.kind is not TEXT:
            self._kind_changed(key, block.kind, TEXT)
        if fidelity:
            self._merge_fidelity(block, fidelity)
        if text:
            block.parts.append(text)
            if block is self._head:  # the hot path, inlined: one event per text fragment
                block.started = True
                self._out.append(delta_event({"type": "text.delta", "text": text}, self.now_ms))
            else:
                block.pending.append({"type": "text.delta", "text": text})

    def thinking(self, key: Any, thinking: str, fidelity: Fidelity | None = None) -> None:
        block = self._blocks.get(key)
        if block is None:
            if self._after_stop():
                return
            if not thinking and not fidelity:
                return  # rule D
            block = self._open(key, THINKING, {})
        elif block.kind is not THINKING:
            self._kind_changed(key, block.kind, THINKING)
        if fidelity:
            self._merge_fidelity(block, fidelity)
        if thinking:
            block.parts.append(thinking)
            self._delta(block, {"type": "thinking.delta", "thinking": thinking})

    def tool_call(
        self,
        key: Any,
        arguments: str,
        *,
        name: str = "",
        tool_call_id: str = "",
        fidelity: Fidelity | None = None,
    ) -> None:
        """A fragment of a call's raw argument JSON; `name`/`tool_call_id` on the first (a name
        may come on a later one when the provider names the call late: rule I)."""
        block = self._blocks.get(key)
        if block is None:
            if self._after_stop():
                return
            self._tool_calls += 1
            if not tool_call_id:
                tool_call_id = f"call_{self._tool_calls}"
                self.metadata.diagnostics.append(
                    {"type": "tool_call_id_synthesized", "tool_call_id": tool_call_id, "name": name}
                )
            block = self._open(key, TOOL_CALL, {"tool_call_id": tool_call_id, "name": name})
            if fidelity:
                self._merge_fidelity(block, fidelity)
            block.parts.append(arguments)
            first: ToolCallDelta = {
                "type": "tool_call.delta",
                "tool_call_id": tool_call_id,
                "name": name,
                "arguments": arguments,
            }
            if name:
                self._delta(block, first)
            else:
                block.pending.append(first)  # rule I: held until the name arrives
            return
        if block.kind is not TOOL_CALL:
            self._kind_changed(key, block.kind, TOOL_CALL)
        if fidelity:
            self._merge_fidelity(block, fidelity)
        if arguments:
            block.parts.append(arguments)
            item: ToolCallDelta = {
                "type": "tool_call.delta",
                "tool_call_id": "",
                "name": "",
                "arguments": arguments,
            }
            # the hot path, inlined: one event per argument fragment. A tool call has started
            # exactly when it is the head and named (rules A, I).
            if block.started:
                self._out.append(delta_event(item, self.now_ms))
            else:
                block.pending.append(item)
        if name and not block.first["name"]:
            self._named(block, name)

    def inline_data(
        self, key: Any, data: bytes, mime_type: str, fidelity: Fidelity | None = None
    ) -> None:
        self._binary(key, INLINE_DATA, data, mime_type, fidelity)

    def inline_thinking(
        self, key: Any, data: bytes, mime_type: str, fidelity: Fidelity | None = None
    ) -> None:
        self._binary(key, INLINE_THINKING, data, mime_type, fidelity)

    def embedding(self, key: Any, vector: list[float]) -> None:
        """A whole vector: one delta, then its `.done`."""
        if self._after_stop():
            return
        block = self._open(key, EMBEDDING, {})
        block.parts.append(vector)
        self._delta(block, {"type": "embedding.delta", "embedding": vector})
        self.end_item(key)

    def end_item(self, key: Any) -> None:
        """The provider signalled the end of this block (rule B)."""
        block = self._blocks.get(key)
        if block is None:
            return  # a block that opened nothing (rule D), or already closed
        block.closed = True
        if block is self._head:
            self._advance()

    def usage_update(self, usage: Usage) -> None:
        """The turn's usage so far, already merged by the adapter; the latest report wins."""
        self.usage = usage

    def finish(self, finish_reason: FinishReason, raw_reason: str | None) -> None:
        """The turn's end-of-turn signal: every open block is done (rule B)."""
        if self.stopped:
            self.skip("after_stop")
            return
        self.finished = True
        self.metadata.finish_reason = finish_reason
        self.metadata.raw_finish_reason = raw_reason
        self._close_all()

    def terminal(self) -> None:
        """The provider's terminal event (`[DONE]`, `message_stop`, `response.completed`)."""
        if self.stopped:
            return
        if not self.finished:
            self._fail_waiting_call()
            raise IncompleteStreamError("finish reason", "the terminal event came without one")
        self._stop()

    def end_of_input(self) -> None:
        """The body ended. Emits `stop` if the turn finished (rule F), else raises."""
        if self.stopped:
            return
        if not self.finished:
            self._fail_waiting_call()
            raise IncompleteStreamError("finish reason", "the body ended first")
        self._stop()

    def provider_error(self, error: ProviderError) -> None:
        if self._after_stop():
            return
        raise error

    def skip(self, kind: str) -> None:
        """Something with no item in the grammar (SPEC §3): counted, never fatal."""
        skipped = self.metadata.skipped
        skipped[kind] = skipped.get(kind, 0) + 1

    def diagnostic(self, entry: dict[str, Any]) -> None:
        self.metadata.diagnostics.append(entry)

    def has_open(self, key: Any) -> bool:
        return key in self._blocks

    def open_item(self) -> EventItem | None:
        """The item being streamed, its growing field joined so far (fidelity held included)."""
        block = self._head
        if block is None or not block.started:
            return None
        kind = block.kind
        item: Any = {"type": kind.delta_type, **block.first, kind.growing: kind.joined(block.parts)}
        if block.fidelity is not None:
            item["fidelity"] = dict(block.fidelity)
        return item  # type: ignore[no-any-return]

    def drain(self) -> list[Event]:
        """Events produced since the last drain."""
        out, self._out = self._out, []
        return out

    # --- internals ------------------------------------------------------------------------

    def _after_stop(self) -> bool:
        """Rule G: after `stop`, whatever arrives is counted and changes nothing."""
        if self.stopped:
            self.skip("after_stop")
        return self.stopped

    def _open(self, key: Any, kind: Kind, first: dict[str, Any]) -> _Block:
        seen = self._kinds.get(key)
        if seen is not None:
            if seen is not kind:
                self._kind_changed(key, seen, kind)
            raise StreamProtocolError("B", f"block {key!r} received a fragment after it was done")
        block = _Block(kind, first)
        self._blocks[key] = block
        self._kinds[key] = kind
        if self._head is None:
            self._head = block
        return block

    def _named(self, block: _Block, name: str) -> None:
        """Rule I: the name of a held tool call arrived; it goes on the call's first fragment."""
        block.first["name"] = name
        block.pending[0]["name"] = name  # type: ignore[typeddict-unknown-key]
        if block is self._head:
            self._release(block)

    def _kind_changed(self, key: Any, was: Kind, now: Kind) -> None:
        """Rule H: one key, one kind."""
        raise StreamProtocolError(
            "H",
            f"block {key!r} changed kind from {was.name} to {now.name}: "
            "a new kind needs a new block key",
        )

    def _binary(
        self, key: Any, kind: Kind, data: bytes, mime_type: str, fidelity: Fidelity | None
    ) -> None:
        block = self._blocks.get(key)
        if block is None:
            if self._after_stop():
                return
            if not data and not fidelity:
                return
            block = self._open(key, kind, {"mime_type": mime_type})
        elif block.kind is not kind:
            self._kind_changed(key, block.kind, kind)
        if fidelity:
            self._merge_fidelity(block, fidelity)
        if data:
            block.parts.append(data)
            item: Any = {"type": kind.delta_type, "data": data, "mime_type": mime_type}
            self._delta(block, item)

    def _merge_fidelity(self, block: _Block, fidelity: Fidelity) -> None:
        if block.fidelity is None:
            block.fidelity = dict(fidelity)
        else:
            block.fidelity.update(fidelity)

    def _delta(self, block: _Block, item: DeltaItem) -> None:
        if block is self._head:
            block.started = True
            self._emit(item)
        else:
            block.pending.append(item)

    def _emit(self, item: Any) -> None:
        self._out.append(delta_event(item, self.now_ms))

    def _advance(self) -> None:
        """Emit `.done` for closed blocks at the head of the queue; release the next one."""
        while self._head is not None and self._head.closed:
            block = self._head
            if not self._finish_block(block):  # may raise: the block then stays the open item
                return  # a call cut mid-arguments waits for the finish reason (rule E)
            del self._blocks[next(iter(self._blocks))]
            self._head = None
            if self._blocks:
                head = self._blocks[next(iter(self._blocks))]
                self._head = head
                self._release(head)

    def _release(self, block: _Block) -> None:
        """Emit the fragments the new head held (rule A), unless it is a call still waiting for
        its name (rule I)."""
        if block.pending and (block.kind is not TOOL_CALL or block.first["name"]):
            block.started = True
            for item in block.pending:
                self._emit(item)
            block.pending = []

    def _fail_waiting_call(self) -> None:
        """A call that waited for a finish reason that never came fails as malformed, as it
        would have without waiting (rule E)."""
        block = self._head
        if block is not None and block.closed and block.kind.parses_arguments:
            self._tool_arguments(block, may_wait=False)

    def _close_all(self) -> None:
        for block in self._blocks.values():
            block.closed = True
        self._advance()

    def _finish_block(self, block: _Block) -> bool:
        """Emit the block's `.done`; False when a tool call must wait for the finish reason."""
        kind = block.kind
        if kind is TOOL_CALL and not block.first["name"]:  # rule I
            call_id = block.first["tool_call_id"]
            raise IncompleteStreamError(
                "tool call name",
                f"tool call {call_id!r} ended without one, so it cannot be run",
            )
        arguments = None
        if kind.parses_arguments:
            arguments = self._tool_arguments(block, may_wait=not self.finished)
            if arguments is None:
                return False
        growing = kind.growing
        fidelity = block.fidelity
        if fidelity is not None or not block.started:
            # rule C: the one fragment that carries the fidelity, with an empty growing field
            # (a block that never started shows its first fragment's fixed fields here)
            fragment: Any = {"type": kind.delta_type, **block.first, growing: kind.empty}
            if kind.fixed_first_only and block.started:
                fragment.update(dict.fromkeys(kind.fixed, ""))
            if fidelity is not None:
                fragment["fidelity"] = fidelity
            self._emit(fragment)
        done: Any = {"type": kind.done_type, **block.first}
        done[growing] = kind.joined(block.parts) if arguments is None else arguments
        if fidelity is not None:
            done["fidelity"] = fidelity
        self.done_items.append(done)
        self._emit(done)
        return True

    def _tool_arguments(self, block: _Block, *, may_wait: bool) -> dict[str, Any] | None:
        """The call's arguments object; None while cut-off arguments wait for the finish."""
        raw = block.kind.joined(block.parts)
        arguments, why = parse_strict(raw)
        if arguments is not None:
            return arguments
        name, call_id = block.first["name"], block.first["tool_call_id"]
        if not self.lenient_tool_arguments:
            cut_off = is_cut_off(raw)
            if cut_off and may_wait:
                return None
            cut_off = cut_off and self.metadata.finish_reason == "length"
            raise ToolCallArgumentParseError(
                name=name, tool_call_id=call_id, raw=raw, reason=why, cut_off=cut_off
            )
        recovered, mode = recover(raw)
        self.metadata.diagnostics.append(
            {
                "type": "tool_arguments_recovered",
                "mode": mode,
                "tool_call_id": call_id,
                "name": name,
                "raw_length": len(raw),
            }
        )
        return recovered

    def _stop(self) -> None:
        self._close_all()
        reason = self.metadata.finish_reason or "unknown"
        kinds = [item["type"] for item in self.done_items]
        if reason == "stop" and TOOL_CALL.done_type in kinds:
            reason = "tool_call"
            self.metadata.finish_reason = reason
        usage = self.usage
        if usage is None:
            usage = unknown_usage()
            self.metadata.diagnostics.append({"type": "usage_missing"})
        if not any(BY_TYPE[k][0].content for k in kinds):  # thinking only, or nothing
            raise EmptyResponseError(finish_reason=reason, usage=usage, thinking_only=bool(kinds))
        self.stopped = True
        self.final_usage = usage
        self._out.append(
            {
                "role": "assistant",
                "event_type": "stop",
                "content_items": [],
                "usage_metadata": usage,
                "finish_reason": reason,
                "created_at": self.now_ms,
            }
        )


def delta_event(item: Any, now_ms: int) -> Event:
    """A `delta` event carrying one item (SPEC §2 rule 1)."""
    return {
        "role": "assistant",
        "event_type": "delta",
        "content_items": [item],
        "usage_metadata": None,
        "finish_reason": None,
        "created_at": now_ms,
    }
