"""Bedrock, Vertex AI and Azure OpenAI through the client's real HTTP path: routing, the
platform's paths and body, credentials in the right header (and nowhere else), SigV4 re-verified
with botocore from what arrived, a fresh signature per attempt, and no secret in any repr, error,
result or trace."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from unittest import mock

import botocore.auth as botocore_auth
import httpx
import pytest
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from google.oauth2.credentials import Credentials as GoogleCredentials

from modelstream import ConfigurationError, FinalResponse, ProviderError
from modelstream.auth import SigV4Signer, StaticAwsCredentials, entra_id, vertex_signer
from modelstream.client import (
    AsyncClient,
    Azure,
    Bedrock,
    Client,
    RetryPolicy,
    Vertex,
    resolve_route,
    route_for_model,
)
from modelstream.client.credentials import Secret
from modelstream.client.failures import classify
from modelstream.client.prepare import PreparedRequest, endpoint_for, plan_call
from modelstream.client.streams import StreamCall
from modelstream.client.timeouts import Timeouts
from modelstream.testing import Emulator, Reply, Turn
from modelstream.traces.record import TraceTurn
from support import CORPUS, require_corpus
from support.client import HELLO

ACCESS_KEY = "AKIDPLATFORMTEST"
SECRET_KEY = "platform-secret-access-key-0123456789"
SESSION_TOKEN = "platform-session-token-0123456789"
SECRET = "sk-platform-SECRET-0123456789"
NOVA = "us.amazon.nova-micro-v1:0"
NOVA_BODY = CORPUS / "bedrock-converse-stream" / "pydanticai-bedrock-nova-text.bin"

ENVIRONMENT = (
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
    "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_BEARER_TOKEN_BEDROCK", "BEDROCK_BASE_URL",
    "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_VERTEX_BASE_URL",
    "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "ANTHROPIC_API_KEY", "GEMINI_API_KEY",
    "GOOGLE_API_KEY", "OPENAI_API_KEY",
)  # fmt: skip


@pytest.fixture(autouse=True)
def own_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No variable, shared AWS file or instance metadata of the machine the tests run on."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "credentials").write_text("")
    (tmp_path / "config").write_text("")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def google_token(token: str = SECRET) -> GoogleCredentials:
    expiry = (datetime.now(UTC) + timedelta(hours=1)).replace(tzinfo=None)
    return GoogleCredentials(token=token, expiry=expiry)


def run(kind: str, model: str, config: dict[str, Any] | None = None, **options: Any) -> Any:
    """The result of one turn through `Client` (kind "sync") or `AsyncClient` ("async"), or the
    error it raised; with the client for its repr."""
    options.setdefault("retry", RetryPolicy(max_attempts=1))
    if kind == "sync":
        with Client(model, **options) as client:
            stream = client.stream(HELLO, config)
            try:
                for _ in stream:
                    pass
            except ProviderError as error:
                return client, stream.result, error
            return client, stream.result, None

    async def go() -> Any:
        async with AsyncClient(model, **options) as client:
            stream = client.stream(HELLO, config)
            try:
                async for _ in stream:
                    pass
            except ProviderError as error:
                return client, stream.result, error
            return client, stream.result, None

    return asyncio.run(go())


KINDS = ["sync", "async"]


# --- a loopback Bedrock that records what arrived ---------------------------------------------


@dataclass
class Arrived:
    method: str
    path: str  # as sent, percent-encoding included
    headers: dict[str, str]  # lower-case names
    body: bytes


class BedrockLoopback(ThreadingHTTPServer):
    """Serves queued (status, body) answers and records every request as it arrived."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.arrived: list[Arrived] = []
        self.answers: list[tuple[int, bytes]] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Recorder(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: BedrockLoopback

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.arrived.append(Arrived(self.command, self.path, headers, body))
        status, answer = self.server.answers.pop(0)
        self.send_response(status)
        content_type = "application/vnd.amazon.eventstream" if status == 200 else "application/json"
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


@pytest.fixture
def bedrock() -> Iterator[BedrockLoopback]:
    server = BedrockLoopback()
    yield server
    server.shutdown()
    server.server_close()


def botocore_signature(arrived: Arrived, url: str, token: str | None) -> str:
    """The Authorization botocore's SigV4Auth computes for the request as it arrived: the headers
    its SignedHeaders names, at its X-Amz-Date, with the same credentials."""
    authorization = arrived.headers["authorization"]
    signed = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    own = {"host", "x-amz-date", "x-amz-security-token"}  # botocore adds these itself
    headers = {name: arrived.headers[name] for name in signed if name not in own}
    request = AWSRequest(method=arrived.method, url=url + arrived.path, data=arrived.body)
    for name, value in headers.items():
        request.headers[name] = value
    at = datetime.strptime(arrived.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    reference = botocore_auth.SigV4Auth(
        Credentials(ACCESS_KEY, SECRET_KEY, token), "bedrock", "us-east-1"
    )
    with mock.patch.object(botocore_auth, "get_current_datetime", return_value=at):
        reference.add_auth(request)
    return str(request.headers["Authorization"])


def assert_nova_text(result: Any) -> None:
    """The capture's answer, read from its payloads: 29 text deltas, end_turn, 13 in / 82 out."""
    assert isinstance(result, FinalResponse)
    text = result.message["content_items"][0]["text"]
    assert text.startswith("The capital of France is Paris. Paris is not only the capital city")
    assert text.endswith('"The City of Light" or "The City of Love."')
    usage = result.message["usage_metadata"]
    assert (usage["prompt_tokens"], usage["response_tokens"]) == (13, 82)
    assert result.metadata.finish_reason == "stop"
    assert result.metadata.provider == "bedrock"


# --- Bedrock: routing and region ---------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [
        "anthropic.claude-3-5-haiku-20241022-v1:0",
        "us.anthropic.claude-sonnet-4-20250514-v1:0",
        "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "apac.amazon.nova-pro-v1:0",
        "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "amazon.nova-micro-v1:0",
        "meta.llama3-70b-instruct-v1:0",
        "mistral.mistral-large-2407-v1:0",
        "openai.gpt-oss-120b-1:0",
        "arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.amazon.nova-lite-v1:0",
    ],
)
def test_bedrock_model_ids_and_profiles_route_to_converse_stream(model: str) -> None:
    route = route_for_model(model)
    assert route is not None
    assert (route.client_type, route.provider) == ("bedrock-converse-stream", "bedrock")


