"""An HTTP error response, read into a `ProviderError` with the provider's own type, code and
message.

The three error shapes are told apart by their keys, so one reader serves every protocol:
OpenAI and compatibles `{"error": {"type", "code", "message"}}`, Anthropic
`{"type": "error", "error": {"type", "message"}}`, Gemini `{"error": {"code", "status",
"message", "details"}}` (a stream request's error may come wrapped in a list). A body that is not
JSON (a proxy's HTML page) gives its first characters as the message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

import orjson

from ..errors import ProviderError
from .credentials import Secret
from .retry import is_retryable_status, parse_retry_after

MAX_ERROR_BODY = 64 * 1024  # bytes of an error body read; the rest is not buffered
_PREVIEW = 500


def provider_error_from_http(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    provider: str,
    now: float,
    secret: Secret | None = None,
) -> ProviderError:
    """The error for a non-2xx response; `now` (Unix seconds) dates an HTTP-date Retry-After."""
    error_type, code, message, retry_delay = _read_body(body)
    if not message:
        try:
            message = HTTPStatus(status).phrase
        except ValueError:
            message = "no error message"
    if secret is not None:
        message = secret.redact(message)
    retry_after = parse_retry_after(headers, now)
    if retry_after is None:
        retry_after = retry_delay
    return ProviderError(
        message,
        status=status,
        error_type=error_type,
        code=code,
        retryable=is_retryable_status(status),
        retry_after=retry_after,
        provider=provider,
    )


def _read_body(body: bytes) -> tuple[str | None, str | int | None, str, float | None]:
    try:
        document: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None, None, body[:_PREVIEW].decode("utf-8", "replace").strip(), None
    if isinstance(document, list) and document and isinstance(document[0], dict):
        document = document[0]
    if not isinstance(document, dict):
        return None, None, body[:_PREVIEW].decode("utf-8", "replace").strip(), None
    error = document.get("error", document)
    if isinstance(error, str):
        return _str(document.get("type")), None, error, None
    if not isinstance(error, dict):
        return None, None, body[:_PREVIEW].decode("utf-8", "replace").strip(), None
    error_type = _str(error.get("type")) or _str(error.get("status"))
    code = error.get("code")
    if not isinstance(code, str | int) or isinstance(code, bool):
        code = None
    message = _str(error.get("message")) or ""
    return error_type, code, message, _gemini_retry_delay(error.get("details"))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _gemini_retry_delay(details: Any) -> float | None:
    """`google.rpc.RetryInfo.retryDelay` ("30s", "1.5s") when Gemini sends one."""
    if not isinstance(details, list):
        return None
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)s\s*", str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None
