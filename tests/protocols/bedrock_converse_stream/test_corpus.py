"""Bedrock ConverseStream captures (binary AWS event-stream bodies), replayed over loopback HTTP.

Expected values come from reading the capture files: an independent reader below (stdlib
`struct`, `zlib` and `json` only, nothing shared with src/modelstream) and, per capture, facts
written down by hand from a dump of its messages.
"""

from __future__ import annotations

import functools
import json
import struct
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from modelstream import FinalResponse, GrammarChecker, ProviderError
from support import (
    Decoded,
    ReplayServer,
    capture_names,
    decode_chunks,
    decode_over_http,
    load_capture,
    require_corpus,
)
from support.cli import run_cli

PROTOCOL = "bedrock-converse-stream"
CAPTURES = capture_names(PROTOCOL)


def replay(
    server: ReplayServer, name: str, slices: tuple[int, ...] = (), **options: Any
) -> Decoded:
    return decode_over_http(server, load_capture(PROTOCOL, name), slices, **options)


# --- An independent reading of a capture file ------------------------------------------------


def read_messages(body: bytes) -> list[tuple[dict[str, str], dict[str, Any]]]:
    """(string headers, JSON payload) of every message; both CRCs checked on the way."""
    out = []
    pos = 0
    while pos < len(body):
        total, headers_length = struct.unpack(">II", body[pos : pos + 8])
        assert struct.unpack(">I", body[pos + 8 : pos + 12])[0] == zlib.crc32(body[pos : pos + 8])
        end = pos + total
        assert struct.unpack(">I", body[end - 4 : end])[0] == zlib.crc32(body[pos : end - 4])
        raw, headers, at = body[pos + 12 : pos + 12 + headers_length], {}, 0
        while at < len(raw):
            name = raw[at + 1 : at + 1 + raw[at]].decode()
            at += 1 + raw[at]
            assert raw[at] == 7  # every capture uses string headers only
            (length,) = struct.unpack(">H", raw[at + 1 : at + 3])
            headers[name] = raw[at + 3 : at + 3 + length].decode()
            at += 3 + length
        out.append((headers, json.loads(body[pos + 12 + headers_length : end - 4])))
        pos = end
    return out


_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
_FINISH["tool_use"] = "tool_call"


@dataclass
class Expected:
    items: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int | None] | None = None
    finish: str | None = None
    skipped: Counter[str] = field(default_factory=Counter)
    exception: tuple[str, dict[str, Any]] | None = None
    open_text: str = ""  # text of a block still open when the stream broke off


@functools.cache
def expected_from_file(name: str) -> Expected:
    expected = Expected()
    blocks: dict[int, dict[str, Any]] = {}  # in order of first appearance
    for headers, payload in read_messages(load_capture(PROTOCOL, name).body):
        if headers[":message-type"] == "exception":
            expected.exception = (headers[":exception-type"], payload)
            break
        kind = headers[":event-type"]
        if kind in ("contentBlockStart", "contentBlockDelta"):
            block = blocks.setdefault(
                payload["contentBlockIndex"],
                {"text": "", "thinking": "", "args": "", "fidelity": {}, "tool": None},
            )
            if kind == "contentBlockStart":
                block["tool"] = payload["start"].get("toolUse")
                continue
            delta = payload["delta"]
            block["text"] += delta.get("text", "")
            reasoning = delta.get("reasoningContent", {})
            block["thinking"] += reasoning.get("text", "")
            if "signature" in reasoning:
                block["fidelity"]["signature"] = reasoning["signature"]
            if "redactedContent" in reasoning:
                block["fidelity"]["redacted_content"] = reasoning["redactedContent"]
            block["args"] += delta.get("toolUse", {}).get("input", "")
            for key in set(delta) - {"text", "reasoningContent", "toolUse"}:
                expected.skipped[f"delta:{key}"] += 1
        elif kind == "messageStop":
            expected.finish = _FINISH.get(payload["stopReason"], "unknown")
        elif kind == "metadata":
            usage = payload["usage"]
            expected.usage = {
                "cached_tokens": usage.get("cacheReadInputTokens", 0),
                "prompt_tokens": usage["inputTokens"] + usage.get("cacheWriteInputTokens", 0),
                "thoughts_tokens": None,
                "response_tokens": usage["outputTokens"],
            }
    for block in blocks.values():
        if block["tool"] is not None:
            item: dict[str, Any] = {
                "type": "tool_call.done",
                "tool_call_id": block["tool"]["toolUseId"],
                "name": block["tool"]["name"],
                "arguments": json.loads(block["args"] or "{}"),
            }
        elif block["thinking"] or block["fidelity"]:
            item = {"type": "thinking.done", "thinking": block["thinking"]}
            if block["fidelity"]:
                item["fidelity"] = block["fidelity"]
        elif block["text"]:
            item = {"type": "text.done", "text": block["text"]}
        else:
            continue  # an empty text block opens nothing
        expected.items.append(item)
    if expected.exception is not None and expected.items:
        *expected.items, last = expected.items  # the stream broke off inside the last block
        expected.open_text = last["text"]
    return expected


