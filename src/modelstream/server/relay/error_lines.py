"""The error lines the relay writes itself, when something of its own fails rather than the
upstream: a stream's producer ends the stream with one, a reader writes one to its client."""

from __future__ import annotations

from ..stores import StoreUnavailableError

INTERNAL = {
    "error": {
        "type": "InternalServerError",
        "message": "the server failed while relaying this stream; its log says why",
    }
}


def store_lost(doing: str, then: str) -> dict[str, dict[str, str]]:
    """The error line of a stream whose store went away `doing` something."""
    message = f"the server lost its stream store {doing}; {then}"
    return {"error": {"type": StoreUnavailableError.__name__, "message": message}}
