"""Traces in one SQLite file: one row per turn, appended, never rewritten.

Theory of operation:

- A row is inserted per turn and never updated (a trigger refuses UPDATE). The file is in WAL
  mode, so the viewer reads while clients and servers append, from several processes.
- `trace_id` is only a key: any string, compared exactly, never part of a path.
- Appending costs the same at the 1,000th turn of a trace as at the 10th: it reads the trace's
  last row through the `(trace_id, turn)` index and inserts one row. Nothing scans the trace.
- A turn's request repeats the conversation so far. Storing it whole at every turn would make a
  long trace grow with the square of its length, so a row stores only the messages after the
  previous turn's request when that request is a prefix of this one (checked with a hash of its
  JSON), and says so in `context_turn`; reading a trace in order puts the history back together.
- Each row carries the running totals of its trace (tokens, models, key names, start), so
  listing traces reads the last row of each trace instead of adding up all of them.
- The schema's version is the file's `user_version`. A file of an older version gains what it
  lacks when first opened (added columns with their defaults: no row is rewritten), so files
  written before a change read and append as before, by old and new code alike.
- The file is bounded (`TraceLimits`): a turn whose row would pass `max_turn_bytes` keeps its
  largest parts only as their size, SHA-256 and first characters (`truncated`); turns older than
  `max_age_days` and, past `max_total_bytes`, the oldest turns are deleted as new ones arrive.
  Rows are only ever inserted or deleted, never changed.
"""

from __future__ import annotations

import base64
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..console.counts import counted
from ..errors import ConfigurationError
from ..items import decode_binary
from ..items import search_text as item_search_text
from ..types import DoneItem, EventItem, Message, Usage
from .record import TraceTurn

SCHEMA_VERSION = 2  # 2: key_name, trace_keys
MAX_SEARCH_TEXT = 20_000  # characters of one turn's text kept for search
TRUNCATED_HEAD = 2_000  # characters of a truncated part's JSON kept to show what it was

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS turns (
        id INTEGER PRIMARY KEY,
        trace_id TEXT NOT NULL,
        turn INTEGER NOT NULL,              -- 1, 2, ... within the trace
        created_at INTEGER NOT NULL,        -- Unix ms when the turn started
        source TEXT NOT NULL,               -- client | server
        model TEXT NOT NULL,
        status TEXT NOT NULL,               -- final | cancelled | failed | incomplete
        input_tokens INTEGER,               -- cached + prompt, NULL when unknown
        output_tokens INTEGER,              -- thoughts + response, NULL when unknown
        history_len INTEGER NOT NULL,       -- messages in the request
        history_bytes INTEGER NOT NULL,     -- length of the request's JSON without its ']'
        history_hash BLOB NOT NULL,         -- their SHA-256
        context_turn INTEGER,               -- the turn whose request starts this one's, or NULL
        trace_started_at INTEGER NOT NULL,  -- running totals of the trace up to this turn
        trace_input_tokens INTEGER NOT NULL,
        trace_output_tokens INTEGER NOT NULL,
        trace_models TEXT NOT NULL,         -- JSON list of the models used so far
        search_text TEXT NOT NULL,          -- lower-case text of the new messages and items
        body BLOB NOT NULL,                 -- JSON of the rest of the TraceTurn
        key_name TEXT,                      -- the virtual key served for, NULL for none
        trace_keys TEXT NOT NULL DEFAULT '[]',  -- JSON list of the key names so far
        UNIQUE (trace_id, turn)
    )
    """,
    """
    CREATE TRIGGER IF NOT EXISTS turns_are_never_rewritten BEFORE UPDATE ON turns
    BEGIN SELECT RAISE(ABORT, 'trace turns are append-only'); END
    """,
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)

# What a file of an older version lacks, by the version that added it: (column, definition),
# each as in _SCHEMA (a test checks that a migrated file has the columns of a new one).
_ADDED_COLUMNS = {
    2: (
        ("key_name", "key_name TEXT"),
        ("trace_keys", "trace_keys TEXT NOT NULL DEFAULT '[]'"),
    ),
}

_LAST_TURN = """
SELECT turn, history_len, history_bytes, history_hash, trace_started_at, trace_input_tokens,
       trace_output_tokens, trace_models, trace_keys
