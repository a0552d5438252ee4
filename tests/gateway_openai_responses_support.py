"""Helpers for tests/test_gateway_openai_responses.py: SPEC events built the way the grammar
says, the Responses writer run over them, its frames read back, and a loopback server that
answers the official `openai` SDK with them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from modelstream.protocols.common.fidelity_seal import FidelitySeal
from modelstream.protocols.common.gateway import (
    GatewayRoute,
    InboundCall,
    InboundRequest,
    WriteContext,
)
from modelstream.protocols.openai_responses.gateway import GATEWAY
from modelstream.server import BackgroundServer
from modelstream.types import Event, Usage

MODEL = "gpt-5-mini"
RESPONSE_ID = "resp_0123456789abcdef0123456789abcdef"
SEAL = FidelitySeal(b"a test key of thirty-two bytes!!")
CALL = InboundCall(GatewayRoute("POST", "/v1/responses", "generate"))


def event(item: dict[str, Any]) -> Event:
    return {
        "role": "assistant",
        "event_type": "delta",
        "content_items": [item],  # type: ignore[list-item]
        "usage_metadata": None,
        "finish_reason": None,
        "created_at": 0,
    }


def stop(finish: str = "stop", usage: Usage | None = None) -> Event:
    return {
        "role": "assistant",
        "event_type": "stop",
        "content_items": [],
        "usage_metadata": usage
        or {
            "cached_tokens": None,
            "prompt_tokens": None,
            "thoughts_tokens": None,
            "response_tokens": None,
        },
        "finish_reason": finish,  # type: ignore[typeddict-item]
        "created_at": 0,
    }


def group(
    done: dict[str, Any], pieces: Sequence[str] | None = None, *, fidelity_first: bool = False
) -> list[Event]:
    """One group (SPEC §2): the done item's growing field in `pieces` (default: two halves),
    the fidelity on an empty fragment right before the `.done`, as the item assembler emits it
    (or, `fidelity_first`, on the first fragment: the grammar allows any one)."""
    kind = done["type"].removesuffix(".done")
    growing = {"text": "text", "thinking": "thinking", "tool_call": "arguments"}[kind]
    whole = done[growing] if kind != "tool_call" else json.dumps(done["arguments"])
    if pieces is None:
        pieces = [whole[: len(whole) // 2], whole[len(whole) // 2 :]]
    assert "".join(pieces) == whole
    events = []
    for position, piece in enumerate(pieces or [""]):
        fragment: dict[str, Any] = {"type": f"{kind}.delta", growing: piece}
        if kind == "tool_call":
            first = position == 0
            fragment["tool_call_id"] = done["tool_call_id"] if first else ""
            fragment["name"] = done["name"] if first else ""
        if position == 0 and fidelity_first and done.get("fidelity"):
            fragment["fidelity"] = done["fidelity"]
        events.append(event(fragment))
    if done.get("fidelity") and not fidelity_first:
        fragment = {"type": f"{kind}.delta", growing: "", "fidelity": done["fidelity"]}
        if kind == "tool_call":
            fragment.update(tool_call_id="", name="")
        events.append(event(fragment))
    events.append(event(dict(done)))
    return events


def text(value: str, fidelity: dict[str, Any] | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "text.done", "text": value}
    if fidelity:
        item["fidelity"] = fidelity
    return item


def thinking(value: str, fidelity: dict[str, Any] | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "thinking.done", "thinking": value}
    if fidelity:
        item["fidelity"] = fidelity
    return item


def tool_call(
    call_id: str, name: str, arguments: dict[str, Any], fidelity: dict[str, Any] | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "tool_call.done",
        "tool_call_id": call_id,
        "name": name,
        "arguments": arguments,
    }
    if fidelity:
        item["fidelity"] = fidelity
    return item


def turn(*items: dict[str, Any], finish: str = "stop", usage: Usage | None = None) -> list[Event]:
    events: list[Event] = []
    for item in items:
        events += group(item)
    return [*events, stop(finish, usage)]


def inbound(**options: Any) -> InboundRequest:
    return InboundRequest(model=MODEL, messages=[], config={}, stream=True, options=options)


def context(upstream: str = "openai-responses", **options: Any) -> WriteContext:
    return WriteContext(
        response_id=RESPONSE_ID,
        model=MODEL,
        created=1_700_000_000,
        upstream=upstream,
        seal=SEAL,
        request=inbound(**options),
    )


def write(events: Sequence[Event], ctx: WriteContext | None = None) -> bytes:
    writer = GATEWAY.writer(ctx or context())
    return b"".join(frame for e in events for frame in writer.feed(e))


def frames_of(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of each SSE frame; the name must repeat the data's type."""
    out = []
    for block in body.decode().split("\n\n"):
        if not block:
            continue
        name_line, data_line = block.split("\n")
        name = name_line.removeprefix("event: ")
        data = json.loads(data_line.removeprefix("data: "))
        assert data["type"] == name
        out.append((name, data))
    return out


def replayed_items(body: bytes, *, terminal: bool) -> list[dict[str, Any]]:
    """The output items a client sends back next turn: the terminal response's `output` (the
    SDK's final response), or each `response.output_item.done` item (Codex)."""
    frames = frames_of(body)
    if terminal:
        return list(frames[-1][1]["response"]["output"])
    return [data["item"] for name, data in frames if name == "response.output_item.done"]


def decode(body: Any, seal: FidelitySeal = SEAL) -> InboundRequest:
    return GATEWAY.decode_request(body, CALL, seal)


def request(*items: Any, **fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "input": list(items), **fields}


# --- a loopback server for the official SDK ---------------------------------------------------


@dataclass
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class LoopbackResponses:
    """Answers `POST /v1/responses` and `GET /v1/responses/{id}` with queued answers, in order,
    and records each request (its body, or its query for a GET)."""

    answers: list[Answer] = field(default_factory=list)
    requests: list[Any] = field(default_factory=list)
    url: str = ""

    def stream(self, body: bytes) -> None:
        self.answers.append(Answer(200, body, "text/event-stream; charset=utf-8"))

    def json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        self.answers.append(Answer(status, orjson.dumps(value), headers=headers or {}))

    async def _answer(self, request: Request) -> Response:
        body = await request.body()
        self.requests.append(json.loads(body) if body else dict(request.query_params))
        answer = self.answers.pop(0)
        return Response(
            answer.body, answer.status, headers=answer.headers, media_type=answer.content_type
        )


@contextmanager
def loopback() -> Iterator[LoopbackResponses]:
    server = LoopbackResponses()
    routes = [
        Route("/v1/responses", server._answer, methods=["POST"]),
        Route("/v1/responses/{response_id}", server._answer, methods=["GET"]),
    ]
    with BackgroundServer(Starlette(routes=routes)) as background:
        server.url = background.url
        yield server