def test_the_bedrock_prefixes_leave_the_other_providers_alone() -> None:
    for model, client_type in [
        ("deepseek-chat", "openai-chat"),
        ("qwen-plus", "openai-chat"),
        ("claude-sonnet-4-5", "anthropic-messages"),
        ("gpt-oss-120b", "openai-responses"),
    ]:
        assert resolve_route(model).client_type == client_type


def bedrock_url(model: str, env: dict[str, str], **platform: Any) -> str:
    endpoint = endpoint_for(
        model,
        client_type=None,
        base_url=None,
        api_key=Secret("ABSK-key"),
        env=env,
        platform=Bedrock(**platform) if platform else None,
    )
    return endpoint.base_url


def test_the_bedrock_region_comes_from_the_argument_the_arn_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    arn = "arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.amazon.nova-lite-v1:0"
    environment = {"AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "ap-south-1"}
    assert bedrock_url(NOVA, environment) == "https://bedrock-runtime.us-west-2.amazonaws.com"
    assert bedrock_url(NOVA, {"AWS_DEFAULT_REGION": "ap-south-1"}) == (
        "https://bedrock-runtime.ap-south-1.amazonaws.com"
    )
    assert bedrock_url(arn, environment) == "https://bedrock-runtime.eu-west-3.amazonaws.com"
    assert bedrock_url(NOVA, environment, region="ca-central-1") == (
        "https://bedrock-runtime.ca-central-1.amazonaws.com"
    )
    (tmp_path / "config").write_text("[profile work]\nregion = eu-central-1\n")
    assert bedrock_url(NOVA, {}, profile="work") == (
        "https://bedrock-runtime.eu-central-1.amazonaws.com"
    )
    with pytest.raises(ConfigurationError, match=r"no region: pass platform=Bedrock\(region="):
        bedrock_url(NOVA, {})
    signer = SigV4Signer(StaticAwsCredentials(ACCESS_KEY, SECRET_KEY), region="sa-east-1")
    by_signer = endpoint_for(
        NOVA, client_type=None, base_url=None, api_key=None, env=environment, signer=signer
    )
    assert by_signer.base_url == "https://bedrock-runtime.sa-east-1.amazonaws.com"


def test_bedrock_without_botocore_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "botocore", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'modelstream\[aws\]'"):
        Client(NOVA, platform=Bedrock(region="us-east-1"))


def test_the_region_variables_are_read_without_botocore(monkeypatch: pytest.MonkeyPatch) -> None:
    from modelstream.auth import aws_region

    monkeypatch.setitem(__import__("sys").modules, "botocore", None)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    assert aws_region() == "ap-south-1"
    assert bedrock_url(NOVA, {"AWS_DEFAULT_REGION": "ap-south-1"}) == (
        "https://bedrock-runtime.ap-south-1.amazonaws.com"
    )


def test_the_platforms_have_their_opentelemetry_names() -> None:
    from modelstream.traces.otel import _otel_provider

    assert [_otel_provider(name) for name in ("bedrock", "vertex", "azure")] == [
        "aws.bedrock",
        "gcp.vertex_ai",
        "azure.ai.openai",
    ]


# --- Bedrock over loopback: SigV4 and API keys -------------------------------------------------


@pytest.mark.parametrize("token", [None, SESSION_TOKEN], ids=["long-term", "session"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_sigv4_signed_call_verifies_with_botocore_as_it_arrived(
    bedrock: BedrockLoopback, kind: str, token: str | None
) -> None:
    require_corpus()
    bedrock.answers = [(200, NOVA_BODY.read_bytes())]
    signer = SigV4Signer(StaticAwsCredentials(ACCESS_KEY, SECRET_KEY, token), region="us-east-1")
    _, result, error = run(kind, NOVA, base_url=bedrock.url, signer=signer)

    assert error is None
    assert_nova_text(result)
    arrived = bedrock.arrived[0]
    assert arrived.path == "/model/us.amazon.nova-micro-v1%3A0/converse-stream"
    assert arrived.headers["authorization"] == botocore_signature(arrived, bedrock.url, token)
    assert arrived.headers.get("x-amz-security-token") == token
    assert SECRET_KEY.encode() not in repr(arrived).encode()


@pytest.mark.parametrize("kind", KINDS)
def test_a_retry_is_signed_again_and_each_signature_verifies(
    bedrock: BedrockLoopback, kind: str
) -> None:
    require_corpus()
    throttled = b'{"message":"Too many requests, please wait before trying again."}'
    bedrock.answers = [(503, throttled), (200, NOVA_BODY.read_bytes())]
    signer = SigV4Signer(StaticAwsCredentials(ACCESS_KEY, SECRET_KEY), region="us-east-1")
    _, result, error = run(
        kind,
        NOVA,
        base_url=bedrock.url,
        signer=signer,
        retry=RetryPolicy(max_attempts=2, base_delay=0.01),
    )

    assert error is None
    assert_nova_text(result)
    assert len(bedrock.arrived) == 2
    for arrived in bedrock.arrived:
        assert arrived.headers["authorization"] == botocore_signature(arrived, bedrock.url, None)


def test_each_attempt_is_signed_at_the_call_wall_clock() -> None:
    """The sans-IO call signs in `request()` with its own wall clock: a retry a second later
    carries its own X-Amz-Date and signature."""
    plan = plan_call(
        NOVA,
        HELLO,
        None,
        client_type=None,
        base_url="https://bedrock-runtime.us-east-1.amazonaws.com",
        api_key=None,
        env={},
        signer=SigV4Signer(StaticAwsCredentials(ACCESS_KEY, SECRET_KEY), region="us-east-1"),
    )
    assert "authorization" not in {name.lower() for name in plan.request.headers}
    clock = iter([1773500966.0, 1773500967.0])
    call = StreamCall(
        protocol="bedrock-converse-stream",
        provider="bedrock",
        model=NOVA,
        url=plan.request.url,
        signer=plan.endpoint.signer,
        retry=RetryPolicy(),
        timeouts=Timeouts(),
        lenient_tool_arguments=False,
        random=lambda: 0.0,
        wall=lambda: next(clock),
    )
    first = call.request(plan.request).headers
    second = call.request(plan.request).headers
    assert (first["X-Amz-Date"], second["X-Amz-Date"]) == ("20260314T150926Z", "20260314T150927Z")
    assert first["Authorization"] != second["Authorization"]


@pytest.mark.parametrize("kind", KINDS)
def test_sigv4_from_the_aws_chain_goes_only_to_the_configured_url(
    bedrock: BedrockLoopback, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_corpus()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    with pytest.raises(ConfigurationError, match="never sent elsewhere"):
        Client(NOVA, base_url=bedrock.url)

    monkeypatch.setenv("BEDROCK_BASE_URL", bedrock.url)
    bedrock.answers = [(200, NOVA_BODY.read_bytes())]
    _, result, error = run(kind, NOVA)

    assert error is None
    assert_nova_text(result)
    arrived = bedrock.arrived[0]
    assert arrived.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/")
    assert arrived.headers["authorization"] == botocore_signature(
        arrived, bedrock.url, SESSION_TOKEN
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_bedrock_api_key_goes_as_a_bearer_token(
    bedrock: BedrockLoopback, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_corpus()
    bedrock.answers = [(200, NOVA_BODY.read_bytes())] * 2
    _, result, _ = run(kind, NOVA, base_url=bedrock.url, api_key="ABSK-argument")
    assert_nova_text(result)
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "ABSK-environment")
    monkeypatch.setenv("BEDROCK_BASE_URL", bedrock.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)  # the API key wins over the chain
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    _, result, _ = run(kind, NOVA)
    assert_nova_text(result)

    sent = [arrived.headers for arrived in bedrock.arrived]
    assert [h["authorization"] for h in sent] == ["Bearer ABSK-argument", "Bearer ABSK-environment"]
    assert not any("x-amz-date" in h or "x-amz-security-token" in h for h in sent)


# --- Vertex AI ---------------------------------------------------------------------------------


def test_vertex_settings_come_from_the_arguments_or_the_environment() -> None:
    def url_and_path(env: dict[str, str], platform: Vertex, model: str) -> str:
        plan = plan_call(
            model,
            HELLO,
            None,
            client_type=None,
            base_url=None,
            api_key=Secret("ya29.token"),
            env=env,
            platform=platform,
        )
        return plan.request.url

    env = {"GOOGLE_CLOUD_PROJECT": "env-project", "GOOGLE_CLOUD_LOCATION": "europe-west4"}
    assert url_and_path(env, Vertex(), "gemini-2.5-flash") == (
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/env-project/locations/"
        "europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert url_and_path(env, Vertex("p1", "global"), "claude-sonnet-4-5@20250929") == (
        "https://aiplatform.googleapis.com/v1/projects/p1/locations/global/publishers/"
        "anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
    )
    with pytest.raises(ConfigurationError, match="GOOGLE_CLOUD_LOCATION"):
        url_and_path({"GOOGLE_CLOUD_PROJECT": "p"}, Vertex(), "gemini-2.5-flash")
    with pytest.raises(ConfigurationError, match="vertex does not serve client type"):
        resolve_route("gpt-4o", "openai-chat", Vertex("p", "l"))


def test_vertex_uses_application_default_credentials_when_no_key_is_given() -> None:
    endpoint = endpoint_for(
        "gemini-2.5-flash",
        client_type=None,
        base_url=None,
        api_key=None,
        env={},
        platform=Vertex("p", "us-central1"),
    )
    assert endpoint.key_source == "Application Default Credentials"
    assert endpoint.signer.may_block  # the token refresh is IO
    with pytest.raises(ConfigurationError, match="never sent elsewhere"):
        endpoint_for(
            "gemini-2.5-flash",
            client_type=None,
            base_url="http://127.0.0.1:9",
            api_key=None,
            env={},
            platform=Vertex("p", "us-central1"),
        )


def test_a_client_keeps_one_ambient_signer_for_all_its_calls() -> None:
    """The AWS chain and ADC are resolved once per client (and platform), not per call."""
    ambient: dict[Any, Any] = {}
    for model, platform in [(NOVA, None), ("gemini-2.5-flash", Vertex("p", "us-central1"))]:
        first, again = (
            endpoint_for(
                model,
                client_type=None,
                base_url=None,
                api_key=None,
                env={"AWS_REGION": "us-east-1"},
                platform=platform,
                ambient=ambient,
            )
            for _ in range(2)
        )
        assert first.signer is again.signer
    assert len(ambient) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_gemini_on_vertex_sends_the_token_on_the_project_path(emu: Emulator, kind: str) -> None:
    emu.queue(Reply.turn(Turn.text("Bonjour")))
    _, result, error = run(
        kind,
        "gemini-2.5-flash",
        {"max_tokens": 50},
        base_url=emu.url,
        platform=Vertex(project="my-project", location="us-central1"),
        signer=vertex_signer(google_token()),
    )

    assert error is None and isinstance(result, FinalResponse)
    assert result.message["content_items"][0]["text"] == "Bonjour"
    assert result.metadata.provider == "vertex"
    request = emu.requests[0]
    assert request.path == (
        "/v1/projects/my-project/locations/us-central1/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent"
    )
    assert request.query == {"alt": "sse"}
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert "x-goog-api-key" not in request.headers
    assert request.json["generationConfig"]["maxOutputTokens"] == 50
    assert request.json["contents"][0]["parts"] == [{"text": "hello"}]


@pytest.mark.parametrize("kind", KINDS)
def test_claude_on_vertex_puts_the_version_in_the_body_and_the_model_in_the_path(
    emu: Emulator, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "env-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-east5")
    emu.queue(Reply.turn(Turn.text("Hi from Claude")))
    _, result, error = run(
        kind,
        "claude-sonnet-4-5@20250929",
        {"max_tokens": 64},
        base_url=emu.url,
        platform="vertex",
        api_key="ya29.access-token",
    )

    assert error is None and isinstance(result, FinalResponse)
    assert result.message["content_items"][0]["text"] == "Hi from Claude"
    request = emu.requests[0]
    assert request.path == (
        "/v1/projects/env-project/locations/us-east5/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929:streamRawPredict"
    )
    assert request.headers["authorization"] == "Bearer ya29.access-token"
    assert "x-api-key" not in request.headers and "anthropic-version" not in request.headers
    assert request.json["anthropic_version"] == "vertex-2023-10-16"
    assert "model" not in request.json
    assert (request.json["max_tokens"], request.json["stream"]) == (64, True)


# --- Azure OpenAI ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("client_type", "platform", "path", "query"),
    [
        ("openai-chat", "azure", "/openai/v1/chat/completions", {}),
        ("openai-responses", Azure(), "/openai/v1/responses", {}),
        (
            "openai-chat",
            Azure(api_version="2024-10-21"),
            "/openai/deployments/my-gpt-4o/chat/completions",
            {"api-version": "2024-10-21"},
        ),
        (
            "openai-responses",
            Azure(api_version="2025-04-01-preview"),
            "/openai/responses",
            {"api-version": "2025-04-01-preview"},
        ),
    ],
)
def test_azure_paths_and_the_api_key_header(
    emu: Emulator,
    kind: str,
    client_type: str,
    platform: Any,
    path: str,
    query: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", emu.url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", SECRET)
    emu.queue(Reply.turn(Turn.text("Azure says hi")))
    _, result, error = run(kind, "my-gpt-4o", client_type=client_type, platform=platform)

    assert error is None and isinstance(result, FinalResponse)
    assert result.message["content_items"][0]["text"] == "Azure says hi"
    assert result.metadata.provider == "azure"
    request = emu.requests[0]
    assert (request.path, request.query) == (path, query)
    assert request.headers["api-key"] == SECRET
    assert "authorization" not in request.headers
    assert request.json["model"] == "my-gpt-4o"


@pytest.mark.parametrize("kind", KINDS)
def test_azure_with_entra_id_sends_a_bearer_token_and_no_key(emu: Emulator, kind: str) -> None:
    emu.queue(Reply.turn(Turn.text("ok")))
    _, result, error = run(
        kind,
        "gpt-4o",
        platform="azure",
        base_url=emu.url,
        signer=entra_id(lambda: "entra-token-123"),
    )

    assert error is None and isinstance(result, FinalResponse)
    request = emu.requests[0]
    assert request.path == "/openai/v1/responses"  # gpt- routes to Responses on Azure too
    assert request.headers["authorization"] == "Bearer entra-token-123"
    assert "api-key" not in request.headers


def test_azure_needs_an_endpoint_and_credentials() -> None:
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_ENDPOINT"):
        Client("my-deployment", platform="azure", api_key="k")
    with pytest.raises(ConfigurationError, match=r"AZURE_OPENAI_API_KEY.*entra_id"):
        Client("my-deployment", platform="azure", base_url="https://res.openai.azure.com")
    with pytest.raises(ConfigurationError, match="unknown platform 'azur'"):
        Client("my-deployment", platform="azur", api_key="k")  # type: ignore[arg-type]


# --- no secret shows -----------------------------------------------------------------------------


class ListSink:
    def __init__(self) -> None:
        self.turns: list[TraceTurn] = []

    def append(self, turn: TraceTurn) -> None:
        self.turns.append(turn)


def echoing_401(secret: str) -> Reply:
    return Reply.status(401, body={"error": {"code": 401, "message": f"bad credential {secret}"}})


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("platform", ["vertex token", "vertex api_key", "azure key", "azure entra"])
def test_no_platform_credential_shows_in_a_repr_an_error_a_result_or_a_trace(
    emu: Emulator, kind: str, platform: str
) -> None:
    options: dict[str, Any] = {
        "vertex token": {
            "platform": Vertex("p", "us-central1"),
            "signer": vertex_signer(google_token()),
        },
        "vertex api_key": {"platform": Vertex("p", "us-central1"), "api_key": SECRET},
        "azure key": {"platform": "azure", "api_key": SECRET, "client_type": "openai-chat"},
        "azure entra": {"platform": "azure", "signer": entra_id(lambda: SECRET)},
    }[platform]
    emu.queue(echoing_401(SECRET))
    sink = ListSink()
    client, result, error = run(
        kind,
        "gemini-2.5-flash" if "vertex" in platform else "gpt-4o",
        {"trace_id": "t-1"},
        base_url=emu.url,
        traces=sink,
        **options,
    )

    assert SECRET in str(emu.requests[0].headers)  # it was sent
    assert isinstance(error, ProviderError) and error.status == 401
    assert "bad credential ***" in error.provider_message
    shown = [repr(client), str(error), repr(error), repr(error.fields()), repr(result)]
    shown += [repr(turn) for turn in sink.turns]
    assert sink.turns
    for text in shown:
        assert SECRET not in text, text


@pytest.mark.parametrize("kind", KINDS)
def test_no_aws_secret_shows_in_an_error_or_a_repr(bedrock: BedrockLoopback, kind: str) -> None:
    echoed = f'{{"message":"The security token {SESSION_TOKEN} is invalid ({SECRET_KEY})"}}'
    bedrock.answers = [(403, echoed.encode())]
    signer = SigV4Signer(
        StaticAwsCredentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN), region="us-east-1"
    )
    client, result, error = run(kind, NOVA, base_url=bedrock.url, signer=signer)

    assert isinstance(error, ProviderError) and error.status == 403
    shown = [repr(client), str(error), repr(error), repr(result), repr(signer)]
    for text in shown:
        assert SESSION_TOKEN not in text and SECRET_KEY not in text, text


def test_a_resume_is_signed_as_the_get_it_is() -> None:
    """A modelstream server's stream resumed after a dropped connection: the GET that resumes
    it is signed itself (method, path, empty body), at the resume's own time."""
    clock = iter([1773500966.0, 1773500970.0])
    call = StreamCall(
        protocol="modelstream",
        provider="modelstream",
        model="served-model",
        url="https://relay.example/v1/stream",
        signer=SigV4Signer(StaticAwsCredentials(ACCESS_KEY, SECRET_KEY), region="us-east-1"),
        retry=RetryPolicy(),
        timeouts=Timeouts(),
        lenient_tool_arguments=False,
        random=lambda: 0.0,
        wall=lambda: next(clock),
    )
    planned = PreparedRequest(
        "POST",
        "https://relay.example/v1/stream",
        b'{"model":"served-model"}',
        {"content-type": "application/json", "accept": "text/event-stream"},
    )
    call.begin_attempt()
    call.request(planned)
    assert call.accepts(200, {"x-response-id": "resp_1"})
    error = call.fail(classify(httpx.ReadError("connection dropped")))
    assert error is not None and call.retry_delay(error) == 0.0  # resumed at once
    call.begin_attempt()
    resume = call.request(planned)

    assert (resume.method, resume.url, resume.content) == (
        "GET",
        "https://relay.example/v1/streams/resp_1",
        b"",
    )
    assert resume.headers["X-Amz-Date"] == "20260314T150930Z"
    unsigned = {k: v for k, v in resume.headers.items() if k not in ("Authorization", "X-Amz-Date")}
    reference = AWSRequest(method="GET", url=resume.url, data=b"", headers=unsigned)
    with mock.patch.object(
        botocore_auth, "get_current_datetime", return_value=datetime(2026, 3, 14, 15, 9, 30)
    ):
        botocore_auth.SigV4Auth(
            Credentials(ACCESS_KEY, SECRET_KEY), "bedrock", "us-east-1"
        ).add_auth(reference)
    assert resume.headers["Authorization"] == reference.headers["Authorization"]


@dataclass
class ThreadRecordingSigner:
    """A signer whose credentials may need IO: it notes the thread it signs on."""

    may_block: bool
    threads: list[threading.Thread]

    def sign(self, request: Any, now: datetime) -> dict[str, str]:
        self.threads.append(threading.current_thread())
        return {"Authorization": "Bearer recorded-token"}

    def redact(self, text: str) -> str:
        return text.replace("recorded-token", "***")


@pytest.mark.parametrize("may_block", [True, False])
def test_the_async_client_signs_off_the_event_loop_only_when_signing_may_block(
    may_block: bool,
) -> None:
    signer = ThreadRecordingSigner(may_block, [])
    with Emulator() as emu:
        emu.queue(Reply.turn(Turn.text("signed")))

        async def call() -> threading.Thread:
            async with AsyncClient(
                "claude-sonnet-4-5", base_url=emu.base_url("anthropic-messages"), signer=signer
            ) as client:
                await client.complete(HELLO)
            return threading.current_thread()

        loop_thread = asyncio.run(call())
        assert emu.requests[0].headers["authorization"] == "Bearer recorded-token"

    assert len(signer.threads) == 1
    assert (signer.threads[0] is loop_thread) is not may_block
