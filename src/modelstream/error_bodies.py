"""A provider's JSON error document, read into the facts of a `ProviderError`. Sans-IO: the
HTTP client reads a refused request's body with it, and `StreamDecoder` a 200 response whose
body is one error document instead of an event stream.

The three error shapes are told apart by their keys, so one reader serves every protocol:
OpenAI and compatibles `{"error": {"type", "code", "message"}}`, Anthropic
`{"type": "error", "error": {"type", "message"}}`, Gemini `{"error": {"code", "status",
"message", "details"}}` (a stream request's error may come wrapped in a list). A body that is not
JSON (a proxy's HTML page) gives its first characters as the message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from .errors import ProviderError

_PREVIEW = 500
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
# Error types, statuses and codes that say "try again later": OpenAI, Anthropic, Gemini.
_RETRYABLE_KINDS = frozenset(
    {
        "server_error",
        "rate_limit_exceeded",
        "rate_limit_error",
        "overloaded_error",
        "server_is_overloaded",
        "service_unavailable",
        "slow_down",
        "timeout",
        "timeout_error",
        "api_error",
        "UNAVAILABLE",
        "RESOURCE_EXHAUSTED",
        "INTERNAL",
        "DEADLINE_EXCEEDED",
    }
)


@dataclass(frozen=True)
class ErrorBody:
    """What an error body says; `message` is empty when it says nothing readable."""

    error_type: str | None
    code: str | int | None
    message: str
    retry_delay: float | None  # Gemini's RetryInfo, in seconds
    is_document: bool  # a provider's JSON error object, not a stray page


class ErrorBodyReader(Protocol):
    """A protocol's reader of its error responses: the body, and the response headers where the
    caller has them (Bedrock names the error type in a header)."""

    def __call__(self, body: bytes, headers: Mapping[str, str] | None = None) -> ErrorBody: ...


def read_error_body(body: bytes, headers: Mapping[str, str] | None = None) -> ErrorBody:
    """The provider's type, code and message from an error body of any protocol (these shapes
    carry everything in the body: `headers` is not read)."""
    try:
        document: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _not_a_document(body)
    if isinstance(document, list) and document and isinstance(document[0], dict):
        document = document[0]
    if not isinstance(document, dict):
        return _not_a_document(body)
    error = document.get("error", document)
    if isinstance(error, str):
        return ErrorBody(_str(document.get("type")), None, error, None, True)
    if not isinstance(error, dict):
        return _not_a_document(body)
    error_type = _str(error.get("type")) or _str(error.get("status"))
    code = error.get("code")
    if not isinstance(code, str | int) or isinstance(code, bool):
        code = None
    message = _str(error.get("message")) or ""
    is_document = "error" in document
    return ErrorBody(
        error_type, code, message, gemini_retry_delay(error.get("details")), is_document
    )


def error_document(
    body: bytes,
    *,
    provider: str | None,
    reader: ErrorBodyReader | None = None,
) -> ProviderError | None:
    """The `ProviderError` a 2xx body stands for when it is one JSON error document, else None.
    `reader` is the protocol's error-body reader (default: the shapes above). Whether it is
    retryable is read from the provider's error type, status and code."""
    read = (reader or read_error_body)(body)
    if not read.is_document:
        return None
    return ProviderError(
        read.message or "the provider answered with an error object and no message",
        error_type=read.error_type,
        code=read.code,
        retryable=is_retryable_kind(read.error_type, read.code),
        retry_after=read.retry_delay,
        provider=provider,
    )


def is_retryable_status(status: int) -> bool:
    """HTTP 408, 409, 429 and 5xx: the request may succeed when sent again."""
    return status in _RETRYABLE_STATUSES or status >= 500


def is_retryable_kind(error_type: str | None, code: str | int | None) -> bool:
    """Whether a provider's error type or code (Gemini's is an HTTP status) says the request may
    succeed when retried."""
    if isinstance(code, int) and is_retryable_status(code):
        return True
    return error_type in _RETRYABLE_KINDS or code in _RETRYABLE_KINDS


def _not_a_document(body: bytes) -> ErrorBody:
    return ErrorBody(None, None, body[:_PREVIEW].decode("utf-8", "replace").strip(), None, False)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def gemini_retry_delay(details: Any) -> float | None:
    """`google.rpc.RetryInfo.retryDelay` ("30s", "1.5s") when Gemini sends one."""
    if not isinstance(details, list):
        return None
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)s\s*", str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None
