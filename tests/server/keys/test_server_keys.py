"""Virtual keys through a real server (docs/keys.md, "In the server"): a key issued in the
server's store streams on every wire, is charged each turn's exact cost, and is refused — in
the caller's own wire, with a message saying why — when revoked, when it asks for a model it
may not use, when its rate limit or its budget is reached. The static `keys` keep working.
"""

from __future__ import annotations

import asyncio
import os
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from modelstream.server import settings_from_mapping
from modelstream.server.keys import KeyRecord, SQLiteKeyStore
from modelstream.server.metrics import ServerMetrics
from modelstream.server.relay import KeyLedger
from modelstream.testing import Emulator
from modelstream.traces.store import TraceStore
from support.server import (
    AUTH,
    UPSTREAM_KEY_ENV,
    Serve,
    config_for,
    read_sse,
    stream_body,
    wire_turn,
)

ADMIN_KEY = "msk-admin-0f4e2a9c7b1d35"
ADMIN_KEY_ENV = "MODELSTREAM_TEST_ADMIN_KEY"

# (route, headers of a key, body): one streaming turn in each inbound wire, of the served
# model that speaks that wire upstream
WIRES: dict[str, Any] = {
    wire: (lambda key, wire=wire, model=model: wire_turn(wire, model, key))
    for wire, model in {
        "stream": "anthropic",
        "openai-chat": "chat",
        "openai-responses": "responses",
        "anthropic-messages": "anthropic",
        "gemini-generate-content": "gemini",
    }.items()
}


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def issue(path: Path, name: str = "alice", **fields: Any) -> tuple[KeyRecord, str]:
    async def create() -> tuple[KeyRecord, str]:
        store = SQLiteKeyStore(path)
        try:
            record, secret = await store.create(name, **fields)
        finally:
            await store.aclose()
        return record, secret.reveal()

    result: tuple[KeyRecord, str] = run(create())
    return result


def spend(path: Path, key: str) -> Decimal:
    async def total() -> Decimal:
        store = SQLiteKeyStore(path)
        try:
            return sum((row.cost for row in await store.spend(key)), Decimal(0))
        finally:
            await store.aclose()

    result: Decimal = run(total())
    return result


def virtual(path: Path, **fields: Any) -> dict[str, Any]:
    return {"virtual_keys": {"path": str(path), **fields}}


def turn(http: httpx.Client, wire: str, key: str) -> httpx.Response:
    route, headers, body = WIRES[wire](key)
    headers = {**headers, "content-type": "application/json"}
    response = http.post(route, content=orjson.dumps(body), headers=headers)
    response.read()
    return response


