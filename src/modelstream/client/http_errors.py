"""An HTTP error response, read into a `ProviderError` with the provider's own type, code and
message (the body is read by the protocol's `read_error_body`, by default
`modelstream.error_bodies.read_error_body`, which knows the OpenAI, Anthropic and Google shapes),
as the subclass that names its cause (`error_bodies.provider_error`, with every provider's error
words: the registry's `ERROR_WORDS`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from http import HTTPStatus

from ..error_bodies import (
    ErrorBodyReader,
    ErrorWords,
    is_retryable_status,
    provider_error,
    read_error_body,
)
from ..errors import ProviderError
from ..protocols import ERROR_WORDS
from .retry import parse_retry_after

MAX_ERROR_BODY = 64 * 1024  # bytes of an error body read; the rest is not buffered


def provider_error_from_http(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    provider: str,
    now: float,
    model: str | None = None,
    redact: Callable[[str], str] | None = None,
    read_body: ErrorBodyReader = read_error_body,
    words: ErrorWords = ERROR_WORDS,
) -> ProviderError:
    """The error for a non-2xx response; `now` (Unix seconds) dates an HTTP-date Retry-After."""
    read = read_body(body, headers)
    message = read.message
    if not message:
        try:
            message = HTTPStatus(status).phrase
        except ValueError:
            message = "no error message"
    retry_after = parse_retry_after(headers, now)
    if retry_after is None:
        retry_after = read.retry_delay
    error = provider_error(
        message,
        status=status,
        error_type=read.error_type,
        code=read.code,
        reason=read.reason,
        retryable=is_retryable_status(status),
        retry_after=retry_after,
        provider=provider,
        model=model,
        words=words,
    )
    if redact is not None:  # the message may echo a credential: the signer masks it
        error.redact(redact)
    return error
