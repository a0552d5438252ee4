"""Every credential a client holds is masked where a model or a tool echoes it (issue 18 item 8):
AWS access key ids, secret keys and session tokens, and Google access tokens (refreshed ones
too) in a stored trace, as API keys were; credential headers in the emulator's record of a
request; and the text of a tool's exception before it goes back to the model, which can also
be sent as the exception's type alone (`tool_errors="type"`). Real HTTP on loopback."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import google.auth.credentials as google_credentials
import pytest

from modelstream import AsyncClient, AsyncConversation, Client, Conversation
from modelstream.auth import (
    AwsCredentials,
    GoogleAccessTokens,
    Secret,
    SignableRequest,
    SigV4Signer,
    StaticAwsCredentials,
    TokenSigner,
)
from modelstream.client import Vertex
from modelstream.testing import Emulator, Reply, Turn
from modelstream.traces import TraceStore

API_KEY = "sk-masking-test-key-0123456789"
ACCESS_KEY_ID = "AKIAMASKINGTEST01234"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYMASKINGKEY"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjMASKING//session+token=="
NOVA = "us.amazon.nova-micro-v1:0"
VERTEX = Vertex(project="my-project", location="us-central1")
HELLO = "hello"


class MintingCredentials(google_credentials.Credentials):
    """google-auth credentials that mint a new access token at each refresh, valid for an hour
    (a service account or a user login does the same over the network)."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.minted: list[str] = []

    def refresh(self, request: Any) -> None:
        self.token = f"ya29.minted-token-{len(self.minted) + 1}-abcdefghijklmnop"
        self.minted.append(self.token)
        self.expiry = (datetime.now(UTC) + timedelta(hours=1)).replace(tzinfo=None)

    def expire(self) -> None:
        self.expiry = (datetime.now(UTC) - timedelta(minutes=1)).replace(tzinfo=None)


def sigv4_signer() -> SigV4Signer:
    return SigV4Signer(
        StaticAwsCredentials(ACCESS_KEY_ID, SECRET_KEY, SESSION_TOKEN), region="us-east-1"
    )


def google_signer(credentials: MintingCredentials) -> TokenSigner:
    return TokenSigner(GoogleAccessTokens(credentials, request="transport"))


def stored_bytes(folder: Path) -> bytes:
    """Everything the trace store wrote: the database and its WAL."""
    return b"".join(path.read_bytes() for path in folder.iterdir() if path.is_file())


# --- traces -----------------------------------------------------------------------------------


def test_aws_credentials_a_model_echoes_are_masked_in_the_stored_trace(
    emu: Emulator, tmp_path: Path
) -> None:
    echo = f"You sent {ACCESS_KEY_ID} with {SECRET_KEY} and the token {SESSION_TOKEN}."
    emu.queue(Reply.turn(Turn.text(echo)))
    folder = tmp_path / "traces"
    folder.mkdir()
    with Client(
        NOVA,
        base_url=emu.base_url("bedrock-converse-stream"),
        signer=sigv4_signer(),
        traces=folder / "traces.sqlite3",
    ) as client:
        message = client.complete(HELLO, {"trace_id": "aws-echo"})
    assert message["content_items"][0]["text"] == echo  # the caller sees what came back

    (turn,) = TraceStore(folder / "traces.sqlite3").get_trace("aws-echo")
    assert turn.items == [{"type": "text.done", "text": "You sent *** with *** and the token ***."}]
    stored = stored_bytes(folder)
    for secret in (ACCESS_KEY_ID, SECRET_KEY, SESSION_TOKEN):
        assert secret.encode() not in stored


