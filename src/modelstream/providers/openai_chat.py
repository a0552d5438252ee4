"""OpenAI Chat Completions stream decoder (placeholder until implemented)."""

from __future__ import annotations

from typing import Any

from ..sse import SSEFrame


class OpenAIChatDecoder:
    protocol = "openai-chat"
    default_provider = "openai"

    def __init__(self, sink: Any) -> None:
        self.sink = sink

    def on_frame(self, frame: SSEFrame) -> None:
        raise NotImplementedError

    def on_end(self) -> None:
        pass
