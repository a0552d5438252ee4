"""The providers' own APIs, inbound (SPEC §8, docs/gateway.md): any client in, any model out.

Every protocol whose descriptor has a `gateway` (`GatewayWire`) adds its routes here. A request
goes through the same checks as `POST /v1/stream` (key → body size → JSON → the wire's own
decoder → model → upstream policy → capacity), then through the same relay and store, so a
gateway stream is resumable, traced, counted and priced like any other. What differs is only
the reading side: the stored events are written back through the caller's wire's writer.

    caller's request ─► wire.decode_request ─► StreamRelay.start ─► store ◄─ producer (upstream)
    caller ◄── wire.writer(ctx).feed(event) ◄── store.read ◄────────────────────┘

The response's headers wait for the stream's first entry: an upstream that refuses the request
(a 429 with its retry-after, a 400, an unknown model upstream) is the caller's HTTP status and
its wire's error body, never a 200 stream that fails at once. After the first event an error
ends the stream in the wire's own in-stream form (`StreamWriter.fail`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...client.routing import resolve_route
from ...errors import ModelstreamError
from ...jsonwire import dumps, loads_event, loads_messages
from ...protocols import REGISTRY, frontends
from ...protocols.common.fidelity_seal import FidelityForgedError, FidelitySeal
from ...protocols.common.gateway import (
    GatewayError,
    GatewayRoute,
    GatewayWire,
    InboundCall,
    InboundRequest,
    InboundRequestError,
    ServedModel,
    StreamWriter,
    UnsupportedOutputError,
    WriteContext,
)
from ...protocols.common.options import merge_extra_body
from ...types import Config, DoneItem, Message
from ...web.bodies import json_object, read_body
from ...web.refusals import Refusal, invalid_request, not_found
from .. import wire
from ..callers import Caller
from ..config import ModelEntry, ServerSettings
from ..errors import bad_input, store_unavailable, unexpected_shape
from ..limits import off_loop
from ..logs import stream_ref
from ..relay import BurstClock
from ..request_policy import check_upstream_request
from ..responses import SSE_HEADERS, EventStreamResponse
from ..stores import Entry, StoreError
from .state import ServerState

log = logging.getLogger("modelstream.server")

_ERROR_ENTRY = b'{"error"'  # how a stored terminal entry starts (jsonwire.error_object)
_ESTIMATE_HEADER = "x-modelstream-token-estimate"
# a kept turn's messages may be this many times the body limit (a chain of continued turns
# holds the whole conversation); a larger one is not kept, and cannot be continued
_KEEP_FACTOR = 4
# how long a conversation's name finds its last stream (the stream itself is kept only
# `retain_seconds` after it ends: a name that outlives it finds nothing)
_NAME_SECONDS = 86_400.0
# A count-tokens answer is an estimate from the request's size (no upstream is asked): about
# four bytes of text a token, and a flat count per image
_BYTES_PER_TOKEN = 4
_IMAGE_TOKENS = 1_000

Endpoint = Callable[[Request], Awaitable[Response]]


def wire_error(wire_: GatewayWire, error: GatewayError) -> Response:
    """An HTTP error in the caller's wire: its status, its body, its `retry-after`."""
    return JSONResponse(wire_.error_body(error), error.status, headers=error.headers)


def refusal_error(refusal: Refusal) -> GatewayError:
    retry_after = refusal.headers.get("retry-after")
    param = refusal.fields.get("param") or refusal.fields.get("parameter")
    return GatewayError(
        status=refusal.status,
        type=refusal.error_type,
        message=refusal.message,
        retry_after=float(retry_after) if retry_after else None,
        param=param if isinstance(param, str) else None,
    )


def fidelity_seal(settings: ServerSettings) -> FidelitySeal:
    """The seal of fidelity crossing wires: the config's `fidelity_key`, else one per process."""
    key = settings.fidelity_key
    return FidelitySeal(key.reveal().encode()) if key is not None else FidelitySeal.random()


def upstream_protocol(entry: ModelEntry) -> str:
    """The protocol a served model's upstream speaks (its config's, else its model's route)."""
    return resolve_route(entry.model, entry.client_type, entry.platform).client_type


