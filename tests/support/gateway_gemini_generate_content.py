"""Support for tests/protocols/gemini_generate_content/test_gateway.py: SPEC events built from
items, the Gemini frames a writer wrote read back as a client reads them, and a loopback server that
answers through the wire's `GATEWAY` with scripted events (a gateway in miniature: its handler only
decodes, writes and records; the SDKs under test do everything else)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from modelstream.protocols.common.fidelity_seal import FidelitySeal
from modelstream.protocols.common.gateway import (
    GatewayError,
    GatewayRoute,
    InboundCall,
    InboundRequest,
    InboundRequestError,
    ServedModel,
    WriteContext,
)
from modelstream.protocols.gemini_generate_content.gateway import GATEWAY, STREAM_ROUTE
from modelstream.protocols.gemini_generate_content.writer import count_tokens_body
from modelstream.types import Event, FinishReason, Message, Usage
from support.gateway import group, stop, streamed

PROTOCOL = "gemini-generate-content"
KEY = "gw-test-key-5d1"


def cut_at(item: dict[str, Any], cuts: Sequence[int] = ()) -> list[Any]:
    """A done item's growing field (a call's arguments as JSON) cut at the positions `cuts`."""
    whole = streamed(item)
    points = sorted({c for c in cuts if 0 < c < len(whole)})
    return [whole[a:b] for a, b in zip([0, *points], [*points, len(whole)], strict=True)]


def turn_events(
    items: Sequence[dict[str, Any]],
    finish: FinishReason,
    usage: Usage,
    cuts: Sequence[Sequence[int]] = (),
    fidelity_first: Sequence[bool] = (),
) -> list[Event]:
    """Each item's group (`K.delta+ K.done`, SPEC §2) cut at its `cuts`; its fidelity on the
    first fragment, or (as the assembler sends it) on an empty last fragment; then the stop."""
    events: list[Event] = []
    for i, item in enumerate(items):
        item_cuts = cuts[i] if i < len(cuts) else ()
        first = fidelity_first[i] if i < len(fidelity_first) else False
        events.extend(group(item, cut_at(item, item_cuts), fidelity_at=0 if first else None))
    events.append(stop(finish, usage))
    return events


def sse_chunks(body: bytes) -> list[dict[str, Any]]:
    """The JSON of each `data:` frame of an SSE body (CRLF framed, as Gemini's)."""
    frames = [frame for frame in body.split(b"\r\n\r\n") if frame]
    assert all(frame.startswith(b"data: ") for frame in frames), body[:200]
    return [json.loads(frame[len(b"data: ") :]) for frame in frames]


def model_contents(chunks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model contents a client keeps from the chunks (google-genai's chat: one per chunk)."""
    return [
        chunk["candidates"][0]["content"]
        for chunk in chunks
        if chunk.get("candidates") and chunk["candidates"][0].get("content")
    ]


def call(
    route: GatewayRoute = STREAM_ROUTE,
    model: str = "gemini-2.5-flash",
    query: dict[str, str] | None = None,
    version: str = "v1beta",
) -> InboundCall:
    return InboundCall(
        route=route,
        path_params={"version": version, "model": model},
        query={"alt": "sse"} if query is None else query,
    )


def context(
    request: InboundRequest, seal: FidelitySeal, upstream: str = "anthropic-messages"
) -> WriteContext:
    return WriteContext(
        response_id="resp-7Qz",
        model=request.model,
        created=1_700_000_000,
        upstream=upstream,
        seal=seal,
        request=request,
    )


def final_message(events: Sequence[Event]) -> Message:
    """The final assistant message of a stream of events (its done items, usage, finish)."""
    items = [
        item
        for event in events
        for item in event["content_items"]
        if item["type"].endswith(".done")
    ]
    last = events[-1]
    return {
        "role": "assistant",
        "content_items": items,  # type: ignore[typeddict-item]
        "usage_metadata": last["usage_metadata"],
        "finish_reason": last["finish_reason"],
    }


@dataclass
class Script:
    """What the loopback gateway answers next: events (then, optionally, an in-stream error),
    or an HTTP error."""

    events: list[Event] = field(default_factory=list)
    then_fail: GatewayError | None = None
    http_error: GatewayError | None = None
    upstream: str = "anthropic-messages"


class LoopbackGateway:
    """A Starlette app on the wire's routes (module docstring); `requests` records every decoded
    request, `script` is the next answer."""

    def __init__(self) -> None:
        self.seal = FidelitySeal.random()
        self.script = Script()
        self.requests: list[InboundRequest] = []
        self.keys: list[str | None] = []
        routes = [
            Route(route.path, self._handler(route), methods=[route.method])
            for route in GATEWAY.routes
        ]
        self.app = Starlette(routes=routes)

    def _handler(self, route: GatewayRoute) -> Any:
        async def handle(request: Request) -> Response:
            headers = {name.lower(): value for name, value in request.headers.items()}
            query = dict(request.query_params)
            self.keys.append(GATEWAY.read_key(headers, query))
            if route.kind == "models":
                assert GATEWAY.models_body is not None
                served = [ServedModel("gemini-2.5-flash", "google"), ServedModel("claude", "x")]
                return JSONResponse(GATEWAY.models_body(served))
            raw = await request.body()
            inbound_call = InboundCall(route, dict(request.path_params), query, headers)
            try:
                inbound = GATEWAY.decode_request(json.loads(raw), inbound_call, self.seal)
            except InboundRequestError as exc:
                error = GatewayError(exc.status, "InvalidRequest", str(exc), param=exc.param)
                return JSONResponse(GATEWAY.error_body(error), status_code=exc.status)
            self.requests.append(inbound)
            if route.kind == "count_tokens":
                return JSONResponse(count_tokens_body(42))
            script = self.script
            if script.http_error is not None:
                error = script.http_error
                return JSONResponse(
                    GATEWAY.error_body(error), status_code=error.status, headers=error.headers
                )
            ctx = context(inbound, self.seal, script.upstream)
            if not inbound.stream:
                return JSONResponse(GATEWAY.final_body(ctx, final_message(script.events)))
            writer = GATEWAY.writer(ctx)

            def frames() -> Iterator[bytes]:
                for event in script.events:
                    yield from writer.feed(event)
                if script.then_fail is not None:
                    yield from writer.fail(script.then_fail)

            return StreamingResponse(
                frames(), media_type=inbound.content_type or GATEWAY.content_type
            )

        return handle
