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

The words that name a cause are the providers', not this module's: each protocol package
declares its providers' `ErrorWords` (`Protocol.error_words`), the registry merges them into one
value (`modelstream.protocols.ERROR_WORDS`), and the readers here are given that value. The rules
(what is read first, which cause wins) stay here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
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


@dataclass(frozen=True)
class ErrorWords:
    """How providers name their errors: the type, status, code and reason words (and message
    phrases, in lower case) that say what went wrong. A protocol package declares its providers'
    words; `a | b` merges two sets of them."""

    retryable: frozenset[str] = frozenset()  # try again later
    bad_key: frozenset[str] = frozenset()  # the key or token is not valid (whatever the status)
    permission_denied: frozenset[str] = frozenset()
    not_found: frozenset[str] = frozenset()
    rate_limited: frozenset[str] = frozenset()
    overloaded: frozenset[str] = frozenset()
    server_error: frozenset[str] = frozenset()
    bad_request: frozenset[str] = frozenset()
    quota_exhausted: frozenset[str] = frozenset()  # a rate limit that waiting does not lift
    context_window_codes: frozenset[str] = frozenset()  # the prompt does not fit, by its code
    context_window_messages: frozenset[str] = frozenset()  # ... by its message (lower case)

    def __or__(self, other: ErrorWords) -> ErrorWords:
        return ErrorWords(
            **{
                field.name: getattr(self, field.name) | getattr(other, field.name)
                for field in fields(ErrorWords)
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
    words: ErrorWords,
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
        retryable=is_retryable_kind(read.error_type, read.code, words),
        retry_after=read.retry_delay,
        provider=provider,
        words=words,
    )


# --- the cause -------------------------------------------------------------------------------

# A status that names a cause on its own (any other 5xx: ServerError).
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
    words: ErrorWords,
) -> ProviderError:
    """The error a provider reported, as the `ProviderError` subclass that names its cause.

    `status` is the HTTP status of a refused request; an in-stream error passes None and its
    HTTP-like `code` (Gemini's, Bedrock's `originalStatusCode`) stands in for it. `retryable`
    is the caller's reading of the status or type, except that a used-up quota never is.
    `words` are the providers' names of causes (the registry's `ERROR_WORDS`)."""
    kinds = {kind for kind in (error_type, reason) if kind}
    if code is not None:
        kinds.add(str(code))
    lowered = message.lower() if message else ""
    cls = provider_error_class(_http_like(status, code), kinds, lowered, words)
    return cls(
        message,
        status=status,
        error_type=error_type,
        code=code,
        retryable=retryable and not (kinds & words.quota_exhausted),
        retry_after=retry_after,
        provider=provider,
        model=model,
    )


def provider_error_class(
    status: int | None, kinds: set[str], message: str, words: ErrorWords
) -> type[ProviderError]:
    """The subclass for an error with this status (or None), these type/code/reason words and
    this message (lower case). The context window and a bad key are read first, as providers
    send them under a generic status (Gemini says a bad key with a 400, AWS with a 403); then
    the status decides, then the words, causes tried in the order of `_causes`."""
    if status in (None, 400, 413, 422) and (
        kinds & words.context_window_codes
        or any(text in message for text in words.context_window_messages)
    ):
        return ContextWindowExceededError
    if kinds & words.bad_key and status in (None, 400, 401, 403):
        return AuthenticationError
    by_status = _by_status(status) if status is not None else None
    if by_status is not None:
        return by_status
    for cls, named in _causes(words):
        if kinds & named:
            return cls
    return ProviderError


def _causes(words: ErrorWords) -> tuple[tuple[type[ProviderError], frozenset[str]], ...]:
    """The causes an error's words may name when its status does not (an in-stream error has
    none), in the order they are tried."""
    return (
        (PermissionDeniedError, words.permission_denied),
        (NotFoundError, words.not_found),
        (RateLimitError, words.rate_limited),
        (OverloadedError, words.overloaded),
        (ServerError, words.server_error),
        (BadRequestError, words.bad_request),
    )


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


def is_retryable_kind(error_type: str | None, code: str | int | None, words: ErrorWords) -> bool:
    """Whether a provider's error type or code (Gemini's is an HTTP status) says the request may
    succeed when retried."""
    if isinstance(code, int) and is_retryable_status(code):
        return True
    return error_type in words.retryable or code in words.retryable


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
