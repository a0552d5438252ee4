"""`modelstream keys` as a subprocess: create prints the secret once, the other commands never
do; tables and JSON; spend reports; one-line errors with exit status 2, on SQLite and Redis."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path

import orjson

from modelstream.server.keys import Admission, SQLiteKeyStore
from support.cli import run_cli
from support.keys import admitted, refusal_of, run


def test_create_prints_the_secret_once_and_list_show_never_do(tmp_path: Path) -> None:
    db = str(tmp_path / "keys.sqlite3")
    created = run_cli(
        "keys",
        "create",
        "alice",
        "--db",
        db,
        "--models",
        "claude,fast",
        "--rpm",
        "60",
        "--budget",
        "10.00",
        "--budget-period",
        "monthly",
        "--expires",
        "30d",
        "--metadata",
        "team=search",
        "--metadata",
        "owner=al",
    )
    assert created.returncode == 0, created.stderr
    [secret] = [word for word in created.stdout.split() if word.startswith("msk-")]
    assert "This secret will not be shown again" in created.stdout

    listed = run_cli("keys", "list", "--db", db)
    shown = run_cli("keys", "show", "alice", "--db", db)
    as_json = run_cli("keys", "list", "--db", db, "--json")
    assert listed.returncode == shown.returncode == as_json.returncode == 0
    assert "alice" in listed.stdout and "claude,fast" in listed.stdout
    assert "10.00 USD monthly" in listed.stdout
    assert "metadata.team" in shown.stdout and "search" in shown.stdout
    [key] = orjson.loads(as_json.stdout)["keys"]
    assert key["rpm"] == 60 and key["metadata"] == {"team": "search", "owner": "al"}
    for output in (listed, shown, as_json):
        assert secret not in output.stdout + output.stderr


def test_update_and_revoke_change_the_key_the_server_reads(tmp_path: Path) -> None:
    db = str(tmp_path / "keys.sqlite3")
    created = run_cli("keys", "create", "alice", "--db", db, "--rpm", "5", "--json")
    secret = orjson.loads(created.stdout)["secret"]
    updated = run_cli(
        "keys",
        "update",
        "alice",
        "--db",
        db,
        "--rpm",
        "none",
        "--budget",
        "2.50",
        "--metadata",
        "team=x",
        "--json",
    )
    assert updated.returncode == 0, updated.stderr
    record = orjson.loads(updated.stdout)
    assert (record["rpm"], record["budget"], record["metadata"]) == (None, "2.50", {"team": "x"})
    revoked = run_cli("keys", "revoke", "alice", "--db", db)
    assert revoked.returncode == 0 and "Revoked the key vk_" in revoked.stdout

    async def status() -> int:
        store = SQLiteKeyStore(db)
        refusal = await refusal_of(admitted(Admission(store), secret))
        await store.aclose()
        return refusal.status

    assert run(status) == 401


def test_spend_lists_totals_by_key_and_model(tmp_path: Path) -> None:
    db = str(tmp_path / "keys.sqlite3")
    secret = orjson.loads(run_cli("keys", "create", "alice", "--db", db, "--json").stdout)["secret"]

    async def spend() -> None:
        store = SQLiteKeyStore(db)
        admission = Admission(store)
        for model, cost in (("claude", "0.30"), ("claude", "0.20"), ("fast", "0.05")):
            ticket = await admitted(admission, secret, model)
            await admission.settle(ticket, Decimal(cost), input_tokens=1000, output_tokens=10)
        await store.aclose()

    run(spend)
    table = run_cli("keys", "spend", "--db", db)
    assert table.returncode == 0
    assert "claude" in table.stdout and "0.50 USD" in table.stdout and "2,000" in table.stdout
    assert "total" in table.stdout and "0.55 USD" in table.stdout
    only = run_cli("keys", "spend", "--db", db, "--model", "fast", "--json")
    assert [t["cost"] for t in orjson.loads(only.stdout)["data"]] == ["0.05"]
    later = run_cli("keys", "spend", "--db", db, "--from", "2099-01-01")
    assert later.stdout.strip() == "no spend matches"


def test_mistakes_are_one_line_with_exit_status_2(tmp_path: Path) -> None:
    db = str(tmp_path / "keys.sqlite3")
    missing = run_cli("keys", "list", "--db", db)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert missing.stderr.startswith(f"modelstream keys: error: no keys file at {db}")
    assert not Path(db).exists()  # a mistyped path does not become an empty file
    run_cli("keys", "create", "alice", "--db", db)
    for args, said in (
        (("create", "alice"), "a key named 'alice' exists already"),
        (("create", "bob", "--budget", "ten"), "'budget' must be an amount"),
        (("create", "bob", "--expires", "soon"), "--expires: expected a duration (30d"),
        (("show", "nobody"), "no key has the id or name 'nobody'"),
        (("update", "alice"), "nothing to change"),
        (("spend", "--from", "yesterday"), "--from: expected Unix seconds"),
    ):
        result = run_cli("keys", *args, "--db", db)
        assert result.returncode == 2, args
        assert result.stderr.count("\n") == 1 and said in result.stderr, result.stderr


def test_the_keys_file_defaults_to_modelstream_keys(tmp_path: Path) -> None:
    db = tmp_path / "chosen.sqlite3"
    assert run_cli("keys", "create", "alice", MODELSTREAM_KEYS=str(db)).returncode == 0
    assert db.exists()
    assert "alice" in run_cli("keys", "list", MODELSTREAM_KEYS=str(db)).stdout


def test_keys_in_redis_are_managed_with_redis_and_a_variable(redis_url: str, prefix: str) -> None:
    where = ("--redis", "$KEYS_REDIS", "--redis-prefix", prefix)
    created = run_cli("keys", "create", "alice", *where, "--json", KEYS_REDIS=redis_url)
    assert created.returncode == 0, created.stderr
    listed = run_cli("keys", "list", *where, "--json", KEYS_REDIS=redis_url)
    assert [k["name"] for k in orjson.loads(listed.stdout)["keys"]] == ["alice"]
    unset = run_cli("keys", "list", "--redis", "$NO_SUCH_VARIABLE")
    assert unset.returncode == 2
    assert "the environment variable NO_SUCH_VARIABLE is not set" in unset.stderr


def test_an_unreachable_redis_is_one_line_without_its_password() -> None:
    result = run_cli("keys", "list", "--redis", "redis://:hunter2-password@127.0.0.1:1/0")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "cannot reach Redis at redis://:***@127.0.0.1:1/0" in result.stderr
    assert "hunter2" not in result.stderr


def test_without_the_redis_package_redis_is_refused_with_the_pip_line(tmp_path: Path) -> None:
    # a `redis` module that is not there, ahead of the installed one
    (tmp_path / "redis.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'redis'\", name='redis')\n"
    )
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    result = run_cli("keys", "list", "--redis", "redis://127.0.0.1:6379/0", PYTHONPATH=path)
    assert result.returncode == 2
    assert result.stderr == (
        "modelstream keys: error: --redis needs the 'redis' package (redis is missing): "
        "pip install 'modelstream[server]'\n"
    )
