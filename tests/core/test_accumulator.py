"""The accumulator: a snapshot at any moment, final only after stop, partial otherwise (SPEC §5)."""

from __future__ import annotations

from typing import Any

import pytest

from modelstream import Accumulator, FinalResponse, ItemAssembler, StreamMetadata

USAGE = {"cached_tokens": 3, "prompt_tokens": 10, "thoughts_tokens": None, "response_tokens": 5}


class Turn:
    """An assembler whose events are applied to an accumulator as they come."""

    def __init__(self) -> None:
        self.metadata = StreamMetadata(protocol="test")
        self.assembler = ItemAssembler(self.metadata)
        self.accumulator = Accumulator()
        self.events: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        call = getattr(self.assembler, name)

        def apply(*args: Any, **kwargs: Any) -> None:
            call(*args, **kwargs)
            for event in self.assembler.drain():
                self.events.append(event)
                self.accumulator.apply(event)

        return apply


def test_a_fresh_accumulator_snapshots_an_empty_assistant_message():
    assert Accumulator().snapshot() == {
        "role": "assistant",
        "content_items": [],
        "usage_metadata": None,
        "finish_reason": None,
    }


def test_a_snapshot_mid_stream_holds_done_items_and_the_open_item_joined():
    turn = Turn()
    turn.text("a", "I'll check ")
    turn.text("a", "the weather.")
    turn.end_item("a")
    turn.tool_call("b", '{"city": ', name="get_weather", tool_call_id="toolu_1")
    turn.tool_call("b", '"Par')
    snapshot = turn.accumulator.snapshot()
    assert snapshot["content_items"] == [
        {"type": "text.done", "text": "I'll check the weather."},
        {
            "type": "tool_call.delta",
            "tool_call_id": "toolu_1",
            "name": "get_weather",
            "arguments": '{"city": "Par',
        },
    ]
    assert snapshot["usage_metadata"] is None
    assert snapshot["finish_reason"] is None


def test_the_open_item_is_none_between_groups():
    turn = Turn()
    turn.text("a", "done")
    turn.end_item("a")
    assert turn.accumulator.open_item() is None
    assert turn.accumulator.items == [{"type": "text.done", "text": "done"}]


def test_the_open_item_carries_fidelity_received_so_far():
    accumulator = Accumulator()
    for item in (
        {"type": "thinking.delta", "thinking": "hmm"},
        {"type": "thinking.delta", "thinking": "", "fidelity": {"signature": "sig"}},
    ):
        accumulator.apply(
            {
                "role": "assistant",
                "event_type": "delta",
                "content_items": [item],
                "usage_metadata": None,
                "finish_reason": None,
                "created_at": 1,
            }
        )
    assert accumulator.open_item() == {
        "type": "thinking.delta",
        "thinking": "hmm",
        "fidelity": {"signature": "sig"},
    }


def test_a_snapshot_is_a_copy_that_later_events_do_not_change():
    turn = Turn()
    turn.text("a", "one")
    before = turn.accumulator.snapshot()
    turn.text("a", " two")
    assert before["content_items"] == [{"type": "text.delta", "text": "one"}]
    assert turn.accumulator.snapshot()["content_items"] == [
        {"type": "text.delta", "text": "one two"}
    ]


def test_final_before_stop_is_refused():
    turn = Turn()
    turn.text("a", "hello")
    turn.finish("stop", "end_turn")  # finished, but stop not emitted yet
    with pytest.raises(ValueError, match="partial"):
        turn.accumulator.final(turn.metadata)


def test_final_after_stop_is_the_assistant_message():
    turn = Turn()
    turn.assembler.now_ms = 1000
    turn.text("a", "Hel")
    turn.text("a", "lo")
    turn.usage_update(USAGE)
    turn.finish("stop", "end_turn")
    turn.assembler.now_ms = 2000
    turn.terminal()
    final = turn.accumulator.final(turn.metadata)
    assert isinstance(final, FinalResponse)
    assert final.status == "final"
    assert final.message == {
        "role": "assistant",
        "content_items": [{"type": "text.done", "text": "Hello"}],
        "usage_metadata": USAGE,
        "finish_reason": "stop",
        "created_at": 1000,
    }
    assert final.metadata is turn.metadata


def test_a_snapshot_after_stop_has_usage_and_finish_reason():
    turn = Turn()
    turn.text("a", "x")
    turn.usage_update(USAGE)
    turn.finish("length", "max_tokens")
    turn.terminal()
    snapshot = turn.accumulator.snapshot()
    assert snapshot["usage_metadata"] == USAGE
    assert snapshot["finish_reason"] == "length"
    assert snapshot["content_items"] == [{"type": "text.done", "text": "x"}]


def test_a_partial_says_its_status_and_reason_and_keeps_the_open_item():
    turn = Turn()
    turn.thinking("t", "Let me think")
    turn.end_item("t")
    turn.text("a", "The answer is")
    partial = turn.accumulator.partial("incomplete", "the body ended first", turn.metadata)
    assert partial.status == "incomplete"
    assert partial.reason == "the body ended first"
    assert partial.items == [{"type": "thinking.done", "thinking": "Let me think"}]
    assert partial.open_item == {"type": "text.delta", "text": "The answer is"}
    assert partial.usage is None
    assert partial.metadata is turn.metadata


def test_a_partial_carries_the_usage_it_is_given():
    turn = Turn()
    turn.text("a", "x")
    partial = turn.accumulator.partial("cancelled", "caller", turn.metadata, usage=USAGE)
    assert partial.usage == USAGE


@pytest.mark.parametrize("status", ["cancelled", "failed", "incomplete"])
def test_a_partial_is_never_final(status):
    partial = Accumulator().partial(status, "why", StreamMetadata(protocol="test"))
    assert partial.status == status
    assert not isinstance(partial, FinalResponse)


def test_inline_data_fragments_join_as_bytes():
    turn = Turn()
    turn.inline_data("clip", b"RIFF", "audio/wav")
    turn.inline_data("clip", b"\x00\x01", "audio/wav")
    assert turn.accumulator.open_item() == {
        "type": "inline_data.delta",
        "data": b"RIFF\x00\x01",
        "mime_type": "audio/wav",
    }
    turn.end_item("clip")
    assert turn.accumulator.items == [
        {"type": "inline_data.done", "data": b"RIFF\x00\x01", "mime_type": "audio/wav"}
    ]


def test_inline_thinking_fragments_join_as_bytes():
    turn = Turn()
    turn.inline_thinking("img", b"\x89PNG", "image/png")
    turn.inline_thinking("img", b"\r\n", "image/png")
    assert turn.accumulator.open_item()["data"] == b"\x89PNG\r\n"


def test_embeddings_are_done_items_with_their_vectors():
    turn = Turn()
    turn.embedding(0, [0.1, 0.2])
    turn.embedding(1, [0.3, 0.4])
    turn.finish("stop", None)
    turn.terminal()
    message = turn.accumulator.final(turn.metadata).message
    assert message["content_items"] == [
        {"type": "embedding.done", "embedding": [0.1, 0.2]},
        {"type": "embedding.done", "embedding": [0.3, 0.4]},
    ]


def test_an_open_embedding_shows_its_vector():
    accumulator = Accumulator()
    accumulator.apply(
        {
            "role": "assistant",
            "event_type": "delta",
            "content_items": [{"type": "embedding.delta", "embedding": [1.0, 2.0]}],
            "usage_metadata": None,
            "finish_reason": None,
            "created_at": 1,
        }
    )
    assert accumulator.open_item() == {"type": "embedding.delta", "embedding": [1.0, 2.0]}
