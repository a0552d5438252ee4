"""`SQLiteKeyStore`: the key store contract on a real file, the file's modes and default path,
a secret that never reaches the file, and exact budgets and rate limits with two OS processes
on one file."""

from __future__ import annotations

import asyncio
import sqlite3
import stat
from decimal import Decimal
from pathlib import Path

import pytest

from modelstream.server.keys import Admission, SQLiteKeyStore, default_path
from modelstream.server.keys.sqlite import CHECKPOINT_EVERY
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


def test_a_turn_waits_for_another_writer_without_stalling_the_event_loop(tmp_path: Path) -> None:
    """While another process holds the file's write lock, admitting a turn waits (in a thread)
    until it lets go, and the event loop goes on meanwhile."""
    path = tmp_path / "keys.sqlite3"

    async def body() -> tuple[int, bool]:
        store = SQLiteKeyStore(path)
        _, secret = await store.create("alice", budget="5.00")
        admission = Admission(store)
        await admitted(admission, secret.reveal())  # the store is open, on the loop from now
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another writer, as another process would be
        turn = asyncio.create_task(admitted(admission, secret.reveal()))
        ticks = 0
        for _ in range(20):  # the loop keeps running while the turn waits
            await asyncio.sleep(0.01)
            ticks += 1
        waited = not turn.done()
        other.execute("COMMIT")
        other.close()
        await asyncio.wait_for(turn, timeout=10)
        await store.aclose()
        return ticks, waited

    ticks, waited = run(body)
    assert ticks == 20
    assert waited


def test_what_is_written_on_the_event_loop_reaches_the_file_through_a_checkpoint(
    tmp_path: Path,
) -> None:
    """The loop's commits are in the WAL until a worker thread checkpoints them into the file,
    every CHECKPOINT_EVERY commits (the loop never syncs the disk itself)."""
    path = tmp_path / "keys.sqlite3"

    def holds_in_the_file() -> int:
        # immutable: the file alone, without its WAL
        file = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
        try:
            return int(file.execute("SELECT count(*) FROM holds").fetchone()[0])
        except sqlite3.OperationalError:  # not even the schema is in the file yet
            return 0
        finally:
            file.close()

    async def body() -> tuple[int, int]:
        store = SQLiteKeyStore(path)
        _, secret = await store.create("alice")
        admission = Admission(store)
        for _ in range(10):
            await admitted(admission, secret.reveal())
        before = holds_in_the_file()
        for _ in range(CHECKPOINT_EVERY):
            await admitted(admission, secret.reveal())
        for _ in range(500):  # the checkpoint runs in a thread
            if holds_in_the_file():
                break
            await asyncio.sleep(0.01)
        after = holds_in_the_file()
        await store.aclose()
        return before, after

    before, after = run(body)
    assert before == 0
    assert after >= CHECKPOINT_EVERY
