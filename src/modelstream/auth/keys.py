"""Signers that send a key or token as it is: a bearer header or a named key header.

OpenAI, Bedrock API keys, Vertex / Entra access tokens   `Authorization: Bearer <token>`
Anthropic                                                `x-api-key: <key>`
Gemini API                                               `x-goog-api-key: <key>`
Azure OpenAI keys                                        `api-key: <key>`
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime

from .secret import Secret
from .signing import AccessToken, SignableRequest, TokenProvider


def _secret(value: str | Secret) -> Secret:
    return value if isinstance(value, Secret) else Secret(value)


class BearerSigner:
    """`Authorization: Bearer <token>` with a fixed token (an API key, a Bedrock API key)."""

    may_block = False

    def __init__(self, token: str | Secret) -> None:
        self._token = _secret(token)

    def sign(self, request: SignableRequest, now: datetime) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token.reveal()}"}

    def redact(self, text: str) -> str:
        return self._token.redact(text)

    def __repr__(self) -> str:
        return "BearerSigner(token=***)"


class HeaderKeySigner:
    """A key in a header of its own, e.g. `x-api-key`, `x-goog-api-key` or Azure's `api-key`."""

    may_block = False

    def __init__(self, header: str, key: str | Secret) -> None:
        self.header = header
        self._key = _secret(key)

    def sign(self, request: SignableRequest, now: datetime) -> dict[str, str]:
        return {self.header: self._key.reveal()}

    def redact(self, text: str) -> str:
        return self._key.redact(text)

    def __repr__(self) -> str:
        return f"HeaderKeySigner(header={self.header!r}, key=***)"


def anthropic_key(key: str | Secret) -> HeaderKeySigner:
    return HeaderKeySigner("x-api-key", key)


def gemini_key(key: str | Secret) -> HeaderKeySigner:
    return HeaderKeySigner("x-goog-api-key", key)


def azure_key(key: str | Secret) -> HeaderKeySigner:
    """An Azure OpenAI resource key (`api-key` header)."""
    return HeaderKeySigner("api-key", key)


def bedrock_api_key(key: str | Secret) -> BearerSigner:
    """A Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`): a bearer token, not SigV4."""
    return BearerSigner(key)


class TokenSigner:
    """`Authorization: Bearer <token>` with a token from a provider (Vertex ADC, Entra ID).

    The provider refreshes the token (IO) when it is stale; every token it hands out is kept
    so `redact` can mask any of them, including ones that expired since."""

    may_block = True

    def __init__(self, provider: TokenProvider) -> None:
        self.provider = provider
        self._sent: list[Secret] = []
        self._lock = threading.Lock()

    def sign(self, request: SignableRequest, now: datetime) -> dict[str, str]:
        token = self.provider.token(now).value
        with self._lock:
            if all(seen.reveal() != token.reveal() for seen in self._sent):
                self._sent = [*self._sent[-3:], token]  # the last few are enough to mask echoes
        return {"Authorization": f"Bearer {token.reveal()}"}

    def redact(self, text: str) -> str:
        with self._lock:
            sent = list(self._sent)
        for secret in sent:
            text = secret.redact(text)
        return text

    def __repr__(self) -> str:
        return f"TokenSigner(provider={self.provider!r})"


class CallableTokens:
    """A token provider over a callable the user passes, e.g. an Entra ID token provider
    (`azure.identity.get_bearer_token_provider(credential, scope)`), which caches and refreshes
    the token itself: it is called on every request."""

    def __init__(self, get_token: Callable[[], str]) -> None:
        self._get_token = get_token

    def token(self, now: datetime) -> AccessToken:
        return AccessToken(Secret(self._get_token()))

    def __repr__(self) -> str:
        return "CallableTokens(<token provider>)"


def entra_id(token_provider: Callable[[], str]) -> TokenSigner:
    """Azure OpenAI with Microsoft Entra ID: a bearer token from the user's token provider."""
    return TokenSigner(CallableTokens(token_provider))
