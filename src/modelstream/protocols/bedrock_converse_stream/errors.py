"""How Bedrock names its errors: the exception type of a refused request (`x-amzn-ErrorType`,
`error_body.py`) and of an event-stream exception message, which spells it with a small
initial (`throttlingException`). A bad key is read whatever the status: AWS says it with a 403."""

from __future__ import annotations

from ...error_bodies import ErrorWords
from ..anthropic_messages.errors import ERROR_WORDS as ANTHROPIC_ERROR_WORDS

ERROR_WORDS = ErrorWords(
    bad_key=frozenset(
        {
            "UnrecognizedClientException",  # the access key or token is not valid
            "InvalidSignatureException",
            "InvalidClientTokenId",
            "ExpiredTokenException",
        }
    ),
    permission_denied=frozenset({"AccessDeniedException"}),
    not_found=frozenset({"ResourceNotFoundException"}),
    rate_limited=frozenset(
        {"ThrottlingException", "throttlingException", "ServiceQuotaExceededException"}
    ),
    overloaded=frozenset({"ServiceUnavailableException", "serviceUnavailableException"}),
    server_error=frozenset(
        {"InternalServerException", "internalServerException", "modelStreamErrorException"}
    ),
    bad_request=frozenset({"ValidationException", "validationException"}),
    # a ValidationException's message; Claude through Bedrock words it as Anthropic does
    context_window_messages=frozenset({"input is too long for requested model"})
    | ANTHROPIC_ERROR_WORDS.context_window_messages,
)