FROM turns WHERE trace_id = ? ORDER BY turn DESC LIMIT 1
"""

_INSERT = """
INSERT INTO turns (trace_id, turn, created_at, source, model, status, input_tokens,
    output_tokens, history_len, history_bytes, history_hash, context_turn, trace_started_at,
    trace_input_tokens, trace_output_tokens, trace_models, search_text, body, key_name,
    trace_keys)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

# written by every writer, so files made before it gain it too: the age limit deletes by it
_CREATED_AT_INDEX = "CREATE INDEX IF NOT EXISTS turns_by_created_at ON turns (created_at)"
_DELETE_OLDER = "DELETE FROM turns WHERE created_at < ?"
_DELETE_OLDEST = """
DELETE FROM turns WHERE id IN (SELECT id FROM turns WHERE id < ? ORDER BY id LIMIT ?)
"""

# The page of traces first, then for each one the turns that reported no usage (through the
# (trace_id, turn) index: only the listed traces' rows are read). A key name is matched whole
# against the last row's running list (json_each: a substring of the list's JSON could match
# across two names).
_SUMMARIES = """
WITH last AS (SELECT trace_id, MAX(turn) AS turn FROM turns GROUP BY trace_id),
page AS (
    SELECT t.trace_id, t.turn, t.trace_started_at, t.created_at, t.status, t.model, t.source,
           t.trace_input_tokens, t.trace_output_tokens, t.trace_models, t.trace_keys, t.id
    FROM last JOIN turns AS t ON t.trace_id = last.trace_id AND t.turn = last.turn
    WHERE (:text IS NULL OR last.trace_id IN (
              SELECT trace_id FROM turns
              WHERE instr(lower(trace_id), :text) > 0 OR instr(search_text, :text) > 0))
      AND (:model IS NULL OR instr(lower(t.trace_models), :model) > 0)
      AND (:key IS NULL OR EXISTS (SELECT 1 FROM json_each(t.trace_keys) AS k
                                   WHERE k.value = :key))
    ORDER BY t.created_at DESC, t.id DESC
    LIMIT :limit OFFSET :offset
)
SELECT page.trace_id, page.turn, page.trace_started_at, page.created_at, page.status,
       page.model, page.source, page.trace_input_tokens, page.trace_output_tokens,
       page.trace_models, page.trace_keys,
       (SELECT count(*) FROM turns AS u WHERE u.trace_id = page.trace_id
            AND u.input_tokens IS NULL AND u.output_tokens IS NULL)
FROM page ORDER BY page.created_at DESC, page.id DESC
"""

_NEWEST_ROW = "SELECT coalesce(max(id), 0) FROM turns"
_CHANGED_TRACES = "SELECT DISTINCT trace_id FROM turns WHERE id > ? AND id <= ?"

_TRACE = """
SELECT trace_id, turn, created_at, source, model, status, history_len, context_turn, body,
       key_name
FROM turns WHERE trace_id = ? ORDER BY turn
"""


def default_path() -> Path:
    """`$XDG_DATA_HOME/modelstream/traces.sqlite3`, else `~/.local/share/modelstream/...`."""
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return Path(data_home) / "modelstream" / "traces.sqlite3"


