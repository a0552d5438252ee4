"""The data of the protocol (SPEC §1–2) as plain typed dicts.

Events, items and messages are exactly the SPEC JSON objects, so they serialize without a
translation layer (see `modelstream.jsonwire` for bytes-as-base64).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NotRequired, TypedDict, get_args

Role = Literal["user", "assistant"]
EventType = Literal["delta", "stop"]
FinishReason = Literal["stop", "length", "tool_call", "unknown"]
ItemKind = Literal["text", "thinking", "tool_call", "inline_data", "inline_thinking", "embedding"]
ThinkingLevel = Literal["none", "low", "medium", "high", "xhigh", "max"]
ToolChoice = Literal["auto", "required", "none"] | list[str]

FINISH_REASONS: tuple[FinishReason, ...] = ("stop", "length", "tool_call", "unknown")
# The stream kinds in SPEC order; what each one means is `modelstream.items` (the one table).
ITEM_KINDS: tuple[ItemKind, ...] = get_args(ItemKind)

# Opaque provider data that must go back unchanged on the next turn (SPEC §2 rule 6).
Fidelity = dict[str, Any]


class Usage(TypedDict):
    """Token usage; None means unknown, never zero (SPEC §2)."""

    cached_tokens: int | None
    prompt_tokens: int | None
    thoughts_tokens: int | None
    response_tokens: int | None


# --- delta items: one fragment of a growing item -------------------------------------------


class TextDelta(TypedDict):
    type: Literal["text.delta"]
    text: str
    fidelity: NotRequired[Fidelity]


class ThinkingDelta(TypedDict):
    type: Literal["thinking.delta"]
    thinking: str
    fidelity: NotRequired[Fidelity]


class ToolCallDelta(TypedDict):
    type: Literal["tool_call.delta"]
    tool_call_id: str  # set on the first fragment of a call only, "" after
    name: str  # set on the first fragment of a call only, "" after
    arguments: str  # a raw JSON text fragment
    fidelity: NotRequired[Fidelity]


class InlineDataDelta(TypedDict):
    type: Literal["inline_data.delta"]
    data: bytes
    mime_type: str
    fidelity: NotRequired[Fidelity]


class InlineThinkingDelta(TypedDict):
    type: Literal["inline_thinking.delta"]
    data: bytes
    mime_type: str
    fidelity: NotRequired[Fidelity]


class EmbeddingDelta(TypedDict):
    type: Literal["embedding.delta"]
    embedding: list[float]


# --- done items: a finished item, as it is stored in a message ------------------------------


class TextDone(TypedDict):
    type: Literal["text.done"]
    text: str
    fidelity: NotRequired[Fidelity]


class ThinkingDone(TypedDict):
    type: Literal["thinking.done"]
    thinking: str
    fidelity: NotRequired[Fidelity]


class ToolCallDone(TypedDict):
    type: Literal["tool_call.done"]
    tool_call_id: str
    name: str
    arguments: dict[str, Any]
    fidelity: NotRequired[Fidelity]


class InlineDataDone(TypedDict):
    type: Literal["inline_data.done"]
    data: bytes
    mime_type: str
    fidelity: NotRequired[Fidelity]


class InlineThinkingDone(TypedDict):
    type: Literal["inline_thinking.done"]
    data: bytes
    mime_type: str
    fidelity: NotRequired[Fidelity]


class EmbeddingDone(TypedDict):
    type: Literal["embedding.done"]
    embedding: list[float]


class ImageUrlDone(TypedDict):
    """User-only item: an http(s) or data: URL."""

    type: Literal["image_url.done"]
    image_url: str


class ToolResultDone(TypedDict):
    """User-only item: the result of a tool call."""

    type: Literal["tool_result.done"]
    tool_call_id: str
    text: str
    images: NotRequired[list[str]]


DeltaItem = (
    TextDelta
    | ThinkingDelta
    | ToolCallDelta
    | InlineDataDelta
    | InlineThinkingDelta
    | EmbeddingDelta
)
DoneItem = (
    TextDone
    | ThinkingDone
    | ToolCallDone
    | InlineDataDone
    | InlineThinkingDone
    | EmbeddingDone
    | ImageUrlDone
    | ToolResultDone
)
EventItem = DeltaItem | DoneItem


class Event(TypedDict):
    """One stream event (SPEC §2): a `delta` with exactly one item, or the final `stop`."""

    role: Literal["assistant"]
    event_type: EventType
    content_items: list[EventItem]
    usage_metadata: Usage | None
    finish_reason: FinishReason | None
    created_at: int


class Message(TypedDict):
    """A conversation message (SPEC §1)."""

    role: Role
    content_items: list[DoneItem]
    usage_metadata: NotRequired[Usage | None]
    finish_reason: NotRequired[FinishReason | None]
    created_at: NotRequired[int]


class ToolSchema(TypedDict):
    name: str
    description: NotRequired[str]
    parameters: NotRequired[dict[str, Any]]  # a JSON schema
    strict: NotRequired[bool]  # ask the provider to enforce the schema, where it can


class ImageOutput(TypedDict, total=False):
    """`Config.image_output`: ask for generated images (docs/requests-*.md map each key)."""

    aspect_ratio: str  # "1:1", "16:9", ...
    size: str  # Gemini "1K" / "2K" / "4K"; OpenAI "1024x1024", "1536x1024", "1024x1536", "auto"


class SpeechOutput(TypedDict, total=False):
    """`Config.speech_output`: ask for a spoken answer (docs/requests-*.md map each key)."""

    voice: str  # a prebuilt voice's name ("Kore", "alloy")
    language: str  # a BCP-47 code ("en-US"), where the protocol takes one
    speakers: dict[str, str]  # speaker name in the prompt -> voice (Gemini multi-speaker)
    format: str  # the audio format, where the protocol takes one


class Config(TypedDict, total=False):
    """Request configuration shared by every protocol (encoded per provider)."""

    system_prompt: str
    max_tokens: int
    temperature: float
    top_p: float
    stop: list[str]
    seed: int
    tools: list[ToolSchema | Callable[..., Any]]  # a function is described (modelstream.tool)
    tool_choice: ToolChoice
    parallel_tool_calls: bool
    response_format: dict[str, Any]
    thinking_level: ThinkingLevel
    thinking_summary: bool
    prompt_caching: bool
    image_output: ImageOutput | bool
    speech_output: SpeechOutput | bool
    extra_body: dict[str, Any]
    trace_id: str


def unknown_usage() -> Usage:
    """Usage for a turn whose provider reported none: every field unknown."""
    return {
        "cached_tokens": None,
        "prompt_tokens": None,
        "thoughts_tokens": None,
        "response_tokens": None,
    }
