"""Virtual keys across two `modelstream serve --redis` processes behind one redis-server
(docs/keys.md, "Several processes"): the budget's overshoot stays under one turn's estimate, an
rpm limit admits no more requests in a minute than it says, and a key revoked through one
process's admin API is refused by the other within a second.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from modelstream.server import load_settings
from modelstream.server.keys import KeyStore, SQLiteKeyStore
from modelstream.server.metrics import ServerMetrics
from modelstream.server.relay import KeyLedger
from modelstream.testing import Emulator
from support.server import CLIENT_KEY, CLIENT_KEY_ENV, UPSTREAM_KEY, UPSTREAM_KEY_ENV
from support.server_process import serve_processes, write_config

ADMIN_KEY = "msk-admin-9e1c5b7d3a0f26"
ADMIN_KEY_ENV = "MODELSTREAM_TEST_ADMIN_KEY"
CONFIG = """
keys = ["${client}"]

[limits]
max_concurrent_streams = 256
max_streams_per_key = 256

[virtual_keys]
admin_keys = ["$MODELSTREAM_TEST_ADMIN_KEY"]

[[models]]
server_model_id = "anthropic"
model = "claude-sonnet-4-5"
base_url = "{base_url}"
api_key = "${upstream}"
max_attempts = 1
"""
BODY = {
    "model": "anthropic",
    "max_tokens": 16,
    "stream": True,
    "messages": [{"role": "user", "content": "hello"}],
}
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


@pytest.fixture
def config_file(tmp_path: Path, emu: Emulator) -> Path:
    return write_config(tmp_path, emu, CONFIG)


@pytest.fixture
def urls(config_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Two server processes on one redis-server of the test's own."""
    monkeypatch.setenv(ADMIN_KEY_ENV, ADMIN_KEY)
    with serve_processes(config_file, tmp_path) as found:
        yield found


def turn(url: str, secret: str) -> tuple[int, str]:
    headers = {"x-api-key": secret, "anthropic-version": "2023-06-01"}
    with httpx.Client(base_url=url, timeout=30) as http:
        response = http.post("/v1/messages", content=orjson.dumps(BODY), headers=headers)
        return response.status_code, response.text


def create(url: str, **fields: Any) -> str:
    response = httpx.post(f"{url}/v1/admin/keys", json=fields, headers=ADMIN, timeout=10)
    assert response.status_code == 201, response.text
    secret: str = response.json()["secret"]
    return secret


def spent(url: str, name: str) -> Decimal:
    report = httpx.get(f"{url}/v1/admin/spend", params={"key": name}, headers=ADMIN, timeout=10)
    assert report.status_code == 200, report.text
    return sum((Decimal(row["cost"]) for row in report.json()["data"]), Decimal(0))


def wait_until(check: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.05)


def estimate_of_one_turn(config_file: Path) -> Decimal:
    """What each process's ledger holds for one `turn` (the same settings, body and model)."""
    env = {**os.environ, UPSTREAM_KEY_ENV: UPSTREAM_KEY, CLIENT_KEY_ENV: CLIENT_KEY}
    settings = load_settings(config_file, env)
    assert settings.virtual_keys is not None
    store: KeyStore = SQLiteKeyStore(config_file.parent / "unused.sqlite3")
    ledger = KeyLedger(store, settings.virtual_keys, ServerMetrics())
    entry = settings.model("anthropic")
    assert entry is not None
    estimate, _ = ledger.estimate(entry, BODY["max_tokens"], len(orjson.dumps(BODY)))
    asyncio.run(store.aclose())
    assert estimate is not None
    return estimate


def test_two_processes_overshoot_one_budget_by_less_than_one_estimate(
    urls: list[str], config_file: Path
) -> None:
    a, b = urls
    probe = create(a, name="probe")
    assert turn(a, probe)[0] == 200
    wait_until(lambda: spent(b, "probe") > 0)  # charged by A, reported by B: one store
    cost = spent(b, "probe")
    budget = cost * 50
    secret = create(b, name="team", budget=str(budget))

    with ThreadPoolExecutor(max_workers=64) as pool:
        answers = list(pool.map(lambda i: turn(urls[i % 2], secret), range(200)))

    statuses = [status for status, _ in answers]
    admitted = statuses.count(200)
    assert admitted + statuses.count(429) == 200, statuses
    assert all("has reached its budget" in text for status, text in answers if status == 429)
    wait_until(lambda: spent(a, "team") == cost * admitted)
    estimate = estimate_of_one_turn(config_file)
    assert cost <= estimate
    assert admitted > 0 and spent(a, "team") < budget + estimate


def test_an_rpm_limit_holds_across_both_processes(urls: list[str]) -> None:
    left = 60 - time.time() % 60
    if left < 10:  # the turns must fall in one minute window
        time.sleep(left + 0.1)
    secret = create(urls[0], name="paced", rpm=10)

    with ThreadPoolExecutor(max_workers=30) as pool:
        answers = list(pool.map(lambda i: turn(urls[i % 2], secret), range(30)))

    statuses = [status for status, _ in answers]
    assert statuses.count(200) == 10
    assert statuses.count(429) == 20
    assert all("rpm = 10" in text for status, text in answers if status == 429)


def test_a_key_revoked_on_one_process_is_refused_by_the_other_within_a_second(
    urls: list[str],
) -> None:
    a, b = urls
    secret = create(a, name="leaver")
    assert turn(b, secret)[0] == 200

    revoked = httpx.post(f"{a}/v1/admin/keys/leaver/revoke", headers=ADMIN, timeout=10)
    assert revoked.status_code == 200, revoked.text
    at = time.monotonic()
    status, text = turn(b, secret)

    assert status == 401 and "revoked" in text
    assert time.monotonic() - at < 1.0
    assert secret not in text
