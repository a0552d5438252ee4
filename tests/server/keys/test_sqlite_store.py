"""`SQLiteKeyStore`: the key store contract on a real file, the file's modes and default path,
a secret that never reaches the file, and exact budgets and rate limits with two OS processes
on one file."""

from __future__ import annotations

import stat
from decimal import Decimal
from pathlib import Path

import pytest

from modelstream.server.keys import Admission, SQLiteKeyStore, default_path
from support.keys import (
    MID_MINUTE,
    KeyStoreFactory,
    admitted,
    contract_tests,
    in_two_processes,
    run,
)

globals().update(contract_tests())


@pytest.fixture
def key_store_factory(tmp_path: Path) -> KeyStoreFactory:
    path = tmp_path / "keys.sqlite3"
    return lambda: SQLiteKeyStore(path)


def test_the_file_and_its_folder_are_created_readable_by_the_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "keys.sqlite3"

    async def body() -> None:
        store = SQLiteKeyStore(path)
        await store.create("alice")
        await store.aclose()

    run(body)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_the_default_path_follows_modelstream_keys_then_xdg_data_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MODELSTREAM_KEYS", str(tmp_path / "chosen.sqlite3"))
    assert default_path() == tmp_path / "chosen.sqlite3"
    monkeypatch.delenv("MODELSTREAM_KEYS")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_path() == tmp_path / "data" / "modelstream" / "keys.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".local" / "share" / "modelstream" / "keys.sqlite3"


def test_the_file_holds_the_secrets_hash_and_never_the_secret(tmp_path: Path) -> None:
    path = tmp_path / "keys.sqlite3"

    async def body() -> str:
        store = SQLiteKeyStore(path)
        _, secret = await store.create("alice", budget="5.00")
        admission = Admission(store)
        ticket = await admitted(admission, secret.reveal())
        await admission.settle(ticket, Decimal("0.01"))
        # read while the store is open, so that the WAL file is there too
        written = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
        await store.aclose()
        assert secret.reveal().encode() not in written
        assert secret.reveal()[4:].encode() not in written
        return secret.reveal()

    revealed = run(body)
    from modelstream.server.keys.secrets import secret_hash

    assert secret_hash(revealed).encode() in path.read_bytes()


def test_two_processes_on_one_file_spend_exactly_the_budget(tmp_path: Path) -> None:
    path = str(tmp_path / "keys.sqlite3")

    async def create() -> str:
        store = SQLiteKeyStore(path)
        _, secret = await store.create("alice", budget="50.00")
        await store.aclose()
        return secret.reveal()

    secret = run(create)
    one = Decimal("1.00")
    results = in_two_processes(("sqlite", path), secret, 100, estimate=one, cost=one)

    async def spent() -> Decimal:
        store = SQLiteKeyStore(path)
        [total] = await store.spend()
        await store.aclose()
        return total.cost

    assert sum(admitted for admitted, _ in results) == 50
    assert all(admitted > 0 for admitted, _ in results)  # both took part
    assert run(spent) == Decimal("50.00")


def test_two_processes_on_one_file_overshoot_by_at_most_the_turns_in_flight(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "keys.sqlite3")

    async def create() -> str:
        store = SQLiteKeyStore(path)
        _, secret = await store.create("alice", budget="50.00")
        await store.aclose()
        return secret.reveal()

    secret = run(create)
    options = {"estimate": Decimal("0.25"), "cost": Decimal("1.00"), "in_flight": 5}
    in_two_processes(("sqlite", path), secret, 100, **options)

    async def spent() -> Decimal:
        store = SQLiteKeyStore(path)
        [total] = await store.spend()
        await store.aclose()
        return total.cost

    assert Decimal(50) <= run(spent) <= Decimal(50) + 2 * 5 * Decimal("1.00")


def test_two_processes_on_one_file_admit_exactly_rpm_requests_in_a_window(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "keys.sqlite3")

    async def create() -> str:
        store = SQLiteKeyStore(path)
        _, secret = await store.create("alice", rpm=20)
        await store.aclose()
        return secret.reveal()

    secret = run(create)
    zero = Decimal(0)
    results = in_two_processes(
        ("sqlite", path), secret, 30, estimate=zero, cost=zero, now=MID_MINUTE
    )
    assert sum(admitted for admitted, _ in results) == 20
    assert sum(refused for _, refused in results) == 40
