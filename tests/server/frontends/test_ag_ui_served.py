"""AG-UI from `modelstream serve` (docs/frontends.md), over real HTTP in front of the emulator:
`@ag-ui/client`'s own `HttpAgent`, in Node, runs a turn against the server and reads the text
and the pending tool call; a run without a key is refused before any event; an upstream that
breaks off mid-answer ends the run with RUN_ERROR, never RUN_FINISHED. The wire's frames, one
by one, are tested in test_ag_ui_wire.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from modelstream.testing import Emulator, Reply, Turn
from support.frontend import run_node
from support.server import CLIENT_KEY, Serve

API = "/v1/stream/ag-ui"

# Reads {url, key, input} on stdin, runs an HttpAgent against the server with the key, and
# prints every event it saw, the run's result or error, and the agent's history after it.
AGENT = r"""
const { HttpAgent } = require("@ag-ui/client");

async function main() {
  const { url, key, input } = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const agent = new HttpAgent({
    url,
    headers: { authorization: `Bearer ${key}` },
    threadId: input.threadId,
    initialMessages: input.messages,
  });
  const seen = [];
  let runError = null;
  let result = null;
  try {
    const options = { runId: input.runId, forwardedProps: input.forwardedProps };
    ({ result } = await agent.runAgent(options, { onEvent: ({ event }) => seen.push(event.type) }));
  } catch (error) {
    runError = String((error && error.message) || error);
  }
  process.stdout.write(JSON.stringify({ seen, runError, result, messages: agent.messages }));
}
main().catch((error) => { console.error(error); process.exit(1); });
"""


def run_input(model: str = "chat") -> dict[str, Any]:
    return {
        "threadId": "thread-1",
        "runId": "run-1",
        "state": {},
        "messages": [{"id": "u1", "role": "user", "content": "Hello?"}],
        "tools": [],
        "context": [],
        "forwardedProps": {"model": model},
    }


def run_agent(url: str, input_: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    stdin = {"url": url + API, "key": CLIENT_KEY, "input": input_}
    found: dict[str, Any] = run_node(AGENT, stdin, ("@ag-ui/client",), tmp_path)
    return found


def events(raw: str) -> list[dict[str, Any]]:
    frames = [frame for frame in raw.split("\n\n") if frame]
    assert all(frame.startswith("data: ") for frame in frames), frames
    return [json.loads(frame[6:]) for frame in frames]


def test_http_agent_runs_a_text_turn_against_the_server(
    serve: Serve, emu: Emulator, tmp_path: Path
) -> None:
    server = serve()
    emu.queue(Reply.turn(Turn.text("Hello from the model."), fragment_size=4))
    found = run_agent(server.url, run_input(), tmp_path)
    assert found["runError"] is None
    assert found["seen"][0] == "RUN_STARTED" and found["seen"][-1] == "RUN_FINISHED"
    assert found["seen"].count("TEXT_MESSAGE_CONTENT") > 3
    history = found["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[-1]["content"] == "Hello from the model."
    assert found["result"]["finishReason"] == "stop"


def test_http_agent_ends_a_tool_turn_with_the_call_pending(
    serve: Serve, emu: Emulator, tmp_path: Path
) -> None:
    server = serve()
    emu.queue(Reply.turn(Turn.tool_call("weather", {"city": "Oslo"})))
    found = run_agent(server.url, run_input("anthropic"), tmp_path)
    assert found["runError"] is None
    [assistant] = [m for m in found["messages"] if m["role"] == "assistant"]
    [call] = assistant["toolCalls"]
    assert call["function"]["name"] == "weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Oslo"}
    assert found["result"]["finishReason"] == "tool_call"


def test_a_run_without_a_key_is_refused_before_any_event(serve: Serve) -> None:
    server = serve()
    response = httpx.post(server.url + API, json=run_input(), timeout=30)
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"]["type"]


def test_an_upstream_that_breaks_off_ends_the_run_with_run_error(
    serve: Serve, emu: Emulator
) -> None:
    server = serve()
    answer = Turn.text("A long answer. " * 40)
    emu.queue(Reply.turn(answer, fragment_size=8, disconnect_after_bytes=1200))
    headers = {"authorization": f"Bearer {CLIENT_KEY}"}
    response = httpx.post(server.url + API, json=run_input(), headers=headers, timeout=30)
    assert response.status_code == 200
    found = events(response.text)
    kinds = [e["type"] for e in found]
    assert kinds[0] == "RUN_STARTED"
    assert kinds[-1] == "RUN_ERROR"
    assert "RUN_FINISHED" not in kinds
    assert "TEXT_MESSAGE_CONTENT" in kinds


def test_a_runs_answer_stays_readable_by_its_response_id(serve: Serve, emu: Emulator) -> None:
    """AG-UI has no reconnect: a front-end that lost a run reads its answer back in the SPEC wire,
    by the `responseId` of the run's result (or the `x-response-id` header)."""
    server = serve()
    emu.queue(Reply.turn(Turn.text("Kept for later."), fragment_size=4))
    headers = {"authorization": f"Bearer {CLIENT_KEY}"}
    response = httpx.post(server.url + API, json=run_input(), headers=headers, timeout=30)
    [finished] = [e for e in events(response.text) if e["type"] == "RUN_FINISHED"]
    response_id = finished["result"]["responseId"]
    assert response.headers["x-response-id"] == response_id
    replay = httpx.get(f"{server.url}/v1/streams/{response_id}", headers=headers, timeout=30)
    assert replay.status_code == 200
    lines = [line[6:] for line in replay.text.splitlines() if line.startswith("data: {")]
    items = [item for line in lines for item in json.loads(line)["content_items"]]
    assert "".join(i["text"] for i in items if i["type"] == "text.delta") == "Kept for later."
    assert replay.text.rstrip().endswith("data: [DONE]")
