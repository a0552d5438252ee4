"""A provider's JSON error document, read into the facts of a `ProviderError`. Sans-IO: the
HTTP client reads a refused request's body with it, and `StreamDecoder` a 200 response whose
body is one error document instead of an event stream.

The three error shapes are told apart by their keys, so one reader serves every protocol:
OpenAI and compatibles `{"error": {"type", "code", "message"}}`, Anthropic
`{"type": "error", "error": {"type", "message"}}`, Gemini `{"error": {"code", "status",
"message", "details"}}` (a stream request's error may come wrapped in a list). A body that is not
JSON (a proxy's HTML page) gives its first characters as the message.

`provider_error` is the one place that turns those facts into an error: the subclass of
`ProviderError` that names the cause is chosen there, from the status (HTTP, or the HTTP-like
code an in-stream error carries) and the provider's error type, code, reason and message, for
refused requests, error documents and in-stream error events alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from .errors import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceededError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
)

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
    reason: str | None = None  # Gemini's ErrorInfo reason (API_KEY_INVALID, ...)


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
    details = error.get("details")
    return ErrorBody(
        error_type,
        code,
        message,
        gemini_retry_delay(details),
        is_document,
        gemini_error_reason(details),
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
    return provider_error(
        read.message or "the provider answered with an error object and no message",
        error_type=read.error_type,
        code=read.code,
        reason=read.reason,
        retryable=is_retryable_kind(read.error_type, read.code),
        retry_after=read.retry_delay,
        provider=provider,
    )


# --- the cause -------------------------------------------------------------------------------

# Error types, codes and reasons that name a cause when the status does not (an in-stream error
# has none), tried in this order. From the providers' error references: OpenAI (`type`,
# `code`), Anthropic (`type`), Gemini (`status`, ErrorInfo `reason`), Bedrock
# (`x-amzn-ErrorType` / exception type; the event-stream exceptions are spelled with a small
# initial). A bad key is read before the status: Gemini says it with a 400, AWS with a 403.
_BAD_KEY = frozenset(
    {
        "authentication_error",  # Anthropic 401
        "invalid_api_key",  # OpenAI 401 code
        "UNAUTHENTICATED",  # Google 401
        "API_KEY_INVALID",  # Gemini: a 400 INVALID_ARGUMENT whose reason is the key
        "UnrecognizedClientException",  # AWS 403: the access key or token is not valid
        "InvalidSignatureException",
        "InvalidClientTokenId",
        "ExpiredTokenException",
    }
)
_CAUSES: tuple[tuple[type[ProviderError], frozenset[str]], ...] = (
    (
        PermissionDeniedError,
        frozenset({"permission_error", "PERMISSION_DENIED", "AccessDeniedException"}),
    ),
    (
        NotFoundError,
        frozenset({"not_found_error", "model_not_found", "NOT_FOUND", "ResourceNotFoundException"}),
    ),
    (
        RateLimitError,
        frozenset(
            {
                "rate_limit_error",
                "rate_limit_exceeded",
                "insufficient_quota",
                "RESOURCE_EXHAUSTED",
                "ThrottlingException",
                "throttlingException",
                "ServiceQuotaExceededException",
            }
        ),
    ),
    (
        OverloadedError,
        frozenset(
            {
                "overloaded_error",
                "server_is_overloaded",
                "UNAVAILABLE",
                "ServiceUnavailableException",
                "serviceUnavailableException",
            }
        ),
    ),
    (
        ServerError,
        frozenset(
            {
                "api_error",
                "server_error",
                "INTERNAL",
                "InternalServerException",
                "internalServerException",
                "modelStreamErrorException",
            }
        ),
    ),
    (
        BadRequestError,
        frozenset(
            {
                "invalid_request_error",
                "INVALID_ARGUMENT",
                "ValidationException",
                "validationException",
            }
        ),
    ),
)
# What a status says on its own (any other 5xx: ServerError).
_STATUS_CAUSES: dict[int, type[ProviderError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    413: BadRequestError,
    422: BadRequestError,
    429: RateLimitError,
    503: OverloadedError,
    529: OverloadedError,  # Anthropic's overloaded_error
}
# A quota used up, not a rate: waiting does not help, so it is not retried (OpenAI: "You
# exceeded your current quota, please check your plan and billing details").
_QUOTA_EXHAUSTED = frozenset({"insufficient_quota"})
# How each provider says the prompt does not fit the context window (OpenAI's code; the
# messages of OpenAI Chat and compatibles, OpenAI Responses, Anthropic (also through Bedrock),
# Gemini and Bedrock), matched in lower case.
_CONTEXT_WINDOW_CODES = frozenset({"context_length_exceeded"})
_CONTEXT_WINDOW_MESSAGES = (
    "maximum context length",  # OpenAI Chat: "This model's maximum context length is N tokens"
    "exceeds the context window",  # OpenAI Responses: "Your input exceeds the context window"
    "prompt is too long",  # Anthropic: "prompt is too long: N tokens > M maximum"
    "exceed context limit",  # Anthropic: "input length and `max_tokens` exceed context limit"
    "exceeds the maximum number of tokens allowed",  # Gemini: "The input token count (N) ..."
    "input is too long for requested model",  # Bedrock ValidationException
)


def provider_error(
    message: str,
    *,
    status: int | None = None,
    error_type: str | None = None,
    code: str | int | None = None,
    reason: str | None = None,
    retryable: bool = False,
    retry_after: float | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> ProviderError:
    """The error a provider reported, as the `ProviderError` subclass that names its cause.

    `status` is the HTTP status of a refused request; an in-stream error passes None and its
    HTTP-like `code` (Gemini's, Bedrock's `originalStatusCode`) stands in for it. `retryable`
    is the caller's reading of the status or type, except that a used-up quota never is."""
    kinds = {kind for kind in (error_type, reason) if kind}
    if code is not None:
        kinds.add(str(code))
    cls = provider_error_class(_http_like(status, code), kinds, message.lower() if message else "")
    return cls(
        message,
        status=status,
        error_type=error_type,
        code=code,
        retryable=retryable and not (kinds & _QUOTA_EXHAUSTED),
        retry_after=retry_after,
        provider=provider,
        model=model,
    )


