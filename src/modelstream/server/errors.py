"""The server's own refusals (the ones every web app shares are `..web.refusals`), and the error
that ends a stream the server itself cancelled. Error bodies are `{"error": {"type", "message",
...}}` (SPEC §7)."""

from __future__ import annotations

import logging
from typing import Any

from ..errors import ModelstreamError
from ..jsonwire import error_object
from ..web.refusals import Refusal, invalid_request

log = logging.getLogger("modelstream.server")


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


class StreamCancelledError(ModelstreamError):
    """The server cancelled the upstream call: nobody resumed the stream within the grace
    period after its client dropped, or the server shut down."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason  # "abandoned", "shutdown" or "stopped"
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
