"""When to try a request again, and how long to wait first. Pure: the clock, the random source
and the sleep are passed in by the IO shells.

A call is retried only while no event has reached the caller (SPEC §6), so an event is never
delivered twice. Retryable: connect errors, read errors and timeouts before the first event,
HTTP 408/409/429/5xx, and an error event the provider marks retryable (e.g. Anthropic's
`overloaded_error`) before the first event. The wait is `Retry-After` when the provider sends one
(seconds or an HTTP date; also `retry-after-ms`) — a provider that asks for more than
`max_retry_after` seconds is not retried, its `ProviderError` carries `retry_after` instead —
else exponential backoff with full jitter: uniform in [0, min(max_delay, base_delay·2^(n−1))].

What a client takes as `retry` (`retry_policy_from`): a `RetryPolicy`, an int (attempts in all,
the first included), or `False`/`0` (one attempt, no retries). A call's `max_retries=N` counts
the retries only: N + 1 attempts.

A client's `on_retry` hears each retry as it starts (a `RetryNotice`), so a caller can say why
nothing arrives for a while instead of waiting in silence.
"""

from __future__ import annotations

import email.utils
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from ..errors import ProviderConnectionError, ProviderError, StreamError, StreamTimeoutError


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts a call gets and how long to wait between them (seconds)."""

    max_attempts: int = 3  # attempts in all, the first included; 1 disables retries
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 30.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if min(self.base_delay, self.max_delay, self.max_retry_after) < 0:
            raise ValueError("delays must not be negative")


NO_RETRIES = RetryPolicy(max_attempts=1)
# What a client's `retry=` accepts (module docstring).
RetryOption = RetryPolicy | int | Literal[False]


def retry_policy_from(value: object, parameter: str = "retry") -> RetryPolicy:
    """The `RetryPolicy` a setting stands for; a `TypeError` naming `parameter` for anything
    else (checked when the client is made, not when a retry is first needed)."""
    if isinstance(value, RetryPolicy):
        return value
    if value is False or value == 0:
        return NO_RETRIES
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{parameter} must be at least 1 attempt (0 or False: no retries)")
        return RetryPolicy(max_attempts=value)
    raise TypeError(
        f"{parameter} must be an int (attempts in all, the first included), a "
        f"modelstream.RetryPolicy or False (no retries), got {type(value).__name__} {value!r}"
    )


def with_max_retries(policy: RetryPolicy, max_retries: object) -> RetryPolicy:
    """`policy` with `max_retries` retries after the first attempt (a call's override)."""
    if not isinstance(max_retries, int) or isinstance(max_retries, bool):
        raise TypeError(
            f"max_retries must be an int (retries after the first attempt), got "
            f"{type(max_retries).__name__} {max_retries!r}"
        )
    if max_retries < 0:
        raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
    return replace(policy, max_attempts=max_retries + 1)


def parse_retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP date relative
    to `now`, Unix seconds); None when absent or unreadable."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, float(when.timestamp()) - now)


def backoff_delay(policy: RetryPolicy, attempt: int, random: Callable[[], float]) -> float:
    """Full-jitter backoff after failed attempt number `attempt` (1-based)."""
    ceiling = min(policy.max_delay, policy.base_delay * 2.0 ** (attempt - 1))
    return random() * ceiling


def retry_delay(
    policy: RetryPolicy,
    attempt: int,
    *,
    retryable: bool,
    retry_after: float | None,
    random: Callable[[], float],
) -> float | None:
    """Seconds to wait before the next attempt, or None when the failure is final."""
    if not retryable or attempt >= policy.max_attempts:
        return None
    if retry_after is not None:
        return retry_after if retry_after <= policy.max_retry_after else None
    return backoff_delay(policy, attempt, random)


@dataclass(frozen=True)
class RetryNotice:
    """A retry about to start, as a client's `on_retry` hears it before the wait begins.

    `str(notice)` is the line a person reads: `429, retrying in 2.0 s (attempt 2/3)`."""

    cause: str  # what failed, in a word or two: "429", "idle timeout", "connection lost", ...
    delay: float  # seconds of waiting before the attempt starts
    attempt: int  # the attempt about to start: 2 for the first retry
    max_attempts: int  # attempts in all, the first included
    error: StreamError  # the failure that ended the previous attempt

    def __str__(self) -> str:
        return (
            f"{self.cause}, retrying in {self.delay:.1f} s "
            f"(attempt {self.attempt}/{self.max_attempts})"
        )


_CONNECT_FAILURES = {
    "dns": "host not found",
    "refused": "connection refused",
    "tls": "TLS handshake failed",
}


def retry_cause(error: StreamError) -> str:
    """What failed, in a word or two: the HTTP status when there was one (`"429"`), else the
    kind of failure (`"overloaded"`, `"idle timeout"`, `"connection refused"`, ...)."""
    if isinstance(error, ProviderError):
        # an error event, or a 2xx whose body was an error document, has no status
        return str(error.status) if error.status is not None else error.cause
    if isinstance(error, StreamTimeoutError):
        return f"{error.timeout} timeout"
    if isinstance(error, ProviderConnectionError):
        return _CONNECT_FAILURES.get(error.reason, "connection failed")
    return "connection lost"  # the connection broke before the first event
