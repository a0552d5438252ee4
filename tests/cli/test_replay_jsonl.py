"""What `replay --format jsonl` (and `chat --json`) write, made cheaper by issue 18 item 15:
`jsonwire.dumps_lines` writes a batch of events as JSON lines in one buffer, each line exactly
`jsonwire.dumps` of its value (the SPEC key order restored where a value was built in another,
bytes as base64), and a JSON-lines replay starts without Rich, which only the pretty format
needs."""

from __future__ import annotations

import re
import subprocess
from typing import Any

from modelstream import jsonwire
from modelstream.assembler import delta_event
from modelstream.jsonwire import dumps, dumps_lines
from support import REPO
from support.cli import command, environment

SAMPLE = REPO / "src/modelstream/samples/anthropic-tool-call.sse"

USAGE = {"cached_tokens": 0, "prompt_tokens": 12, "thoughts_tokens": None, "response_tokens": 4}


def stop_event(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "event_type": "stop",
        "content_items": [],
        "usage_metadata": usage,
        "finish_reason": "stop",
        "created_at": 7,
    }


def lines_of(values: list[Any]) -> bytes:
    return b"".join(dumps(value) + b"\n" for value in values)


def test_events_in_spec_order_are_written_one_per_line() -> None:
    events: list[Any] = [delta_event({"type": "text.delta", "text": f"word {n}"}, 7) for n in "abc"]
    events.append(stop_event(USAGE))

    written = dumps_lines(events)

    assert written == lines_of(events)
    assert written.count(b"\n") == 4 and written.endswith(b"\n")


def test_an_event_built_in_another_key_order_is_written_in_spec_order() -> None:
    event = delta_event({"type": "text.delta", "text": "Hi"}, 7)
    shuffled = {key: event[key] for key in reversed(list(event))}  # type: ignore[literal-required]

    assert dumps_lines([shuffled]) == dumps(event) + b"\n"
    assert dumps_lines([shuffled]).startswith(b'{"role":"assistant","event_type":"delta"')


def test_a_usage_built_in_another_key_order_is_written_in_spec_order() -> None:
    shuffled = {key: USAGE[key] for key in reversed(list(USAGE))}

    written = dumps_lines([stop_event(shuffled)])

    assert written == dumps(stop_event(USAGE)) + b"\n"


def test_an_event_with_an_extra_key_keeps_it_after_the_spec_keys() -> None:
    event: dict[str, Any] = {"note": "x", **delta_event({"type": "text.delta", "text": "a"}, 7)}

    assert dumps_lines([event]) == lines_of([event])


def test_bytes_are_written_as_base64_as_dumps_writes_them() -> None:
    item = {"type": "inline_data.delta", "mime_type": "image/png", "data": b"\x89PNG\r\n"}
    events = [delta_event(item, 7)]

    assert dumps_lines(events) == lines_of(events)
    assert b'"data":"iVBORw0K"' in dumps_lines(events)


def test_values_that_are_not_events_are_written_as_dumps_writes_them() -> None:
    values: list[Any] = [jsonwire.error_object(ValueError("boom")), [1, 2], "text", None]

    assert dumps_lines(values) == lines_of(values)


def test_no_events_write_nothing() -> None:
    assert dumps_lines([]) == b""


def imported_modules(*args: str) -> set[str]:
    """Every module the command imported, from `python -X importtime`."""
    done = subprocess.run(
        [command()[0], "-X", "importtime", *command(*args)[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
    )
    assert done.returncode == 0, done.stderr[-500:]
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)", done.stderr, re.M))


def test_a_jsonl_replay_starts_without_rich_and_the_pretty_one_with_it() -> None:
    jsonl = imported_modules("replay", str(SAMPLE), "--format", "jsonl")
    pretty = imported_modules("replay", str(SAMPLE))

    assert "modelstream.cli.render" in jsonl
    assert not {m for m in jsonl if m.split(".")[0] in ("rich", "json_repair")}
    assert "rich.console" in pretty