@dataclass(frozen=True)
class TraceLimits:
    """How much a trace file holds: each turn's row at most `max_turn_bytes` (larger parts are
    stored truncated), turns no older than `max_age_days`, the file's live pages within
    `max_total_bytes` (the oldest turns go first). None: no limit of that kind."""

    max_turn_bytes: int = 1024 * 1024
    max_total_bytes: int | None = 1024 * 1024 * 1024
    max_age_days: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_turn_bytes", "max_total_bytes", "max_age_days"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not value > 0):
                raise ConfigurationError(f"trace limit {name} must be positive, got {value!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> TraceLimits:
        """The limits from `MODELSTREAM_TRACES_MAX_TURN_BYTES`, `..._MAX_TOTAL_BYTES` and
        `..._MAX_AGE_DAYS` ("none" lifts a limit), the defaults for those not set."""
        values: dict[str, int | float | None] = {}
        for name, kind in (
            ("max_turn_bytes", int),
            ("max_total_bytes", int),
            ("max_age_days", float),
        ):
            variable = f"MODELSTREAM_TRACES_{name.upper()}"
            raw = env.get(variable, "").strip()
            if not raw:
                continue
            if raw.lower() == "none" and name != "max_turn_bytes":
                values[name] = None
                continue
            try:
                values[name] = kind(raw)
            except ValueError:
                raise ConfigurationError(f"{variable} must be a number, got {raw!r}") from None
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class TraceSummary:
    """One trace in a listing."""

    trace_id: str
    turns: int
    started_at: int  # Unix ms, first turn
    updated_at: int  # Unix ms, last turn's start
    models: list[str]
    last_model: str
    last_status: str
    last_source: str
    input_tokens: int  # known tokens only
    output_tokens: int
    usage_unknown_turns: int = 0  # turns that reported no usage (failed, cancelled, ...)
    key_names: list[str] = field(default_factory=list)  # the virtual keys served, in order

    @property
    def total_tokens(self) -> int | None:
        """The tokens of the turns that reported usage; None when none did: unknown, not 0."""
        if self.usage_unknown_turns >= self.turns:
            return None
        return self.input_tokens + self.output_tokens

    def usage_text(self) -> str:
        """How a listing shows the trace's usage (the viewer's list says it the same way)."""
        total = self.total_tokens
        if total is None:
            return "usage unknown"
        text = f"{total:,} tokens"
        if self.usage_unknown_turns:
            text += f" (+ {counted(self.usage_unknown_turns, 'turn')} with usage unknown)"
        return text

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "total_tokens": self.total_tokens}


