"""Google OAuth access tokens for Vertex AI, from Application Default Credentials (google-auth,
extra `google`).

ADC finds the credentials the Google SDKs use (`GOOGLE_APPLICATION_CREDENTIALS`, the gcloud
user login, workload identity, the metadata server). Refreshing a token is IO, so it lives in
`GoogleAccessTokens`, a token provider; the signer that puts the token in a header
(`keys.TokenSigner`) stays pure. google-auth is imported on first use only.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

from ..errors import ConfigurationError
from .keys import TokenSigner
from .secret import Secret
from .signing import AccessToken

INSTALL_HINT = "pip install 'modelstream[google]'"
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
REFRESH_MARGIN_SECONDS = 300.0  # refresh this long before expiry: a stream may start late


def _import_error() -> ConfigurationError:
    return ConfigurationError(
        f"Google access tokens come from google-auth, which is not installed: {INSTALL_HINT}"
    )


class GoogleAccessTokens:
    """Access tokens from google-auth credentials (ADC when none are given), refreshed through
    `request` (google-auth's requests transport when None) when missing or near expiry."""

    def __init__(
        self,
        credentials: Any = None,
        *,
        scopes: tuple[str, ...] = (CLOUD_PLATFORM,),
        request: Any = None,
        margin_seconds: float = REFRESH_MARGIN_SECONDS,
    ) -> None:
        self.scopes = scopes
        self.margin_seconds = margin_seconds
        self.project: str | None = None
        self._credentials = credentials
        self._request = request
        self._lock = threading.Lock()

    def token(self, now: datetime) -> AccessToken:
        with self._lock:
            credentials = self._credentials_in_hand()
            current = _access_token(credentials)
            if current is None or not current.fresh_at(now, self.margin_seconds):
                credentials.refresh(self._transport())
                current = _access_token(credentials)
            if current is None:
                raise ConfigurationError("google-auth refreshed the credentials but gave no token")
            return current

    def _credentials_in_hand(self) -> Any:
        if self._credentials is None:
            try:
                import google.auth
                import google.auth.exceptions
            except ImportError:
                raise _import_error() from None
            try:
                self._credentials, self.project = google.auth.default(scopes=list(self.scopes))
            except google.auth.exceptions.DefaultCredentialsError as error:
                raise ConfigurationError(
                    "no Google Application Default Credentials: run `gcloud auth "
                    "application-default login` or set GOOGLE_APPLICATION_CREDENTIALS "
                    f"({type(error).__name__})"
                ) from None
        return self._credentials

    def _transport(self) -> Any:
        if self._request is None:
            try:
                from google.auth.transport.requests import Request
            except ImportError:
                raise _import_error() from None
            self._request = Request()
        return self._request

    def __repr__(self) -> str:
        kind = type(self._credentials).__name__ if self._credentials is not None else "ADC"
        return f"GoogleAccessTokens(credentials={kind}, scopes={self.scopes!r})"


def _access_token(credentials: Any) -> AccessToken | None:
    token = getattr(credentials, "token", None)
    if not token:
        return None
    expiry = getattr(credentials, "expiry", None)  # google-auth keeps naive UTC datetimes
    if isinstance(expiry, datetime) and expiry.tzinfo is None:
        expiry = expiry.replace(tzinfo=UTC)
    return AccessToken(Secret(str(token)), expiry if isinstance(expiry, datetime) else None)


def vertex_signer(credentials: Any = None) -> TokenSigner:
    """`Authorization: Bearer` with an ADC access token (or one from `credentials`)."""
    return TokenSigner(GoogleAccessTokens(credentials))
