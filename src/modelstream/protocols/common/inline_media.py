"""Base64 media inside provider payloads: Gemini `inlineData`, Responses image results, Chat
audio. One reading for every decoder, so the same bytes decode the same way everywhere."""

from __future__ import annotations

import base64
import binascii


def decode_base64(encoded: str) -> bytes | None:
    """The bytes of standard or URL-safe base64 text; None when it is not base64.

    `b64decode` drops characters outside its alphabet, so URL-safe text is told apart by its
    `-` and `_` first.
    """
    try:
        if "-" in encoded or "_" in encoded:
            return base64.urlsafe_b64decode(encoded)
        return base64.b64decode(encoded)
    except (binascii.Error, ValueError, TypeError):
        return None
