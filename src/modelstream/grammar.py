"""An incremental checker for the event grammar (SPEC §2), for our tests and for yours.

Feed events one at a time; the first one that breaks a rule raises `GrammarViolation` naming
the rule. Call `end()` when the stream finished without an error: it checks `stop` came.

Rules checked (numbers are SPEC §2's):
  shape    every event is an assistant `delta` or `stop` with an int `created_at`
  1        a delta event carries exactly one item and null usage / finish reason
  2        groups never interleave: `K.delta+ K.done`, one group at a time; the first
           fragment of a tool call carries its id and name, no later fragment does
  3        a `.done` equals its group's first fragment with the growing field joined
  4        `stop` comes exactly once, last, with no items, usage and a finish reason
  6        fidelity rides on at most one fragment of a group; the `.done` carries the same;
           it holds no `_` bookkeeping key and never `item_id` (MMSP strips it)
"""

from __future__ import annotations

from typing import Any

from .errors import GrammarViolation
from .items import STREAM_KINDS, Kind
from .tool_arguments import parse_strict
from .types import FINISH_REASONS, Event

_USAGE_FIELDS = ("cached_tokens", "prompt_tokens", "thoughts_tokens", "response_tokens")


class GrammarChecker:
    def __init__(self) -> None:
        self.index = -1
        self.stopped = False
        self._kind: Kind | None = None  # kind of the open group
        self._first: dict[str, Any] | None = None
        self._parts: list[Any] = []
        self._fidelity: Any = None

    def feed(self, event: Event) -> None:
        self.index += 1
        if not isinstance(event, dict):
            self._fail("shape", f"an event must be a JSON object, got {type(event).__name__}")
        if self.stopped:
            self._fail("4", "an event came after stop")
        if event.get("role") != "assistant":
            self._fail("shape", f"role must be 'assistant', got {event.get('role')!r}")
        created_at = event.get("created_at")
        if not isinstance(created_at, int) or isinstance(created_at, bool):
            self._fail("shape", "created_at must be an int (Unix ms)")
        items = event.get("content_items")
        if not isinstance(items, list):
            self._fail("shape", "content_items must be a list")
        kind = event.get("event_type")
        if kind == "stop":
            self._stop(event, items)
        elif kind == "delta":
            if len(items) != 1:
                self._fail("1", f"a delta event carries exactly one item, got {len(items)}")
            if event.get("usage_metadata") is not None or event.get("finish_reason") is not None:
                self._fail("1", "a delta event has null usage_metadata and finish_reason")
            self._item(items[0])
        else:
            self._fail("shape", f"event_type must be 'delta' or 'stop', got {kind!r}")

    def end(self) -> None:
        """The stream ended without an exception: it must have stopped."""
        if not self.stopped:
            self._fail("4", "the stream ended without a stop event")

    def _stop(self, event: Event, items: list[Any]) -> None:
        if items:
            self._fail("4", "stop carries no items")
        if self._kind is not None:
            self._fail("2", f"stop came while a {self._kind.name} group was open (no .done)")
        if event.get("finish_reason") not in FINISH_REASONS:
            self._fail("4", f"stop needs a finish_reason in {FINISH_REASONS}")
        usage: Any = event.get("usage_metadata")
        if not isinstance(usage, dict) or set(usage) != set(_USAGE_FIELDS):
            self._fail("4", f"stop needs usage_metadata with exactly {_USAGE_FIELDS}")
        for name in _USAGE_FIELDS:
            value = usage[name]
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                self._fail("4", f"usage {name} must be an int or null, got {value!r}")
        self.stopped = True

    def _item(self, item: Any) -> None:
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            self._fail("shape", "an item is an object with a string 'type'")
        name, _, phase = item["type"].partition(".")
        kind = STREAM_KINDS.get(name)
        if kind is None or phase not in ("delta", "done"):
            self._fail("shape", f"unknown item type {item['type']!r} in a stream")
            return
        fidelity = item.get("fidelity")
        if fidelity is not None:
            if not isinstance(fidelity, dict):
                self._fail("6", "fidelity is an object")
            hidden = [k for k in fidelity if isinstance(k, str) and k.startswith("_")]
            if hidden:
                self._fail("6", f"fidelity holds internal bookkeeping keys {hidden}")
            if "item_id" in fidelity:  # MMSP strips it: a value stored there would be lost
                self._fail("6", "fidelity uses the key 'item_id', which MMSP reserves (use 'id')")
        growing = kind.growing
        if growing not in item:
            self._fail("shape", f"{item['type']} needs its {growing!r} field")
        if phase == "delta":
            self._delta(kind, item, fidelity)
        else:
            self._done(kind, item, fidelity)

    def _delta(self, kind: Kind, item: dict[str, Any], fidelity: Any) -> None:
        if self._kind is None:
            self._kind, self._first, self._parts, self._fidelity = kind, item, [], None
            if kind.fixed_first_only:  # a tool call's id and name (SPEC §2, delta items)
                for name in kind.fixed:
                    if not item.get(name):
                        self._fail("2", f"the first {kind.delta_type} carries the {name}")
        elif kind is not self._kind:
            self._fail("2", f"a {kind.delta_type} came while a {self._kind.name} group was open")
        elif kind.fixed_first_only and any(item.get(name) for name in kind.fixed):
            self._fail("2", f"{' and '.join(kind.fixed)} are set on the first fragment only")
        if fidelity is not None:
            if self._fidelity is not None:
                self._fail("6", "fidelity rides on at most one fragment of a group")
            self._fidelity = fidelity
        self._parts.append(item[kind.growing])

    def _done(self, kind: Kind, item: dict[str, Any], fidelity: Any) -> None:
        first = self._first
        if self._kind is None or first is None:
            self._fail("2", f"{kind.done_type} came with no {kind.delta_type} before it")
            return
        if kind is not self._kind:
            self._fail("2", f"{kind.done_type} closed a {self._kind.name} group")
        for name in kind.fixed:
            if item.get(name) != first.get(name):
                self._fail("3", f"{name} of the .done differs from the first fragment")
        growing = kind.growing
        expected = self._joined(kind)
        if item[growing] != expected:
            self._fail("3", f"{kind.done_type} {growing} is not the join of its fragments")
        if fidelity != self._fidelity:
            self._fail("6", "the .done fidelity differs from the fragment that carried it")
        self._kind, self._first, self._parts, self._fidelity = None, None, [], None

    def _joined(self, kind: Kind) -> Any:
        joined = kind.joined(self._parts)
        if not kind.parses_arguments:
            return joined
        arguments, _ = parse_strict(joined)
        # Text that is not a JSON object ("[1]" as much as "{broken") ends a strict stream in
        # ToolCallArgumentParseError; a lenient one recovers some object, so any object matches.
        return arguments if arguments is not None else _Recovered()

    def _fail(self, rule: str, detail: str) -> Any:
        raise GrammarViolation(rule, detail, self.index)


class _Recovered:
    """Stands for arguments a lenient stream recovered: any JSON object matches."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, dict)

    __hash__ = None  # type: ignore[assignment]


def check_events(events: list[Event]) -> None:
    """Check a whole stream that ended without an error."""
    checker = GrammarChecker()
    for event in events:
        checker.feed(event)
    checker.end()