class TraceStore:
    """The SQLite trace file at `path` (see the module docstring). Thread-safe; the file and
    its folder are created at the first append (readable by the owner only)."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, limits: TraceLimits | None = None
    ) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.limits = limits if limits is not None else TraceLimits()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def __repr__(self) -> str:
        return f"TraceStore({str(self.path)!r})"

    # --- writing ---------------------------------------------------------------------------

    def append(self, turn: TraceTurn) -> int:
        """Store `turn` as the next turn of its trace; its 1-based number in the trace."""
        request = _dumps(turn.messages)[:-1]  # without ']', so a shorter request is a prefix
        usage_in, usage_out = token_counts(turn.usage)
        with self._lock:
            db = self._connect(create=True)
            assert db is not None
            with _immediate(db):
                if self.limits.max_age_days is not None:
                    oldest = time.time() * 1000 - self.limits.max_age_days * 86_400_000
                    db.execute(_DELETE_OLDER, (int(oldest),))
                last = db.execute(_LAST_TURN, (turn.trace_id,)).fetchone()
                number, context, new_from = 1, None, 0
                started, total_in, total_out, models, keys = turn.created_at, 0, 0, [], []
                prefix_hash, request_hash = _request_hashes(request, last[2] if last else 0)
                if last is not None:
                    number = last[0] + 1
                    started, total_in, total_out = last[4], last[5], last[6]
                    models, keys = orjson.loads(last[7]), orjson.loads(last[8])
                    if prefix_hash == last[3]:  # the previous request starts this one
                        context, new_from = last[0], last[1]
                if turn.model not in models:
                    models.append(turn.model)
                if turn.key_name is not None and turn.key_name not in keys:
                    keys.append(turn.key_name)
                new_messages = turn.messages[new_from:]
                body, truncated = _capped(
                    {**_body(turn), "messages": new_messages}, self.limits.max_turn_bytes
                )
                if "messages" in truncated:  # not whole here: no later turn may build on it
                    request_hash = b""
                row = db.execute(
                    _INSERT,
                    (
                        turn.trace_id,
                        number,
                        turn.created_at,
                        turn.source,
                        turn.model,
                        turn.status,
                        usage_in,
                        usage_out,
                        len(turn.messages),
                        len(request),
                        request_hash,
                        context,
                        started,
                        total_in + (usage_in or 0),
                        total_out + (usage_out or 0),
                        orjson.dumps(models).decode(),
                        search_text(turn, new_messages),
                        body,
                        turn.key_name,
                        orjson.dumps(keys).decode(),
                    ),
                )
                if self.limits.max_total_bytes is not None:
                    _shrink(db, self.limits.max_total_bytes, keep_from=row.lastrowid or 0)
        return number

    # --- reading ---------------------------------------------------------------------------

    def list_traces(
        self,
        *,
        text: str | None = None,
        model: str | None = None,
        key: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[TraceSummary]:
        """Traces, newest first. `text`: a part of the trace id or of any message or item
        (case-insensitive); `model`: a part of the name of a model the trace used; `key`: the
        whole name of a virtual key one of its turns was served for (case-sensitive)."""
        params = {
            "text": text.lower() if text else None,
            "model": model.lower() if model else None,
            "key": key or None,
            "limit": max(0, limit),
            "offset": max(0, offset),
        }
        rows = self._read(_SUMMARIES, params)
        return [
            TraceSummary(
                trace_id=row[0],
                turns=row[1],
                started_at=row[2],
                updated_at=row[3],
                last_status=row[4],
                last_model=row[5],
                last_source=row[6],
                input_tokens=row[7],
                output_tokens=row[8],
                models=orjson.loads(row[9]),
                key_names=orjson.loads(row[10]),
                usage_unknown_turns=row[11],
            )
            for row in rows
        ]

    def trace_records(self, trace_id: str) -> list[dict[str, Any]]:
        """The turns of a trace in order, as JSON-ready dicts (bytes as base64) whose
        `messages` are only those after the previous turn's request when `context_turn` is set,
        and `key_name` only in a turn served for a virtual key."""
        out = []
        for row in self._read(_TRACE, (trace_id,)):
            record = {
                "trace_id": row[0],
                "turn": row[1],
                "created_at": row[2],
                "source": row[3],
                "model": row[4],
                "status": row[5],
                "history_len": row[6],
                "context_turn": row[7],
                **orjson.loads(row[8]),
            }
            if row[9] is not None:
                record["key_name"] = row[9]
            out.append(record)
        return out

    def get_trace(self, trace_id: str) -> list[TraceTurn]:
        """The turns of a trace in order, each with its whole request and bytes as bytes."""
        turns: list[TraceTurn] = []
        history: dict[int, list[Message]] = {}
        for record in self.trace_records(trace_id):
            new: list[Message] = _decode_binary(record["messages"])
            context = record["context_turn"]
            messages = history.get(context, []) + new if context is not None else new
            history = {record["turn"]: messages}  # a context is always the turn just before
            turns.append(_turn_from(record, messages))
        return turns

    def changes_since(self, row: int) -> tuple[int, list[str]]:
        """(the newest row, the traces that gained turns after `row`): what a viewer watching
        the file asks, every second or so. Rows are numbered in the order they were appended
        and the newest is never deleted, so a row number is a position in the file's history."""
        with self._lock:
            db = self._connect(create=False)
            if db is None:
                return 0, []
            newest: int = db.execute(_NEWEST_ROW).fetchone()[0]
            if newest <= row:
                return newest, []
            changed = db.execute(_CHANGED_TRACES, (row, newest)).fetchall()
        return newest, [trace_id for (trace_id,) in changed]

    def exists(self) -> bool:
        """Whether the trace file is there (a reader never creates it)."""
        return self.path.exists()

    def create(self) -> None:
        """Create the trace file (and its folder) now, empty, unless it exists: what the first
        append does, for a viewer started before anything is recorded."""
        with self._lock:
            self._connect(create=True)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # --- the connection --------------------------------------------------------------------

    def _read(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...]) -> list[Any]:
        with self._lock:
            db = self._connect(create=False)
            if db is None:  # nothing recorded yet
                return []
            return db.execute(sql, params).fetchall()

    def _connect(self, *, create: bool) -> sqlite3.Connection | None:
        if self._db is not None:
            return self._db
        if not self.path.exists():
            if not create:
                return None
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    raise sqlite3.DatabaseError("it holds other tables: not a trace file")
                if not create:  # created by a writer that has not set it up yet
                    db.close()
                    return None
                with _immediate(db):
                    for statement in _SCHEMA:
                        db.execute(statement)
            elif version < SCHEMA_VERSION:  # readers too: the queries name the new columns
                _migrate(db)
            if create:  # (WAL is a property of the file: the readers need not ask)
                db.execute(_CREATED_AT_INDEX)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")  # durable across crashes of the process
        except BaseException:
            db.close()
            raise
        self._db = db
        return db


