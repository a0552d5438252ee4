"""Helpers for tests/protocols/openai_responses/test_gateway.py: SPEC events built the way the
grammar says, the Responses writer run over them, its frames read back, and a loopback server that
answers the official `openai` SDK with them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from modelstream.protocols.common.fidelity_seal import FidelitySeal
from modelstream.protocols.common.gateway import (
    GatewayRoute,
    InboundCall,
    InboundRequest,
    WriteContext,
)
from modelstream.protocols.openai_responses.gateway import GATEWAY
from modelstream.types import Event, Usage
from support.gateway import Loopback, group, serve, stop

MODEL = "gpt-5-mini"
RESPONSE_ID = "resp_0123456789abcdef0123456789abcdef"
SEAL = FidelitySeal(b"a test key of thirty-two bytes!!")
CALL = InboundCall(GatewayRoute("POST", "/v1/responses", "generate"))


def turn(*items: dict[str, Any], finish: str = "stop", usage: Usage | None = None) -> list[Event]:
    """The items' groups (each in two halves, fidelity before the done), then the stop."""
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


def loopback() -> AbstractContextManager[Loopback]:
    """A loopback server for the official SDK: `POST /v1/responses`, `GET /v1/responses/{id}`."""
    return serve(("POST", "/v1/responses"), ("GET", "/v1/responses/{response_id}"))
