"""docs/gateway.md: its Python example runs as written (the official SDKs against the gateway,
the emulator upstream), and its tables name only routes the server serves."""

from __future__ import annotations

import re
from typing import Any

import pytest

from modelstream.server import create_app, settings_from_mapping
from support import REPO

DOC = (REPO / "docs" / "gateway.md").read_text()
RUNNABLE = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)


def test_the_gateway_guide_example_runs_and_prints_both_answers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (example,) = RUNNABLE
    namespace: dict[str, Any] = {}

    exec(compile(example, "docs/gateway.md example", "exec"), namespace)

    assert capsys.readouterr().out.splitlines() == [
        "Hello from GPT, through Anthropic's SDK.",
        "Hello from Gemini, through OpenAI's SDK.",
    ]


def test_every_route_of_the_endpoint_table_is_served() -> None:
    settings = settings_from_mapping(
        {"models": [{"server_model_id": "m", "model": "gpt-5-mini", "api_key": "$K"}]}, {"K": "k"}
    )
    served = {
        (getattr(r, "path", None), m)
        for r in create_app(settings).routes
        for m in getattr(r, "methods", None) or ()
    }
    table = DOC.split("## Endpoints", 1)[1].split("\n\n", 2)[1]
    for method, path in re.findall(r"^\| `(GET|POST) ([^`]+)`", table, flags=re.M):
        if "{v1,v1beta}" in path:
            path = path.replace("{v1,v1beta}", "{version}")
        assert (path, method) in served, f"{method} {path} is in the table but not served"