class Gateway:
    """The routes of every inbound wire (module docstring)."""

    def __init__(self, state: ServerState) -> None:
        self.settings = state.settings
        self.relay = state.relay
        self.keys = state.keys
        self.metrics = state.metrics
        self.seal = fidelity_seal(state.settings)
        self._shared: list[tuple[GatewayRoute, Endpoint]] = []  # routes(): header-chosen ones

    def routes(self, taken: frozenset[str] = frozenset()) -> list[Route]:
        """The routes of every wire, but for the paths in `taken` (served by the app itself)
        and the routes that answer only requests with a header (`shared`)."""
        out: list[Route] = []
        wires = [(p.name, p.gateway) for p in REGISTRY.values() if p.gateway is not None]
        for name, gateway in [*wires, *frontends().items()]:
            for route in gateway.routes:
                endpoint = self._endpoint(name, gateway, route)
                if endpoint is None:
                    continue
                if route.header is not None:
                    self._shared.append((route, endpoint))
                elif route.path not in taken:
                    out.append(Route(route.path, endpoint, methods=[route.method]))
        return out

    async def shared(self, request: Request) -> Response | None:
        """The answer of a wire's route at a path the app owns, when the request carries that
        route's header (`GatewayRoute.header`); None: the app answers it itself."""
        for route, endpoint in self._shared:
            if (
                route.method == request.method
                and route.path == request.url.path
                and route.header in request.headers
            ):
                return await endpoint(request)
        return None

    def served_models(self) -> list[ServedModel]:
        return [ServedModel(m.server_model_id, m.provider) for m in self.settings.models]

    def _endpoint(self, name: str, wire_: GatewayWire, route: GatewayRoute) -> Endpoint | None:
        if route.kind == "generate":

            async def generate(request: Request) -> Response:
                return await self._generate(name, wire_, route, request)

            return generate
        if route.kind == "count_tokens" and wire_.count_tokens_body is not None:
            count_body = wire_.count_tokens_body

            async def count_tokens(request: Request) -> Response:
                try:
                    await self.caller(wire_, request)
                    inbound, _ = await self._inbound(wire_, route, request)
                except Refusal as refusal:
                    return self._refused(name, wire_, refusal)
                estimate = estimate_input_tokens(inbound.messages, inbound.config)
                return JSONResponse(count_body(estimate), headers={_ESTIMATE_HEADER: "true"})

            return count_tokens
        if route.kind == "retrieve":

            async def retrieve(request: Request) -> Response:
                return await self._retrieve(name, wire_, request)

            return retrieve
        if route.kind == "reconnect":

            async def reconnect(request: Request) -> Response:
                return await self._reconnect(name, wire_, request)

            return reconnect
        if route.kind == "models" and wire_.models_body is not None:
            models_body = wire_.models_body

            async def models(request: Request) -> Response:
                try:
                    await self.caller(wire_, request)
                except Refusal as refusal:
                    return self._refused(name, wire_, refusal)
                return JSONResponse(models_body(self.served_models()))

            return models
        return None  # a route kind this wire gives no body for

    # --- checks ---------------------------------------------------------------------------

    async def caller(self, wire_: GatewayWire, request: Request) -> Caller:
        """The caller (`Callers.identify`; its key hash is None on an open server), or a 401
        `Refusal`."""
        key = wire_.read_key(request.headers, request.query_params)
        authorization = None if key is None else f"Bearer {key}"
        found = await self.keys.identify(authorization, time.time())
        if found is None:
            raise Refusal(
                401,
                "AuthenticationError",
                "missing or wrong API key: send one of the server's keys the way this API "
                "takes its key",
                outcome="unauthorized",
            )
        return found

    def _refused(self, name: str, wire_: GatewayWire, refusal: Refusal) -> Response:
        self.metrics.requests.inc(name, refusal.outcome)
        return wire_error(wire_, refusal_error(refusal))

    async def _inbound(
        self, wire_: GatewayWire, route: GatewayRoute, request: Request
    ) -> tuple[InboundRequest, int]:
        """The request decoded from the caller's wire, and the size of the body it came in (a
        large one is parsed and decoded in a worker thread: `limits.off_loop`)."""
        limits = self.settings.limits
        body = await read_body(request, limits.max_body_bytes, limits.body_timeout_seconds)
        call = InboundCall(
            route,
            dict(request.path_params),
            dict(request.query_params),
            {k.lower(): v for k, v in request.headers.items()},
        )
        return await off_loop(len(body), self._decode, wire_, call, body), len(body)

    def _decode(self, wire_: GatewayWire, call: InboundCall, body: bytes) -> InboundRequest:
        data = json_object(body)
        try:
            return wire_.decode_request(data, call, self.seal)
        except InboundRequestError as exc:
            fields = {"param": exc.param} if exc.param else {}
            raise Refusal(
                exc.status,
                "InvalidRequestError",
                str(exc),
                outcome="invalid_request",
                fields=fields,
            ) from None
        except FidelityForgedError as exc:
            raise invalid_request(str(exc)) from None

    def _config(self, name: str, inbound: InboundRequest, upstream: str) -> Config:
        """The request's config, with the wire's native fields for a same-protocol upstream; a
        400 when the request needs those fields and the upstream speaks another protocol."""
        if inbound.native_required and upstream != name:
            first = inbound.native_required[0]
            raise Refusal(
                400,
                "UnsupportedParameterError",
                f"{first} is served only by an upstream that speaks {name}; the model "
                f"{inbound.model!r} is served by {upstream}: leave it out, or choose a model "
                f"served by {name}",
                outcome="invalid_request",
                fields={"param": first.split(" ", 1)[0]},
            )
        config = inbound.config
        dropped = list(inbound.ignored)
        if inbound.native_fields:
            if upstream == name:
                native = dict(inbound.native_fields)
                extra = merge_extra_body(config.get("extra_body", {}), native, name)
                config = {**config, "extra_body": extra}
            else:
                dropped += list(inbound.native_fields)
        if inbound.upstream_headers and upstream != name:  # a same-protocol one gets them
            dropped += [f"header {h}" for h in inbound.upstream_headers]
        if dropped:
            log.info(
                "gateway %s -> %s: ignored %s", name, upstream, ", ".join(sorted(set(dropped)))
            )
        return config

    # --- a turn ----------------------------------------------------------------------------

    async def _generate(
        self, name: str, wire_: GatewayWire, route: GatewayRoute, request: Request
    ) -> Response:
        with self.relay.arrival():  # until the stream starts (then it counts as starting)
            started = await self._start(name, wire_, route, request)
        if isinstance(started, Response):
            return started
        return await self._answer(wire_, started)

    async def _start(
        self, name: str, wire_: GatewayWire, route: GatewayRoute, request: Request
    ) -> WriteContext | Response:
        """The checks, then the stream's start: its writer's context, or the refusal."""
        try:
            found = await self.caller(wire_, request)
            caller = found.holder
            inbound, size = await self._inbound(wire_, route, request)
            entry = self.settings.model(inbound.model)
            if entry is None:
                raise not_found(
                    f"the model {inbound.model!r} is not served here; list the models this "
                    "server serves for the ids it knows",
                    outcome="unknown_model",
                )
            upstream = upstream_protocol(entry)
            config = self._config(name, inbound, upstream)
            messages = inbound.messages
            if inbound.continues is not None:
                messages = await self._history(name, inbound.continues, caller) + messages
            created = int(time.time())
            meta = self._meta(name, inbound, upstream, created, messages)
            try:
                await off_loop(size, check_upstream_request, entry, messages, config)
                call = wire.StreamRequest(
                    inbound.model,
                    messages,
                    config,
                    caller,
                    meta,
                    # a fallback of another protocol gets the config that protocol can take
                    config_for=lambda protocol: self._config(name, inbound, protocol),
                    key=found if found.secret is not None else None,
                )
                response_id = await self.relay.start(entry, call, size)
            except ModelstreamError as exc:
                raise bad_input(exc) from None
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise unexpected_shape(exc) from None
            if inbound.conversation is not None:
                await self._name(name, caller, inbound.conversation, response_id)
        except Refusal as refusal:
            return self._refused(name, wire_, refusal)
        return WriteContext(
            response_id=response_id,
            model=inbound.model,
            created=created,
            upstream=upstream,
            seal=self.seal,
            request=inbound,
        )

    async def _answer(self, wire_: GatewayWire, ctx: WriteContext) -> Response:
        """A started stream's answer: its error, its whole turn, or its stream in the wire."""
        response_id, inbound = ctx.response_id, ctx.request
        reader = self.relay.store.read(response_id, 0, idle_timeout=self.settings.keepalive_seconds)
        try:
            first = await _first_entries(reader)
        except StoreError as exc:
            await reader.aclose()
            log.error("stream %s: reading from the store failed: %s", stream_ref(response_id), exc)
            return wire_error(wire_, _store_lost())
        if not first or first[0][1].startswith(_ERROR_ENTRY):
            await reader.aclose()
            error = _error_of(first[0][1]) if first else _never_finished()
            return wire_error(wire_, error)
        headers = {wire.RESPONSE_ID_HEADER: response_id}
        answered = self.relay.deployment_of(response_id)
        if answered is not None:  # the turn's first event came from it: its protocol writes
            headers[wire.DEPLOYMENT_HEADER] = answered.deployment
            ctx = dataclasses.replace(ctx, upstream=upstream_protocol(answered))
        if not inbound.stream or wire_.writer is None:
            return await self._final(wire_, ctx, reader, first, headers)
        content_type = inbound.content_type or wire_.content_type
        body = self._frames(wire_.writer(ctx), reader, first, content_type)
        response = EventStreamResponse(body, {**SSE_HEADERS, **wire_.stream_headers, **headers})
        response.headers["content-type"] = content_type
        return response

    async def _frames(
        self,
        writer: StreamWriter,
        reader: AsyncGenerator[list[Entry], None],
        first: list[Entry],
        content_type: str,
        skip: int = 0,
    ) -> AsyncGenerator[bytes, None]:
        """The caller's wire frames of the stored entries, as they arrive; the first `skip`
        frames are left out (a resume: the client has them)."""
        keepalive = wire.KEEPALIVE if content_type.startswith("text/event-stream") else b""
        burst = BurstClock()
        priority = self.relay.priority
        ended = False
        async with contextlib.aclosing(reader):
            batch: list[Entry] | None = first
            try:
                while batch is not None:
                    if not batch:
                        if keepalive:
                            yield keepalive
                    else:
                        frames, ended = _write(writer, batch)
                        if skip:
                            dropped = min(skip, len(frames))
                            frames, skip = frames[dropped:], skip - dropped
                        if frames:
                            yield b"".join(frames)
                        if ended:
                            return
                        if priority.must_yield(burst):  # a first event elsewhere first
                            await priority.yield_to_starts()
                    batch = await anext(reader, None)
            except StoreError as exc:
                log.error("a gateway stream lost its store: %s", exc)
                yield b"".join(writer.fail(_store_lost()))
                return
        if not ended:  # the store ended the stream without its end: never a normal finish
            yield b"".join(writer.fail(_never_finished()))

    async def _retrieve(self, name: str, wire_: GatewayWire, request: Request) -> Response:
        """A stored turn again: the whole answer, or (`?stream=true`) its stream from after the
        frame numbered `starting_after`, on any instance that shares the store."""
        response_id = request.path_params["response_id"]
        try:
            caller = (await self.caller(wire_, request)).holder
            meta = await self.relay.meta_for(response_id, caller or "")
            context = _context_of(meta, name)
            if context is None:
                raise not_found(
                    f"no response {response_id!r}: it never existed, or it finished more than "
                    f"{self.settings.retain_seconds:g} s ago (retain_seconds)"
                )
            after = request.query_params.get("starting_after")
            if after is not None and not after.isdigit():
                raise invalid_request(
                    "starting_after must be a sequence number", param="starting_after"
                )
        except Refusal as refusal:
            return self._refused(name, wire_, refusal)
        self.metrics.requests.inc(name, "resumed")
        ctx = self._stored_context(response_id, context)
        reader = self.relay.store.read(response_id, 0, idle_timeout=self.settings.keepalive_seconds)
        headers = {wire.RESPONSE_ID_HEADER: response_id}
        if request.query_params.get("stream", "").lower() != "true" or wire_.writer is None:
            try:
                first = await _first_entries(reader)
            except StoreError:
                await reader.aclose()
                return wire_error(wire_, _store_lost())
            return await self._final(wire_, ctx, reader, first, headers)
        skip = int(after) + 1 if after is not None else 0
        body = self._frames(wire_.writer(ctx), reader, [], wire_.content_type, skip)
        response = EventStreamResponse(body, {**SSE_HEADERS, **headers})
        response.headers["content-type"] = wire_.content_type
        return response

    def _stored_context(self, response_id: str, context: dict[str, Any]) -> WriteContext:
        """The writer's context of a stored stream, from its meta (`_meta`)."""
        inbound = InboundRequest(
            context["model"], [], {}, stream=True, options=context.get("options") or {}
        )
        return WriteContext(
            response_id=response_id,
            model=context["model"],
            created=context["created"],
            upstream=context["upstream"],
            seal=self.seal,
            request=inbound,
        )

    async def _name(
        self, name: str, caller: str | None, conversation: str, response_id: str
    ) -> None:
        """Let the conversation's reconnect find this stream (`StreamStore.name_stream`)."""
        try:
            await self.relay.store.name_stream(
                _conversation_name(name, caller, conversation), response_id, _NAME_SECONDS
            )
        except StoreError as exc:  # the turn goes on; only its reconnect by name is lost
            log.error("stream %s: naming it failed: %s", stream_ref(response_id), exc)

    async def _reconnect(self, name: str, wire_: GatewayWire, request: Request) -> Response:
        """A conversation's last stream again, from its start, while the store keeps it (on
        any instance that shares the store); 204 when there is none: the client has nothing
        to resume."""
        conversation = request.path_params["conversation"]
        try:
            caller = (await self.caller(wire_, request)).holder
        except Refusal as refusal:
            return self._refused(name, wire_, refusal)
        try:
            found = await self.relay.store.named_stream(
                _conversation_name(name, caller, conversation)
            )
            meta = None if found is None else await self.relay.meta_for(found, caller or "")
        except StoreError as exc:
            log.error("a reconnect lost its store: %s", exc)
            return wire_error(wire_, _store_lost())
        context = _context_of(meta, name)
        if found is None or context is None or wire_.writer is None:
            return Response(status_code=204)
        self.metrics.requests.inc(name, "resumed")
        reader = self.relay.store.read(found, 0, idle_timeout=self.settings.keepalive_seconds)
        try:
            first = await _first_entries(reader)
        except StoreError:
            await reader.aclose()
            return wire_error(wire_, _store_lost())
        writer = wire_.writer(self._stored_context(found, context))
        body = self._frames(writer, reader, first, wire_.content_type)
        headers = {**SSE_HEADERS, **wire_.stream_headers, wire.RESPONSE_ID_HEADER: found}
        response = EventStreamResponse(body, headers)
        response.headers["content-type"] = wire_.content_type
        return response

    async def _final(
        self,
        wire_: GatewayWire,
        ctx: WriteContext,
        reader: AsyncGenerator[list[Entry], None],
        first: list[Entry],
        headers: dict[str, str],
    ) -> Response:
        """A non-stream answer: the whole turn, accumulated, or the error that ended it."""
        message, error = await _collect(reader, first, ctx.response_id)
        if message is None:
            return wire_error(wire_, error or _never_finished())
        try:
            body = wire_.final_body(ctx, message)
        except UnsupportedOutputError as exc:  # e.g. an image, asked of a text-only wire
            return wire_error(wire_, GatewayError(502, "UnsupportedOutputError", str(exc)))
        return JSONResponse(body, headers=headers)

    async def _history(self, name: str, response_id: str, caller: str | None) -> list[Message]:
        """The messages of a kept turn and its answer, for a request that continues it; a 400
        naming the field when there is no such finished, kept turn for this key."""
        meta = await self.relay.meta_for(response_id, caller or "")
        context = _context_of(meta, name)
        if context is None or "messages" not in context:
            kept = "" if context is None else " (it was not stored: store was false)"
            raise _not_continuable(
                f"no stored response {response_id!r} to continue{kept}; the server keeps a turn "
                f"for {self.settings.retain_seconds:g} s (retain_seconds)"
            )
        reader = self.relay.store.read(response_id, 0, idle_timeout=self.settings.keepalive_seconds)
        try:
            answer, _ = await _collect(reader, [], response_id)
        except StoreError:
            raise store_unavailable() from None
        if answer is None:
            raise _not_continuable(f"the response {response_id!r} did not finish")
        return [*loads_messages(orjson.dumps(context["messages"])), answer]

    def _meta(
        self,
        name: str,
        inbound: InboundRequest,
        upstream: str,
        created: int,
        messages: list[Message],
    ) -> str:
        """What a resume or a continuation of this stream needs (`StreamRequest.meta`)."""
        context: dict[str, Any] = {
            "wire": name,
            "model": inbound.model,
            "created": created,
            "upstream": upstream,
            "options": dict(inbound.options),
        }
        if inbound.keep:
            kept = orjson.loads(dumps(messages))
            if len(orjson.dumps(kept)) <= _KEEP_FACTOR * self.settings.limits.max_body_bytes:
                context["messages"] = kept
        try:
            return orjson.dumps(context).decode()
        except TypeError:  # options a wire keeps that are not JSON: not resumable
            log.warning(
                "gateway %s: this stream's options are not JSON; it cannot be resumed", name
            )
            return ""


