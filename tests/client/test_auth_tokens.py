"""Key and token signers: the header each one writes, Google access tokens from google-auth
credentials refreshed only when stale (no network), and Entra ID tokens from the user's
callable."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import google.auth.credentials as google_credentials
import pytest
from google.oauth2.credentials import Credentials as OAuthCredentials

from modelstream.auth import (
    GoogleAccessTokens,
    SignableRequest,
    TokenSigner,
    anthropic_key,
    azure_key,
    bedrock_api_key,
    entra_id,
    gemini_key,
    vertex_signer,
)
from modelstream.errors import ConfigurationError

NOW = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)
REQUEST = SignableRequest("POST", "https://example.test/v1/x", {"content-type": "x"}, b"{}")


@pytest.mark.parametrize(
    ("signer", "header"),
    [
        (bedrock_api_key("ABSK-key"), {"Authorization": "Bearer ABSK-key"}),
        (anthropic_key("sk-ant"), {"x-api-key": "sk-ant"}),
        (gemini_key("AIza"), {"x-goog-api-key": "AIza"}),
        (azure_key("az-key"), {"api-key": "az-key"}),
        (entra_id(lambda: "entra-token"), {"Authorization": "Bearer entra-token"}),
    ],
)
def test_each_key_goes_in_the_header_its_provider_reads(signer: Any, header: Any) -> None:
    assert signer.sign(REQUEST, NOW) == header


def test_an_entra_token_provider_is_asked_on_every_request() -> None:
    tokens = iter(["first", "second"])
    signer = entra_id(lambda: next(tokens))
    assert [signer.sign(REQUEST, NOW)["Authorization"] for _ in range(2)] == [
        "Bearer first",
        "Bearer second",
    ]


class CountingCredentials(google_credentials.Credentials):  # type: ignore[misc]
    """google-auth credentials whose refresh hands out numbered tokens valid for an hour."""

    def __init__(self, expiry: datetime | None) -> None:
        super().__init__()
        self.refreshes = 0
        self.token = "ya29.initial" if expiry else None
        self.expiry = expiry

    def refresh(self, request: Any) -> None:
        assert request == "transport"  # the transport given to the provider is the one used
        self.refreshes += 1
        self.token = f"ya29.refreshed-{self.refreshes}"
        self.expiry = (NOW + timedelta(hours=1)).replace(tzinfo=None)


def test_a_valid_google_token_is_used_as_it_is() -> None:
    credentials = OAuthCredentials(
        token="ya29.a-valid-token", expiry=(NOW + timedelta(hours=1)).replace(tzinfo=None)
    )
    signer = TokenSigner(GoogleAccessTokens(credentials))
    assert signer.sign(REQUEST, NOW) == {"Authorization": "Bearer ya29.a-valid-token"}


def test_a_google_token_is_refreshed_when_missing_or_about_to_expire() -> None:
    soon = (NOW + timedelta(seconds=60)).replace(tzinfo=None)  # inside the refresh margin
    credentials = CountingCredentials(expiry=soon)
    provider = GoogleAccessTokens(credentials, request="transport")
    first = provider.token(NOW)
    assert (first.value.reveal(), credentials.refreshes) == ("ya29.refreshed-1", 1)
    assert first.expires_at == NOW + timedelta(hours=1)
    assert provider.token(NOW + timedelta(minutes=30)).value.reveal() == "ya29.refreshed-1"
    assert provider.token(NOW + timedelta(minutes=56)).value.reveal() == "ya29.refreshed-2"

    empty = CountingCredentials(expiry=None)
    assert GoogleAccessTokens(empty, request="transport").token(NOW).value.reveal() == (
        "ya29.refreshed-1"
    )


def test_without_application_default_credentials_the_error_says_what_to_run(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "absent.json"))
    with pytest.raises(ConfigurationError, match="application-default login"):
        vertex_signer().sign(REQUEST, NOW)


def test_without_google_auth_the_error_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "google.auth", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'modelstream\[google\]'"):
        vertex_signer().sign(REQUEST, NOW)