def settle_soon(check: Any, seconds: float = 5.0) -> None:
    """A turn is charged just after its stream ends: wait for `check` to hold."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the turn was never charged"
        time.sleep(0.02)


@pytest.fixture
def keys_db(tmp_path: Path) -> Path:
    return tmp_path / "keys.sqlite3"


@pytest.mark.parametrize("wire", list(WIRES))
def test_a_virtual_key_streams_on_every_wire_and_is_charged_the_turns_cost(
    serve: Serve, keys_db: Path, wire: str
) -> None:
    _record, secret = issue(keys_db, budget="5.00")
    server = serve(**virtual(keys_db))

    with httpx.Client(base_url=server.url, timeout=10) as http:
        response = turn(http, wire, secret)
        assert response.status_code == 200, response.text

        settle_soon(lambda: spend(keys_db, "alice") > 0)
        metrics = http.get("/metrics").text
    assert 'modelstream_server_key_turns_total{key="alice"' in metrics
    assert 'modelstream_server_key_cost_total{key="alice",currency="USD"}' in metrics
    assert secret not in metrics


def test_the_charge_is_the_turns_exact_cost_at_list_prices(serve: Serve, keys_db: Path) -> None:
    _, secret = issue(keys_db, budget="5.00")
    server = serve(**virtual(keys_db))

    with (
        httpx.Client(base_url=server.url, timeout=10) as http,
        http.stream(
            "POST", "/v1/stream", json=stream_body(), headers={"authorization": f"Bearer {secret}"}
        ) as response,
    ):
        events = read_sse(response).events
    usage = events[-1]["usage_metadata"]
    # claude-sonnet-4-5: $3 per million input tokens, $15 per million output tokens
    expected = (
        Decimal(usage["prompt_tokens"]) * 3 + Decimal(usage["response_tokens"]) * 15
    ) / 1_000_000
    assert expected > 0
    settle_soon(lambda: spend(keys_db, "alice") > 0)
    assert spend(keys_db, "alice") == expected


def test_static_keys_keep_working_beside_virtual_ones(serve: Serve, keys_db: Path) -> None:
    issue(keys_db)
    server = serve(**virtual(keys_db))

    with httpx.Client(base_url=server.url, timeout=10) as http:
        response = http.post("/v1/stream", json=stream_body(), headers=AUTH)
        wrong = http.post("/v1/stream", json=stream_body(), headers={"authorization": "Bearer x"})
    assert response.status_code == 200
    assert wrong.status_code == 401


@pytest.mark.parametrize("wire", list(WIRES))
def test_a_revoked_key_is_refused_in_the_callers_wire_at_once(
    serve: Serve, keys_db: Path, wire: str
) -> None:
    _, secret = issue(keys_db)
    server = serve(**virtual(keys_db))

    async def revoke() -> None:
        store = SQLiteKeyStore(keys_db)
        await store.revoke("alice")
        await store.aclose()

    with httpx.Client(base_url=server.url, timeout=10) as http:
        assert turn(http, wire, secret).status_code == 200
        run(revoke())
        refused = turn(http, wire, secret)
    assert refused.status_code == 401
    assert "revoked" in refused.text and secret not in refused.text


def test_a_model_the_key_may_not_use_is_a_403_naming_those_it_may(
    serve: Serve, keys_db: Path
) -> None:
    _, secret = issue(keys_db, models=["chat"])
    server = serve(**virtual(keys_db))

    with httpx.Client(base_url=server.url, timeout=10) as http:
        refused = turn(http, "anthropic-messages", secret)
        allowed = turn(http, "openai-chat", secret)
    assert refused.status_code == 403
    assert refused.json()["error"]["type"] == "permission_error"
    assert "may not use the model 'anthropic'" in refused.text and "chat" in refused.text
    assert allowed.status_code == 200


def test_the_rpm_limit_answers_429_with_retry_after(serve: Serve, keys_db: Path) -> None:
    _, secret = issue(keys_db, rpm=2)
    server = serve(**virtual(keys_db))
    _away_from_a_minute_edge()

    with httpx.Client(base_url=server.url, timeout=10) as http:
        statuses = [turn(http, "openai-chat", secret).status_code for _ in range(2)]
        refused = turn(http, "openai-chat", secret)
    assert statuses == [200, 200]
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1
    assert "rpm = 2" in refused.json()["error"]["message"]


def test_a_spent_budget_is_a_429_that_says_so(serve: Serve, keys_db: Path) -> None:
    _, secret = issue(keys_db, budget="0.000001")  # less than one turn
    server = serve(**virtual(keys_db))

    with httpx.Client(base_url=server.url, timeout=10) as http:
        first = turn(http, "anthropic-messages", secret)
        settle_soon(lambda: spend(keys_db, "alice") > 0)
        refused = turn(http, "anthropic-messages", secret)
        metrics = http.get("/metrics").text
    assert first.status_code == 200
    assert refused.status_code == 429
    assert refused.json()["error"]["type"] == "rate_limit_error"
    assert "has reached its budget of" in refused.json()["error"]["message"]
    assert 'modelstream_server_key_refusals_total{key="alice",reason="budget_exceeded"} 1' in (
        metrics
    )


def test_a_model_without_a_price_is_refused_or_charged_the_fallback_rate(
    serve: Serve, keys_db: Path, emu: Emulator
) -> None:
    _, secret = issue(keys_db, budget="1.00")
    refusing = serve(**virtual(keys_db), models=[_unpriced(emu)])
    charging = serve(**virtual(keys_db, unknown_cost="0.5"), models=[_unpriced(emu)])

    with httpx.Client(base_url=refusing.url, timeout=10) as http:
        refused = turn(http, "openai-chat", secret)
    with httpx.Client(base_url=charging.url, timeout=10) as http:
        charged = turn(http, "openai-chat", secret)
    assert refused.status_code == 403
    assert "has no price" in refused.text
    assert charged.status_code == 200
    settle_soon(lambda: spend(keys_db, "alice") > 0)  # 0.5 per 1,000 tokens, never free


def test_turns_are_traced_under_the_keys_name(serve: Serve, keys_db: Path, tmp_path: Path) -> None:
    _, secret = issue(keys_db)
    traces = tmp_path / "traces.sqlite3"
    server = serve(**virtual(keys_db), traces=str(traces))

    with httpx.Client(base_url=server.url, timeout=10) as http:
        assert turn(http, "stream", secret).status_code == 200

    def traced() -> bool:
        return traces.exists() and bool(TraceStore(traces).list_traces(key="alice"))

    settle_soon(traced)


def test_the_admin_api_is_mounted_and_needs_an_admin_key(
    serve: Serve, keys_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ADMIN_KEY_ENV, ADMIN_KEY)
    server = serve(**virtual(keys_db, admin_keys=["$" + ADMIN_KEY_ENV]))
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}

    with httpx.Client(base_url=server.url, timeout=10) as http:
        created = http.post("/v1/admin/keys", json={"name": "bob", "budget": "1.00"}, headers=admin)
        client_key = http.get("/v1/admin/keys", headers=AUTH)
        secret = created.json()["secret"]
        assert turn(http, "openai-chat", secret).status_code == 200
        settle_soon(lambda: bool(http.get("/v1/admin/spend?key=bob", headers=admin).json()["data"]))
        report = http.get("/v1/admin/spend?key=bob", headers=admin).json()
    assert created.status_code == 201
    assert client_key.status_code == 401  # a client key is not an admin key
    assert report["data"][0]["served_model"] == "chat"


def test_concurrent_turns_overshoot_the_budget_by_less_than_one_estimate(
    serve: Serve, keys_db: Path, emu: Emulator
) -> None:
    """200 turns at once against a budget of about 50 turns: each admitted turn holds its
    estimate until it is charged, so what is charged passes the budget by less than the last
    admitted turn's estimate, and every turn refused is refused for the budget."""
    server = serve(
        **virtual(keys_db), limits={"max_concurrent_streams": 256, "max_streams_per_key": 256}
    )
    probe = issue(keys_db, name="probe")[1]
    assert _chat(server.url, probe) == 200
    settle_soon(lambda: spend(keys_db, "probe") > 0)
    cost = spend(keys_db, "probe")
    budget = cost * 50
    _, secret = issue(keys_db, name="team", budget=str(budget))

    with ThreadPoolExecutor(max_workers=64) as pool:
        answers = list(pool.map(lambda _: _chat_answer(server.url, secret), range(200)))

    statuses = [status for status, _ in answers]
    admitted = statuses.count(200)
    assert admitted + statuses.count(429) == 200, statuses
    assert all("has reached its budget" in text for status, text in answers if status == 429)
    settle_soon(lambda: spend(keys_db, "team") == cost * admitted)
    estimate = _estimate(emu, keys_db)
    assert cost <= estimate
    assert admitted > 0 and spend(keys_db, "team") < budget + estimate
    print(f"admitted {admitted} of 200 turns; budget {budget}, charged {cost * admitted}")


