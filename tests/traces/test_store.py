"""The SQLite trace store: turns appended in order and never rewritten, traces listed and
searched, histories stored once, and an append that costs the same at turn 1,000 as at turn 10."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import sqlite3
import stat
import statistics
import threading
import time
from pathlib import Path

import orjson
import pytest

from modelstream.traces import TraceStore, TraceTurn
from modelstream.traces.store import SCHEMA_VERSION
from modelstream.types import Message
from support.traces import make_turn, user


def answer(text: str) -> Message:
    return {"role": "assistant", "content_items": [{"type": "text.done", "text": text}]}


def test_turns_are_numbered_from_one_in_the_order_they_are_appended(store: TraceStore) -> None:
    numbers = [store.append(make_turn("t", [user(f"q{n}")], reply=f"a{n}")) for n in range(3)]
    store.append(make_turn("other", [user("x")]))

    assert numbers == [1, 2, 3]
    turns = store.get_trace("t")
    assert [(t.turn, t.items[0]["text"]) for t in turns] == [(1, "a0"), (2, "a1"), (3, "a2")]  # type: ignore[typeddict-item]


def test_traces_are_listed_newest_first_with_turns_models_last_status_and_tokens(
    store: TraceStore,
) -> None:
    store.append(make_turn("old", [user("a")], created_at=1000, tokens=(5, 10, 2, 3)))
    store.append(make_turn("new", [user("b")], created_at=2000, tokens=(0, 7, None, 4)))  # type: ignore[arg-type]
    store.append(
        make_turn("old", [user("c")], created_at=3000, model="gpt-5-mini", status="incomplete")
    )
    store.append(make_turn("unknown-usage", [user("d")], created_at=2500, tokens=None))

    listing = store.list_traces()

    assert [t.trace_id for t in listing] == ["old", "unknown-usage", "new"]
    old = listing[0]
    assert (old.turns, old.started_at, old.updated_at) == (2, 1000, 3000)
    assert old.models == ["claude-sonnet-4-5", "gpt-5-mini"]
    assert (old.last_status, old.last_model) == ("incomplete", "gpt-5-mini")
    assert (old.input_tokens, old.output_tokens, old.total_tokens) == (15 + 10, 5 + 5, 35)
    assert old.usage_unknown_turns == 0
    unknown = listing[1]
    assert (unknown.total_tokens, unknown.usage_unknown_turns) == (None, 1)  # unknown, not 0
    assert unknown.usage_text() == "usage unknown"
    assert listing[2].total_tokens == 11
    assert listing[2].usage_text() == "11 tokens"
    assert [t.trace_id for t in store.list_traces(limit=1, offset=1)] == ["unknown-usage"]


def test_a_trace_with_some_turns_without_usage_counts_the_known_ones_and_says_so(
    store: TraceStore,
) -> None:
    store.append(make_turn("mixed", [user("a")], tokens=(0, 10, 0, 5)))
    store.append(make_turn("mixed", [user("b")], status="failed", tokens=None))

    [mixed] = store.list_traces()

    assert (mixed.total_tokens, mixed.usage_unknown_turns) == (15, 1)
    assert mixed.usage_text() == "15 tokens (+ 1 turn with usage unknown)"
    assert mixed.to_json()["total_tokens"] == 15


def test_search_finds_traces_by_id_part_model_and_text_in_messages_and_items(
    store: TraceStore,
) -> None:
    store.append(make_turn("agent-weather-1", [user("What's the weather in Lisbon?")]))
    store.append(make_turn("agent-story-2", [user("Tell me a story")], reply="Once upon a TIME"))
    tool_turn = make_turn("agent-tools-3", [user("go")], model="gpt-5-mini")
    store.append(
        TraceTurn(
            **{
                **tool_turn.__dict__,
                "items": [
                    {
                        "type": "tool_call.done",
                        "tool_call_id": "c1",
                        "name": "lookup_invoice",
                        "arguments": {"number": 4711},
                    }
                ],
            }
        )
    )

    def found(**query: str) -> list[str]:
        return sorted(t.trace_id for t in store.list_traces(**query))  # type: ignore[arg-type]

    assert found(text="WEATHER") == ["agent-weather-1"]  # the id, case-insensitive
    assert found(text="lisbon") == ["agent-weather-1"]  # a user message
    assert found(text="upon a time") == ["agent-story-2"]  # an answer
    assert found(text="lookup_invoice") == ["agent-tools-3"]  # a tool name
    assert found(text="4711") == ["agent-tools-3"]  # tool arguments
    assert found(text="agent-") == ["agent-story-2", "agent-tools-3", "agent-weather-1"]
    assert found(model="GPT-5") == ["agent-tools-3"]
    assert found(text="agent", model="claude") == ["agent-story-2", "agent-weather-1"]
    assert found(text="%") == [] and found(text="a_t") == []  # no wildcards: literal text
    assert found(text="p_i") == ["agent-tools-3"]


def keyed(turn: TraceTurn, key_name: str | None) -> TraceTurn:
    return dataclasses.replace(turn, source="server", key_name=key_name)


def test_a_turns_key_name_is_stored_and_read_back_and_absent_when_it_has_none(
    store: TraceStore,
) -> None:
    store.append(keyed(make_turn("served", [user("a")]), "alice"))
    store.append(make_turn("served", [user("b")]))  # a static key's turn, say

    assert [t.key_name for t in store.get_trace("served")] == ["alice", None]
    first, second = store.trace_records("served")
    assert first["key_name"] == "alice"
    assert "key_name" not in second  # the JSON of a turn without one is as before
    with contextlib.closing(sqlite3.connect(store.path)) as db:  # a column, not in the body
        assert all(b"key_name" not in body for (body,) in db.execute("SELECT body FROM turns"))


def test_traces_are_filtered_by_the_whole_name_of_a_key_any_of_their_turns_was_served_for(
    store: TraceStore,
) -> None:
    store.append(keyed(make_turn("shared", [user("a")], created_at=1000), "ci bot"))
    store.append(keyed(make_turn("shared", [user("b")], created_at=2000), "alice"))
    store.append(keyed(make_turn("shared", [user("c")], created_at=3000), "ci bot"))
    store.append(keyed(make_turn("mine", [user("d")], created_at=4000, model="gpt-5"), "alice"))
    store.append(keyed(make_turn("ci-only", [user("e")], created_at=5000), "ci"))
    store.append(make_turn("library", [user("f")], created_at=6000))

    def found(**query: str) -> list[str]:
        return [t.trace_id for t in store.list_traces(**query)]  # type: ignore[arg-type]

    assert {t.trace_id: t.key_names for t in store.list_traces()} == {
        "library": [],
        "ci-only": ["ci"],
        "mine": ["alice"],
        "shared": ["ci bot", "alice"],  # each name once, in the order first served
    }
    assert found(key="alice") == ["mine", "shared"]
    assert found(key="ci") == ["ci-only"]  # a whole name: not a part of "ci bot"
    assert found(key="ci bot") == ["shared"]
    assert found(key="Alice") == [] and found(key="ali") == []  # case-sensitive, exact
    assert found(key='ci bot","alice') == []  # not a part of the stored list's JSON
    assert found(key="alice", model="gpt") == ["mine"]
    assert found(key="alice", text="b") == ["shared"]
    assert store.list_traces(key="alice")[0].to_json()["key_names"] == ["alice"]


# The schema of version 1, as `git show` gives it for the commit before key names (DDL copied
# from src/modelstream/traces/store.py there), and a row as that version's code inserted it.
SCHEMA_V1 = (
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
        UNIQUE (trace_id, turn)
    )
    """,
    """
    CREATE TRIGGER IF NOT EXISTS turns_are_never_rewritten BEFORE UPDATE ON turns
    BEGIN SELECT RAISE(ABORT, 'trace turns are append-only'); END
    """,
    "PRAGMA user_version = 1",
)
INSERT_V1 = """
INSERT INTO turns (trace_id, turn, created_at, source, model, status, input_tokens,
    output_tokens, history_len, history_bytes, history_hash, context_turn, trace_started_at,
    trace_input_tokens, trace_output_tokens, trace_models, search_text, body)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""


def insert_v1(db: sqlite3.Connection, trace_id: str, created_at: int) -> None:
    """One first turn of `trace_id`, the row version 1's `append` wrote."""
    request = orjson.dumps([user("hello")])[:-1]
    body = {
        "client_type": "anthropic-messages",
        "provider": "anthropic",
        "config": {},
        "items": [{"type": "text.done", "text": "hi"}],
        "open_item": None,
        "usage": None,
        "finish_reason": "stop",
        "raw_finish_reason": "end_turn",
        "reason": None,
        "response_id": "msg_1",
        "response_model": "claude-sonnet-4-5",
        "timings": {"total_ms": 3.0},
        "item_timings": [],
        "diagnostics": [],
        "cost": None,
        "messages": [user("hello")],
    }
    db.execute(
        INSERT_V1,
        (
            trace_id,
            1,
            created_at,
            "server",
            "claude-sonnet-4-5",
            "final",
            None,
            None,
            1,
            len(request),
            hashlib.sha256(request).digest(),
            None,
            created_at,
            0,
            0,
            '["claude-sonnet-4-5"]',
            "claude-sonnet-4-5\nhello\nhi",
            orjson.dumps(body),
        ),
    )