# --- What each capture holds, written down by hand from a dump of its messages ------------------

# name: (finish, inputTokens, outputTokens, tool names in order, kinds of the items in order)
BY_HAND: dict[str, tuple[str | None, int | None, int | None, list[str], list[str]]] = {
    "pydanticai-bedrock-claude-redacted-thinking": (
        "stop",
        92,
        253,
        [],
        ["thinking"] * 2 + ["text"],
    ),
    "pydanticai-bedrock-claude-structured-output": ("stop", 210, 18, [], ["text"]),
    "pydanticai-bedrock-nova-extra-headers": ("stop", 2, 32, [], ["text"]),
    "pydanticai-bedrock-nova-text": ("stop", 13, 82, [], ["text"]),
    "pydanticai-bedrock-nova-tool-result-answer": ("stop", 577, 18, [], ["text"]),
    "vercel-bedrock-claude-reasoning": ("stop", 51, 94, [], ["thinking", "text"]),
    "vercel-bedrock-claude-request-metadata": ("stop", 12, 4, [], ["text"]),
    "vercel-bedrock-claude-sonnet-4-6-live": ("stop", 12, 5, [], ["text"]),
    "vercel-bedrock-claude-text": ("stop", 22, 55, [], ["text"]),
    "vercel-bedrock-document-citations": ("stop", 2787, 297, [], ["text"] * 13),
    "vercel-bedrock-kimi-final": ("stop", 406, 143, [], ["text"]),
    "vercel-bedrock-kimi-read-file": ("tool_call", 260, 116, ["read_file"], ["text", "tool_call"]),
    "vercel-bedrock-model-stream-error-only-synthetic": (None, None, None, [], []),
    "vercel-bedrock-model-stream-error-synthetic": (None, None, None, [], []),
    "vercel-bedrock-nova-foundation-model-arn": ("stop", 5, 89, [], ["text"]),
    "vercel-bedrock-tool-call-handwritten": ("tool_call", 125, 45, ["test-tool"], ["tool_call"]),
    "vercel-bedrock-tool-no-args-handwritten": (
        "tool_call",
        100,
        25,
        ["updateIssueList"],
        ["text", "tool_call"],
    ),
    "vercel-bedrock-two-tool-calls-handwritten": (
        "tool_call",
        500,
        100,
        ["weather", "weather"],
        ["text", "tool_call", "tool_call"],
    ),
}


def test_the_number_of_captures_is_pinned() -> None:
    assert len(CAPTURES) == 18
    assert sorted(BY_HAND) == CAPTURES


@pytest.mark.parametrize("name", CAPTURES)
@pytest.mark.parametrize("slices", [(), (1,), (7, 300, 13)], ids=["whole", "bytewise", "mixed"])
def test_every_capture_replays_over_http_to_what_its_payloads_hold(
    replay_server: ReplayServer, name: str, slices: tuple[int, ...]
) -> None:
    expected = expected_from_file(name)
    decoded = replay(replay_server, name, slices)
    finish, _, _, tools, kinds = BY_HAND[name]
    if expected.exception is not None:
        error_type, payload = expected.exception
        error = decoded.error
        assert isinstance(error, ProviderError)
        assert error.error_type == error_type == "modelStreamErrorException"
        assert error.retryable  # "A streaming error occurred. Retry your request."
        assert error.provider_message.startswith(payload["message"])
        assert payload["originalMessage"] in error.provider_message
        assert error.code == payload["originalStatusCode"]
        partial = error.partial
        assert partial is not None and partial.status == "failed"
        assert partial.items == []
        opened = partial.open_item
        if expected.open_text:
            assert opened == {"type": "text.delta", "text": expected.open_text}
        else:
            assert opened is None
        return
    assert decoded.error is None, decoded.error
    assert decoded.stop is not None
    result = decoded.decoder.result
    assert isinstance(result, FinalResponse)
    assert [dict(item) for item in result.message["content_items"]] == expected.items
    assert decoded.done_items == expected.items
    assert result.message["finish_reason"] == expected.finish == finish
    assert result.message["usage_metadata"] == expected.usage
    assert expected.usage is not None
    assert (expected.usage["prompt_tokens"], expected.usage["response_tokens"]) == BY_HAND[name][
        1:3
    ]
    assert [i["name"] for i in expected.items if i["type"] == "tool_call.done"] == tools
    assert [i["type"].removesuffix(".done") for i in expected.items] == kinds
    assert Counter(result.metadata.skipped) == expected.skipped
    assert result.metadata.lost_frames == 0


