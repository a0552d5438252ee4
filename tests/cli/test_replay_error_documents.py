"""`modelstream replay` of a recorded 200 response whose body is one JSON error document (issue
18 item 14): it ends in the same typed error line the client raises for that body, exit status 1.

The client's side is measured, not restated: each body is served by the loopback emulator as a
200 `application/json` response, and the error `Client` raises for it is what the replay's last
line must say. Replay knows no model (a body does not name it), so the client's message naming
its model is compared without that part.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from modelstream import ProviderError, user
from modelstream.client import Client
from modelstream.testing import Emulator, Reply
from support.cli import command, environment

# Recorded 200 error documents, in each provider's own shape, and a model that routes to the
# protocol's own provider (the one replay names: the decoder's default).
DOCUMENTS: dict[str, tuple[bytes, str]] = {
    "anthropic-messages": (
        b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        "claude-sonnet-4-5",
    ),
    "openai-chat": (
        b'{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens '
        b'per min (TPM): Limit 30000, Used 30000, Requested 1200.","type":"tokens",'
        b'"param":null,"code":"rate_limit_exceeded"}}',
        "gpt-4o",
    ),
    "openai-responses": (
        b'{"error":{"message":"The model `gpt-9` does not exist or you do not have access to '
        b'it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}',
        "gpt-4o",
    ),
    "gemini-generate-content": (
        b'{\n  "error": {\n    "code": 503,\n    "message": "The model is overloaded. Please try '
        b'again later.",\n    "status": "UNAVAILABLE"\n  }\n}\n',
        "gemini-2.5-flash",
    ),
}


def client_error(emu: Emulator, protocol: str) -> ProviderError:
    """What `Client` raises when the provider answers 200 with the document."""
    body, model = DOCUMENTS[protocol]
    emu.queue(Reply.body(body, content_type="application/json"))
    client = Client(
        model,
        client_type=protocol,
        base_url=emu.base_url(protocol),
        api_key="sk-test-0123456789",
        retry=False,
    )
    with (
        client,
        client.stream([user("hello")]) as stream,
        pytest.raises(ProviderError) as raised,
    ):
        list(stream)
    return raised.value


def replay(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command("replay", str(path), *args),
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
    )


def recorded(tmp_path: Path, protocol: str) -> Path:
    """The body as recorded: `error.sse` with its sidecar naming the protocol."""
    body = tmp_path / "error.sse"
    body.write_bytes(DOCUMENTS[protocol][0])
    body.with_suffix(".json").write_text(json.dumps({"protocol": protocol}))
    return body


def the_error_line(stdout: str) -> dict[str, Any]:
    error: dict[str, Any] = json.loads(stdout.splitlines()[-1])["error"]
    return error


@pytest.mark.parametrize("protocol", sorted(DOCUMENTS))
def test_a_recorded_error_document_ends_in_the_error_the_client_raises_for_it(
    emu: Emulator, tmp_path: Path, protocol: str
) -> None:
    expected = client_error(emu, protocol)

    result = replay(recorded(tmp_path, protocol), "--format", "jsonl")

    assert result.returncode == 1, result.stderr
    assert result.stdout.count("\n") == 1  # no event: the error line alone
    error = the_error_line(result.stdout)
    assert error["type"] == type(expected).__name__
    assert error["message"] == str(expected).replace(f", model {expected.model}", "")
    facts = {k: v for k, v in expected.fields().items() if k != "model"}
    assert {k: error[k] for k in facts} == facts
    assert error["model"] is None
    assert expected.partial is not None
    assert error["partial_status"] == expected.partial.status == "failed"


@pytest.mark.parametrize("protocol", ["anthropic-messages", "gemini-generate-content"])
def test_protocol_given_on_the_command_line_reads_the_document_the_same(
    tmp_path: Path, protocol: str
) -> None:
    body = tmp_path / "error.json-body"  # no sidecar beside it
    body.write_bytes(DOCUMENTS[protocol][0])
    with_sidecar = replay(recorded(tmp_path, protocol), "--format", "jsonl")

    result = replay(body, "--protocol", protocol, "--format", "jsonl")

    assert result.returncode == 1, result.stderr
    assert the_error_line(result.stdout) == the_error_line(with_sidecar.stdout)


def test_the_pretty_format_names_the_provider_error_and_exits_1(tmp_path: Path) -> None:
    result = replay(recorded(tmp_path, "anthropic-messages"))

    assert result.returncode == 1, result.stderr
    assert "OverloadedError" in result.stdout
    assert "overloaded (anthropic, overloaded_error): Overloaded" in result.stdout
    assert "frames found" not in result.stderr


def test_a_json_document_that_is_no_error_stays_bad_usage(tmp_path: Path) -> None:
    """A 200 JSON body with no error in it is not a stream at all: bad usage, as before."""
    body = tmp_path / "not-a-stream.sse"
    body.write_bytes(b'{"id": "chatcmpl-1", "choices": []}')

    result = replay(body, "--protocol", "openai-chat")

    assert result.returncode == 2
    assert result.stdout == ""
    assert "no openai-chat frames found" in result.stderr


def test_an_error_document_with_no_protocol_named_asks_for_one(tmp_path: Path) -> None:
    """Every protocol reads an error document alike (the same error, but each naming its own
    provider), so recognition cannot choose: bad usage, as for any body two protocols read."""
    body = tmp_path / "error.sse"
    body.write_bytes(DOCUMENTS["anthropic-messages"][0])

    result = replay(body)

    assert result.returncode == 2
    assert result.stderr.startswith(
        "modelstream replay: error: cannot tell which protocol error.sse speaks: pass --protocol"
    )
