"""How OpenAI and the Chat Completions compatibles (DeepSeek, Z.ai, Moonshot, Alibaba, MiniMax,
OpenRouter) name their errors: the `type` and `code` of `{"error": {...}}` (OpenAI's error-code
reference), read by the core's `error_bodies` (the registry merges every protocol's words)."""

from __future__ import annotations

from ...error_bodies import ErrorWords

ERROR_WORDS = ErrorWords(
    # types and codes that say "try again later"; compatibles add their own spellings
    retryable=frozenset(
        {
            "server_error",
            "rate_limit_exceeded",
            "server_is_overloaded",
            "service_unavailable",
            "slow_down",
            "timeout",
        }
    ),
    bad_key=frozenset({"invalid_api_key"}),  # the 401's code
    not_found=frozenset({"model_not_found"}),
    rate_limited=frozenset({"rate_limit_exceeded", "insufficient_quota"}),
    overloaded=frozenset({"server_is_overloaded"}),
    server_error=frozenset({"server_error"}),
    bad_request=frozenset({"invalid_request_error"}),
    # "You exceeded your current quota, please check your plan and billing details": a 429 that
    # waiting does not lift, so it is never retried
    quota_exhausted=frozenset({"insufficient_quota"}),
    context_window_codes=frozenset({"context_length_exceeded"}),
    # "This model's maximum context length is N tokens"
    context_window_messages=frozenset({"maximum context length"}),
)