def provider_error_class(status: int | None, kinds: set[str], message: str) -> type[ProviderError]:
    """The subclass for an error with this status (or None), these type/code/reason words and
    this message (lower case). The context window and a bad key are read first, as providers
    send them under a generic status (400, 403); then the status decides, then the words."""
    if status in (None, 400, 413, 422) and (
        kinds & _CONTEXT_WINDOW_CODES or any(text in message for text in _CONTEXT_WINDOW_MESSAGES)
    ):
        return ContextWindowExceededError
    if kinds & _BAD_KEY and status in (None, 400, 401, 403):
        return AuthenticationError
    by_status = _by_status(status) if status is not None else None
    if by_status is not None:
        return by_status
    for cls, words in _CAUSES:
        if kinds & words:
            return cls
    return ProviderError


def _by_status(status: int) -> type[ProviderError] | None:
    cause = _STATUS_CAUSES.get(status)
    if cause is None and 500 <= status <= 599:
        return ServerError
    return cause


def _http_like(status: int | None, code: str | int | None) -> int | None:
    """The status, or an in-stream error's HTTP-like integer code."""
    if status is not None:
        return status
    if isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599:
        return code
    return None


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


def gemini_error_reason(details: Any) -> str | None:
    """`google.rpc.ErrorInfo.reason` ("API_KEY_INVALID", ...) when Gemini sends one."""
    if not isinstance(details, list):
        return None
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("ErrorInfo"):
            return _str(detail.get("reason"))
    return None


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