def test_reasoning_comes_with_its_signature_as_fidelity() -> None:
    result = decode_chunks(
        PROTOCOL, [load_capture(PROTOCOL, "vercel-bedrock-claude-reasoning").body]
    )
    thinking, text = result.done_items
    assert thinking["thinking"].startswith('Let me count the r\'s in "strawberry":')
    assert thinking["thinking"].endswith("So there are 3 r's.")
    assert thinking["fidelity"]["signature"].startswith("Ep0CCkgICxABGAIqQOWPB6/PmA5SW9jC6Fva")
    assert text["text"].startswith('There are **3** r\'s in "strawberry":')


def test_redacted_reasoning_is_an_empty_thinking_item_holding_the_blob() -> None:
    name = "pydanticai-bedrock-claude-redacted-thinking"
    result = decode_chunks(PROTOCOL, [load_capture(PROTOCOL, name).body])
    first, second, text = result.done_items
    assert first["thinking"] == second["thinking"] == ""
    assert first["fidelity"]["redacted_content"].startswith("RXRrRUNrZ0lCeEFCR0FJcVFKVGZx")
    assert second["fidelity"]["redacted_content"].startswith("RXFBRENrZ0lCeEFCR0FJcVFCM2g1")
    assert text["text"].endswith("What would you like to talk about today?")


def test_tool_calls_keep_their_ids_names_and_joined_arguments() -> None:
    name = "vercel-bedrock-two-tool-calls-handwritten"
    result = decode_chunks(PROTOCOL, [load_capture(PROTOCOL, name).body])
    text, first, second = result.done_items
    assert text["text"] == "2 + 2 equals 4. Now let me check the weather for you."
    assert (first["tool_call_id"], first["name"], first["arguments"]) == (
        "weather-tool-1",
        "weather",
        {"location": "San Francisco"},
    )
    assert (second["tool_call_id"], second["arguments"]) == (
        "weather-tool-2",
        {"location": "London"},
    )


def test_a_tool_call_whose_only_input_is_empty_has_no_arguments() -> None:
    name = "vercel-bedrock-tool-no-args-handwritten"
    result = decode_chunks(PROTOCOL, [load_capture(PROTOCOL, name).body])
    assert result.done_items[-1]["arguments"] == {}
    assert result.done_items[-1]["name"] == "updateIssueList"


def test_citations_are_skipped_and_counted_and_the_text_around_them_kept() -> None:
    name = "vercel-bedrock-document-citations"
    decoded = decode_chunks(PROTOCOL, [load_capture(PROTOCOL, name).body])
    assert decoded.decoder is not None
    result = decoded.decoder.result
    assert isinstance(result, FinalResponse)
    assert result.metadata.skipped == {"delta:citation": 6}
    text = "".join(i["text"] for i in decoded.done_items)
    assert text.startswith("Based on the supplied document, generative artificial intelligence")
    assert text.endswith("until it meets a specified stopping criterion.")


def test_think_tags_in_ordinary_text_stay_text() -> None:
    decoded = decode_chunks(PROTOCOL, [load_capture(PROTOCOL, "vercel-bedrock-kimi-final").body])
    [item] = decoded.done_items
    assert item["type"] == "text.done"
    assert item["text"].startswith(" <think> The user wants me to check")
    assert item["text"].endswith("</think> FOUND ISSUE_11409_CONTENT")


# --- modelstream replay reads the binary body --------------------------------------------------


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("vercel-bedrock-tool-call-handwritten", 0),
        ("vercel-bedrock-model-stream-error-synthetic", 1),
    ],
)
def test_replay_decodes_a_bin_body_to_jsonl(name: str, status: int) -> None:
    path = str(require_corpus() / PROTOCOL / f"{name}.bin")
    result = run_cli("replay", path, "--protocol", PROTOCOL, "--format", "jsonl")
    assert result.returncode == status, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    checker = GrammarChecker()
    if status == 0:
        for line in lines:
            checker.feed(line)
        checker.end()
        assert lines[-1]["finish_reason"] == "tool_call"
        done = lines[-2]["content_items"][0]
        assert (done["name"], done["arguments"]) == ("test-tool", {"value": "Sparkle Day"})
        assert lines[-1]["usage_metadata"]["prompt_tokens"] == 125
    else:
        assert lines[0]["content_items"] == [{"type": "text.delta", "text": "before error"}]
        error = lines[-1]["error"]
        assert (error["type"], error["error_type"]) == (
            "ServerError",  # the model failed while streaming (originalStatusCode 424)
            "modelStreamErrorException",
        )
        assert error["retryable"] is True
        assert error["partial_status"] == "failed"