async def _collect(
    reader: AsyncGenerator[list[Entry], None], first: list[Entry], response_id: str
) -> tuple[Message | None, GatewayError | None]:
    """A stored turn read to its end: the final assistant message, or the error that ended it
    (both None: the store ended the stream without its end). Closes `reader`."""
    items: list[DoneItem] = []
    async with contextlib.aclosing(reader):
        batch: list[Entry] | None = first
        while batch is not None:
            for _, data in batch:
                if data.startswith(_ERROR_ENTRY):
                    return None, _error_of(data)
                event = loads_event(data)
                if event["event_type"] == "stop":
                    message: Message = {
                        "role": "assistant",
                        "content_items": items,
                        "usage_metadata": event["usage_metadata"],
                        "finish_reason": event["finish_reason"],
                    }
                    return message, None
                items += [
                    i  # type: ignore[misc]
                    for i in event["content_items"]
                    if i["type"].endswith(".done")
                ]
            batch = await anext(reader, None)
    log.warning("stream %s ended in the store without its end", stream_ref(response_id))
    return None, None


async def _first_entries(reader: AsyncGenerator[list[Entry], None]) -> list[Entry]:
    """The first non-empty batch of a stream (keep-alive batches skipped); [] if it ended."""
    async for batch in reader:
        if batch:
            return batch
    return []


