"""Bedrock's HTTP error shape: the body is `{"message": "..."}` (some AWS services write
`Message`), the error's type travels in the `x-amzn-ErrorType` header as
`ThrottlingException:http://internal.amazon.com/coral/...` (the part before the colon is the
type); AWS JSON services may also name it in the body's `__type` (`namespace#Type`).

The client passes the response headers with the body; a 2xx body read by the sans-IO decoder
has none, and then the type comes from `__type`, when present."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ...error_bodies import ErrorBody, read_error_body

ERROR_TYPE_HEADER = "x-amzn-errortype"


def read_bedrock_error_body(body: bytes, headers: Mapping[str, str] | None = None) -> ErrorBody:
    """Type and message of a refused Bedrock request (any other shape: the common reader)."""
    header_type = _header_type(headers)
    try:
        document: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        document = None
    if not isinstance(document, dict) or "error" in document:
        read = read_error_body(body)
        if header_type is None:
            return read
        return ErrorBody(
            header_type, read.code, read.message, read.retry_delay, read.is_document, read.reason
        )
    message = document.get("message", document.get("Message"))
    body_type = document.get("__type")
    error_type = header_type
    if error_type is None and isinstance(body_type, str) and body_type:
        error_type = body_type.rpartition("#")[2]
    return ErrorBody(
        error_type,
        None,
        message if isinstance(message, str) else "",
        None,
        isinstance(message, str) or error_type is not None,
    )


def _header_type(headers: Mapping[str, str] | None) -> str | None:
    if not headers:
        return None
    for name, value in headers.items():
        if name.lower() == ERROR_TYPE_HEADER and value:
            return value.partition(":")[0].strip() or None
    return None
