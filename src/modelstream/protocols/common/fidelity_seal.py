"""Fidelity that crosses wires, sealed so that it comes back unchanged (SPEC §8).

When a caller's wire differs from the upstream's, the upstream's fidelity (a Gemini thought
signature, Responses encrypted reasoning, an Anthropic signature) has no field of its own in the
caller's wire. The gateway's writer puts it, sealed, in one of that wire's opaque fields (an
Anthropic thinking `signature`, a Responses `encrypted_content`, a Gemini `thoughtSignature`,
a tool call id); the wire's inbound decoder opens it when the client sends the turn back.

A token is `MSF1` followed by the base32 of an HMAC-SHA256 tag (16 bytes) and the zlib'd JSON
of the fidelity, padded with `0` to a multiple of four characters. Only letters and digits, so
it survives every opaque field as is: Gemini's SDK reads `thoughtSignature` as base64 bytes and
writes them back, and an alphanumeric text whose length is a multiple of four is canonical
base64 in both alphabets. The tag makes an edited or forged token a clear 400 rather than an
upstream's 500; the key is the server's (`fidelity_key`), shared by every instance.
"""

from __future__ import annotations

import base64
import hmac
import secrets
import zlib
from typing import Any

import orjson

PREFIX = "MSF1"
_TAG_BYTES = 16
_MAX_TOKEN = 4 * 1024 * 1024  # larger than any provider's encrypted reasoning


class FidelityForgedError(ValueError):
    """A sealed fidelity token that this server did not write as it is: edited, truncated,
    or sealed under another key."""


class FidelitySeal:
    """Seals and opens fidelity with one secret key (module docstring)."""

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("a fidelity key needs at least 16 bytes")
        self._key = key

    @classmethod
    def random(cls) -> FidelitySeal:
        """A seal with a key of its own: tokens open only in this process."""
        return cls(secrets.token_bytes(32))

    def __repr__(self) -> str:
        return "FidelitySeal(key=***)"

    def seal(self, fidelity: dict[str, Any]) -> str:
        payload = zlib.compress(orjson.dumps(fidelity, option=orjson.OPT_SORT_KEYS), 6)
        tag = hmac.new(self._key, payload, "sha256").digest()[:_TAG_BYTES]
        text = base64.b32encode(tag + payload).decode("ascii").rstrip("=")
        return PREFIX + text + "0" * (-len(text) % 4)

    def open(self, token: str) -> dict[str, Any]:
        """The fidelity a token holds; `FidelityForgedError` when it was not sealed here as is."""
        if not is_sealed(token) or len(token) > _MAX_TOKEN:
            raise FidelityForgedError("not a sealed fidelity token")
        text = token[len(PREFIX) :].rstrip("0")
        try:
            raw = base64.b32decode(text + "=" * (-len(text) % 8))
        except ValueError:
            raise FidelityForgedError("a sealed fidelity token was altered") from None
        tag, payload = raw[:_TAG_BYTES], raw[_TAG_BYTES:]
        expected = hmac.new(self._key, payload, "sha256").digest()[:_TAG_BYTES]
        if not hmac.compare_digest(tag, expected):
            raise FidelityForgedError(
                "a sealed fidelity token was altered, or sealed by a server with another "
                "fidelity_key"
            )
        try:
            value = orjson.loads(zlib.decompress(payload))
        except (zlib.error, orjson.JSONDecodeError):  # pragma: no cover - needs the key
            raise FidelityForgedError("a sealed fidelity token holds no fidelity") from None
        if not isinstance(value, dict):  # pragma: no cover - needs the key
            raise FidelityForgedError("a sealed fidelity token holds no fidelity")
        return value


def is_sealed(value: Any) -> bool:
    """Whether a wire's opaque field holds a sealed token (rather than the provider's own)."""
    return isinstance(value, str) and value.startswith(PREFIX)


__all__ = ["PREFIX", "FidelityForgedError", "FidelitySeal", "is_sealed"]