def _migrate(db: sqlite3.Connection) -> None:
    """Bring a file of an older schema version up to this one: add the columns it lacks (asked
    again inside the write lock: another process may have just done it)."""
    with _immediate(db):
        version = db.execute("PRAGMA user_version").fetchone()[0]
        present = {row[1] for row in db.execute("PRAGMA table_info(turns)")}
        for added_in in range(version + 1, SCHEMA_VERSION + 1):
            for column, definition in _ADDED_COLUMNS.get(added_in, ()):
                if column not in present:
                    db.execute(f"ALTER TABLE turns ADD COLUMN {definition}")
        db.execute(f"PRAGMA user_version = {max(version, SCHEMA_VERSION)}")


@contextmanager
def _immediate(db: sqlite3.Connection) -> Iterator[None]:
    """A write transaction that takes the lock at once, so two writers of one trace queue up
    instead of both reading the same last turn."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


# --- limits --------------------------------------------------------------------------------

# The parts of a row that can be large, and what each becomes when it is cut.
_CUTTABLE: dict[str, Any] = {
    "messages": [],
    "items": [],
    "open_item": None,
    "config": {},
    "diagnostics": [],
    "reason": None,
}


def _capped(body: dict[str, Any], limit: int) -> tuple[bytes, dict[str, Any]]:
    """The row's JSON within `limit` bytes where its large parts allow: the largest parts are
    replaced, one at a time, by their empty value, and `truncated` says what each was (its
    JSON's size in bytes, SHA-256 and first characters)."""
    data = _dumps(body)
    truncated: dict[str, Any] = {}
    if len(data) <= limit:
        return data, truncated
    parts = {name: _dumps(body[name]) for name in _CUTTABLE}
    for name in sorted(parts, key=lambda name: len(parts[name]), reverse=True):
        raw = parts[name]
        truncated[name] = {
            "bytes": len(raw),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "head": raw[: TRUNCATED_HEAD * 4].decode("utf-8", "ignore")[:TRUNCATED_HEAD],
        }
        body = {**body, name: _CUTTABLE[name], "truncated": truncated}
        data = _dumps(body)
        if len(data) <= limit:
            break
    return data, truncated


def _shrink(db: sqlite3.Connection, max_bytes: int, *, keep_from: int) -> None:
    """Delete the oldest turns (never those from row `keep_from` on) until the file's live
    pages are back under nine tenths of `max_bytes`: freed pages are reused by later inserts,
    so the file stops growing. Nothing is scanned while the file is within its limit."""
    if _live_bytes(db) <= max_bytes:
        return
    while _live_bytes(db) > max_bytes * 0.9:
        if db.execute(_DELETE_OLDEST, (keep_from, 64)).rowcount == 0:
            return


def _live_bytes(db: sqlite3.Connection) -> int:
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    free = db.execute("PRAGMA freelist_count").fetchone()[0]
    page_size: int = db.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * page_size)


# --- rows ----------------------------------------------------------------------------------


