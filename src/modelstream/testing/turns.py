"""Scripted assistant turns: what the emulator says, independent of any wire format.

A `Turn` is a list of items (text, thinking with an optional signature, tool calls, generated
images and audio, or embedding vectors for the embedding endpoints), a finish reason and usage.
`render` writes it in each protocol's wire format; decoding that with `StreamDecoder` gives the
same items back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..types import Usage

Finish = Literal["stop", "length", "tool_call", "unknown"]


@dataclass(frozen=True)
class Text:
    """Assistant text."""

    text: str


@dataclass(frozen=True)
class Thinking:
    """Reasoning text; `signature` is the opaque token the provider wants back next turn.

    `redacted`: the reasoning was encrypted by the provider's safety systems and only this
    opaque data is sent (Anthropic's `redacted_thinking`, Bedrock's `redactedContent`); the
    thinking text is then empty. Only those two protocols can send it."""

    thinking: str
    signature: str | None = None
    redacted: str | None = None

    def __post_init__(self) -> None:
        if self.redacted is not None and (self.thinking or self.signature is not None):
            raise ValueError("redacted thinking has no text and no signature, only its data")


@dataclass(frozen=True)
class ToolCall:
    """A call of a client tool. `id=None` lets each protocol make one up (Gemini sends none);
    `signature` is a Gemini thought signature on the call's part (other protocols have none)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    signature: str | None = None


@dataclass(frozen=True)
class Embedding:
    """One embedding vector, for the embedding endpoints (one per input)."""

    values: Sequence[float]


@dataclass(frozen=True)
class Media:
    """Generated media: an image (one part, whole) or an audio clip (streamed in pieces),
    for the protocols that answer with them (Gemini, Responses images, Chat audio)."""

    data: bytes
    mime_type: str

    @property
    def kind(self) -> str:
        """ "image" or "audio" (the top-level media type)."""
        return self.mime_type.split("/", 1)[0]


TurnItem = Text | Thinking | ToolCall | Embedding | Media


@dataclass(frozen=True)
class Turn:
    """A scripted assistant turn.

    `finish=None` means "tool_call" when the turn has a tool call, else "stop". `usage=None`
    estimates the counts from the content (about four characters a token).
    """

    items: Sequence[TurnItem] = ()
    finish: Finish | None = None
    usage: Usage | None = None

    @classmethod
    def text(cls, text: str, *, finish: Finish | None = None, usage: Usage | None = None) -> Turn:
        return cls(items=[Text(text)], finish=finish, usage=usage)

    @classmethod
    def tool_call(
        cls,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        id: str | None = None,
        signature: str | None = None,
        finish: Finish | None = None,
        usage: Usage | None = None,
    ) -> Turn:
        call = ToolCall(name, dict(arguments or {}), id=id, signature=signature)
        return cls(items=[call], finish=finish, usage=usage)

    @classmethod
    def embeddings(cls, *vectors: Sequence[float]) -> Turn:
        return cls(items=[Embedding(list(vector)) for vector in vectors])

    @property
    def finish_reason(self) -> Finish:
        """The finish reason this turn ends with (resolving the default)."""
        if self.finish is not None:
            return self.finish
        if any(isinstance(item, ToolCall) for item in self.items):
            return "tool_call"
        return "stop"

    def usage_counts(self, prompt_tokens: int = 10) -> Usage:
        """The usage to report: `usage` as given, else an estimate from the content."""
        if self.usage is not None:
            return self.usage
        thoughts = response = 0
        for item in self.items:
            if isinstance(item, Thinking):
                thoughts += _tokens(item.thinking)
            elif isinstance(item, Text):
                response += _tokens(item.text)
            elif isinstance(item, ToolCall):
                response += _tokens(item.name) + _tokens(repr(item.arguments))
        return {
            "cached_tokens": 0,
            "prompt_tokens": prompt_tokens,
            "thoughts_tokens": thoughts,
            "response_tokens": max(response, 1),
        }


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)
