"""What a wire protocol offers the gateway: the inbound half of its unit (SPEC §8).

The gateway is the same pipeline run twice (docs/gateway.md):

    caller's wire request ─► decode_request ─► InboundRequest (SPEC messages + config)
    caller ◄── writer frames ◄── StreamWriter.feed(event) ◄── the upstream's events

Each protocol that the server answers in (`Protocol.gateway`) gives one `GatewayWire`: its
routes, how a caller presents its key, the inbound request decoder, a writer factory (one
fresh, synchronous, sans-IO writer per stream: events in, that wire's frames out), the
non-stream body of a finished turn, and its error bodies. The server holds no wire knowledge of
its own: it routes, authenticates, relays and picks the HTTP status.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ...types import Config, Event, Message
from .fidelity_seal import FidelitySeal

RouteKind = Literal["generate", "count_tokens", "models", "embeddings", "retrieve", "reconnect"]


@dataclass(frozen=True)
class GatewayRoute:
    """One HTTP route a wire's clients call.

    `path` is a Starlette path (`/v1/messages`, `/{version}/models/{model}:generateContent`);
    `stream` is what the route itself says (Gemini's `:streamGenerateContent`), None when the
    body's `stream` field decides. `header`: the route answers only the requests that carry
    this header, because another API owns its path (Anthropic's models list is at OpenAI's
    `/v1/models`; its SDK sends `anthropic-version`)."""

    method: str
    path: str
    kind: RouteKind
    stream: bool | None = None
    header: str | None = None


@dataclass(frozen=True)
class InboundCall:
    """What the server read around a request body: the route it came in on and its params."""

    route: GatewayRoute
    path_params: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names


@dataclass(frozen=True)
class InboundRequest:
    """A caller's request as the SPEC request, plus what its wire needs to answer it.

    `options` holds the wire's own answer-shaping facts, read by its own writer only (Chat's
    `include_usage`, Responses' `store`, Gemini's `alt=sse`, ...). `native_fields` are request
    fields that go as they are (merged into the request body) to an upstream speaking this same
    protocol, and are dropped, logged, for any other (Anthropic's `context_management`); each
    wire documents which. `upstream_headers` likewise go to a same-protocol upstream only
    (Anthropic's `anthropic-beta`). `native_required` names the native fields without which
    the request would mean something else (Anthropic's server tools): an upstream of another
    protocol refuses the request, naming the first. `ignored` names the fields the decoder
    accepted and dropped as documented (docs/gateway.md), for the server's log."""

    model: str
    messages: list[Message]
    config: Config
    stream: bool
    options: Mapping[str, Any] = field(default_factory=dict)
    native_fields: Mapping[str, Any] = field(default_factory=dict)
    upstream_headers: Mapping[str, str] = field(default_factory=dict)
    native_required: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    # the streamed answer's content type when the request chose another than the wire's
    # (Gemini without `alt=sse`: a JSON array)
    content_type: str | None = None
    # the kept turn this request continues (Responses' `previous_response_id`): that turn's
    # messages and answer go before `messages`; `keep`: a later request may continue this one
    continues: str | None = None
    keep: bool = False
    # the caller's own name for the conversation (the AI SDK's chat id): a `reconnect` route
    # finds the conversation's last stream by it
    conversation: str | None = None


class InboundRequestError(Exception):
    """A request the gateway refuses before anything is sent: a 400 (or `status`) in the
    caller's error shape, naming the field (`param`) when one field is at fault."""

    def __init__(self, message: str, *, param: str | None = None, status: int = 400) -> None:
        self.param = param
        self.status = status
        super().__init__(message)


class UnsupportedOutputError(ValueError):
    """An item the caller's wire cannot carry in an answer (an image in a text-only wire): a
    writer ends its stream with the wire's error instead; `final_body` raises this."""


@dataclass(frozen=True)
class GatewayError:
    """An error to tell a caller, whatever raised it: an HTTP error before the stream began,
    or the in-stream error that ends it.

    Built from the server's error lines (`modelstream.jsonwire.error_object`: `{"type", "message",
    ...fields}`) by `GatewayError.from_error_object`; `status` is the HTTP status it stands for
    (a provider's own status when it gave one), `type` the library's error class name."""

    status: int
    type: str
    message: str
    retry_after: float | None = None
    param: str | None = None

    @classmethod
    def from_error_object(cls, error: Mapping[str, Any]) -> GatewayError:
        """From the inner dict of `{"error": {...}}` as the server stores it."""
        kind = str(error.get("type") or "InternalServerError")
        status = error.get("status")
        if not (isinstance(status, int) and 400 <= status <= 599):
            status = STATUS_BY_TYPE.get(kind, 502)
        retry_after = error.get("retry_after")
        message = str(error.get("provider_message") or error.get("message") or kind)
        param = error.get("parameter") if isinstance(error.get("parameter"), str) else None
        return cls(
            status=status,
            type=kind,
            message=message,
            retry_after=retry_after if isinstance(retry_after, int | float) else None,
            param=param,
        )

    @property
    def headers(self) -> dict[str, str]:
        """The HTTP headers an error response carries besides its body (`retry-after`)."""
        if self.retry_after is None:
            return {}
        value = float(self.retry_after)
        return {"retry-after": str(int(value)) if value.is_integer() else repr(value)}


# The HTTP status an error of the library stands for when it carries none of its own (a
# provider's ProviderError keeps the provider's). Cut-off and broken upstream streams are the
# upstream's failure seen through a gateway: 502; a timeout is 504.
STATUS_BY_TYPE: Mapping[str, int] = {
    "UnsupportedParameterError": 400,
    "InvalidConfigError": 400,
    "InvalidMessageError": 400,
    "InvalidRequest": 400,
    "BadRequestError": 400,
    "ContextWindowExceededError": 400,
    "AuthenticationError": 401,
    "Unauthorized": 401,
    "PermissionDeniedError": 403,
    "NotFoundError": 404,
    "NotFound": 404,
    "PayloadTooLarge": 413,
    "RateLimitError": 429,
    "TooManyStreams": 429,
    "ServerError": 500,
    "InternalServerError": 500,
    "OverloadedError": 529,
    "StoreUnavailableError": 503,
    "StoreFullError": 503,
    "StreamTimeoutError": 504,
    "PoolExhaustedError": 504,
    "StreamCancelledError": 499,
}


@dataclass(frozen=True)
class WriteContext:
    """What a wire's writer and final-body writer know about the turn they answer.

    `response_id` is the gateway's stream id (the writer derives its wire's ids from it:
    `chatcmpl-…`, `msg_…`, `resp_…`); `model` is the name the caller asked for; `created` the
    start in Unix seconds (the writer reads no clock); `upstream` the protocol the turn was
    served by: fidelity the caller's wire cannot carry natively is sealed (`seal`)."""

    response_id: str
    model: str
    created: int
    upstream: str
    seal: FidelitySeal
    request: InboundRequest


class StreamWriter(Protocol):
    """One stream in a wire: a pure state machine, fresh per stream.

    `feed` takes the events in order (SPEC §2 grammar) and returns the wire frames they complete,
    each a whole frame with its framing (`event: …\\ndata: …\\n\\n`); the `stop` event's frames
    end the stream (`[DONE]` where the wire has one). `fail` ends it instead with the wire's
    in-stream error (after closing nothing: an open item stays unfinished). Frames of a wire
    with numbered events (Responses' `sequence_number`) are numbered by their position in all
    the frames the writer returned, from 0, so a resume can skip by count."""

    def feed(self, event: Event) -> list[bytes]: ...

    def fail(self, error: GatewayError) -> list[bytes]: ...


def bearer_key(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """The key of `Authorization: Bearer <key>` (a `GatewayWire.read_key`: the OpenAI SDKs'
    way, and Anthropic's `auth_token`); None when none is sent."""
    del query
    scheme, _, key = (headers.get("authorization") or "").strip().partition(" ")
    key = key.strip()
    return key if scheme.lower() == "bearer" and key else None


@dataclass(frozen=True)
class ServedModel:
    """A model the server serves, as a models listing shows it."""

    id: str
    owned_by: str
    created: int = 0


@dataclass(frozen=True)
class GatewayWire:
    """The inbound half of a wire protocol's unit (module docstring)."""

    routes: tuple[GatewayRoute, ...]
    # the key a caller presented, from its headers (lower-case names) and query; None: none
    read_key: Callable[[Mapping[str, str], Mapping[str, str]], str | None]
    # (body, call, seal) -> the request; raises InboundRequestError (or FidelityForgedError)
    decode_request: Callable[[Any, InboundCall, FidelitySeal], InboundRequest]
    # a fresh writer per stream; None for a wire that never streams (embeddings)
    writer: Callable[[WriteContext], StreamWriter] | None
    # the finished turn's non-stream body: (context, the final assistant message)
    final_body: Callable[[WriteContext, Message], dict[str, Any]]
    error_body: Callable[[GatewayError], dict[str, Any]]
    models_body: Callable[[Sequence[ServedModel]], dict[str, Any]] | None = None
    # the answer of a count-tokens route (`{"input_tokens": n}`, `{"totalTokens": n}`)
    count_tokens_body: Callable[[int], dict[str, Any]] | None = None
    content_type: str = "text/event-stream; charset=utf-8"  # of a streamed answer
    # more headers of a streamed answer (the AI SDK's `x-vercel-ai-ui-message-stream: v1`)
    stream_headers: Mapping[str, str] = field(default_factory=dict)


__all__ = [
    "STATUS_BY_TYPE",
    "GatewayError",
    "GatewayRoute",
    "GatewayWire",
    "InboundCall",
    "InboundRequest",
    "InboundRequestError",
    "RouteKind",
    "ServedModel",
    "StreamWriter",
    "UnsupportedOutputError",
    "WriteContext",
    "bearer_key",
]
