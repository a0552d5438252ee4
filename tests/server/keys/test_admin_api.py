"""The admin API (server/routes/admin.py) over real HTTP on loopback: admin keys only, a secret
shown once by create and never again (nor logged), typed errors that name what is wrong, and
spend reports."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from modelstream.auth.secret import Secret
from modelstream.server import BackgroundServer
from modelstream.server.keys import Admission, SQLiteKeyStore
from modelstream.server.routes.admin import admin_routes
from modelstream.web.keys import BearerKeys
from support.keys import admitted, refusal_of, run

ADMIN_KEY = "admin-4f1c9e7a2b6d8e03"
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


@pytest.fixture
def keys_file(tmp_path: Path) -> Path:
    return tmp_path / "keys.sqlite3"


@pytest.fixture
def admin(keys_file: Path) -> Iterator[httpx.Client]:
    """A client of a real server whose only routes are the admin API on `keys_file`."""
    routes = admin_routes(
        SQLiteKeyStore(keys_file), BearerKeys([Secret(ADMIN_KEY)]), max_body_bytes=2048
    )
    with (
        BackgroundServer(Starlette(routes=routes)) as server,
        httpx.Client(base_url=server.url, headers=ADMIN) as client,
    ):
        yield client


def test_create_answers_201_with_the_secret_once_and_list_and_show_never_carry_it(
    admin: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    body = {
        "name": "alice",
        "models": ["claude"],
        "rpm": 60,
        "budget": "10.00",
        "budget_period": "monthly",
        "metadata": {"team": "search"},
    }
    created = admin.post("/v1/admin/keys", json=body)
    assert created.status_code == 201
    secret, key = created.json()["secret"], created.json()["key"]
    assert secret.startswith("msk-") and "shown this once" in created.json()["note"]
    assert key["name"] == "alice" and key["budget"] == "10.00" and key["status"] == "active"

    listed = admin.get("/v1/admin/keys")
    shown = admin.get(f"/v1/admin/keys/{key['key_id']}")
    by_name = admin.get("/v1/admin/keys/alice")
    assert [k["key_id"] for k in listed.json()["data"]] == [key["key_id"]]
    assert shown.json() == by_name.json() == listed.json()["data"][0]
    for answer in (listed, shown):
        assert secret not in answer.text and "secret" not in answer.text
        assert "hash" not in answer.text
    assert secret not in caplog.text and secret[4:] not in caplog.text
    assert f"created virtual key {key['key_id']}" in caplog.text


def test_every_admin_route_needs_an_admin_key(admin: httpx.Client) -> None:
    created = admin.post("/v1/admin/keys", json={"name": "alice"}).json()
    client_key = {"authorization": f"Bearer {created['secret']}"}
    for headers in ({"authorization": ""}, client_key, {"authorization": "Bearer wrong"}):
        answer = admin.get("/v1/admin/keys", headers=headers)
        assert answer.status_code == 401
        assert answer.json()["error"]["type"] == "AuthenticationError"
        assert "admin key" in answer.json()["error"]["message"]
    assert admin.post("/v1/admin/keys/alice/revoke", headers=client_key).status_code == 401


def test_a_server_without_admin_keys_closes_the_admin_api(keys_file: Path) -> None:
    routes = admin_routes(SQLiteKeyStore(keys_file), BearerKeys([]))
    with BackgroundServer(Starlette(routes=routes)) as server:
        answer = httpx.get(server.url + "/v1/admin/keys")
    assert answer.status_code == 403
    assert "no admin keys, so its admin API is closed" in answer.json()["error"]["message"]


def test_patch_changes_fields_and_names_the_known_ones_for_an_unknown_field(
    admin: httpx.Client,
) -> None:
    admin.post("/v1/admin/keys", json={"name": "alice", "rpm": 10})
    changed = admin.patch("/v1/admin/keys/alice", json={"rpm": None, "tpm": 20000, "name": "al"})
    assert changed.status_code == 200
    assert (changed.json()["rpm"], changed.json()["tpm"], changed.json()["name"]) == (
        None,
        20000,
        "al",
    )
    wrong = admin.patch("/v1/admin/keys/al", json={"rate": 5})
    assert wrong.status_code == 400 and wrong.json()["error"]["type"] == "InvalidRequestError"
    assert wrong.json()["error"]["message"] == (
        "unknown field 'rate'; the known fields are name, models, rpm, tpm, budget, "
        "budget_period, expires_at, metadata"
    )
    bad = admin.patch("/v1/admin/keys/al", json={"budget_period": "hourly"})
    assert "'budget_period' must be daily, weekly, monthly" in bad.json()["error"]["message"]
    assert admin.patch("/v1/admin/keys/nobody", json={"rpm": 1}).status_code == 404


def test_create_refuses_a_taken_name_a_missing_name_and_a_body_past_the_limit(
    admin: httpx.Client,
) -> None:
    admin.post("/v1/admin/keys", json={"name": "alice"})
    taken = admin.post("/v1/admin/keys", json={"name": "alice"})
    assert taken.status_code == 409 and "exists already" in taken.json()["error"]["message"]
    nameless = admin.post("/v1/admin/keys", json={"rpm": 3})
    assert nameless.status_code == 400 and "needs a 'name'" in nameless.json()["error"]["message"]
    huge = admin.post("/v1/admin/keys", json={"name": "bob", "metadata": {"x": "y" * 4000}})
    assert huge.status_code == 413
    not_json = admin.post("/v1/admin/keys", content=b"[1, 2]")
    assert not_json.status_code == 400
    assert "must be a JSON object of a key's fields" in not_json.json()["error"]["message"]


def test_revoke_and_its_delete_alias_refuse_the_key_from_then_on(
    admin: httpx.Client, keys_file: Path
) -> None:
    alice = admin.post("/v1/admin/keys", json={"name": "alice"}).json()
    bob = admin.post("/v1/admin/keys", json={"name": "bob"}).json()
    assert admin.post("/v1/admin/keys/alice/revoke").json()["status"] == "revoked"
    assert admin.delete(f"/v1/admin/keys/{bob['key']['key_id']}").json()["status"] == "revoked"

    async def refused() -> list[int]:
        store = SQLiteKeyStore(keys_file)
        admission = Admission(store)
        refusals = [await refusal_of(admitted(admission, k["secret"])) for k in (alice, bob)]
        await store.aclose()
        return [refusal.status for refusal in refusals]

    assert run(refused) == [401, 401]


def test_spend_reports_totals_by_key_and_model_between_dates(
    admin: httpx.Client, keys_file: Path
) -> None:
    secret = admin.post("/v1/admin/keys", json={"name": "alice"}).json()["secret"]

    async def spend() -> None:
        store = SQLiteKeyStore(keys_file)
        admission = Admission(store)
        for model, cost, day in (("claude", "0.25", 1), ("claude", "0.50", 2), ("fast", "1", 3)):
            ticket = await admitted(admission, secret, model)
            at = 1_798_761_600.0 + (day - 1) * 86_400  # 2027-01-01 + day - 1
            await admission.settle(ticket, Decimal(cost), input_tokens=10, output_tokens=2, now=at)
        await store.aclose()

    run(spend)
    everything = admin.get("/v1/admin/spend").json()
    assert everything["total"] == {"USD": "1.75"}
    assert [(t["served_model"], t["cost"], t["turns"]) for t in everything["data"]] == [
        ("claude", "0.75", 2),
        ("fast", "1", 1),
    ]
    two_days = admin.get("/v1/admin/spend", params={"from": "2027-01-02", "to": "2027-01-03"})
    assert two_days.json()["total"] == {"USD": "1.50"}
    seconds = admin.get(
        "/v1/admin/spend", params={"key": "alice", "model": "claude", "to": "1798848000"}
    )
    assert seconds.json()["total"] == {"USD": "0.25"}
    wrong = admin.get("/v1/admin/spend", params={"since": "2027-01-01"})
    assert wrong.status_code == 400
    assert "unknown query parameter 'since'; the known ones are key, model, from, to" in wrong.text
    bad_date = admin.get("/v1/admin/spend", params={"from": "last week"})
    assert bad_date.status_code == 400 and "'from': expected Unix seconds" in bad_date.text