def test_google_access_tokens_a_model_echoes_are_masked_in_the_trace_refreshed_ones_too(
    emu: Emulator, tmp_path: Path
) -> None:
    credentials = MintingCredentials()
    folder = tmp_path / "traces"
    folder.mkdir()
    with Client(
        "gemini-2.5-flash",
        base_url=emu.url,
        platform=VERTEX,
        signer=google_signer(credentials),
        traces=folder / "traces.sqlite3",
    ) as client:
        emu.queue(Reply.turn(Turn.text("Your token is ya29.minted-token-1-abcdefghijklmnop.")))
        client.complete(HELLO, {"trace_id": "google-echo"})
        credentials.expire()  # the next call mints a new token
        emu.queue(Reply.turn(Turn.text(f"Old {credentials.minted[0]}, new {_next_token(2)}.")))
        client.complete(HELLO, {"trace_id": "google-echo"})

    assert len(credentials.minted) == 2
    assert emu.requests[1].headers["authorization"] == f"Bearer {credentials.minted[1]}"
    first, second = TraceStore(folder / "traces.sqlite3").get_trace("google-echo")
    assert first.items[0]["text"] == "Your token is ***."  # type: ignore[typeddict-item]
    assert second.items[0]["text"] == "Old ***, new ***."  # type: ignore[typeddict-item]
    stored = stored_bytes(folder)
    for token in credentials.minted:
        assert token.encode() not in stored


def _next_token(number: int) -> str:
    return f"ya29.minted-token-{number}-abcdefghijklmnop"


def test_a_sigv4_signer_masks_the_credentials_it_signed_with_before_they_were_rotated() -> None:
    """A refreshing provider (SSO, an assumed role) hands out new credentials; an echo of the
    previous ones, in a stream signed before the refresh, is still masked."""
    rotation = iter(
        [
            AwsCredentials(ACCESS_KEY_ID, Secret(SECRET_KEY), Secret(SESSION_TOKEN)),
            AwsCredentials("AKIAROTATEDKEY000001", Secret("rotated-secret-key-0123456789")),
        ]
    )

    class Rotating:
        def credentials(self) -> AwsCredentials:
            return next(rotation)

    signer = SigV4Signer(Rotating(), region="us-east-1")
    request = SignableRequest("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/x")
    signer.sign(request, datetime.now(UTC))
    signer.sign(request, datetime.now(UTC))
    rotated = "AKIAROTATEDKEY000001 rotated-secret-key-0123456789"
    echoed = f"{ACCESS_KEY_ID} {SECRET_KEY} {SESSION_TOKEN} {rotated}"
    assert signer.redact(echoed) == "*** *** *** *** ***"


def test_a_client_masks_its_own_key_before_any_call() -> None:
    with Client("claude-sonnet-4-5", api_key=API_KEY) as client:
        assert client.redact(f"key={API_KEY}; short words stay") == "key=***; short words stay"


# --- the emulator's records -------------------------------------------------------------------


def test_the_emulator_record_shows_no_credential_header_but_keeps_its_value(
    emu: Emulator,
) -> None:
    emu.queue(Reply.turn(Turn.text("signed")))
    with Client(
        NOVA, base_url=emu.base_url("bedrock-converse-stream"), signer=sigv4_signer()
    ) as client:
        client.complete(HELLO)

    (record,) = emu.requests
    assert record.headers["x-amz-security-token"] == SESSION_TOKEN  # tests may assert on it
    assert record.headers["authorization"].startswith(
        f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY_ID}/"
    )
    for shown in (repr(record), str(record), f"{record}", repr([record])):
        assert SESSION_TOKEN not in shown and ACCESS_KEY_ID not in shown, shown
        assert "x-amz-security-token" in shown  # the header is named, its value is not


# --- tool errors ------------------------------------------------------------------------------

Credential = Literal["api key", "sigv4", "google token"]


def client_options(emu: Emulator, credential: Credential, google: MintingCredentials) -> Any:
    return {
        "api key": {
            "model": "claude-sonnet-4-5",
            "api_key": API_KEY,
            "base_url": emu.base_url("anthropic-messages"),
        },
        "sigv4": {
            "model": NOVA,
            "signer": sigv4_signer(),
            "base_url": emu.base_url("bedrock-converse-stream"),
        },
        "google token": {
            "model": "gemini-2.5-flash",
            "signer": google_signer(google),
            "platform": VERTEX,
            "base_url": emu.url,
        },
    }[credential]