def columns(path: Path) -> list[tuple[str, str, int, str | None]]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        rows = db.execute("PRAGMA table_info(turns)").fetchall()
    return sorted((name, kind, notnull, default) for _, name, kind, notnull, default, _ in rows)


def test_a_trace_file_from_before_key_names_gains_them_when_opened_and_keeps_its_turns(
    tmp_path: Path, store: TraceStore
) -> None:
    old = tmp_path / "old.sqlite3"
    with contextlib.closing(sqlite3.connect(old, isolation_level=None)) as db:
        for statement in SCHEMA_V1:
            db.execute(statement)
        insert_v1(db, "before-keys", created_at=1000)

    reader = TraceStore(old)  # a reader migrates too: its queries name the new columns
    [summary] = reader.list_traces()
    assert (summary.trace_id, summary.turns, summary.key_names) == ("before-keys", 1, [])
    assert reader.get_trace("before-keys")[0].key_name is None
    assert reader.list_traces(key="alice") == []
    reader.close()
    store.append(make_turn("fresh", [user("x")]))
    assert columns(old) == columns(store.path)  # the columns of a file made new
    with contextlib.closing(sqlite3.connect(old)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION

    writer = TraceStore(old)
    assert writer.append(keyed(make_turn("before-keys", [user("again")]), "alice")) == 2
    with contextlib.closing(sqlite3.connect(old, isolation_level=None)) as db:
        insert_v1(db, "old-writer", created_at=500)  # a process still on version 1 appends
    assert [(t.trace_id, t.key_names) for t in writer.list_traces()] == [
        ("before-keys", ["alice"]),
        ("old-writer", []),
    ]
    assert [t.trace_id for t in writer.list_traces(key="alice")] == ["before-keys"]
    assert [t.key_name for t in writer.get_trace("before-keys")] == [None, "alice"]
    writer.close()


def test_a_trace_id_is_only_a_key_never_a_path(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "traces.sqlite3")
    odd = ["../../etc/passwd", "/tmp/x", "a\\b", "", "naïve 🚀", "'; DROP TABLE turns; --"]
    for trace_id in odd:
        store.append(make_turn(trace_id, [user(trace_id)]))

    assert sorted(t.trace_id for t in store.list_traces()) == sorted(odd)
    assert all(store.get_trace(trace_id)[0].trace_id == trace_id for trace_id in odd)
    assert store.get_trace("../../etc") == []  # exact keys, no prefix or pattern
    assert {p.name for p in tmp_path.iterdir()} <= {
        "traces.sqlite3",
        "traces.sqlite3-wal",
        "traces.sqlite3-shm",
    }


def test_stored_turns_are_never_rewritten(store: TraceStore) -> None:
    store.append(make_turn("t", [user("hi")]))
    with sqlite3.connect(store.path) as db, pytest.raises(sqlite3.DatabaseError, match="append"):
        db.execute("UPDATE turns SET status = 'final'")
    assert store.get_trace("t")[0].messages == [user("hi")]


def test_a_growing_conversation_stores_each_message_once_and_reads_back_whole(
    store: TraceStore,
) -> None:
    history: list[Message] = []
    for n in range(30):
        history = [*history, user(f"question {n}")]
        store.append(make_turn("chat", history, reply=f"answer {n}"))
        history = [*history, answer(f"answer {n}")]

    records = store.trace_records("chat")
    assert [len(r["messages"]) for r in records] == [1] + [2] * 29
    assert [r["context_turn"] for r in records] == [None, *range(1, 30)]
    turns = store.get_trace("chat")
    assert turns[-1].messages == history[:-1]
    assert all(len(t.messages) == 2 * t.turn - 1 for t in turns)  # type: ignore[operator]


def test_a_request_that_does_not_extend_the_previous_one_is_stored_whole(
    store: TraceStore,
) -> None:
    store.append(make_turn("t", [user("first"), answer("a"), user("second")]))
    edited = [user("first"), answer("a (edited)"), user("second"), answer("b"), user("third")]
    store.append(make_turn("t", edited))
    store.append(make_turn("t", [user("first")]))  # a shorter request: a new branch

    assert [r["context_turn"] for r in store.trace_records("t")] == [None, None, None]
    assert [t.messages for t in store.get_trace("t")] == [
        [user("first"), answer("a"), user("second")],
        edited,
        [user("first")],
    ]


def test_bytes_in_messages_and_items_survive_the_round_trip(store: TraceStore) -> None:
    audio = bytes(range(256))
    message: Message = {
        "role": "assistant",
        "content_items": [{"type": "inline_data.done", "data": audio, "mime_type": "audio/wav"}],
    }
    base = make_turn("bytes", [user("sing"), message, user("again")])
    store.append(
        TraceTurn(
            **{
                **base.__dict__,
                "items": [
                    {"type": "inline_data.done", "data": b"\x89PNG", "mime_type": "image/png"}
                ],
                "open_item": {
                    "type": "inline_data.delta",
                    "data": b"\x00\x01",
                    "mime_type": "audio/wav",
                },
            }
        )
    )
    (turn,) = store.get_trace("bytes")
    assert turn.messages[1] == message
    assert turn.items[0]["data"] == b"\x89PNG"  # type: ignore[typeddict-item]
    assert turn.open_item is not None and turn.open_item["data"] == b"\x00\x01"  # type: ignore[typeddict-item]
    record = store.trace_records("bytes")[0]
    assert record["items"][0]["data"] == "iVBORw=="  # base64 in the JSON the viewer gets


def test_two_writers_of_one_trace_never_get_the_same_turn_number(tmp_path: Path) -> None:
    """Two stores on one file stand for two processes: the write lock orders their appends."""
    path = tmp_path / "traces.sqlite3"
    TraceStore(path).append(make_turn("shared", [user("start")]))
    numbers: list[int] = []

    def writer(name: str) -> None:
        store = TraceStore(path)
        numbers.extend(store.append(make_turn("shared", [user(f"{name} {n}")])) for n in range(40))
        store.close()

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(numbers) == list(range(2, 82))
    assert [t.turn for t in TraceStore(path).get_trace("shared")] == list(range(1, 82))


def test_the_trace_file_is_readable_by_its_owner_only(store: TraceStore) -> None:
    store.append(make_turn("t", [user("private")]))
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


def test_reading_a_missing_file_finds_nothing_and_creates_nothing(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "nested" / "traces.sqlite3")
    assert store.list_traces() == [] and store.get_trace("t") == []
    assert list(tmp_path.iterdir()) == []


def test_a_sqlite_file_of_another_application_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "app.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
    before = path.read_bytes()

    with pytest.raises(sqlite3.DatabaseError, match="not a trace file"):
        TraceStore(path).list_traces()
    with pytest.raises(sqlite3.DatabaseError, match="not a trace file"):
        TraceStore(path).append(make_turn("t", [user("hi")]))
    assert path.read_bytes() == before


# --- the cost of an append -----------------------------------------------------------------

SAMPLES = 50


def _append_times(store: TraceStore, turns: list[TraceTurn]) -> list[float]:
    times = []
    for turn in turns:
        started = time.perf_counter()
        store.append(turn)
        times.append(time.perf_counter() - started)
    return times


def test_appending_the_1000th_turn_to_a_trace_costs_no_more_than_the_10th(
    store: TraceStore,
) -> None:
    """20 appends timed at turns 10-29 and at 1,000-1,019 of one trace, turns of equal size;
    the medians stay within a factor that only noise could reach (nothing scans the trace)."""

    def turn(n: int) -> TraceTurn:
        return make_turn("long", [user(f"question {n} " * 20)], reply=f"answer {n} " * 20)

    for n in range(1, 10):
        store.append(turn(n))
    early = _append_times(store, [turn(n) for n in range(10, 10 + SAMPLES)])
    for n in range(10 + SAMPLES, 1000):
        store.append(turn(n))
    late = _append_times(store, [turn(n) for n in range(1000, 1000 + SAMPLES)])

    at_10, at_1000 = statistics.median(early), statistics.median(late)
    print(
        f"\nappend, median of {SAMPLES}: turn 10: {at_10 * 1e6:.0f} µs, "
        f"turn 1,000: {at_1000 * 1e6:.0f} µs, ratio {at_1000 / at_10:.2f}"
    )
    assert store.get_trace("long")[-1].turn == 1000 + SAMPLES - 1
    assert at_1000 < 5 * at_10  # a scan of 1,000 turns costs tens of times more


def test_a_conversation_at_turn_1000_writes_no_more_than_at_turn_10(store: TraceStore) -> None:
    """An agent loop resends its whole history at every turn; the stored row stays the same
    size (only the new messages), so the file grows by the same amount at turn 1,000 as at 10.
    The time to serialize and hash the request grows with it (as does encoding it to send)."""
    history: list[Message] = []
    sizes: dict[int, int] = {}
    times: dict[int, float] = {}
    for n in range(1, 1000 + SAMPLES):
        history = [*history, user(f"question {n} " * 20)]
        turn = make_turn("agent", history, reply=f"answer {n} " * 20)
        started = time.perf_counter()
        store.append(turn)
        times[n] = time.perf_counter() - started
        history = [*history, answer(f"answer {n} " * 20)]
    with sqlite3.connect(store.path) as db:
        for n, size in db.execute("SELECT turn, length(body) FROM turns WHERE trace_id = 'agent'"):
            sizes[n] = size

    early = [sizes[n] for n in range(10, 10 + SAMPLES)]
    late = [sizes[n] for n in range(1000, 1000 + SAMPLES)]
    at_10 = statistics.median(times[n] for n in range(10, 10 + SAMPLES))
    at_1000 = statistics.median(times[n] for n in range(1000, 1000 + SAMPLES))
    print(
        f"\nagent loop, median of {SAMPLES}: row bytes at turn 10: {statistics.median(early):.0f}, "
        f"at turn 1,000: {statistics.median(late):.0f}; append time at turn 10: "
        f"{at_10 * 1e6:.0f} µs, at turn 1,000 ({2 * 1000 - 1} messages): {at_1000 * 1e6:.0f} µs"
    )
    assert max(late) <= 1.1 * max(early)
    assert store.get_trace("agent")[-1].messages == history[:-1]
