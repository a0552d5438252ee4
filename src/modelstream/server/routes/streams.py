"""The server's own wire (SPEC §7): a new stream, and a resume.

    POST /v1/stream                    a new stream, `X-Response-Id` header
    GET  /v1/streams/{response_id}     resume: `Last-Event-ID: <response_id>:<seq>` or ?after=

A new stream's checks run in order: key → body size → JSON → model → messages/config →
capacity; a refusal is its status and `{"error": {...}}` body.
"""

from __future__ import annotations

from dataclasses import replace

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...errors import ModelstreamError
from ...web.bodies import read_body
from ...web.refusals import Refusal, not_found
from .. import wire
from ..callers import Caller
from ..config import ModelEntry
from ..errors import bad_input, unexpected_shape
from ..limits import off_loop
from ..request_policy import check_upstream_request
from ..responses import SSE_HEADERS, EventStreamResponse
from .state import ServerState


def stream_routes(state: ServerState) -> list[Route]:
    """`POST /v1/stream` and `GET /v1/streams/{response_id}`."""
    settings, relay, metrics = state.settings, state.relay, state.metrics

    async def post_stream(request: Request) -> Response:
        with relay.arrival():
            return await start_stream(request)

    def checked_call(body: bytes, caller: Caller) -> tuple[wire.StreamRequest, ModelEntry]:
        """The stream request of a body, its model, and the upstream policy's checks: no IO,
        so a large body runs it in a worker thread (`off_loop`)."""
        key = caller if caller.secret is not None else None
        call = replace(wire.parse_stream_request(body), caller=caller.holder, key=key)
        entry = settings.model(call.model)
        if entry is None:
            raise not_found(
                f"the model {call.model!r} is not served here; GET /v1/models lists "
                "the models this server serves",
                outcome="unknown_model",
            )
        check_upstream_request(entry, call.messages, call.config)
        return call, entry

    async def start_stream(request: Request) -> Response:
        try:
            caller = await state.caller(request)
            body = await read_body(
                request, settings.limits.max_body_bytes, settings.limits.body_timeout_seconds
            )
            try:
                call, entry = await off_loop(len(body), checked_call, body, caller)
                response_id = await relay.start(entry, call, len(body))
            except ModelstreamError as exc:  # messages or config the upstream cannot take
                raise bad_input(exc) from None
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                # an encoder met a shape it does not expect: still the request's fault (JSON
                # nested too deep for Python's recursion never gets here: web.bodies.json_object)
                raise unexpected_shape(exc) from None
        except Refusal as refusal:
            return state.refused("stream", refusal)
        return EventStreamResponse(
            relay.sse(response_id, 0), {**SSE_HEADERS, wire.RESPONSE_ID_HEADER: response_id}
        )

    async def resume_stream(request: Request) -> Response:
        response_id = request.path_params["response_id"]
        try:
            caller = (await state.caller(request)).holder
            after = wire.parse_resume_point(
                response_id, request.headers.get("last-event-id"), request.query_params.get("after")
            )
            # another key's stream is "not found" too: a resume never tells a stream exists
            if not await relay.readable_by(response_id, caller or ""):
                raise not_found(
                    f"no stream {response_id!r}: it never existed, or it finished more than "
                    f"{settings.retain_seconds:g} s ago (retain_seconds)"
                )
        except Refusal as refusal:
            return state.refused("resume", refusal)
        metrics.requests.inc("resume", "resumed")
        return EventStreamResponse(
            relay.sse(response_id, after), {**SSE_HEADERS, wire.RESPONSE_ID_HEADER: response_id}
        )

    return [
        Route("/v1/stream", post_stream, methods=["POST"]),
        Route("/v1/streams/{response_id}", resume_stream, methods=["GET"]),
    ]
