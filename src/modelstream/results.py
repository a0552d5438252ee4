"""What a finished stream leaves behind: a final message, or a partial that says why (SPEC §5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .types import DoneItem, EventItem, FinishReason, Usage

if TYPE_CHECKING:
    from .catalogue.cost import TurnCost

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
    # Input tokens written to the prompt cache, where the provider reports them apart
    # (Anthropic, Bedrock); part of usage's prompt_tokens, priced at the cache-write rate.
    cache_write_tokens: int | None = None
    # When the turn ended (epoch ms), stamped by the IO shell; prices with peak hours need it.
    finished_at_ms: int | None = None

    def count_skipped(self, kind: str, n: int = 1) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + n


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call of a final message: its id (for the result), name and parsed arguments."""

    id: str
    name: str
    arguments: dict[str, Any]


class AssistantMessage(dict[str, Any]):
    """The final assistant message: the SPEC JSON object itself (a dict, so `message["..."]`,
    `==`, JSON and storage are unchanged), with the reads SDK users reach for as properties."""

    __slots__ = ()

    @property
    def text(self) -> str:
        """The text of the answer: every text item, joined."""
        return "".join(
            item["text"] for item in self["content_items"] if item["type"] == "text.done"
        )

    @property
    def thinking(self) -> str:
        """The model's readable thinking (summaries, reasoning text), joined; "" when none."""
        return "".join(
            item["thinking"] for item in self["content_items"] if item["type"] == "thinking.done"
        )

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls the model asks for, in order (arguments already parsed)."""
        return [
            ToolCall(item["tool_call_id"], item["name"], item["arguments"])
            for item in self["content_items"]
            if item["type"] == "tool_call.done"
        ]

    @property
    def usage(self) -> Usage | None:
        """Token usage; a field that is None is unknown, never zero (SPEC §2)."""
        usage: Usage | None = self.get("usage_metadata")
        return usage

    @property
    def finish_reason(self) -> FinishReason | None:
        reason: FinishReason | None = self.get("finish_reason")
        return reason


@dataclass(frozen=True)
class FinalResponse:
    """A turn that ended with its `stop` event: the assistant message is safe to act on."""

    message: AssistantMessage
    metadata: StreamMetadata

    status: Literal["final"] = "final"

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def thinking(self) -> str:
        return self.message.thinking

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.message.tool_calls

    @property
    def usage(self) -> Usage | None:
        return self.message.usage

    @property
    def cost(self) -> TurnCost | None:
        """What the turn cost by the model catalogue (docs/models.md); None when the catalogue
        has no price for the model, a total of None when a part is unknown."""
        from .catalogue.cost import turn_cost  # the catalogue is read on first use

        return turn_cost(self.usage, self.metadata)


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

    @property
    def text(self) -> str:
        """The text received before the turn ended, the unfinished item's included."""
        return self._joined("text")

    @property
    def thinking(self) -> str:
        return self._joined("thinking")

    @property
    def cost(self) -> TurnCost | None:
        """What the partial turn cost, from the usage received (None when unknown)."""
        from .catalogue.cost import turn_cost

        return turn_cost(self.usage, self.metadata)

    def _joined(self, kind: str) -> str:
        items: list[Any] = [*self.items, self.open_item] if self.open_item else self.items
        return "".join(
            item[kind] for item in items if item["type"] in (f"{kind}.done", f"{kind}.delta")
        )
