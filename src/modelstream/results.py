"""What a finished stream leaves behind: a final message, or a partial that says why (SPEC §5)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .types import DoneItem, EventItem, FinishReason, Usage

if TYPE_CHECKING:
    from decimal import Decimal  # imported when a cost is first summed: not at start-up

PartialStatus = Literal["cancelled", "failed", "incomplete"]
_PARTS = ("input", "cached_input", "cache_write", "reasoning", "output")


@dataclass(frozen=True)
class TurnCost:
    """Each part's cost in `currency` (None: unknown), and their total. Computed by the model
    catalogue (`modelstream.catalogue.cost`), which prices results; a value here."""

    currency: str
    input: Decimal | None
    cached_input: Decimal | None
    cache_write: Decimal | None
    reasoning: Decimal | None
    output: Decimal | None
    model: str = ""  # the catalogue entry that priced it

    @property
    def total(self) -> Decimal | None:
        from decimal import Decimal

        parts = [getattr(self, name) for name in _PARTS]
        if any(part is None for part in parts):
            return None
        return sum(parts, Decimal(0))

    @property
    def known(self) -> bool:
        return self.total is not None

    def as_json(self) -> dict[str, Any]:
        """Decimal strings (exact), None for unknown."""
        total = self.total
        out: dict[str, Any] = {"currency": self.currency, "model": self.model}
        out["total"] = None if total is None else str(total)
        for name in _PARTS:
            value = getattr(self, name)
            out[name] = None if value is None else str(value)
        return out


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


# What prices a turn from its usage and metadata (the catalogue's `turn_cost`).
Pricing = Callable[[Usage | None, StreamMetadata], TurnCost | None]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call of a final message: its id (for the result), name and parsed arguments."""

    id: str
    name: str
    arguments: dict[str, Any]


class AssistantMessage(dict[str, Any]):
    """The final assistant message: the SPEC JSON object itself (a dict, so `message["..."]`,
    `==`, JSON and storage are unchanged), with the reads SDK users reach for as properties."""

    __slots__ = ("_parsed",)

    @property
    def parsed(self) -> Any:
        """The answer read into the `response_format` type asked for (a pydantic model, a
        dataclass, a TypedDict's dict, a JSON schema's value); None when none was asked for."""
        return getattr(self, "_parsed", None)

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

    # what prices the turn: the catalogue's `turn_cost` for a client's turns, given to the
    # decoder that made the result (`StreamDecoder(pricing=...)`); None: no cost
    pricing: Pricing | None = field(default=None, repr=False, compare=False)

    @property
    def cost(self) -> TurnCost | None:
        """What the turn cost by the model catalogue (docs/models.md), computed on first use by
        `pricing`; None when the catalogue has no price for the model (or the result was made
        without a pricing), a total of None when a part is unknown."""
        return None if self.pricing is None else self.pricing(self.usage, self.metadata)


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

    pricing: Pricing | None = field(default=None, repr=False, compare=False)

    @property
    def cost(self) -> TurnCost | None:
        """What the partial turn cost, from the usage received (None when unknown)."""
        return None if self.pricing is None else self.pricing(self.usage, self.metadata)

    def _joined(self, kind: str) -> str:
        items: list[Any] = [*self.items, self.open_item] if self.open_item else self.items
        return "".join(
            item[kind] for item in items if item["type"] in (f"{kind}.done", f"{kind}.delta")
        )
