"""How Google names a Gemini error: the `status` of `{"error": {"code", "status", ...}}` (the
google.rpc codes) and the `reason` of its ErrorInfo detail; Interactions and embeddings answer
with the same error object."""

from __future__ import annotations

from ...error_bodies import ErrorWords

ERROR_WORDS = ErrorWords(
    retryable=frozenset({"UNAVAILABLE", "RESOURCE_EXHAUSTED", "INTERNAL", "DEADLINE_EXCEEDED"}),
    # a bad key is UNAUTHENTICATED (401), or a 400 INVALID_ARGUMENT whose reason is the key
    bad_key=frozenset({"UNAUTHENTICATED", "API_KEY_INVALID"}),
    permission_denied=frozenset({"PERMISSION_DENIED"}),
    not_found=frozenset({"NOT_FOUND"}),
    rate_limited=frozenset({"RESOURCE_EXHAUSTED"}),
    overloaded=frozenset({"UNAVAILABLE"}),
    server_error=frozenset({"INTERNAL"}),
    bad_request=frozenset({"INVALID_ARGUMENT"}),
    # "The input token count (N) exceeds the maximum number of tokens allowed (M)."
    context_window_messages=frozenset({"exceeds the maximum number of tokens allowed"}),
)