def estimate_input_tokens(messages: Sequence[Message], config: Config) -> int:
    """About how many tokens a request's input is (module constants say how)."""
    size = len(str(config.get("system_prompt", "")).encode())
    if config.get("tools"):
        size += len(orjson.dumps(config["tools"], default=str))
    images = 0
    for message in messages:
        for item in message["content_items"]:
            if item["type"] == "image_url.done":
                images += 1
                continue
            for key in ("text", "thinking"):
                value = item.get(key)
                if isinstance(value, str):
                    size += len(value.encode())
            if item["type"] == "tool_call.done":
                size += len(orjson.dumps(item.get("arguments", {})))
            images += len(item.get("images", []) if item["type"] == "tool_result.done" else [])
    return -(-size // _BYTES_PER_TOKEN) + images * _IMAGE_TOKENS


def _conversation_name(wire_name: str, caller: str | None, conversation: str) -> str:
    """A conversation's stream name: its wire's, and a hash of the caller's key hash and the
    caller's name for it, so no other key finds it, and no text of a caller's reaches a key
    of the store as it is."""
    digest = hashlib.sha256(f"{caller or ''}\0{conversation}".encode()).hexdigest()
    return f"{wire_name}:{digest}"


def _context_of(meta: str | None, name: str) -> dict[str, Any] | None:
    """The stored context of a stream of wire `name` (None: unknown, or another wire's)."""
    if not meta:
        return None
    try:
        context = orjson.loads(meta)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(context, dict) or context.get("wire") != name:
        return None
    return context


def _write(writer: StreamWriter, batch: Sequence[Entry]) -> tuple[list[bytes], bool]:
    """The frames of stored entries, and whether the stream ended with them. An event the
    writer cannot write (its grammar check refused it: a bug upstream of it) ends the stream
    with the wire's error, never a normal end."""
    frames: list[bytes] = []
    for _, data in batch:
        if data.startswith(_ERROR_ENTRY):
            frames += writer.fail(_error_of(data))
            return frames, True
        event = loads_event(data)
        try:
            frames += writer.feed(event)
        except (ModelstreamError, ValueError) as exc:
            log.error("a gateway writer refused an event: %s: %s", type(exc).__name__, exc)
            frames += writer.fail(GatewayError(502, type(exc).__name__, str(exc)))
            return frames, True
        if event["event_type"] == "stop":
            return frames, True
    return frames, False


def _error_of(entry: bytes) -> GatewayError:
    error: dict[str, Any] = orjson.loads(entry)["error"]
    return GatewayError.from_error_object(error)


def _not_continuable(message: str) -> Refusal:
    return Refusal(
        400,
        "InvalidRequestError",
        message,
        outcome="invalid_request",
        fields={"param": "previous_response_id"},
    )


def _never_finished() -> GatewayError:
    return GatewayError(
        502, "IncompleteStreamError", "the upstream stream ended before it was finished"
    )


def _store_lost() -> GatewayError:
    return GatewayError(
        503,
        "StoreUnavailableError",
        "the server lost its stream store while relaying this stream; retry the turn",
        retry_after=1,
    )
