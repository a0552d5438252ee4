"""Helpers for tests/test_gateway_anthropic_messages.py: SPEC events built from done items the way
the grammar says, the writer driven over them, a client's view of the frames, and a loopback
server that answers the official SDK with the bytes a test chose."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from modelstream.protocols.anthropic_messages.writer import AnthropicStreamWriter
from modelstream.protocols.common.fidelity_seal import FidelitySeal
from modelstream.protocols.common.gateway import (
    GatewayRoute,
    InboundCall,
    InboundRequest,
    WriteContext,
)
from modelstream.server import BackgroundServer

GENERATE = InboundCall(GatewayRoute("POST", "/v1/messages", "generate"))
COUNT_TOKENS = InboundCall(GatewayRoute("POST", "/v1/messages/count_tokens", "count_tokens"))
SEAL = FidelitySeal(b"gateway-anthropic-tests-key-0123456789")
_GROWING = {"text": "text", "thinking": "thinking", "tool_call": "arguments"}

# cuts a string into fragments: the test's hypothesis draw, or whole by default
Cutter = Callable[[str], list[str]]


def context(upstream: str = "anthropic-messages", model: str = "claude-sonnet-4-5") -> WriteContext:
    request = InboundRequest(model=model, messages=[], config={}, stream=True)
    return WriteContext("gw_0123abcd", model, 1_700_000_000, upstream, SEAL, request)


def delta(item: dict[str, Any]) -> Any:
    return {
        "role": "assistant",
        "event_type": "delta",
        "content_items": [item],
        "usage_metadata": None,
        "finish_reason": None,
        "created_at": 0,
    }


def stop(finish: str, usage: dict[str, Any]) -> Any:
    return {
        "role": "assistant",
        "event_type": "stop",
        "content_items": [],
        "usage_metadata": usage,
        "finish_reason": finish,
        "created_at": 0,
    }


def group(item: dict[str, Any], cut: Cutter = lambda s: [s], fidelity_at: int = 0) -> list[Any]:
    """The delta events and the done event of one done item (SPEC §2 rules 1, 3, 6)."""
    kind = item["type"].removesuffix(".done")
    growing = _GROWING[kind]
    whole = item[growing]
    text = json.dumps(whole, separators=(",", ":")) if kind == "tool_call" else whole
    pieces = cut(text) or [""]
    fidelity = item.get("fidelity")
    out = []
    for position, piece in enumerate(pieces):
        fragment: dict[str, Any] = {"type": f"{kind}.delta", growing: piece}
        if kind == "tool_call":
            first = position == 0
            fragment = {
                "type": "tool_call.delta",
                "tool_call_id": item["tool_call_id"] if first else "",
                "name": item["name"] if first else "",
                "arguments": piece,
            }
        if fidelity is not None and position == min(fidelity_at, len(pieces) - 1):
            fragment["fidelity"] = fidelity
        out.append(delta(fragment))
    out.append(delta(item))
    return out


def turn_events(
    items: Sequence[Any],
    finish: str,
    usage: dict[str, Any],
    cut: Cutter = lambda s: [s],
    fidelity_at: int = 0,
) -> list[Any]:
    events = [event for item in items for event in group(item, cut, fidelity_at)]
    return [*events, stop(finish, usage)]


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


@dataclass
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class LoopbackAnthropic:
    """A real HTTP server on 127.0.0.1 answering `/v1/messages*` with queued answers."""

    answers: list[Answer] = field(default_factory=list)
    requests: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    url: str = ""

    def queue(self, answer: Answer) -> None:
        self.answers.append(answer)

    def stream(self, body: bytes) -> None:
        self.queue(Answer(200, body, "text/event-stream; charset=utf-8"))

    def json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        self.queue(Answer(status, json.dumps(value).encode(), headers=headers or {}))

    async def _answer(self, request: Request) -> Response:
        body = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append((request.url.path, headers, json.loads(body) if body else None))
        answer = self.answers.pop(0)
        return Response(
            answer.body, answer.status, headers=answer.headers, media_type=answer.content_type
        )


@contextmanager
def loopback() -> Iterator[LoopbackAnthropic]:
    server = LoopbackAnthropic()
    routes = [
        Route(path, server._answer, methods=["POST"])
        for path in ("/v1/messages", "/v1/messages/count_tokens")
    ]
    with BackgroundServer(Starlette(routes=routes)) as background:
        server.url = background.url
        yield server
