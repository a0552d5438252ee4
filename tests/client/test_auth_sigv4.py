"""SigV4 for Bedrock: our hand-written signer against botocore's reference signer, byte for
byte, on the requests Bedrock gets (JSON bodies, model ids with `:` and `.`, ARNs, query
strings, session credentials), at a fixed time; and the credentials the AWS chain finds."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

import botocore.auth as botocore_auth
import httpx
import pytest
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from modelstream.auth import (
    AwsCredentialChain,
    SignableRequest,
    SigV4Signer,
    StaticAwsCredentials,
    aws_region,
    bedrock_signer,
)
from modelstream.errors import ConfigurationError

NOW = datetime(2026, 3, 14, 15, 9, 26, tzinfo=UTC)
ACCESS_KEY = "AKIDEXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLE//session+token=="
HOST = "https://bedrock-runtime.us-east-1.amazonaws.com"
BODY = b'{"messages":[{"role":"user","content":[{"text":"Hello"}]}]}'
JSON_HEADERS = {"content-type": "application/json", "accept": "application/vnd.amazon.eventstream"}

REQUESTS = {
    "converse-stream with a model id holding ':' and '.'": SignableRequest(
        "POST",
        f"{HOST}/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream",
        JSON_HEADERS,
        BODY,
    ),
    "an inference-profile ARN as model id": SignableRequest(
        "POST",
        f"{HOST}/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile"
        "%2Fus.amazon.nova-lite-v1%3A0/converse-stream",
        JSON_HEADERS,
        BODY,
    ),
    "a query string out of order, with encoded values": SignableRequest(
        "POST",
        f"{HOST}/model/amazon.nova-micro-v1%3A0/converse-stream?b=2&a=x%20y&a=1&c=%2F~",
        {"Content-Type": "application/json", "X-Custom": "  folded   spaces  "},
        BODY,
    ),
    "an empty body, a non-default port and headers that are never signed": SignableRequest(
        "GET",
        "http://127.0.0.1:8123/foundation-models",
        {"User-Agent": "modelstream", "Connection": "keep-alive", "accept": "application/json"},
        b"",
    ),
    "a UTF-8 body and a dot segment in the path": SignableRequest(
        "POST",
        f"{HOST}/model/./meta.llama3-70b-instruct-v1%3A0/converse-stream",
        JSON_HEADERS,
        '{"text":"température 30°C"}'.encode(),
    ),
}


def reference_headers(request: SignableRequest, token: str | None) -> dict[str, str]:
    """What botocore's SigV4Auth adds to the same request at the same time."""
    aws_request = AWSRequest(
        method=request.method, url=request.url, data=request.body, headers=dict(request.headers)
    )
    signer = botocore_auth.SigV4Auth(
        Credentials(ACCESS_KEY, SECRET_KEY, token), "bedrock", "us-east-1"
    )
    with mock.patch.object(botocore_auth, "get_current_datetime", return_value=NOW):
        signer.add_auth(aws_request)
    return {
        name: aws_request.headers[name]
        for name in aws_request.headers
        if name.lower() not in {n.lower() for n in request.headers}
    }


@pytest.mark.parametrize("token", [None, SESSION_TOKEN], ids=["long-term", "session"])
@pytest.mark.parametrize("name", list(REQUESTS))
def test_the_signature_is_botocores_byte_for_byte(name: str, token: str | None) -> None:
    request = REQUESTS[name]
    signer = SigV4Signer(StaticAwsCredentials(ACCESS_KEY, SECRET_KEY, token), region="us-east-1")
    ours = signer.sign(request, NOW)
    assert ours == reference_headers(request, token)
    assert ("X-Amz-Security-Token" in ours) is (token is not None)


def test_the_model_id_colon_is_signed_encoded_twice() -> None:
    from modelstream.auth.sigv4 import canonical_uri

    assert canonical_uri("/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream") == (
        "/model/us.anthropic.claude-sonnet-4-20250514-v1%253A0/converse-stream"
    )


def test_each_attempt_is_signed_at_its_own_time() -> None:
    request = REQUESTS["converse-stream with a model id holding ':' and '.'"]
    signer = SigV4Signer(StaticAwsCredentials(ACCESS_KEY, SECRET_KEY), region="eu-west-3")
    first = signer.sign(request, NOW)
    retry = signer.sign(request, NOW + timedelta(seconds=2))
    assert (first["X-Amz-Date"], retry["X-Amz-Date"]) == ("20260314T150926Z", "20260314T150928Z")
    assert first["Authorization"] != retry["Authorization"]
    assert "/20260314/eu-west-3/bedrock/aws4_request," in first["Authorization"]


def test_signing_again_replaces_the_previous_signature_headers() -> None:
    request = REQUESTS["converse-stream with a model id holding ':' and '.'"]
    signer = SigV4Signer(
        StaticAwsCredentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN), region="us-east-1"
    )
    first = signer.sign(request, NOW)
    signed_once = SignableRequest(
        request.method, request.url, {**request.headers, **first}, request.body
    )
    assert signer.sign(signed_once, NOW) == first


