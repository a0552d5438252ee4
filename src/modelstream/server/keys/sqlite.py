"""`SQLiteKeyStore`: virtual keys and their counters in one SQLite file (stdlib `sqlite3`), shared
exactly by every process that opens it.

The file is in WAL mode, and every read-modify-write (`reserve`, `settle`, `release`, each
change of a record) is one `BEGIN IMMEDIATE` transaction: it takes the file's write lock before
it reads, so two processes cannot both read "49 of 50 spent" and both admit. `synchronous =
NORMAL`: a commit survives the process being killed; a power cut may lose the last commits.

An operation never waits on the event loop: the statements take microseconds, but `BEGIN
IMMEDIATE` waits (up to `busy_timeout`) while another process holds the write lock, and that
wait must not stall every stream of this process. So each operation is first tried on the loop,
on a connection that does not wait (`timeout=0`): a read in WAL mode does not wait for writers,
and a write whose `BEGIN IMMEDIATE` finds the lock free is done at once. Only when that
connection finds the file busy does the operation go to a worker thread (`asyncio.to_thread`),
on a second connection that waits. The hop to a thread and back costs more CPU than the
statements, three times per turn (identify, reserve, settle), which is what the router's and
keys' ≤ 10% budget in `bench/bench_load.py` could not afford. Each connection is used under its
own lock, one transaction at a time. The loop's connection never checkpoints the WAL (a
checkpoint syncs the file to disk): every `CHECKPOINT_EVERY` of its commits, a worker thread
does it.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import TypeVar

import orjson

from .money import to_units
from .records import KeyRecord
from .secrets import new_ticket_id, secret_hash
from .store import (
    DEFAULT_HOLD_SECONDS,
    KeyNotFoundError,
    KeyStore,
    NameTakenError,
    SpendRow,
    SpendRows,
    Ticket,
    Turnaway,
    turnaway_for_key,
)
from .windows import MINUTE, budget_window, minute_window

T = TypeVar("T")
SCHEMA_VERSION = 1
BUSY_TIMEOUT_SECONDS = 30.0
CHECKPOINT_EVERY = 500  # commits on the loop's connection between two checkpoints in a thread
# what the loop's connection does not wait for: another connection's write lock, or its
# rebuilding of the WAL index
_WAITED_FOR = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS keys (
        key_id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        secret_hash TEXT NOT NULL UNIQUE,   -- SHA-256 hex of the secret, never the secret
        created_at REAL NOT NULL,
        record TEXT NOT NULL                -- KeyRecord.to_json
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS spent (
        key_id TEXT NOT NULL,
        period_start INTEGER NOT NULL,      -- windows.budget_window
        units INTEGER NOT NULL,             -- nano-units (money.py)
        PRIMARY KEY (key_id, period_start)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE IF NOT EXISTS holds (
        ticket_id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        period_start INTEGER NOT NULL,
        units INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        minute INTEGER NOT NULL,
        until REAL NOT NULL                 -- a turn that never settles holds until then
    )
    """,
    "CREATE INDEX IF NOT EXISTS holds_by_key ON holds (key_id, period_start)",
    """
    CREATE TABLE IF NOT EXISTS windows (
        key_id TEXT NOT NULL,
        minute INTEGER NOT NULL,            -- windows.minute_window's start
        requests INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        PRIMARY KEY (key_id, minute)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE IF NOT EXISTS spend (
        id INTEGER PRIMARY KEY,
        ticket_id TEXT NOT NULL UNIQUE,     -- a ticket is charged once
        key_id TEXT NOT NULL,
        key_name TEXT NOT NULL,
        served_model TEXT NOT NULL,
        cost TEXT NOT NULL,                 -- the exact Decimal
        currency TEXT NOT NULL,
        basis TEXT NOT NULL,                -- priced | rate | estimate
        input_tokens INTEGER,
        output_tokens INTEGER,
        at REAL NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS spend_by_time ON spend (at)",
    "CREATE INDEX IF NOT EXISTS spend_by_key ON spend (key_id, at)",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)


def default_path() -> Path:
    """`$MODELSTREAM_KEYS`, else `$XDG_DATA_HOME/modelstream/keys.sqlite3`, else
    `~/.local/share/modelstream/keys.sqlite3`."""
    if chosen := os.environ.get("MODELSTREAM_KEYS"):
        return Path(chosen)
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return Path(data_home) / "modelstream" / "keys.sqlite3"


class SQLiteKeyStore(KeyStore):
    """The keys in the SQLite file at `path` (default: `default_path()`), created at first use
    with its folder, both readable by the owner only (module docstring)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None  # waits for the write lock, in a thread
        self._loop_lock = threading.Lock()
        self._loop_db: sqlite3.Connection | None = None  # never waits, on the event loop
        self._loop_commits = 0  # since the last checkpoint
        self._checkpoints: set[asyncio.Task[object]] = set()

    def __repr__(self) -> str:
        return f"SQLiteKeyStore({str(self.path)!r})"

    # --- the contract -----------------------------------------------------------------------

    async def list(self) -> list[KeyRecord]:
        rows = await self._run(
            lambda db: db.execute("SELECT record FROM keys ORDER BY created_at, key_id").fetchall()
        )
        return [_record(row[0]) for row in rows]

    async def reserve(
        self,
        secret: str,
        served_model: str,
        estimate_units: int,
        tokens_estimate: int,
        now: float,
        hold_seconds: float = DEFAULT_HOLD_SECONDS,
    ) -> Ticket | Turnaway:
        hashed = secret_hash(secret)

        def reserve(db: sqlite3.Connection) -> Ticket | Turnaway:
            with _immediate(db):
                found = db.execute(
                    "SELECT record FROM keys WHERE secret_hash = ?", (hashed,)
                ).fetchone()
                record = _record(found[0]) if found else None
                turned = turnaway_for_key(record, served_model, now)
                if turned is not None:
                    return turned
                assert record is not None
                return _reserve(
                    db, record, served_model, estimate_units, tokens_estimate, now, hold_seconds
                )

        return await self._run(reserve)

    async def settle(self, ticket: Ticket, row: SpendRow, tokens: int) -> bool:
        def settle(db: sqlite3.Connection) -> bool:
            with _immediate(db):
                added = db.execute(
                    "INSERT OR IGNORE INTO spend (ticket_id, key_id, key_name, served_model, "
                    "cost, currency, basis, input_tokens, output_tokens, at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        row.ticket_id,
                        row.key_id,
                        row.key_name,
                        row.served_model,
                        str(row.cost),
                        row.currency,
                        row.basis,
                        row.input_tokens,
                        row.output_tokens,
                        row.at,
                    ),
                )
                if added.rowcount == 0:
                    return False
                db.execute("DELETE FROM holds WHERE ticket_id = ?", (ticket.ticket_id,))
                db.execute(
                    "INSERT INTO spent (key_id, period_start, units) VALUES (?, ?, ?) "
                    "ON CONFLICT DO UPDATE SET units = units + excluded.units",
                    (ticket.key_id, ticket.period_start, to_units(row.cost)),
                )
                _count_tokens(db, ticket, tokens - ticket.tokens_estimate)
                return True

        return await self._run(settle)

    async def release(self, ticket: Ticket) -> None:
        def release(db: sqlite3.Connection) -> None:
            with _immediate(db):
                gone = db.execute("DELETE FROM holds WHERE ticket_id = ?", (ticket.ticket_id,))
                if gone.rowcount:
                    _count_tokens(db, ticket, -ticket.tokens_estimate)

        await self._run(release)

    async def spend_rows(
        self, key_id: str | None, start: float | None, end: float | None
    ) -> SpendRows:
        query = (
            "SELECT ticket_id, key_id, key_name, served_model, cost, currency, basis, "
            "input_tokens, output_tokens, at FROM spend "
            "WHERE (:key IS NULL OR key_id = :key) AND (:start IS NULL OR at >= :start) "
            "AND (:end IS NULL OR at < :end) ORDER BY id"
        )
        found = await self._run(
            lambda db: db.execute(query, {"key": key_id, "start": start, "end": end}).fetchall()
        )
        return [
            SpendRow(r[0], r[1], r[2], r[3], Decimal(r[4]), r[5], r[6], r[7], r[8], r[9])
            for r in found
        ]

    async def aclose(self) -> None:
        if self._checkpoints:  # else one would open the file again after it is closed
            await asyncio.gather(*self._checkpoints, return_exceptions=True)
        with self._loop_lock:
            if self._loop_db is not None:
                self._loop_db.close()
                self._loop_db = None
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # --- records ----------------------------------------------------------------------------

    async def _insert(self, record: KeyRecord, hashed: str) -> None:
        def insert(db: sqlite3.Connection) -> None:
            try:
                with _immediate(db):
                    db.execute(
                        "INSERT INTO keys (key_id, name, secret_hash, created_at, record) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (record.key_id, record.name, hashed, record.created_at, _json(record)),
                    )
            except sqlite3.IntegrityError:
                raise NameTakenError(record.name) from None

        await self._run(insert)

    async def _by_hash(self, hashed: str) -> KeyRecord | None:
        return await self._one("SELECT record FROM keys WHERE secret_hash = ?", hashed)

    async def _by_id(self, key_id: str) -> KeyRecord | None:
        return await self._one("SELECT record FROM keys WHERE key_id = ?", key_id)

    async def _by_name(self, name: str) -> KeyRecord | None:
        return await self._one("SELECT record FROM keys WHERE name = ?", name)

    async def _change(self, key_id: str, change: Callable[[KeyRecord], KeyRecord]) -> KeyRecord:
        def update(db: sqlite3.Connection) -> KeyRecord:
            with _immediate(db):
                found = db.execute("SELECT record FROM keys WHERE key_id = ?", (key_id,)).fetchone()
                if found is None:
                    raise KeyNotFoundError(key_id)
                changed = change(_record(found[0]))
                try:
                    db.execute(
                        "UPDATE keys SET name = ?, record = ? WHERE key_id = ?",
                        (changed.name, _json(changed), key_id),
                    )
                except sqlite3.IntegrityError:
                    raise NameTakenError(changed.name) from None
                return changed

        return await self._run(update)

    async def _one(self, query: str, value: str) -> KeyRecord | None:
        found = await self._run(lambda db: db.execute(query, (value,)).fetchone())
        return _record(found[0]) if found else None

    # --- the file ---------------------------------------------------------------------------

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work` on the loop's connection when the file lets it run at once, else in a
        thread (module docstring)."""
        if self._loop_db is not None and self._loop_lock.acquire(blocking=False):
            try:
                db = self._loop_db
                if db is not None:
                    changes = db.total_changes
                    done = work(db)
                    if db.total_changes != changes:
                        self._committed_on_loop()
                    return done
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode not in _WAITED_FOR:
                    raise
                # another process is writing; its transaction, if any, rolled back (`_immediate`)
            finally:
                self._loop_lock.release()
        return await asyncio.to_thread(self._locked, work)

    def _committed_on_loop(self) -> None:
        self._loop_commits += 1
        if self._loop_commits >= CHECKPOINT_EVERY:
            self._loop_commits = 0
            checkpoint = asyncio.create_task(asyncio.to_thread(self._locked, _checkpoint))
            self._checkpoints.add(checkpoint)  # kept until done, so it is not collected early
            checkpoint.add_done_callback(self._checkpoints.discard)

    def _locked(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            if self._db is None:
                self._db = self._connect()
            if self._loop_db is None:
                self._open_loop_connection()
            return work(self._db)

    def _connect(self) -> sqlite3.Connection:
        if not self.path.exists():
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # created owner-only before SQLite opens it: its -wal and -shm files take its mode
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_SECONDS
        )
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        with _immediate(db):
            for statement in _SCHEMA:
                db.execute(statement)
        return db

    def _open_loop_connection(self) -> None:
        """The connection that never waits, once the file is in WAL mode with its schema (the
        mode is the file's; these settings are the connection's)."""
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=0)
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA wal_autocheckpoint = 0")
        with self._loop_lock:
            self._loop_db = db


def _reserve(
    db: sqlite3.Connection,
    record: KeyRecord,
    served_model: str,
    estimate_units: int,
    tokens_estimate: int,
    now: float,
    hold_seconds: float,
) -> Ticket | Turnaway:
    """The counting half of `reserve`, inside its transaction (store.py's order of checks)."""
    key_id = record.key_id
    minute, minute_end = minute_window(now)
    db.execute("DELETE FROM windows WHERE key_id = ? AND minute < ?", (key_id, minute - MINUTE))
    db.execute("DELETE FROM holds WHERE key_id = ? AND until <= ?", (key_id, now))
    window = db.execute(
        "SELECT requests, tokens FROM windows WHERE key_id = ? AND minute = ?", (key_id, minute)
    ).fetchone()
    requests, tokens = window if window else (0, 0)
    if record.rpm is not None and requests >= record.rpm:
        return Turnaway("rpm", record, requests, window_end=minute_end)
    if record.tpm is not None and tokens >= record.tpm:
        return Turnaway("tpm", record, tokens, window_end=minute_end)
    period_start, period_end = budget_window(record.budget_period, record.created_at, now)
    if record.budget is not None:
        found = db.execute(
            "SELECT units FROM spent WHERE key_id = ? AND period_start = ?", (key_id, period_start)
        ).fetchone()
        spent = found[0] if found else 0
        held = db.execute(
            "SELECT coalesce(sum(units), 0) FROM holds WHERE key_id = ? AND period_start = ?",
            (key_id, period_start),
        ).fetchone()[0]
        if spent + held >= to_units(record.budget):
            return Turnaway("budget", record, spent, held, period_end)
    db.execute(
        "INSERT INTO windows (key_id, minute, requests, tokens) VALUES (?, ?, 1, ?) "
        "ON CONFLICT DO UPDATE SET requests = requests + 1, tokens = tokens + excluded.tokens",
        (key_id, minute, tokens_estimate),
    )
    ticket = Ticket(
        ticket_id=new_ticket_id(),
        key_id=key_id,
        key_name=record.name,
        served_model=served_model,
        currency=record.currency,
        period_start=period_start,
        period_end=period_end,
        minute=minute,
        estimate_units=estimate_units,
        tokens_estimate=tokens_estimate,
        admitted_at=now,
    )
    db.execute(
        "INSERT INTO holds (ticket_id, key_id, period_start, units, tokens, minute, until) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            ticket.ticket_id,
            key_id,
            period_start,
            estimate_units,
            tokens_estimate,
            minute,
            now + hold_seconds,
        ),
    )
    return ticket


def _count_tokens(db: sqlite3.Connection, ticket: Ticket, delta: int) -> None:
    """Correct the tokens counted in the ticket's rate window (gone once the window is old)."""
    if delta:
        db.execute(
            "UPDATE windows SET tokens = max(tokens + ?, 0) WHERE key_id = ? AND minute = ?",
            (delta, ticket.key_id, ticket.minute),
        )


def _record(text: str) -> KeyRecord:
    return KeyRecord.from_json(orjson.loads(text))


def _json(record: KeyRecord) -> str:
    return orjson.dumps(record.to_json()).decode()


def _checkpoint(db: sqlite3.Connection) -> None:
    """Copy the WAL's committed pages into the file, as far as readers allow (never waits)."""
    db.execute("PRAGMA wal_checkpoint(PASSIVE)")


@contextmanager
def _immediate(db: sqlite3.Connection) -> Iterator[None]:
    """One transaction that holds the write lock from its start (module docstring)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