# --- helpers ------------------------------------------------------------------------------


def _unpriced(emu: Emulator) -> dict[str, Any]:
    """The served model "chat" on a model the catalogue has no price for."""
    return {
        "server_model_id": "chat",
        "model": "my-local-llama",
        "client_type": "openai-chat",
        "base_url": emu.base_url("openai-chat"),
        "api_key": "$" + UPSTREAM_KEY_ENV,
        "max_attempts": 1,
    }


def _estimate(emu: Emulator, keys_db: Path) -> Decimal:
    """What the server's ledger holds for one of `_chat`'s turns: the same body, model and
    settings."""
    settings = settings_from_mapping(config_for(emu, **virtual(keys_db)), os.environ)
    assert settings.virtual_keys is not None
    ledger = KeyLedger(SQLiteKeyStore(keys_db), settings.virtual_keys, ServerMetrics())
    entry = settings.model("chat")
    assert entry is not None
    _, _, body = WIRES["openai-chat"]("")
    estimate, _ = ledger.estimate(entry, body["max_tokens"], len(orjson.dumps(body)))
    assert estimate is not None
    return estimate


def _chat(url: str, secret: str) -> int:
    return _chat_answer(url, secret)[0]


def _chat_answer(url: str, secret: str) -> tuple[int, str]:
    with httpx.Client(base_url=url, timeout=30) as http:
        response = turn(http, "openai-chat", secret)
        return response.status_code, response.text


def _away_from_a_minute_edge() -> None:
    """Rate windows are minutes: a test that counts in one waits out the last seconds of it."""
    left = 60 - time.time() % 60
    if left < 5:
        time.sleep(left + 0.1)
