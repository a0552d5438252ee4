"""Consumer-side accumulation: events in, a snapshot at any moment, final vs partial (SPEC §5).

Only a `stop` event makes a final message. Every other end (an error, a cancellation, a body that
just stopped) makes a `PartialResponse` that says why, with the items received and the item that
was still open. The accumulator trusts event order; check untrusted streams with
`GrammarChecker` first.
"""

from __future__ import annotations

from typing import Any

from .items import BY_TYPE, Kind
from .results import (
    AssistantMessage,
    FinalResponse,
    PartialResponse,
    PartialStatus,
    Pricing,
    StreamMetadata,
)
from .types import DoneItem, Event, EventItem, FinishReason, Message, Usage


class Accumulator:
    """Apply events in order; read `snapshot()`, `final()` or `partial()` at any time."""

    def __init__(self, *, pricing: Pricing | None = None) -> None:
        self.pricing = pricing  # gives the results a cost (the catalogue's `turn_cost`)
        self.items: list[DoneItem] = []
        self.usage: Usage | None = None
        self.finish_reason: FinishReason | None = None
        self.stopped = False
        self.created_at: int | None = None
        self._open: dict[str, Any] | None = None  # first fragment of the open group
        self._kind: Kind | None = None  # its kind
        self._parts: list[Any] = []
        self._fidelity: Any = None

    def apply(self, event: Event) -> None:
        if self.created_at is None:
            self.created_at = event["created_at"]
        if event["event_type"] == "stop":
            self.usage = event["usage_metadata"]
            self.finish_reason = event["finish_reason"]
            self.stopped = True
            return
        for item in event["content_items"]:
            kind, done = BY_TYPE[item["type"]]
            if done:
                self.items.append(item)  # type: ignore[arg-type]
                self._open = self._kind = None
                self._parts = []
                self._fidelity = None
                continue
            if self._open is None:
                self._open, self._kind = dict(item), kind
            self._parts.append(item[kind.growing])  # type: ignore[literal-required]
            fidelity = item.get("fidelity")
            if fidelity is not None:
                self._fidelity = fidelity

    def open_item(self) -> EventItem | None:
        """The growing item so far, in its delta shape with the growing field joined."""
        kind = self._kind
        if self._open is None or kind is None:
            return None
        item = dict(self._open)
        item[kind.growing] = kind.joined(self._parts)
        if self._fidelity is not None:
            item["fidelity"] = self._fidelity
        return item  # type: ignore[return-value]

    def snapshot(self) -> Message:
        """The assistant message as it stands: done items plus the open item's content so far."""
        items: list[Any] = list(self.items)
        open_item = self.open_item()
        if open_item is not None:
            items.append(open_item)
        message: Message = {
            "role": "assistant",
            "content_items": items,
            "usage_metadata": self.usage,
            "finish_reason": self.finish_reason,
        }
        if self.created_at is not None:
            message["created_at"] = self.created_at
        return message

    def final(self, metadata: StreamMetadata) -> FinalResponse:
        """The final message; only after `stop` (anything else is a partial)."""
        if not self.stopped:
            raise ValueError("the stream has not stopped: use partial() for what was received")
        message = AssistantMessage(
            role="assistant",
            content_items=list(self.items),
            usage_metadata=self.usage,
            finish_reason=self.finish_reason,
        )
        if self.created_at is not None:
            message["created_at"] = self.created_at
        return FinalResponse(message=message, metadata=metadata, pricing=self.pricing)

    def partial(
        self,
        status: PartialStatus,
        reason: str,
        metadata: StreamMetadata,
        usage: Usage | None = None,
    ) -> PartialResponse:
        return PartialResponse(
            status=status,
            reason=reason,
            items=list(self.items),
            open_item=self.open_item(),
            usage=usage if usage is not None else self.usage,
            metadata=metadata,
            pricing=self.pricing,
        )
