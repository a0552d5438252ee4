"""Routing by model name, credentials from arguments or the environment, the rule that keeps
an environment key on the URL it was configured for, and keys kept out of every repr and error."""

from __future__ import annotations

from typing import Any

import pytest

from modelstream import ConfigurationError, ProviderError
from modelstream.client import ROUTES, AsyncClient, Client, resolve_route, route_for_model
from modelstream.client.credentials import Secret, resolve_endpoint
from modelstream.client.prepare import plan_call
from modelstream.testing import Emulator, Reply
from support.client import HELLO, MODELS, Drive

KEY_VARIABLES = [
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "DEEPSEEK_API_KEY", "ZAI_API_KEY", "MOONSHOT_API_KEY", "DASHSCOPE_API_KEY", "MINIMAX_API_KEY",
    "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_BASE_URL", "DEEPSEEK_BASE_URL",
    "XAI_API_KEY", "XAI_BASE_URL", "MISTRAL_API_KEY", "MISTRAL_BASE_URL",
]  # fmt: skip


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests must not depend on (or leak) keys of the machine they run on."""
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


# --- routing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "client_type", "provider", "base_url"),
    [
        ("gpt-4o", "openai-responses", "openai", "https://api.openai.com/v1"),
        ("o3-mini", "openai-responses", "openai", "https://api.openai.com/v1"),
        ("o1", "openai-responses", "openai", "https://api.openai.com/v1"),
        ("o4-mini", "openai-responses", "openai", "https://api.openai.com/v1"),
        ("chatgpt-4o-latest", "openai-responses", "openai", "https://api.openai.com/v1"),
        ("text-embedding-3-small", "openai-embedding", "openai", "https://api.openai.com/v1"),
        ("claude-sonnet-4-5", "anthropic-messages", "anthropic", "https://api.anthropic.com"),
        (
            "gemini-2.5-pro",
            "gemini-generate-content",
            "google",
            "https://generativelanguage.googleapis.com",
        ),
        (
            "gemini-embedding-001",
            "gemini-embedding",
            "google",
            "https://generativelanguage.googleapis.com",
        ),
        (
            "text-embedding-004",
            "gemini-embedding",
            "google",
            "https://generativelanguage.googleapis.com",
        ),
        ("deepseek-reasoner", "openai-chat", "deepseek", "https://api.deepseek.com"),
        ("glm-4.6", "openai-chat", "zai", "https://api.z.ai/api/paas/v4"),
        ("kimi-k2-thinking", "openai-chat", "moonshot", "https://api.moonshot.ai/v1"),
        ("moonshot-v1-8k", "openai-chat", "moonshot", "https://api.moonshot.ai/v1"),
        (
            "qwen-plus",
            "openai-chat",
            "alibaba",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        ),
        (
            "qwq-32b",
            "openai-chat",
            "alibaba",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        ),
        ("MiniMax-M2", "openai-chat", "minimax", "https://api.minimax.io/v1"),
        ("minimax-m1", "openai-chat", "minimax", "https://api.minimax.io/v1"),
    ],
)
def test_a_model_name_routes_by_its_prefix(
    model: str, client_type: str, provider: str, base_url: str
) -> None:
    route = route_for_model(model)
    assert route is not None
    assert (route.client_type, route.provider, route.base_url) == (client_type, provider, base_url)


def test_the_longest_matching_prefix_wins_whatever_the_table_order() -> None:
    prefixes = [prefix for names, _ in ROUTES for prefix in names]
    assert len(prefixes) == len(set(prefixes))
    route = route_for_model("text-embedding-004")
    assert route is not None and route.client_type == "gemini-embedding"
    route = route_for_model("text-embedding-3-large")
    assert route is not None and route.client_type == "openai-embedding"


def test_an_unknown_model_says_what_to_pass(drive: Drive) -> None:
    with pytest.raises(ConfigurationError, match=r"client_type=.*base_url=.*api_key="):
        drive.make_client("llama-3.3-70b", base_url=None, api_key=None)


def test_an_explicit_client_type_overrides_routing() -> None:
    assert resolve_route("deepseek-chat", "openai-chat").provider == "deepseek"
    route = resolve_route("deepseek-chat", "openai-responses")
    assert (route.client_type, route.provider) == ("openai-responses", "openai")
    route = resolve_route("claude-sonnet-4-5", "openai-chat")  # e.g. through a gateway
    assert (route.client_type, route.base_url) == ("openai-chat", "https://api.openai.com/v1")
    assert resolve_route("my-local-model", "gemini-generate-content").provider == "google"


def test_an_unknown_client_type_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="unknown client type 'openai-chats'"):
        resolve_route("gpt-4o", "openai-chats")


def test_a_client_without_a_model_needs_one_per_call() -> None:
    client = Client(api_key="k", base_url="http://127.0.0.1:9", client_type="openai-chat")
    with pytest.raises(ConfigurationError, match="no model given"):
        client.stream(HELLO)


# --- credentials -------------------------------------------------------------------------

AUTH = [
    ("openai-chat", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "authorization", "Bearer {}"),
    ("openai-responses", "OPENAI_API_KEY", "OPENAI_BASE_URL", "authorization", "Bearer {}"),
    ("anthropic-messages", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "x-api-key", "{}"),
    ("gemini-generate-content", "GEMINI_API_KEY", "GEMINI_BASE_URL", "x-goog-api-key", "{}"),
]


@pytest.mark.parametrize(("client_type", "key_var", "url_var", "header", "value"), AUTH)
def test_the_environment_key_goes_to_the_base_url_configured_beside_it(
    drive: Drive,
    emu: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    client_type: str,
    key_var: str,
    url_var: str,
    header: str,
    value: str,
) -> None:
    monkeypatch.setenv(key_var, "sk-from-env")
    monkeypatch.setenv(url_var, emu.base_url(client_type))
    outcome = drive.stream(MODELS[client_type], base_url=None, api_key=None)

    assert outcome.error is None
    assert emu.requests[0].headers[header] == value.format("sk-from-env")


@pytest.mark.parametrize(("client_type", "key_var", "url_var", "header", "value"), AUTH)
def test_an_api_key_argument_wins_over_the_environment(
    drive: Drive,
    emu: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    client_type: str,
    key_var: str,
    url_var: str,
    header: str,
    value: str,
) -> None:
    monkeypatch.setenv(key_var, "sk-from-env")
    drive.stream(MODELS[client_type], api_key="sk-argument")

    assert emu.requests[0].headers[header] == value.format("sk-argument")


def test_an_environment_key_is_never_sent_to_an_explicit_base_url(
    drive: Drive, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    with pytest.raises(ConfigurationError) as caught:
        drive.make_client(MODELS["anthropic-messages"], api_key=None)

    assert "ANTHROPIC_API_KEY" in str(caught.value) and "api_key=" in str(caught.value)
    assert "never sent elsewhere" in str(caught.value)
    assert "sk-from-env" not in str(caught.value)
    assert emu.requests == []


def test_an_environment_key_follows_its_base_url_variable_not_another_url(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://gateway.example/v1")
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        Client("gpt-4o", base_url=emu.base_url("openai-responses"))


def test_a_base_url_equal_to_the_configured_one_may_use_the_environment_key() -> None:
    route = resolve_route("claude-sonnet-4-5")
    env = {"ANTHROPIC_API_KEY": "sk-env"}
    endpoint = resolve_endpoint(route, base_url="https://api.anthropic.com/", api_key=None, env=env)
    assert (endpoint.base_url, endpoint.key_source) == (
        "https://api.anthropic.com",
        "ANTHROPIC_API_KEY",
    )
    assert endpoint.api_key.reveal() == "sk-env"


def test_gemini_falls_back_to_google_api_key() -> None:
    route = resolve_route("gemini-2.5-flash")
    endpoint = resolve_endpoint(route, base_url=None, api_key=None, env={"GOOGLE_API_KEY": "g"})
    assert endpoint.key_source == "GOOGLE_API_KEY"


@pytest.mark.parametrize(
    ("model", "names"),
    [
        ("claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gemini-2.5-flash", "GEMINI_API_KEY or GOOGLE_API_KEY"),
        ("glm-4.6", "ZAI_API_KEY"),
    ],
)
def test_a_missing_key_names_the_variable_to_set(drive: Drive, model: str, names: str) -> None:
    with pytest.raises(ConfigurationError, match=f"set {names} or pass api_key="):
        drive.make_client(model, base_url=None, api_key=None)


# --- keys stay secret --------------------------------------------------------------------

SECRET = "sk-live-SECRET-0123456789"


def test_keys_appear_in_no_repr_and_no_error(drive: Drive, emu: Emulator) -> None:
    echoing = {"error": {"type": "authentication_error", "message": f"bad key {SECRET}"}}
    emu.queue(Reply.status(401, body=echoing))
    outcome = drive.stream(MODELS["anthropic-messages"], api_key=SECRET)

    assert emu.requests[0].headers["x-api-key"] == SECRET  # it was sent, to the right place
    error = outcome.error
    assert isinstance(error, ProviderError) and error.status == 401
    client = drive.make_client(MODELS["anthropic-messages"], api_key=SECRET)
    plan = plan_call(
        "claude-sonnet-4-5",
        HELLO,
        None,
        client_type=None,
        base_url=emu.base_url("anthropic-messages"),
        api_key=Secret(SECRET),
        env={},
    )
    shown = [
        repr(client),
        repr(client.stream(HELLO)),
        str(error),
        repr(error),
        repr(error.fields()),
        repr(outcome.result),
        repr(plan),
        str(Secret(SECRET)),
    ]
    assert "bad key ***" in error.provider_message
    for text in shown:
        assert SECRET not in text
    if isinstance(client, AsyncClient):
        import asyncio

        asyncio.run(client.aclose())
    else:
        client.close()


def every_signer_kind() -> dict[str, Any]:
    """One signer of each kind in modelstream.auth, each holding SECRET (AWS: as the secret key
    and as the session token)."""
    from datetime import UTC, datetime, timedelta

    from google.oauth2.credentials import Credentials as GoogleCredentials

    from modelstream import auth

    expiry = (datetime.now(UTC) + timedelta(hours=1)).replace(tzinfo=None)
    aws = auth.StaticAwsCredentials("AKIDEXAMPLE", SECRET, SECRET + "-session")
    return {
        "bearer": auth.BearerSigner(SECRET),
        "bedrock api key": auth.bedrock_api_key(Secret(SECRET)),
        "x-api-key": auth.anthropic_key(SECRET),
        "x-goog-api-key": auth.gemini_key(SECRET),
        "azure api-key": auth.azure_key(SECRET),
        "azure entra id": auth.entra_id(lambda: SECRET),
        "sigv4": auth.SigV4Signer(aws, region="us-east-1"),
        "vertex adc": auth.vertex_signer(GoogleCredentials(token=SECRET, expiry=expiry)),
    }


@pytest.mark.parametrize("kind", list(every_signer_kind()))
def test_no_signer_shows_its_secret_in_a_repr_and_each_masks_it_in_echoed_errors(
    kind: str,
) -> None:
    from datetime import UTC, datetime

    from modelstream.auth import SignableRequest

    signer = every_signer_kind()[kind]
    request = SignableRequest("POST", "https://bedrock.example/model/m/converse-stream", {}, b"{}")
    headers = signer.sign(request, datetime.now(UTC))
    sent = " ".join(headers.values())
    assert SECRET in sent or kind == "sigv4"  # SigV4 sends a signature, never the secret key
    echoed = f"invalid credentials: {sent} / {SECRET} / {SECRET}-session"
    shown = [repr(signer), str(signer), signer.redact(echoed)]
    if kind == "sigv4":
        shown += [repr(signer.provider.credentials()), str(signer.provider)]
    for text in shown:
        assert SECRET not in text, text