def token_counts(usage: Usage | None) -> tuple[int | None, int | None]:
    """(input, output) tokens: cached + prompt and thoughts + response; None when unknown."""
    if usage is None:
        return None, None
    return (
        _known_sum(usage.get("cached_tokens"), usage.get("prompt_tokens")),
        _known_sum(usage.get("thoughts_tokens"), usage.get("response_tokens")),
    )


def _known_sum(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


def _default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"cannot serialize {type(value).__name__}")


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=_default)


def _request_hashes(request: bytes, prefix_len: int) -> tuple[bytes | None, bytes]:
    """The hashes of `request[:prefix_len]` (None when that is not a whole number of messages)
    and of all of `request`, in one pass over it."""
    view = memoryview(request)
    at_boundary = 1 < prefix_len <= len(request) and request[prefix_len : prefix_len + 1] in (
        b",",
        b"",
    )
    if not at_boundary:  # "[" alone (an empty request) or a cut inside a message
        return None, hashlib.sha256(view).digest()
    running = hashlib.sha256(view[:prefix_len])
    prefix = running.digest()
    running.update(view[prefix_len:])
    return prefix, running.digest()


def _body(turn: TraceTurn) -> dict[str, Any]:
    return {
        "client_type": turn.client_type,
        "provider": turn.provider,
        "config": turn.config,
        "items": turn.items,
        "open_item": turn.open_item,
        "usage": turn.usage,
        "finish_reason": turn.finish_reason,
        "raw_finish_reason": turn.raw_finish_reason,
        "reason": turn.reason,
        "response_id": turn.response_id,
        "response_model": turn.response_model,
        "timings": turn.timings,
        "item_timings": turn.item_timings,
        "diagnostics": turn.diagnostics,
        "cost": turn.cost,
    }


def search_text(turn: TraceTurn, messages: list[Message]) -> str:
    """The words a search may find in a turn: its new messages, its items, its models."""
    parts = [turn.model, turn.response_model or ""]
    for message in messages:
        parts.extend(_item_text(item) for item in message["content_items"])
    parts.extend(_item_text(item) for item in turn.items)
    if turn.open_item is not None:
        parts.append(_item_text(turn.open_item))
    return "\n".join(part for part in parts if part).lower()[:MAX_SEARCH_TEXT]


def _item_text(item: EventItem) -> str:
    """The words of one item (which fields: the kind's `search` in `modelstream.items`)."""
    return item_search_text(item)[:MAX_SEARCH_TEXT]


def _decode_binary(items_or_messages: Any) -> Any:
    """Base64 growing fields of binary items back to bytes, in messages or in an item list."""
    for entry in items_or_messages:
        if "content_items" in entry:
            _decode_binary(entry["content_items"])
        else:
            decode_binary(entry, base64.b64decode)
    return items_or_messages


def _turn_from(record: dict[str, Any], messages: list[Message]) -> TraceTurn:
    items: list[DoneItem] = _decode_binary(record["items"])
    open_item = record["open_item"]
    if open_item is not None:
        _decode_binary([open_item])
    return TraceTurn(
        trace_id=record["trace_id"],
        source=record["source"],
        model=record["model"],
        client_type=record["client_type"],
        provider=record["provider"],
        config=record["config"],
        messages=messages,
        items=items,
        open_item=open_item,
        usage=record["usage"],
        finish_reason=record["finish_reason"],
        raw_finish_reason=record["raw_finish_reason"],
        status=record["status"],
        reason=record["reason"],
        response_id=record["response_id"],
        response_model=record["response_model"],
        timings=record["timings"],
        item_timings=record["item_timings"],
        created_at=record["created_at"],
        diagnostics=record["diagnostics"],
        turn=record["turn"],
        truncated=record.get("truncated", {}),
        cost=record.get("cost"),  # turns recorded before costs were have none
        key_name=record.get("key_name"),
    )


__all__ = ["TraceLimits", "TraceStore", "TraceSummary", "default_path", "token_counts"]
