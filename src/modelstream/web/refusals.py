"""What a web app answers when it refuses a request: an HTTP status and an error body
`{"error": {"type", "message", ...}}` (SPEC §7). A refusal's type is the error class a
modelstream client raises for its status where there is one (`AuthenticationError` for 401,
`NotFoundError` for 404)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import AuthenticationError, NotFoundError


class Refusal(Exception):
    """A request refused before any stream began: an HTTP status and an error body.

    `outcome` is the label the refusal is counted under in the server's /metrics."""

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


def not_found(message: str, *, outcome: str = "not_found") -> Refusal:
    return Refusal(404, NotFoundError.__name__, message, outcome=outcome)
