"""How Anthropic names its errors: the `type` of `{"type": "error", "error": {"type", ...}}`
(Anthropic's errors reference), and its messages for a prompt that does not fit."""

from __future__ import annotations

from ...error_bodies import ErrorWords

ERROR_WORDS = ErrorWords(
    retryable=frozenset({"rate_limit_error", "overloaded_error", "timeout_error", "api_error"}),
    bad_key=frozenset({"authentication_error"}),  # 401
    permission_denied=frozenset({"permission_error"}),
    not_found=frozenset({"not_found_error"}),
    rate_limited=frozenset({"rate_limit_error"}),
    overloaded=frozenset({"overloaded_error"}),  # also its 529 status
    server_error=frozenset({"api_error"}),
    bad_request=frozenset({"invalid_request_error"}),
    context_window_messages=frozenset(
        {
            "prompt is too long",  # "prompt is too long: N tokens > M maximum"
            "exceed context limit",  # "input length and `max_tokens` exceed context limit"
        }
    ),
)