# --- the AWS chain (botocore), with no network ------------------------------------------------

AWS_VARIABLES = (
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
    "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_BEARER_TOKEN_BEDROCK",
)  # fmt: skip


@pytest.fixture
def aws_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An AWS environment of our own: no variables, empty shared files, no instance metadata."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "credentials").write_text("")
    (tmp_path / "config").write_text("")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return tmp_path


def test_the_chain_reads_credentials_from_the_environment(
    aws_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAENVIRONMENT")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "env-token")
    found = AwsCredentialChain().credentials()
    assert found.access_key_id == "AKIAENVIRONMENT"
    assert found.secret_access_key.reveal() == "env-secret"
    assert found.session_token is not None and found.session_token.reveal() == "env-token"


def test_the_chain_reads_a_named_profile_from_the_shared_files(aws_home: Path) -> None:
    (aws_home / "credentials").write_text(
        "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = default-secret\n"
        "[work]\naws_access_key_id = AKIAWORK\naws_secret_access_key = work-secret\n"
    )
    (aws_home / "config").write_text("[profile work]\nregion = eu-central-1\n")
    found = AwsCredentialChain("work").credentials()
    assert (found.access_key_id, found.secret_access_key.reveal()) == ("AKIAWORK", "work-secret")
    assert found.session_token is None
    assert AwsCredentialChain().credentials().access_key_id == "AKIADEFAULT"
    signer = bedrock_signer(profile="work")
    assert signer.region == "eu-central-1"
    assert (
        "Credential=AKIAWORK/20260314/eu-central-1/bedrock/"
        in signer.sign(
            REQUESTS["an empty body, a non-default port and headers that are never signed"], NOW
        )["Authorization"]
    )


def test_the_environment_region_wins_over_the_profile(
    aws_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (aws_home / "config").write_text("[default]\nregion = eu-west-1\n")
    assert aws_region() == "eu-west-1"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    assert aws_region() == "ap-south-1"
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    assert aws_region() == "us-west-2"


def test_no_credentials_anywhere_is_a_configuration_error(aws_home: Path) -> None:
    with pytest.raises(ConfigurationError, match="no AWS credentials found"):
        AwsCredentialChain().credentials()


def test_an_unknown_profile_is_a_configuration_error_naming_it(aws_home: Path) -> None:
    with pytest.raises(ConfigurationError, match="nowhere"):
        AwsCredentialChain("nowhere").credentials()


def test_a_naive_time_is_refused_rather_than_read_as_local_time() -> None:
    signer = SigV4Signer(StaticAwsCredentials(ACCESS_KEY, SECRET_KEY), region="us-east-1")
    with pytest.raises(ValueError, match="aware datetime"):
        signer.sign(
            REQUESTS["a query string out of order, with encoded values"], NOW.replace(tzinfo=None)
        )


def test_no_region_anywhere_is_a_configuration_error(aws_home: Path) -> None:
    with pytest.raises(ConfigurationError, match="set AWS_REGION"):
        bedrock_signer()


def test_without_botocore_the_error_says_which_extra_to_install(
    aws_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "botocore.session", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'modelstream\[aws\]'"):
        AwsCredentialChain().credentials()


# --- over a real HTTP connection ----------------------------------------------------------------


class _Verifier(BaseHTTPRequestHandler):
    """Recomputes the signature of what actually arrived with botocore, as AWS would."""

    protocol_version = "HTTP/1.1"
    verdicts: ClassVar[list[tuple[str, str]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        sent = self.headers["Authorization"]
        signed_names = sent.split("SignedHeaders=")[1].split(",")[0].split(";")
        arrived = AWSRequest(
            method="POST",
            url=f"http://{self.headers['Host']}{self.path}",
            data=body,
            headers={name: self.headers[name] for name in signed_names if name != "host"},
        )
        when = datetime.strptime(self.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        token = self.headers.get("X-Amz-Security-Token")
        reference = botocore_auth.SigV4Auth(
            Credentials(ACCESS_KEY, SECRET_KEY, token), "bedrock", "us-east-1"
        )
        with mock.patch.object(botocore_auth, "get_current_datetime", return_value=when):
            reference.add_auth(arrived)
        self.verdicts.append((sent, arrived.headers["Authorization"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_what_httpx_sends_is_what_was_signed() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Verifier)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = (
            f"http://127.0.0.1:{server.server_port}"
            "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"
        )
        headers = {
            "content-type": "application/json",
            "accept": "application/vnd.amazon.eventstream",
        }
        signer = SigV4Signer(
            StaticAwsCredentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN), region="us-east-1"
        )
        with httpx.Client() as http:
            signed = signer.sign(SignableRequest("POST", url, headers, BODY), NOW)
            assert http.post(url, content=BODY, headers={**headers, **signed}).status_code == 200
    finally:
        server.shutdown()
        server.server_close()
    ((sent, recomputed),) = _Verifier.verdicts
    assert sent == recomputed
