"""The typed provider errors cross a modelstream server: the server's error line names the
subclass (`"type": "RateLimitError"`) with every fact, and a client with
`client_type="modelstream"` raises that same subclass with the same facts (issue 10 item 3)."""

from __future__ import annotations

import socket
from typing import Any

import orjson
import pytest

from modelstream import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceededError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from modelstream.client import RetryPolicy
from modelstream.jsonwire import error_object
from modelstream.protocols.modelstream.decoder import error_from_wire
from modelstream.testing import Emulator, Reply
from support.modelstream_client import drive
from support.server import SERVED, UPSTREAM_KEY_ENV, LiveServer, Serve


def facts(**extra: Any) -> dict[str, Any]:
    return {
        "status": 429,
        "error_type": "rate_limit_error",
        "code": None,
        "retryable": True,
        "retry_after": 7.0,
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        **extra,
    }


@pytest.mark.parametrize(
    "error",
    [
        cls("the provider's words", **facts())
        for cls in (
            ProviderError,
            AuthenticationError,
            PermissionDeniedError,
            NotFoundError,
            BadRequestError,
            ContextWindowExceededError,
            RateLimitError,
            ServerError,
            OverloadedError,
        )
    ]
    + [
        ProviderConnectionError(
            "https://api.example.com",
            "dns",
            "[Errno -2] Name or service not known",
            provider="openai",
            model="gpt-5-mini",
            attempts=3,
        )
    ],
    ids=lambda error: type(error).__name__,
)
def test_each_error_class_comes_back_from_its_error_object_as_itself(error: Any) -> None:
    wire = orjson.loads(orjson.dumps(error_object(error)))["error"]
    rebuilt = error_from_wire(wire)

    assert wire["type"] == type(error).__name__
    assert type(rebuilt) is type(error)
    assert str(rebuilt) == str(error)
    assert rebuilt.fields() == error.fields()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_upstream_rate_limit_reaches_the_modelstream_client_as_a_rate_limit_error(
    serve: Serve, emu: Emulator, mode: str
) -> None:
    emu.queue(Reply.status(429, retry_after=7))
    server: LiveServer = serve()
    outcome = drive(mode, server.url, retry=RetryPolicy(max_attempts=1))

    error = outcome.error
    assert type(error) is RateLimitError
    assert (error.status, error.error_type, error.retryable, error.retry_after) == (
        429,
        "rate_limit_error",
        True,
        7.0,
    )
    upstream_model, _ = SERVED["anthropic"]
    assert (error.provider, error.model) == ("anthropic", upstream_model)
    assert str(error).startswith(f"rate limited (anthropic, model {upstream_model}, HTTP 429")


def test_an_upstream_that_cannot_be_reached_is_a_connection_error_on_the_far_side(
    serve: Serve, emu: Emulator
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    upstream_model, client_type = SERVED["anthropic"]
    server = serve(
        models=[
            {
                "server_model_id": "anthropic",
                "model": upstream_model,
                "client_type": client_type,
                "base_url": f"http://127.0.0.1:{port}",
                "api_key": "$" + UPSTREAM_KEY_ENV,
                "max_attempts": 1,
            }
        ]
    )
    outcome = drive("sync", server.url, retry=RetryPolicy(max_attempts=1))

    error = outcome.error
    assert type(error) is ProviderConnectionError
    assert (error.host, error.reason) == (f"http://127.0.0.1:{port}", "refused")
    assert error.model == upstream_model
    assert str(error).startswith(f"could not connect to http://127.0.0.1:{port} (anthropic, ")


@pytest.mark.parametrize(
    ("options", "cause", "status"),
    [
        ({"api_key": "msk-wrong-key-0123"}, AuthenticationError, 401),
        ({"model": "no-such-model"}, NotFoundError, 404),
    ],
)
def test_the_server_s_own_refusals_are_the_same_classes(
    serve: Serve, emu: Emulator, options: dict[str, str], cause: type[ProviderError], status: int
) -> None:
    outcome = drive("sync", serve().url, **options)

    error = outcome.error
    assert type(error) is cause and error.status == status
    assert (error.provider, error.retryable) == ("modelstream", False)
    assert "msk-wrong-key-0123" not in str(error)
    assert emu.requests == []
