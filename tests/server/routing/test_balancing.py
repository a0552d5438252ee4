"""How the router spreads turns over a served model's deployments (docs/routing.md, "How a turn
is routed"): by weight, the less busy first on a tie, never onto a deployment at its per-minute
limit, and a 429 with `retry-after` in the caller's own wire when every one is at its limit."""

from __future__ import annotations

import time
from collections import Counter

import anthropic
import httpx
import pytest

from modelstream.server.config import ModelEntry
from modelstream.server.routing.selection import Rotation, Standing, usable
from modelstream.testing import Emulator
from support.routing import claude_models, metric, metrics_of
from support.server import AUTH, CLIENT_KEY, Serve, post_stream, stream_body


def entry(name: str, weight: float = 1.0, **fields: object) -> ModelEntry:
    return ModelEntry(
        "claude", "claude-sonnet-4-5", "anthropic", deployment=name, weight=weight, **fields
    )  # type: ignore[arg-type]


def test_smooth_weighted_round_robin_gives_each_deployment_its_weights_share_spread_out() -> None:
    rotation = Rotation()
    deployments = [entry("a", 3), entry("b", 1)]

    picks = [rotation.order(deployments, lambda e: 0)[0].deployment for _ in range(8)]

    assert picks == ["a", "a", "b", "a", "a", "a", "b", "a"]


def test_on_equal_standing_the_less_busy_deployment_is_picked() -> None:
    rotation = Rotation()
    busy = {"a": 4, "b": 1}

    order = rotation.order([entry("a"), entry("b")], lambda e: busy[e.deployment])

    assert [e.deployment for e in order] == ["b", "a"]


def test_deployments_at_a_limit_or_cooling_are_set_apart_in_order() -> None:
    a, b, c = entry("a", rpm=2), entry("b", tpm=100), entry("c")
    standings = {"a": Standing(requests=2), "b": Standing(cooling_seconds=5, tokens=99)}

    free, cooling, limited = usable([a, b, c], standings)

    assert (free, cooling, limited) == ([c], [b], [a])


def a_fresh_minute() -> None:
    """Wait out the end of this minute when it is near: per-minute counts restart there."""
    left = 60 - time.time() % 60
    if left < 8:
        time.sleep(left + 0.1)


def test_weights_three_to_one_share_forty_turns_thirty_to_ten(
    serve: Serve, emu: Emulator, west: Emulator
) -> None:
    models = claude_models(emu, west, east_fields={"weight": 3}, west_fields={"weight": 1})
    server = serve(models=models)

    with httpx.Client(base_url=server.url, timeout=20) as http:
        for _ in range(40):
            assert post_stream(http, stream_body("claude")).done

    assert (len(emu.requests), len(west.requests)) == (30, 10)
    page = metrics_of(server.url)
    turns = "modelstream_server_deployment_turns_total"
    assert metric(page, turns, deployment="east") == 30
    assert metric(page, turns, deployment="west") == 10


def test_concurrent_turns_keep_the_weights_share(
    serve: Serve, emu: Emulator, west: Emulator
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    models = claude_models(emu, west, east_fields={"weight": 1}, west_fields={"weight": 1})
    server = serve(models=models)

    def turn(_: int) -> bool:
        with httpx.Client(base_url=server.url, timeout=20) as http:
            return post_stream(http, stream_body("claude")).done

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(turn, range(32)))

    assert (len(emu.requests), len(west.requests)) == (16, 16)


def test_a_deployment_at_its_rpm_is_passed_over_and_all_at_limit_is_a_429_with_retry_after(
    serve: Serve, emu: Emulator, west: Emulator
) -> None:
    a_fresh_minute()
    models = claude_models(emu, west, east_fields={"rpm": 2}, west_fields={"rpm": 1})
    server = serve(models=models)

    with httpx.Client(base_url=server.url, timeout=20) as http:
        answered = [post_stream(http, stream_body("claude")).done for _ in range(3)]
        refused = http.post("/v1/stream", json=stream_body("claude"), headers=AUTH)

    assert answered == [True, True, True]
    assert (len(emu.requests), len(west.requests)) == (2, 1)
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert "per-minute limit" in refused.json()["error"]["message"]
    # in the caller's own wire: the Anthropic SDK raises its RateLimitError
    sdk = anthropic.Anthropic(base_url=server.url, api_key=CLIENT_KEY, max_retries=0)
    with pytest.raises(anthropic.RateLimitError) as raised:
        sdk.messages.create(
            model="claude", max_tokens=16, messages=[{"role": "user", "content": "hello"}]
        )
    assert raised.value.response.headers["retry-after"]
    assert (len(emu.requests), len(west.requests)) == (2, 1)  # nothing more went upstream


def test_a_deployment_past_its_tpm_is_passed_over(
    serve: Serve, emu: Emulator, west: Emulator
) -> None:
    a_fresh_minute()
    # the emulator's echo uses 13 tokens a turn: east's 20 are used up by two turns
    models = claude_models(emu, west, east_fields={"tpm": 20})
    server = serve(models=models)

    with httpx.Client(base_url=server.url, timeout=20) as http:
        for _ in range(4):
            assert post_stream(http, stream_body("claude")).done

    assert (len(emu.requests), len(west.requests)) == (2, 2)


def test_a_fallback_takes_the_turns_its_primary_is_too_busy_for(
    serve: Serve, emu: Emulator, west: Emulator, backup: Emulator
) -> None:
    a_fresh_minute()
    models = claude_models(emu, west, backup, east_fields={"rpm": 1}, west_fields={"rpm": 1})
    server = serve(models=models)

    with httpx.Client(base_url=server.url, timeout=20) as http:
        for _ in range(3):
            assert post_stream(http, stream_body("claude")).done

    assert Counter(
        {"east": len(emu.requests), "west": len(west.requests), "backup": len(backup.requests)}
    ) == Counter(east=1, west=1, backup=1)
