"""Support for tests/test_gateway_openai_chat.py: SPEC events built as the grammar says, the Chat
wire's writer run over them, and a loopback server that answers the openai SDK with given bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from modelstream.protocols import REGISTRY
from modelstream.protocols.common.fidelity_seal import FidelitySeal
from modelstream.protocols.common.gateway import (
    GatewayRoute,
    GatewayWire,
    InboundCall,
    InboundRequest,
    WriteContext,
)
from modelstream.server import BackgroundServer
from modelstream.types import Event, Usage

PROTOCOL = "openai-chat"
GATEWAY: GatewayWire = REGISTRY[PROTOCOL].gateway  # type: ignore[assignment]
SEAL = FidelitySeal(b"gateway-openai-chat-test-key-0123")
CALL = InboundCall(GatewayRoute("POST", "/v1/chat/completions", "generate"))
MODEL = "gpt-4o"
CREATED = 1727346168


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


_GROWING = {"text": "text", "thinking": "thinking", "tool_call": "arguments"}


def group(
    kind: str,
    pieces: Sequence[str],
    fidelity: dict[str, Any] | None = None,
    *,
    fidelity_first: bool = False,
    done_value: Any = None,
    **first: Any,
) -> list[Event]:
    """One group as the grammar has it: a delta per piece (`first` fields on the first only,
    `""` after for a tool call), fidelity on the first fragment or on an empty last one (the
    assembler's rule C), then the `.done` (the join, or `done_value`)."""
    growing = _GROWING[kind]
    fragments: list[dict[str, Any]] = []
    for position, piece in enumerate(pieces or [""]):
        fragment: dict[str, Any] = {"type": f"{kind}.delta", growing: piece}
        if kind == "tool_call":
            fragment["tool_call_id"] = first["tool_call_id"] if position == 0 else ""
            fragment["name"] = first["name"] if position == 0 else ""
        fragments.append(fragment)
    if fidelity and fidelity_first:
        fragments[0]["fidelity"] = fidelity
    elif fidelity:
        last = {**fragments[-1], growing: ""}
        if kind == "tool_call":
            last["tool_call_id"] = last["name"] = ""
        fragments.append({**last, "fidelity": fidelity})
    done = {**fragments[0], "type": f"{kind}.done"}
    done[growing] = "".join(pieces) if done_value is None else done_value
    if fidelity:
        done["fidelity"] = fidelity
    return [event(fragment) for fragment in fragments] + [event(done)]


def text(value: str, fidelity: dict[str, Any] | None = None, **options: Any) -> list[Event]:
    return group("text", _halves(value), fidelity, **options)


def thinking(value: str, fidelity: dict[str, Any] | None = None, **options: Any) -> list[Event]:
    return group("thinking", _halves(value), fidelity, **options)


def tool_call(
    call_id: str, name: str, arguments: dict[str, Any], fidelity: dict[str, Any] | None = None
) -> list[Event]:
    raw = json.dumps(arguments, separators=(",", ":"))
    return group(
        "tool_call",
        _halves(raw),
        fidelity,
        done_value=arguments,
        tool_call_id=call_id,
        name=name,
    )


def _halves(value: str) -> list[str]:
    middle = len(value) // 2
    return [value[:middle], value[middle:]] if middle else [value]


def inbound(
    *, include_usage: bool = True, stream: bool = True, model: str = MODEL
) -> InboundRequest:
    return InboundRequest(
        model=model,
        messages=[],
        config={},
        stream=stream,
        options={"include_usage": include_usage},
    )


def context(
    upstream: str = PROTOCOL, *, include_usage: bool = True, stream: bool = True
) -> WriteContext:
    return WriteContext(
        response_id="gw_5f1c2a",
        model=MODEL,
        created=CREATED,
        upstream=upstream,
        seal=SEAL,
        request=inbound(include_usage=include_usage, stream=stream),
    )


def write(events: Sequence[Event], ctx: WriteContext | None = None) -> bytes:
    """The writer's frames for the events, joined."""
    writer = GATEWAY.writer(ctx or context())
    return b"".join(frame for e in events for frame in writer.feed(e))


def chunks_of(body: bytes) -> list[Any]:
    """The `data:` payloads of a stream, JSON-decoded (`[DONE]` as the string)."""
    out: list[Any] = []
    for frame in body.split(b"\n\n"):
        if frame:
            assert frame.startswith(b"data: "), frame
            payload = frame[len(b"data: ") :]
            out.append("[DONE]" if payload == b"[DONE]" else json.loads(payload))
    return out


def deltas_of(body: bytes) -> list[dict[str, Any]]:
    return [
        c["choices"][0]["delta"]
        for c in chunks_of(body)
        if isinstance(c, dict) and c.get("choices")
    ]


def decode(body: Any, seal: FidelitySeal = SEAL) -> InboundRequest:
    return GATEWAY.decode_request(body, CALL, seal)


def request(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": list(messages), **fields}


# --- a loopback server for the official SDK ---------------------------------------------------


@dataclass
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class LoopbackChat:
    """Answers `POST /v1/chat/completions` and `GET /v1/models` with queued answers, in order,
    and records each request body."""

    answers: list[Answer] = field(default_factory=list)
    bodies: list[Any] = field(default_factory=list)
    url: str = ""

    def stream(self, body: bytes) -> None:
        self.answers.append(Answer(200, body, "text/event-stream; charset=utf-8"))

    def json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        self.answers.append(Answer(status, json.dumps(value).encode(), headers=headers or {}))

    async def _answer(self, request: Request) -> Response:
        body = await request.body()
        self.bodies.append(json.loads(body) if body else None)
        answer = self.answers.pop(0)
        return Response(
            answer.body, answer.status, headers=answer.headers, media_type=answer.content_type
        )


@contextmanager
def loopback() -> Iterator[LoopbackChat]:
    server = LoopbackChat()
    routes = [
        Route("/v1/chat/completions", server._answer, methods=["POST"]),
        Route("/v1/models", server._answer, methods=["GET"]),
    ]
    with BackgroundServer(Starlette(routes=routes)) as background:
        server.url = background.url
        yield server
