"""`modelstream traces list`, run in process: the key filter and the key names column."""

from __future__ import annotations

import dataclasses

import orjson
import pytest

from modelstream.traces import TraceStore
from modelstream.traces.command import main
from support.traces import make_turn, user


def listed(capsys: pytest.CaptureFixture[str], *argv: str) -> list[list[str]]:
    assert main(["list", *argv]) == 0
    return [line.split("\t") for line in capsys.readouterr().out.splitlines()]


def test_traces_list_key_lists_the_traces_served_for_that_key_with_their_key_names(
    store: TraceStore, capsys: pytest.CaptureFixture[str]
) -> None:
    for trace_id, key_name, created_at in (
        ("key-aaaa/review", "alice", 1000),
        ("key-bbbb/nightly", "ci bot", 2000),
        ("static", None, 3000),
    ):
        turn = make_turn(trace_id, [user("hi")], created_at=created_at)
        store.append(dataclasses.replace(turn, source="server", key_name=key_name))
    db = str(store.path)

    assert [row[0] for row in listed(capsys, "--db", db, "--key", "alice")] == ["key-aaaa/review"]
    everything = listed(capsys, "--db", db)
    assert [(row[0], row[6]) for row in everything] == [  # the names come last, in a 7th column
        ("static", ""),
        ("key-bbbb/nightly", "ci bot"),
        ("key-aaaa/review", "alice"),
    ]
    assert main(["list", "--db", db, "--key", "ali"]) == 0  # a whole name, not a part
    assert capsys.readouterr().out == f"no traces in {db} match\n"
    assert main(["list", "--db", db, "--key", "ci bot", "--json"]) == 0
    document = orjson.loads(capsys.readouterr().out)
    assert [(t["trace_id"], t["key_names"]) for t in document["traces"]] == [
        ("key-bbbb/nightly", ["ci bot"])
    ]


def test_traces_list_of_traces_without_keys_keeps_its_six_columns(
    store: TraceStore, capsys: pytest.CaptureFixture[str]
) -> None:
    store.append(make_turn("library", [user("hi")]))

    [row] = listed(capsys, "--db", str(store.path))
    assert len(row) == 6 and row[0] == "library"
