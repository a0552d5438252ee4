"""The upstream key never leaves the server: every stored entry of a stream (events, and the
error that ends it) has the model's key masked before a reader or the store sees it. A provider
may echo the key in an in-stream error event or the model may repeat it in its text; HTTP error
bodies are masked by the client already (`Secret.redact`). The rule is the client's
(`auth.secret.mask_secret`): a whole token, at least 8 characters long."""

from __future__ import annotations

from typing import Any

import orjson

from ..auth.secret import MASK, MIN_MASKED_LENGTH, Secret, mask_secret


class KeyMask:
    """Masks one key in JSON entries: the key as JSON writes it inside a string."""

    def __init__(self, key: Secret | None) -> None:
        value = key.reveal() if key is not None else ""
        self._key = value
        masked = len(value) >= MIN_MASKED_LENGTH  # a shorter key is never masked
        self._needle = orjson.dumps(value)[1:-1] if masked else b""

    def __call__(self, entry: bytes) -> bytes:
        if not self._needle or self._needle not in entry:
            return entry  # the hot path: one scan of the bytes, as a replace would do
        # Decoded to tell a whole token from a longer word: in the JSON bytes an escape
        # (`\n`, `\"`) would stand next to the key as a letter.
        try:
            document = orjson.loads(entry)
        except orjson.JSONDecodeError:  # every entry is JSON; if not, mask it all the same
            return entry.replace(self._needle, MASK.encode())
        return orjson.dumps(self._masked(document))

    def _masked(self, value: Any) -> Any:
        if isinstance(value, str):
            return mask_secret(value, self._key)
        if isinstance(value, dict):
            return {self._masked(k): self._masked(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._masked(item) for item in value]
        return value

    def __repr__(self) -> str:
        return "KeyMask('***')"
