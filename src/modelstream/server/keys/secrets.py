"""A virtual key's secret and the one form of it that is ever stored: its SHA-256.

The secret is `msk-` and 43 url-safe characters from `secrets` (256 random bits). A salt or a
slow hash (bcrypt, scrypt) defends guessable passwords against a stolen table; nobody can guess
a 256-bit random value, so a plain SHA-256 is as safe here, and it lets `by_secret` find a key
with one indexed lookup instead of trying every stored hash.
"""

from __future__ import annotations

import base64
import hashlib
import secrets

from ...auth.secret import Secret

SECRET_PREFIX = "msk-"
KEY_ID_PREFIX = "vk_"


def new_secret() -> Secret:
    """A fresh secret, wrapped so that no repr or log line shows it."""
    return Secret(SECRET_PREFIX + secrets.token_urlsafe(32))


def secret_hash(secret: str) -> str:
    """The hex SHA-256 under which a key is stored and looked up."""
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


def new_key_id() -> str:
    """`vk_` and 12 base32 characters (60 random bits): public, safe to log and show."""
    return KEY_ID_PREFIX + base64.b32encode(secrets.token_bytes(8)).decode()[:12].lower()


def new_ticket_id() -> str:
    return "tk_" + secrets.token_hex(16)
