"""A loopback upstream emulator for tests: real HTTP on 127.0.0.1, the providers' wire formats.

    from modelstream.testing import Emulator, Reply, Turn

    with Emulator() as emu:
        emu.queue(Reply.turn(Turn.text("Hello!")))
        ...  # point a client at emu.base_url("openai-chat")
        assert emu.requests[0].json["model"] == "gpt-4o"

See docs/testing.md.
"""

from .emulation import StreamError
from .render import embedding_for, error_body, render, render_frames
from .replies import Reply
from .server import Emulator, RecordedRequest
from .turns import Embedding, Media, Text, Thinking, ToolCall, Turn, TurnItem

__all__ = [
    "Embedding",
    "Emulator",
    "Media",
    "RecordedRequest",
    "Reply",
    "StreamError",
    "Text",
    "Thinking",
    "ToolCall",
    "Turn",
    "TurnItem",
    "embedding_for",
    "error_body",
    "render",
    "render_frames",
]
