"""Clients are cheap to make: one verifying TLS context per process, shared by every client
(building one costs ~15 ms of CPU), none for a plain-http base URL, and `ssl_context=` for a
caller's own, proved against a real TLS server on loopback with a self-signed certificate."""

from __future__ import annotations

import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from modelstream import AsyncClient, Client, ProviderConnectionError
from modelstream.client.tls import shared_ssl_context, ssl_context_for
from modelstream.testing import Turn, render
from support import ReplayServer

HELLO = "Hello"


def test_a_hundred_clients_take_well_under_a_second_of_cpu() -> None:
    start = time.process_time()
    clients = [Client("gpt-5", api_key="sk-test", traces=False) for _ in range(40)]
    clients += [AsyncClient("claude-sonnet-4-5", api_key="sk-k", traces=False) for _ in range(40)]
    clients += [
        Client("m", client_type="openai-chat", base_url="http://127.0.0.1:9/v1", api_key="k")
        for _ in range(20)
    ]
    spent = time.process_time() - start
    for client in clients:
        if isinstance(client, Client):
            client.close()

    assert spent < 0.5, f"100 clients took {spent:.3f} s of CPU"


def test_https_clients_share_one_context_and_plain_http_clients_load_no_bundle() -> None:
    shared = shared_ssl_context()

    assert ssl_context_for(None) is shared
    assert ssl_context_for("https://api.openai.com/v1") is shared
    plain = ssl_context_for("http://127.0.0.1:11434/v1")
    assert plain is not shared
    # the plain-http context trusts nothing: it could never make an unverified connection
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    assert plain.cert_store_stats()["x509_ca"] == 0
    own = ssl.create_default_context()
    assert ssl_context_for("https://example.com", own) is own


def test_a_wrong_ssl_context_is_refused_at_construction() -> None:
    with pytest.raises(TypeError, match=r"ssl_context must be an ssl\.SSLContext, got str"):
        Client("gpt-5", api_key="sk-test", ssl_context="/etc/ssl/cert.pem")  # type: ignore[arg-type]


# --- against a real TLS server ------------------------------------------------------------------


class TLSReplayServer(ReplayServer):
    """The loopback replay server behind TLS, with a certificate for 127.0.0.1."""

    def __init__(self, cert: Path, key: Path) -> None:
        super().__init__()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.socket = context.wrap_socket(self.socket, server_side=True)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[TLSReplayServer, Path]]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    server = TLSReplayServer(cert, key)
    server.routes["/v1/chat/completions"] = (render("openai-chat", Turn.text(HELLO)), ())
    try:
        yield server, cert
    finally:
        server.close()


def test_the_shared_context_verifies_and_refuses_an_unknown_certificate(
    tls_server: tuple[TLSReplayServer, Path],
) -> None:
    server, _ = tls_server
    with (
        Client(
            "m", client_type="openai-chat", base_url=f"{server.url}/v1", api_key="k", retry=False
        ) as client,
        pytest.raises(ProviderConnectionError) as caught,
    ):
        client.complete(HELLO)

    assert "127.0.0.1" in str(caught.value)


def test_an_own_ssl_context_that_trusts_the_server_is_used(
    tls_server: tuple[TLSReplayServer, Path],
) -> None:
    server, cert = tls_server
    trusting = ssl.create_default_context(cafile=str(cert))
    with Client(
        "m",
        client_type="openai-chat",
        base_url=f"{server.url}/v1",
        api_key="k",
        ssl_context=trusting,
        traces=False,
    ) as client:
        message = client.complete(HELLO)

    assert message.text == HELLO


def test_an_own_http_client_is_used_as_given(tls_server: tuple[TLSReplayServer, Path]) -> None:
    server, cert = tls_server
    http = httpx.Client(verify=ssl.create_default_context(cafile=str(cert)))
    with Client(
        "m", client_type="openai-chat", base_url=f"{server.url}/v1", api_key="k", http_client=http
    ) as client:
        assert client.complete(HELLO).text == HELLO
    http.close()
