"""The emulator's Anthropic Messages stream, on what only it renders: redacted thinking."""

from __future__ import annotations

from modelstream import StreamDecoder
from modelstream.testing import Text, Thinking, Turn, render

ANTHROPIC = "anthropic-messages"


def test_redacted_thinking_decodes_to_an_empty_thinking_item_with_its_data() -> None:
    turn = Turn(items=[Thinking("", redacted="RXRrRUNrZ0lC"), Text("Hello.")])

    decoder = StreamDecoder(ANTHROPIC)
    decoder.feed(render(ANTHROPIC, turn))
    decoder.end()

    thinking, text = decoder.result.message["content_items"]
    assert thinking == {
        "type": "thinking.done",
        "thinking": "",
        "fidelity": {"redacted_thinking": "RXRrRUNrZ0lC"},
    }
    assert text == {"type": "text.done", "text": "Hello."}
