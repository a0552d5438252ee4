"""Helpers for tests/protocols/anthropic_messages/test_gateway.py: SPEC events built from done items
the way the grammar says, the writer driven over them, a client's view of the frames, and a loopback
server that answers the official SDK with the bytes a test chose."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from modelstream.protocols.anthropic_messages.writer import AnthropicStreamWriter
from modelstream.protocols.common.fidelity_seal import FidelitySeal
from modelstream.protocols.common.gateway import (
    GatewayRoute,
    InboundCall,
    InboundRequest,
    WriteContext,
)
from support.gateway import Loopback, group, serve, stop, streamed

GENERATE = InboundCall(GatewayRoute("POST", "/v1/messages", "generate"))
COUNT_TOKENS = InboundCall(GatewayRoute("POST", "/v1/messages/count_tokens", "count_tokens"))
SEAL = FidelitySeal(b"gateway-anthropic-tests-key-0123456789")

# cuts a string into fragments: the test's hypothesis draw, or whole by default
Cutter = Callable[[str], list[str]]


def context(upstream: str = "anthropic-messages", model: str = "claude-sonnet-4-5") -> WriteContext:
    request = InboundRequest(model=model, messages=[], config={}, stream=True)
    return WriteContext("gw_0123abcd", model, 1_700_000_000, upstream, SEAL, request)


def whole(text: str) -> list[str]:
    return [text]


def cut_item(item: dict[str, Any], cut: Cutter = whole) -> list[str]:
    """A done item's growing field (a call's arguments as compact JSON) as `cut` fragments it."""
    return cut(streamed(item, compact=True))


def turn_events(
    items: Sequence[Any],
    finish: str,
    usage: dict[str, Any],
    cut: Cutter = whole,
    fidelity_at: int = 0,
) -> list[Any]:
    """Each item's group (SPEC §2 rules 1, 3, 6), its fidelity on fragment `fidelity_at`, then
    the stop."""
    events = [
        event
        for item in items
        for event in group(item, cut_item(item, cut), fidelity_at=fidelity_at)
    ]
    return [*events, stop(finish, usage)]  # type: ignore[arg-type]


def write(events: Sequence[Any], ctx: WriteContext | None = None) -> bytes:
    writer = AnthropicStreamWriter(ctx or context())
    return b"".join(frame for event in events for frame in writer.feed(event))


def frames(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of every SSE frame."""
    out = []
    for chunk in body.decode().split("\n\n"):
        if not chunk.strip():
            continue
        name, data = chunk.split("\n", 1)
        out.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def client_content(body: bytes) -> list[dict[str, Any]]:
    """The assistant content a client sends back, accumulated as the SDK's helper does."""
    blocks: dict[int, dict[str, Any]] = {}
    arguments: dict[int, str] = {}
    for name, data in frames(body):
        if name == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
        elif name == "content_block_delta":
            block, change = blocks[data["index"]], data["delta"]
            if change["type"] == "text_delta":
                block["text"] += change["text"]
            elif change["type"] == "thinking_delta":
                block["thinking"] += change["thinking"]
            elif change["type"] == "signature_delta":
                block["signature"] = change["signature"]
            elif change["type"] == "input_json_delta":
                arguments[data["index"]] = arguments.get(data["index"], "") + change["partial_json"]
    for index, raw in arguments.items():
        blocks[index]["input"] = json.loads(raw) if raw else {}
    return [blocks[index] for index in sorted(blocks)]


def loopback() -> AbstractContextManager[Loopback]:
    """A real HTTP server on 127.0.0.1 answering `/v1/messages*` with queued answers."""
    return serve(("POST", "/v1/messages"), ("POST", "/v1/messages/count_tokens"))
