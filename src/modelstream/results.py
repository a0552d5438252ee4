"""What a finished stream leaves behind: a final message, or a partial that says why (SPEC §5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .types import DoneItem, EventItem, FinishReason, Message, Usage

PartialStatus = Literal["cancelled", "failed", "incomplete"]


@dataclass
class StreamMetadata:
    """Facts about a stream that are not part of the event grammar."""

    protocol: str
    provider: str | None = None
    model: str | None = None
    response_id: str | None = None
    raw_finish_reason: str | None = None
    finish_reason: FinishReason | None = None
    # Notes on anything recovered or missing, e.g. {"type": "usage_missing"} or
    # {"type": "tool_arguments_recovered", "mode": "repaired", ...}.
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    # Frames, events and parts with no item in the grammar, counted by kind (SPEC §3).
    skipped: dict[str, int] = field(default_factory=dict)
    # Frames that were not JSON and numbered events that never arrived, skipped because the
    # decoder was told to be lenient (`lenient_frames`). Not zero: content may be missing from
    # the turn even when it is final. (Strict decoding ends such a turn as incomplete.)
    lost_frames: int = 0
    # Filled by the IO shells (the sans-IO core has no clock): ttfb_ms, ttfe_ms, total_ms.
    timings: dict[str, float] = field(default_factory=dict)

    def count_skipped(self, kind: str, n: int = 1) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + n


@dataclass(frozen=True)
class FinalResponse:
    """A turn that ended with its `stop` event: the assistant message is safe to act on."""

    message: Message
    metadata: StreamMetadata

    status: Literal["final"] = "final"


@dataclass(frozen=True)
class PartialResponse:
    """A turn that did not finish. Never act on its tool calls."""

    status: PartialStatus
    reason: str
    items: list[DoneItem]
    # The item that was still growing, in its delta shape with the growing field joined so far
    # (tool call arguments stay a raw string), or None.
    open_item: EventItem | None
    usage: Usage | None
    metadata: StreamMetadata
