"""What the server answers when it refuses a request, and the error that ends a stream the
server itself cancelled. Error bodies are `{"error": {"type", "message", ...}}` (SPEC §7); a
refusal's type is the error class a modelstream client raises for its status where there is one
(`AuthenticationError` for 401, `NotFoundError` for 404)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..errors import AuthenticationError, ModelstreamError, NotFoundError
from ..jsonwire import error_object

log = logging.getLogger("modelstream.server")


class Refusal(Exception):
    """A request refused before any stream began: an HTTP status and an error body.

    `outcome` is the label the refusal is counted under in /metrics."""

    def __init__(
        self,
        status: int,
        error_type: str,
        message: str,
        *,
        outcome: str,
        headers: Mapping[str, str] | None = None,
        fields: Mapping[str, Any] | None = None,
    ) -> None:
        self.status = status
        self.error_type = error_type
        self.message = message
        self.outcome = outcome
        self.headers = dict(headers or {})
        self.fields = dict(fields or {})
        super().__init__(message)

    def body(self) -> dict[str, Any]:
        return {"error": {"type": self.error_type, "message": self.message, **self.fields}}


def unauthorized() -> Refusal:
    return Refusal(
        401,
        AuthenticationError.__name__,  # the client raises that class (error_bodies)
        "missing or wrong API key: send one of the server's keys as 'Authorization: Bearer <key>'",
        outcome="unauthorized",
        headers={"www-authenticate": "Bearer"},
    )


def invalid_request(message: str, **fields: Any) -> Refusal:
    return Refusal(400, "InvalidRequestError", message, outcome="invalid_request", fields=fields)


def bad_input(exc: ModelstreamError) -> Refusal:
    """A 400 for messages or config the upstream cannot take, typed as the library's error."""
    body: dict[str, Any] = error_object(exc)["error"]
    error_type, message = body.pop("type"), body.pop("message")
    return Refusal(400, error_type, message, outcome="invalid_request", fields=body)


def unexpected_shape(exc: Exception) -> Refusal:
    """A 400 for a request an encoder could not handle (a shape the checks let through): the
    request's fault, told without Python's words for it; the operator's log gets the error's
    type (never the request's content)."""
    log.warning("a request of an unexpected shape: encoding it raised %s", type(exc).__name__)
    return invalid_request(
        "the messages or config have a shape the server cannot encode for this model; see "
        "docs/protocol.md for the message format"
    )


def store_unavailable() -> Refusal:
    return Refusal(
        503,
        "StoreUnavailableError",
        "the server's stream store is unavailable; retry later",
        outcome="store_unavailable",
        headers={"retry-after": "1"},
    )


def not_found(message: str, *, outcome: str = "not_found") -> Refusal:
    return Refusal(404, NotFoundError.__name__, message, outcome=outcome)


class StreamCancelledError(ModelstreamError):
    """The server cancelled the upstream call: nobody resumed the stream within the grace
    period after its client dropped, or the server shut down."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason  # "abandoned" or "shutdown"
        super().__init__(message)

    def fields(self) -> dict[str, Any]:
        return {"reason": self.reason, "partial_status": "cancelled"}


def abandoned(grace_seconds: float) -> StreamCancelledError:
    return StreamCancelledError(
        "abandoned",
        f"no client read this stream for {grace_seconds:g} s after its connection dropped, so "
        "the server cancelled the upstream call; the events before this one are the partial turn",
    )


def shutting_down() -> StreamCancelledError:
    return StreamCancelledError(
        "shutdown", "the server shut down and cancelled the upstream call; retry the turn"
    )
