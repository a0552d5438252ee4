"""What the routing tests share (loaded for every folder by tests/conftest.py): two more
emulators beside `emu` (`west`, `backup`), so each deployment has an upstream of its own and a
test can tell which one a turn reached; the models table of a served model "claude" with the
deployments "east" (on `emu`) and "west" and a fallback "backup" (OpenAI Chat, on `backup`);
and readers of what a switch leaves behind (metrics, the trace's notes).

Every deployment speaks Anthropic Messages unless told; "backup" speaks another protocol, so a
fallback is also a change of wire."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from modelstream.testing import Emulator
from support.server import UPSTREAM_KEY_ENV

CLAUDE = ("claude-sonnet-4-5", "anthropic-messages")


@pytest.fixture
def west() -> Iterator[Emulator]:
    """The upstream of the deployment "west"."""
    with Emulator() as emulator:
        yield emulator


@pytest.fixture
def backup() -> Iterator[Emulator]:
    """The upstream of the fallback "backup"."""
    with Emulator() as emulator:
        yield emulator


def deployment(
    name: str, upstream: Emulator | str, *, served: str = "claude", **fields: Any
) -> dict[str, Any]:
    """A `[[models]]` entry: deployment `name` of `served` on `upstream` (an emulator, or a base
    URL), speaking Anthropic Messages unless `client_type` is given."""
    client_type = fields.pop("client_type", CLAUDE[1])
    model = fields.pop("model", CLAUDE[0] if client_type == CLAUDE[1] else "deepseek-chat")
    base_url = upstream if isinstance(upstream, str) else upstream.base_url(client_type)
    return {
        "server_model_id": served,
        "deployment": name,
        "model": model,
        "client_type": client_type,
        "base_url": base_url,
        "api_key": "$" + UPSTREAM_KEY_ENV,
        **fields,
    }


def claude_models(
    east: Emulator | str,
    west: Emulator | str,
    backup: Emulator | None = None,
    *,
    east_fields: dict[str, Any] | None = None,
    west_fields: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """ "claude" on "east" (weight 100 unless told: the first pick of every test's first turns)
    and "west" (weight 1), falling back to "backup" (OpenAI Chat) when `backup` is given."""
    first = deployment("east", east, **{"weight": 100, **(east_fields or {})})
    second = deployment("west", west, **{"weight": 1, **(west_fields or {})})
    models = [first, second]
    if backup is not None:
        first["fallbacks"] = ["backup"]
        models.append(deployment("backup", backup, served="backup", client_type="openai-chat"))
    return models


def closed_port_url() -> str:
    """A loopback URL nothing listens on: a connect there is refused."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def metric(text: str, name: str, **labels: str) -> float:
    """The value of `name` with (at least) these labels in a /metrics page; 0 when absent."""
    total = 0.0
    for line in text.splitlines():
        match = re.match(rf"{re.escape(name)}\{{(.*)\}} (\S+)$", line)
        if not match:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        if all(found.get(key) == value for key, value in labels.items()):
            total += float(match.group(2))
    return total


def metrics_of(url: str) -> str:
    return httpx.get(url + "/metrics", timeout=10).text


def deployment_notes(diagnostics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A trace's notes about deployments: each switch, then the one that answered."""
    return [d for d in diagnostics if d.get("kind") in ("deployment_switch", "deployment")]
