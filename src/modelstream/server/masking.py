"""The upstream key never leaves the server: every stored entry of a stream (events, and the
error that ends it) has the model's key masked before a reader or the store sees it. A provider
may echo the key in an in-stream error event or the model may repeat it in its text; HTTP error
bodies are masked by the client already (`Secret.redact`)."""

from __future__ import annotations

import orjson

from ..client.credentials import Secret

MASK = b"***"


class KeyMask:
    """Masks one key in JSON entries: the key as JSON writes it inside a string."""

    def __init__(self, key: Secret | None) -> None:
        value = key.reveal() if key is not None else ""
        self._needle = orjson.dumps(value)[1:-1] if value else b""

    def __call__(self, entry: bytes) -> bytes:
        return entry.replace(self._needle, MASK) if self._needle else entry

    def __repr__(self) -> str:
        return "KeyMask('***')"
