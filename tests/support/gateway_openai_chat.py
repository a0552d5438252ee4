"""Support for tests/protocols/openai_chat/test_gateway.py: SPEC events built as the grammar says,
the Chat wire's writer run over them, and a loopback server that answers the openai SDK with given
bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import support.gateway as shared
from modelstream.protocols import REGISTRY
from modelstream.protocols.common.fidelity_seal import FidelitySeal
from modelstream.protocols.common.gateway import (
    GatewayRoute,
    GatewayWire,
    InboundCall,
    InboundRequest,
    WriteContext,
)
from modelstream.types import Event
from support.gateway import Loopback, serve

PROTOCOL = "openai-chat"
GATEWAY: GatewayWire = REGISTRY[PROTOCOL].gateway  # type: ignore[assignment]
SEAL = FidelitySeal(b"gateway-openai-chat-test-key-0123")
CALL = InboundCall(GatewayRoute("POST", "/v1/chat/completions", "generate"))
MODEL = "gpt-4o"
CREATED = 1727346168


def text(value: str, fidelity: dict[str, Any] | None = None, **options: Any) -> list[Event]:
    return _group(shared.text(value, fidelity), value, **options)


def thinking(value: str, fidelity: dict[str, Any] | None = None, **options: Any) -> list[Event]:
    return _group(shared.thinking(value, fidelity), value, **options)


def tool_call(
    call_id: str,
    name: str,
    arguments: dict[str, Any],
    fidelity: dict[str, Any] | None = None,
    **options: Any,
) -> list[Event]:
    item = shared.tool_call(call_id, name, arguments, fidelity)
    return _group(item, shared.streamed(item, compact=True), **options)


def _group(
    item: dict[str, Any],
    whole: str,
    *,
    pieces: Sequence[str] | None = None,
    fidelity_first: bool = False,
) -> list[Event]:
    """The item's group: `pieces` of `whole` (its growing field; a call's arguments as compact
    JSON), by default its two halves (one piece under two characters); fidelity on the first
    fragment, or on an empty last one (the assembler's rule C)."""
    if pieces is None:
        middle = len(whole) // 2
        pieces = [whole[:middle], whole[middle:]] if middle else [whole]
    return shared.group(item, pieces, fidelity_at=0 if fidelity_first else None)


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


def loopback() -> AbstractContextManager[Loopback]:
    """A loopback server for the official SDK: `POST /v1/chat/completions`, `GET /v1/models`."""
    return serve(("POST", "/v1/chat/completions"), ("GET", "/v1/models"))