def secrets_of(credential: Credential, google: MintingCredentials) -> list[str]:
    if credential == "api key":
        return [API_KEY]
    if credential == "sigv4":
        return [ACCESS_KEY_ID, SECRET_KEY, SESSION_TOKEN]
    return list(google.minted)


def run_with_failing_tool(
    mode: str, emu: Emulator, credential: Credential, **run_options: Any
) -> tuple[list[str], list[str]]:
    """A tool loop whose tool raises with every credential of the client in its message; the
    tool result texts the emulator received, and the client's secrets."""
    google = MintingCredentials()
    emu.queue(
        Reply.turn(Turn.tool_call("lookup", {"name": "db"}, id="call_1")),
        Reply.turn(Turn.text("The lookup failed.")),
    )

    def lookup(name: str) -> str:
        """Look a name up."""
        secrets = " and ".join(secrets_of(credential, google))
        raise RuntimeError(f"{name} failed with key {secrets}")

    options = client_options(emu, credential, google)
    if mode == "sync":
        with Client(**options) as client:
            Conversation(client).run("Look up db", [lookup], **run_options)
    else:

        async def main() -> None:
            async with AsyncClient(**options) as client:
                await AsyncConversation(client).run("Look up db", [lookup], **run_options)

        asyncio.run(main())
    received = [text for text in strings(emu.requests[1].json) if text.startswith("error:")]
    return received, secrets_of(credential, google)


def strings(value: Any) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


@pytest.mark.parametrize("credential", ["api key", "sigv4", "google token"])
def test_a_tool_exception_goes_to_the_model_with_every_client_credential_masked(
    emu: Emulator, mode: str, credential: Credential
) -> None:
    received, secrets = run_with_failing_tool(mode, emu, credential)

    assert secrets  # the google token was minted by the first request
    masked = " and ".join("***" for _ in secrets)
    assert received == [f"error: tool 'lookup' failed: RuntimeError: db failed with key {masked}"]
    body = emu.requests[1].body
    for secret in secrets:
        assert secret.encode() not in body


def test_with_tool_errors_type_only_the_exception_type_goes_to_the_model(
    emu: Emulator, mode: str
) -> None:
    received, _ = run_with_failing_tool(mode, emu, "api key", tool_errors="type")

    assert received == ["error: tool 'lookup' failed: RuntimeError"]
    assert b"failed with key" not in emu.requests[1].body


def test_tool_errors_takes_only_message_or_type(emu: Emulator) -> None:
    with (
        Client("claude-sonnet-4-5", api_key=API_KEY, base_url=emu.url) as client,
        pytest.raises(ValueError, match="tool_errors must be 'message' or 'type'"),
    ):
        Conversation(client).run("hi", [], tool_errors="none")  # type: ignore[arg-type]
    assert emu.requests == []  # refused before anything was sent


def test_the_loops_own_message_for_a_tool_not_given_goes_in_full_with_type_only_errors(
    emu: Emulator, mode: str
) -> None:
    emu.queue(
        Reply.turn(Turn.tool_call("search", {"query": "db"}, id="call_1")),
        Reply.turn(Turn.text("There is no search tool.")),
    )
    options: Any = {
        "model": "claude-sonnet-4-5",
        "api_key": API_KEY,
        "base_url": emu.base_url("anthropic-messages"),
    }

    def lookup(name: str) -> str:
        """Look a name up."""
        return name

    if mode == "sync":
        with Client(**options) as client:
            Conversation(client).run("Search db", [lookup], tool_errors="type")
    else:

        async def main() -> None:
            async with AsyncClient(**options) as client:
                await AsyncConversation(client).run("Search db", [lookup], tool_errors="type")

        asyncio.run(main())
    received = [text for text in strings(emu.requests[1].json) if text.startswith("error:")]
    assert received == ["error: no tool named 'search' was given"]
