"""Cooldowns and per-minute counts shared by every server behind one Redis (docs/routing.md,
"Several processes"): two servers on one store, then two `modelstream serve --redis` processes,
skip the same deployments; without Redis each process keeps its own."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from modelstream.server.stores.redis import RedisStore
from modelstream.testing import Emulator, Reply
from support.routing import claude_models, metric, metrics_of
from support.server import (
    CLIENT_KEY,
    CLIENT_KEY_ENV,
    UPSTREAM_KEY_ENV,
    Serve,
    post_stream,
    stream_body,
)
from support.server_process import serve_processes

COOLDOWNS = "modelstream_server_deployment_cooldowns_total"


def turn(url: str) -> bool:
    with httpx.Client(base_url=url, timeout=20) as http:
        return post_stream(http, stream_body("claude")).done


def test_a_cooldown_set_by_one_server_is_kept_by_the_other(
    serve: Serve, emu: Emulator, west: Emulator, redis_url: str, prefix: str
) -> None:
    models = claude_models(emu, west)
    first = serve(store=RedisStore.from_url(redis_url, prefix=prefix), models=models)
    second = serve(store=RedisStore.from_url(redis_url, prefix=prefix), models=models)
    emu.queue(Reply.status(429, retry_after=30))

    assert turn(first.url)  # east answers 429: the turn moves to west, east cools down
    assert turn(second.url)  # the other server skips east

    assert (len(emu.requests), len(west.requests)) == (1, 2)
    assert metric(metrics_of(first.url), COOLDOWNS, deployment="east") == 1


def test_failures_counted_on_two_servers_add_up_to_a_cooldown(
    serve: Serve, emu: Emulator, west: Emulator, redis_url: str, prefix: str
) -> None:
    models = claude_models(emu, west)
    router = {"cooldown_failures": 2, "cooldown_seconds": 30}
    servers = [
        serve(store=RedisStore.from_url(redis_url, prefix=prefix), models=models, router=router)
        for _ in range(2)
    ]
    emu.queue(Reply.status(500), Reply.status(500))

    assert turn(servers[0].url) and turn(servers[1].url)  # one failure on each
    assert turn(servers[0].url)  # east has failed twice: west at once

    assert (len(emu.requests), len(west.requests)) == (2, 3)


def test_without_redis_each_server_keeps_its_own_cooldowns(
    serve: Serve, emu: Emulator, west: Emulator
) -> None:
    models = claude_models(emu, west)
    first, second = serve(models=models), serve(models=models)
    emu.queue(Reply.status(429, retry_after=30))

    assert turn(first.url) and turn(second.url)

    assert (len(emu.requests), len(west.requests)) == (2, 1)  # the second still tried east


def test_an_rpm_limit_holds_across_servers_behind_one_redis(
    serve: Serve, emu: Emulator, west: Emulator, redis_url: str, prefix: str
) -> None:
    if 60 - time.time() % 60 < 8:  # per-minute counts restart at the minute
        time.sleep(60 - time.time() % 60 + 0.1)
    models = claude_models(emu, west, east_fields={"rpm": 3})
    servers = [
        serve(store=RedisStore.from_url(redis_url, prefix=prefix), models=models) for _ in range(2)
    ]

    for i in range(6):
        assert turn(servers[i % 2].url)

    assert (len(emu.requests), len(west.requests)) == (3, 3)


CONFIG = """
keys = ["${client}"]

[router]
cooldown_failures = 2
cooldown_seconds = 30

[[models]]
server_model_id = "claude"
deployment = "east"
model = "claude-sonnet-4-5"
base_url = "{east}"
api_key = "${upstream}"
weight = 100

[[models]]
server_model_id = "claude"
deployment = "west"
model = "claude-sonnet-4-5"
base_url = "{west}"
api_key = "${upstream}"
weight = 1
"""
BODY = {
    "model": "claude",
    "max_tokens": 16,
    "stream": True,
    "messages": [{"role": "user", "content": "hello"}],
}


@pytest.fixture
def processes(tmp_path: Path, emu: Emulator, west: Emulator) -> Iterator[list[str]]:
    """Two `modelstream serve --redis` processes on a redis-server of the test's own."""
    config = tmp_path / "server.toml"
    text = CONFIG.replace("{client}", CLIENT_KEY_ENV).replace("{upstream}", UPSTREAM_KEY_ENV)
    text = text.replace("{east}", emu.base_url("anthropic-messages"))
    config.write_text(text.replace("{west}", west.base_url("anthropic-messages")))
    with serve_processes(config, tmp_path) as urls:
        yield urls


def messages_turn(url: str) -> httpx.Response:
    headers = {"x-api-key": CLIENT_KEY, "anthropic-version": "2023-06-01"}
    return httpx.post(url + "/v1/messages", content=orjson.dumps(BODY), headers=headers, timeout=20)


def test_two_serve_processes_behind_redis_share_429_cooldowns_and_failure_counts(
    processes: list[str], emu: Emulator, west: Emulator
) -> None:
    one, other = processes
    emu.queue(Reply.status(429, retry_after=30))

    answered = [messages_turn(one), messages_turn(other)]

    assert [r.status_code for r in answered] == [200, 200]
    assert [r.headers["x-modelstream-deployment"] for r in answered] == ["west", "west"]
    assert (len(emu.requests), len(west.requests)) == (1, 2)

    # east is cooling on both: west goes first, and a west failure falls back on the cooling
    # east; one failure on each process makes the two that cool west down too
    west.queue(Reply.status(502), Reply.status(502))
    for url in (one, other):
        response = messages_turn(url)
        assert response.status_code == 200, response.text
        assert response.headers["x-modelstream-deployment"] == "east"
    assert (len(emu.requests), len(west.requests)) == (3, 4)
    assert metric(metrics_of(one), COOLDOWNS, deployment="west") == 0
    assert metric(metrics_of(other), COOLDOWNS, deployment="west") == 1
