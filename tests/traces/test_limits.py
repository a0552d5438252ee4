"""A trace file is bounded: a large turn is stored truncated with its size and hash, old turns
and, past the size limit, the oldest turns are deleted, and a server records each caller's
turns in the namespace of its key (docs/traces.md#limits)."""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

import httpx
import orjson
import pytest

from modelstream.server import ServerConfigError, settings_from_mapping
from modelstream.testing import Emulator, Reply
from modelstream.traces import TraceLimits, TraceStore
from modelstream.web.keys import key_hash
from support.server import (
    AUTH,
    CLIENT_KEY,
    CLIENT_KEY_ENV,
    UPSTREAM_KEY,
    Serve,
    config_for,
    post_stream,
    stream_body,
)
from support.traces import make_turn, user

DAY_MS = 86_400_000


def test_a_turn_past_the_size_cap_is_stored_truncated_with_its_size_and_hash(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.sqlite3"
    store = TraceStore(path, limits=TraceLimits(max_turn_bytes=64 * 1024))
    huge = [user("lorem ipsum " * 400_000)]  # 4.8 MB of request
    store.append(make_turn("big", huge, reply="short answer"))
    store.close()

    assert path.stat().st_size < 300 * 1024
    (turn,) = TraceStore(path).get_trace("big")
    cut = turn.truncated["messages"]
    request = orjson.dumps(huge)
    assert cut["bytes"] == len(request)
    assert cut["sha256"] == hashlib.sha256(request).hexdigest()
    assert cut["head"].startswith('[{"role":"user","content_items":[{"type":"text.done"')
    assert len(cut["head"]) == 2_000
    assert turn.messages == []
    assert turn.items == [{"type": "text.done", "text": "short answer"}]  # small parts stay


def test_a_turn_within_the_cap_is_stored_whole(store: TraceStore) -> None:
    store.append(make_turn("small", [user("hello")]))

    (turn,) = store.get_trace("small")
    assert turn.truncated == {}
    assert turn.messages == [user("hello")]


def test_turns_older_than_the_age_limit_are_deleted_as_new_ones_arrive(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "t.sqlite3", limits=TraceLimits(max_age_days=7))
    now = int(time.time() * 1000)
    store.append(make_turn("old", [user("a")], created_at=now - 8 * DAY_MS))
    store.append(make_turn("recent", [user("b")], created_at=now - 6 * DAY_MS))
    store.append(make_turn("new", [user("c")], created_at=now))

    assert [t.trace_id for t in store.list_traces()] == ["new", "recent"]
    assert store.get_trace("old") == []


def test_past_the_total_size_the_oldest_turns_go_and_the_file_stops_growing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.sqlite3"
    limit = 512 * 1024
    store = TraceStore(path, limits=TraceLimits(max_turn_bytes=64 * 1024, max_total_bytes=limit))
    sizes = []
    for n in range(300):  # ~6 MB of turns, each ~20 KB
        store.append(make_turn(f"trace-{n:03}", [user(f"{n} " + "x" * 20_000)]))
        sizes.append(path.stat().st_size + _wal_size(path))
    kept = [t.trace_id for t in store.list_traces(limit=500)]

    assert kept[0] == "trace-299"  # the newest are kept ...
    assert "trace-000" not in kept and len(kept) < 30  # ... the oldest are gone
    assert max(sizes[100:]) <= max(sizes[:100]) * 1.5  # and the file no longer grows
    store.close()
    assert path.stat().st_size < 4 * limit


def _wal_size(path: Path) -> int:
    wal = Path(str(path) + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_the_limits_can_be_set_by_environment_variables() -> None:
    env = {
        "MODELSTREAM_TRACES_MAX_TURN_BYTES": "5000",
        "MODELSTREAM_TRACES_MAX_TOTAL_BYTES": "none",
        "MODELSTREAM_TRACES_MAX_AGE_DAYS": "1.5",
    }

    assert TraceLimits.from_env(env) == TraceLimits(5000, None, 1.5)
    assert TraceLimits.from_env({}) == TraceLimits()


# --- through the server -------------------------------------------------------------------


def test_a_large_request_refused_upstream_adds_little_to_the_servers_trace_file(
    serve: Serve, emu: Emulator, tmp_path: Path
) -> None:
    path = tmp_path / "served.sqlite3"
    emu.queue(Reply.status(400, body={"error": {"message": "too long", "type": "invalid"}}))
    server = serve(traces=str(path), trace_limits={"max_turn_bytes": 100_000})
    with httpx.Client(base_url=server.url, timeout=30) as http:
        body = stream_body("chat", "many words " * 350_000)  # 3.8 MB, under max_body_bytes
        with http.stream("POST", "/v1/stream", json=body, headers=AUTH) as response:
            response.read()
    server.stop()

    assert len(emu.requests) == 1
    assert path.stat().st_size + _wal_size(path) < 400 * 1024
    (summary,) = TraceStore(path).list_traces()
    (turn,) = TraceStore(path).get_trace(summary.trace_id)
    assert turn.status == "failed" and turn.truncated["messages"]["bytes"] > 3_800_000


def test_each_key_writes_its_own_traces_and_cannot_add_to_anothers(
    serve: Serve, emu: Emulator, tmp_path: Path
) -> None:
    other_key = "msk-other-caller-90d1e3"
    os.environ["MODELSTREAM_TEST_OTHER_KEY"] = other_key
    try:
        path = tmp_path / "served.sqlite3"
        server = serve(traces=str(path), keys=["$" + CLIENT_KEY_ENV, "$MODELSTREAM_TEST_OTHER_KEY"])
        with httpx.Client(base_url=server.url) as http:
            post_stream(http, stream_body("chat", "mine", trace_id="shared-name"))
            post_stream(
                http,
                stream_body("chat", "theirs", trace_id="shared-name"),
                headers={"authorization": f"Bearer {other_key}"},
            )
        server.stop()
    finally:
        del os.environ["MODELSTREAM_TEST_OTHER_KEY"]

    store = TraceStore(path)
    mine = store.get_trace(f"{key_hash(CLIENT_KEY)}/shared-name")
    theirs = store.get_trace(f"{key_hash(other_key)}/shared-name")
    assert [t.messages[0]["content_items"][0] for t in mine] == [user("mine")["content_items"][0]]
    assert [t.messages[0]["content_items"][0] for t in theirs] == [
        user("theirs")["content_items"][0]
    ]
    assert store.get_trace("shared-name") == []
    stored = path.read_bytes()
    for key in (CLIENT_KEY, other_key, UPSTREAM_KEY):
        assert key.encode() not in stored


def test_the_server_reads_its_trace_limits_and_refuses_wrong_ones(emu: Emulator) -> None:
    env = {"MODELSTREAM_TEST_UPSTREAM_KEY": UPSTREAM_KEY, CLIENT_KEY_ENV: CLIENT_KEY}
    limits = {"max_turn_bytes": 50_000, "max_total_bytes": False, "max_age_days": 14}

    settings = settings_from_mapping(config_for(emu, trace_limits=limits), env)

    assert settings.trace_limits == TraceLimits(50_000, None, 14)
    assert settings_from_mapping(config_for(emu), env).trace_limits == TraceLimits()
    for wrong, named in (
        ({"max_turn_bytes": "big"}, "max_turn_bytes must be an integer"),
        ({"max_age_days": 0}, "max_age_days must be positive"),
        ({"max_rows": 5}, "unknown setting(s) 'max_rows'"),
    ):
        with pytest.raises(ServerConfigError, match=re.escape(named)):
            settings_from_mapping(config_for(emu, trace_limits=wrong), env)
