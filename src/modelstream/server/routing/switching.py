"""Which failures move a turn to its next deployment, and which do not: a failure that says
nothing about the request (the deployment is unreachable, slow, throttled, overloaded, broken,
or refuses its own key) moves it; a request the provider found wrong (400) would fail anywhere.

Only failures before the first event reach here: once an event has been relayed, the turn
ends with its error and its partial, as without a router (`relay.attempts`)."""

from __future__ import annotations

from ...errors import (
    AuthenticationError,
    IncompleteStreamError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
    StreamTimeoutError,
)

# First match wins: a subclass before its base.
_REASONS: tuple[tuple[type[StreamError], str], ...] = (
    (ProviderConnectionError, "connect"),
    (StreamTimeoutError, "timeout"),
    (IncompleteStreamError, "broken"),  # a disconnect or a corrupted frame before any event
    (RateLimitError, "rate_limited"),
    (OverloadedError, "overloaded"),
    (ServerError, "server_error"),
    (AuthenticationError, "key_refused"),  # the deployment's key, not the caller's
    (PermissionDeniedError, "key_refused"),
    (NotFoundError, "model_not_found"),  # this deployment does not serve the model
)


def switch_reason(error: StreamError) -> str | None:
    """Why `error` (before the turn's first event) moves the turn to the next deployment, as a
    word for metrics and traces; None when it does not."""
    for kind, reason in _REASONS:
        if isinstance(error, kind):
            return reason
    if isinstance(error, ProviderError):
        if error.status is not None and error.status >= 500:
            return "server_error"
        if error.status == 429:
            return "rate_limited"
        if error.retryable:
            return "retryable"
    return None


def cooldown_hint(error: StreamError) -> float | None:
    """The seconds a throttled deployment asked to be left alone (`retry-after`), if any."""
    if isinstance(error, ProviderError) and error.retry_after is not None:
        return max(0.0, float(error.retry_after))
    return None
