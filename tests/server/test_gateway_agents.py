"""The coding agents themselves as clients: Claude Code (`claude -p`, Anthropic Messages) and
Codex (`codex exec`, Responses) each finish a scripted two-step tool task through the gateway,
served by an upstream of another family (the emulator).

The agents come from the npm registry: `.ci/run` installs them into `.agents/` (pinned
versions); elsewhere, `npm install --prefix .agents @anthropic-ai/claude-code @openai/codex`.
Missing, these tests skip with that reason (and fail under CI, which must install them).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modelstream.server import BackgroundServer, create_app, settings_from_mapping
from modelstream.testing import Emulator, Reply, Turn
from support import REPO, missing

AGENTS = Path(os.environ.get("MODELSTREAM_AGENTS", REPO / ".agents"))
CLIENT_KEY = "msk-agent-client-9d2e61b0"
TIMEOUT = 240  # seconds an agent may take, start-up included (Claude Code's is a few seconds)


def agent(name: str) -> Path:
    path = AGENTS / "node_modules" / ".bin" / name
    if not path.exists():
        missing(
            f"the {name} agent is not installed at {path}: npm install --prefix .agents "
            "@anthropic-ai/claude-code @openai/codex",
            ci_must="install it (.ci/run does)",
        )
    return path


@pytest.fixture
def upstream() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


def gateway(upstream: Emulator, served: dict[str, tuple[str, str]]) -> BackgroundServer:
    """A server whose models (served id -> upstream model, protocol) are on the emulator."""
    env = {**os.environ, "AGENT_CLIENT_KEY": CLIENT_KEY, "AGENT_UPSTREAM_KEY": "sk-upstream"}
    config: dict[str, Any] = {
        "keys": ["$AGENT_CLIENT_KEY"],
        "traces": False,
        "models": [
            {
                "server_model_id": served_id,
                "model": model,
                "client_type": protocol,
                "base_url": upstream.base_url(protocol),
                "api_key": "$AGENT_UPSTREAM_KEY",
                "max_attempts": 1,
            }
            for served_id, (model, protocol) in served.items()
        ],
    }
    return BackgroundServer(create_app(settings_from_mapping(config, env)))


def run_agent(
    command: list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    return subprocess.run(
        command,
        cwd=cwd,
        env={**base, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def test_claude_code_finishes_a_tool_task_through_the_gateway_on_an_openai_chat_upstream(
    upstream: Emulator, tmp_path: Path
) -> None:
    claude = agent("claude")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    proof = work / "proof.txt"
    upstream.queue(
        Reply.turn(Turn.tool_call("Write", {"file_path": str(proof), "content": "gateway-ok\n"})),
        Reply.turn(Turn.text("Done: proof.txt holds gateway-ok.")),
    )
    # a served id named like a Claude model: Claude Code knows its context window
    with gateway(upstream, {"claude-sonnet-4-5": ("deepseek-chat", "openai-chat")}) as server:
        result = run_agent(
            [
                *(str(claude), "-p", "Write gateway-ok into proof.txt"),
                *("--model", "claude-sonnet-4-5", "--allowedTools", "Write"),
            ],
            work,
            {
                "HOME": str(home),
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": CLIENT_KEY,
                "DISABLE_TELEMETRY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            },
        )

    assert result.returncode == 0, result.stderr[-2000:]
    assert proof.read_text() == "gateway-ok\n"  # the agent ran the tool call it was streamed
    assert "Done: proof.txt holds gateway-ok." in result.stdout
    first, second = (r for r in upstream.requests if r.path.endswith("/chat/completions"))
    assert "Write" in [tool["function"]["name"] for tool in first.json["tools"]]
    results = [m for m in second.json["messages"] if m["role"] == "tool"]
    call = second.json["messages"][-2]["tool_calls"][0]
    assert results and results[0]["tool_call_id"] == call["id"]  # the result answers the call


def test_codex_finishes_a_tool_task_through_the_gateway_on_an_anthropic_upstream(
    upstream: Emulator, tmp_path: Path
) -> None:
    codex = agent("codex")
    work, home, codex_home = tmp_path / "work", tmp_path / "home", tmp_path / "codex"
    for folder in (work, home, codex_home):
        folder.mkdir()
    upstream.queue(
        Reply.turn(Turn.tool_call("exec_command", {"cmd": "echo gateway-ok > proof.txt"})),
        Reply.turn(Turn.text("Done: proof.txt holds gateway-ok.")),
    )
    with gateway(upstream, {"gpt-5-mini": ("claude-sonnet-4-5", "anthropic-messages")}) as server:
        (codex_home / "config.toml").write_text(
            'model = "gpt-5-mini"\nmodel_provider = "gateway"\n\n'
            "[model_providers.gateway]\n"
            'name = "modelstream gateway"\n'
            f'base_url = "{server.url}/v1"\n'
            'env_key = "GATEWAY_KEY"\n'
            'wire_api = "responses"\n'
        )
        result = run_agent(
            [
                *(str(codex), "exec", "--skip-git-repo-check"),
                *("--dangerously-bypass-approvals-and-sandbox", "Write gateway-ok into proof.txt"),
            ],
            work,
            {"HOME": str(home), "CODEX_HOME": str(codex_home), "GATEWAY_KEY": CLIENT_KEY},
        )

    assert result.returncode == 0, result.stderr[-2000:]
    assert (work / "proof.txt").read_text() == "gateway-ok\n"
    assert "Done: proof.txt holds gateway-ok." in result.stdout
    first, second = (r for r in upstream.requests if r.path == "/v1/messages")
    assert "exec_command" in [tool["name"] for tool in first.json["tools"]]
    use = second.json["messages"][-2]["content"][-1]
    answer = second.json["messages"][-1]["content"][-1]
    assert (use["type"], use["name"], use["input"]) == (
        "tool_use",
        "exec_command",
        {"cmd": "echo gateway-ok > proof.txt"},
    )
    assert answer["type"] == "tool_result" and answer["tool_use_id"] == use["id"]
    assert json.dumps(answer["content"])  # the command's output went back to the model
