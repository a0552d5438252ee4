"""The command line as a newcomer meets it, run as real subprocesses: the prompt as plain words,
replay recognizing a body's protocol (and saying when a body is not the protocol asked for),
examples at the end of every `--help`, `traces list --json` and a missing trace file, and a
start-up that imports only what the command needs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from modelstream.protocols import REGISTRY
from modelstream.testing import Emulator, Reply, Turn
from modelstream.traces import TraceStore
from support import REPO, require_corpus
from support.cli import KEY, KEY_VAR, chat_args, command, environment
from support.traces import make_turn, user


def run(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(**env),
    )


# --- chat: the prompt as words ----------------------------------------------------------


def test_chat_takes_the_prompt_as_the_remaining_words(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("Rayleigh scattering.")))
    args = chat_args(emu, "openai-chat", prompt="Why")
    at = args.index("Why")
    args[at + 1 : at + 1] = ["is", "the", "sky", "blue"]  # unquoted words, options after them

    result = run(*args, **{KEY_VAR: KEY})

    assert result.returncode == 0, result.stderr
    assert "Rayleigh scattering." in result.stdout
    (request,) = emu.requests
    assert request.json["messages"][-1]["content"] == "Why is the sky blue"


def test_chat_reads_the_prompt_from_stdin_when_no_words_are_given(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("ok")))
    args = chat_args(emu, "anthropic-messages", prompt="PLACEHOLDER")
    args.remove("PLACEHOLDER")

    result = run(*args, stdin="a prompt\nfrom a pipe", **{KEY_VAR: KEY})

    assert result.returncode == 0, result.stderr
    (request,) = emu.requests
    assert request.json["messages"][-1]["content"][0]["text"] == "a prompt\nfrom a pipe"


def test_chat_with_an_empty_prompt_says_what_to_give() -> None:
    result = run("chat", "-m", "claude-sonnet-4-5", stdin="  \n")
    assert result.returncode == 2
    assert result.stderr.strip() == "modelstream chat: error: the prompt is empty"


# --- replay: which protocol a body speaks ------------------------------------------------


def corpus_bodies() -> list[Path]:
    corpus = require_corpus()
    return sorted(p for p in corpus.glob("*/*") if p.suffix in (".sse", ".bin"))


def test_replay_recognizes_every_corpus_protocol_from_the_body_and_says_so(
    tmp_path: Path,
) -> None:
    """A body copied away from its sidecar: the protocol is read from the body itself, and
    stderr says which. One capture per protocol, with events in it."""
    corpus = require_corpus()
    for protocol in sorted(p.name for p in corpus.iterdir() if p.name in REGISTRY):
        body = max(
            (p for p in (corpus / protocol).iterdir() if p.suffix in (".sse", ".bin")),
            key=lambda p: p.stat().st_size,
        )
        copy = tmp_path / f"body-{protocol}{body.suffix}"
        shutil.copyfile(body, copy)

        result = run("replay", str(copy), "--format", "jsonl")

        assert result.returncode in (0, 1), result.stderr
        assert result.stderr.splitlines()[0] == (
            f"modelstream replay: {copy.name} looks like {protocol} "
            "(pass --protocol to choose another)"
        )
        assert result.stdout.strip(), protocol


def test_the_recognizer_names_the_sidecars_protocol_for_every_capture_with_events() -> None:
    """No table of signatures: the protocols' own decoders, read over the whole corpus. A
    capture holding only an error every protocol could carry is left unrecognized (None)."""
    from modelstream.cli.recognize import HEAD_BYTES, recognize

    wrong = {}
    unrecognized = []
    for body in corpus_bodies():
        found = recognize(body.read_bytes()[:HEAD_BYTES])
        if found is None:
            unrecognized.append(body.name)
        elif found != body.parent.name:
            wrong[body.name] = found
    assert wrong == {}
    assert len(unrecognized) <= 3, unrecognized  # error-only bodies (see the corpus README)


def test_stdin_without_a_protocol_is_recognized_too() -> None:
    body = require_corpus() / "openai-chat"
    capture = max(body.glob("*.sse"), key=lambda p: p.stat().st_size)
    piped = subprocess.run(
        command("replay", "-", "--format", "jsonl"),
        input=capture.read_bytes(),
        capture_output=True,
        timeout=60,
        env=environment(),
    )
    assert piped.returncode in (0, 1)
    assert b"<stdin> looks like openai-chat" in piped.stderr
    given = run("replay", str(capture), "--protocol", "openai-chat", "--format", "jsonl")

    def events(jsonl: str) -> list[dict[str, object]]:
        return [
            {k: v for k, v in json.loads(line).items() if k != "created_at"}
            for line in jsonl.splitlines()
        ]

    assert events(piped.stdout.decode()) == events(given.stdout) != []


def test_a_body_of_another_protocol_says_which_it_looks_like() -> None:
    capture = max(
        (require_corpus() / "anthropic-messages").glob("*.sse"), key=lambda p: p.stat().st_size
    )
    result = run("replay", str(capture), "--protocol", "openai-chat")

    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == (
        f"modelstream replay: error: {capture.name}: no openai-chat frames found "
        "(this looks like anthropic-messages): pass --protocol anthropic-messages"
    )


@pytest.mark.parametrize("protocol", ["anthropic-messages", "bedrock-converse-stream"])
def test_a_file_that_is_not_an_event_stream_says_so(tmp_path: Path, protocol: str) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Dear diary,\ntoday I decoded a stream and it was lovely.\n")
    framing = {"sse": "an SSE event stream", "eventstream": "an AWS event stream"}

    result = run("replay", str(notes), "--protocol", protocol)

    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"modelstream replay: error: notes.txt: no {protocol} frames found (this is not "
        f"{framing[REGISTRY[protocol].framing.name]}: it starts with "
        "'Dear diary,\\ntoday I decoded a stream and')"
    )


def test_a_body_of_the_right_protocol_that_breaks_off_is_still_a_failed_stream(
    tmp_path: Path,
) -> None:
    """Frames of the protocol asked for were found: the stream failed, it is not bad usage."""
    sample = REPO / "src/modelstream/samples/anthropic-tool-call.sse"
    cut = tmp_path / "cut.sse"
    cut.write_bytes(sample.read_bytes()[:900])
    result = run("replay", str(cut), "--protocol", "anthropic-messages")
    assert result.returncode == 1
    assert "frames found" not in result.stderr + result.stdout


# --- --help ends with examples ------------------------------------------------------------

COMMAND_LINES = [
    [],
    ["replay"],
    ["check"],
    ["chat"],
    ["demo"],
    ["emulate"],
    ["serve"],
    ["traces"],
    ["traces", "serve"],
    ["traces", "list"],
]


@pytest.mark.parametrize("words", COMMAND_LINES, ids=lambda w: " ".join(w) or "modelstream")
def test_every_help_page_ends_with_two_or_three_examples(words: list[str]) -> None:
    result = run(*words, "--help")

    assert result.returncode == 0, result.stderr
    page = result.stdout.rstrip().split("\n\nexamples:\n")
    assert len(page) == 2, result.stdout
    examples = page[1].splitlines()
    assert 2 <= len(examples) <= 3
    for example in examples:
        assert "modelstream " + " ".join(words) in example.strip() or not words


# --- start-up imports only what the command needs ----------------------------------------


def imported_modules(*args: str, stdin: bytes | None = None) -> set[str]:
    """Every module the command imported, from `python -X importtime`."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "modelstream.cli.main", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env=environment(),
    )
    found = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)", result.stderr.decode(), re.M)
    assert found, result.stderr[-500:]
    return {name.strip() for name in found}


HEAVY = ("httpx", "starlette", "uvicorn", "rich", "redis", "anyio", "asyncio")


def heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in HEAVY}


def test_version_imports_neither_the_client_nor_rich_nor_the_server() -> None:
    modules = imported_modules("--version")

    assert heavy(modules) == set()
    assert "modelstream.client" not in modules and "modelstream.protocols" not in modules
    assert len([m for m in modules if m.startswith("modelstream")]) <= 8, sorted(modules)


def test_replay_and_check_import_no_http_client_and_no_server(tmp_path: Path) -> None:
    sample = REPO / "src/modelstream/samples/anthropic-tool-call.sse"
    events = tmp_path / "events.jsonl"
    events.write_bytes(run("replay", str(sample), "--format", "jsonl").stdout.encode())

    replay = imported_modules("replay", str(sample))
    check = imported_modules("check", str(events))

    assert heavy(replay) <= {m for m in replay if m.split(".")[0] == "rich"}  # pretty output
    assert "modelstream.client" not in replay
    assert heavy(check) == set() and "modelstream.protocols" not in check


# --- traces list --------------------------------------------------------------------------


def test_traces_list_json_gives_the_listing_as_the_viewer_api_does(tmp_path: Path) -> None:
    db = tmp_path / "traces.sqlite3"
    store = TraceStore(db)
    store.append(make_turn("known", [user("a")], created_at=1000, tokens=(0, 10, 0, 5)))
    store.append(make_turn("unknown", [user("b")], created_at=2000, status="failed", tokens=None))
    store.close()

    result = run("traces", "list", "--db", str(db), "--json")

    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    assert listing["db"] == str(db)
    assert [(t["trace_id"], t["total_tokens"]) for t in listing["traces"]] == [
        ("unknown", None),  # unknown, not 0
        ("known", 15),
    ]
    text = run("traces", "list", "--db", str(db)).stdout.splitlines()
    assert [line.split("\t")[3] for line in text] == ["usage unknown", "15 tokens"]


@pytest.mark.parametrize("subcommand", ["list", "serve"])
def test_a_missing_trace_file_is_an_error_unless_created_on_purpose(
    tmp_path: Path, subcommand: str
) -> None:
    db = tmp_path / "typo.sqlite3"

    port = ["--port", "0"] if subcommand == "serve" else []

    result = run("traces", subcommand, "--db", str(db), *port)

    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"modelstream traces: no trace file at {db} (given with --db); check the path, or pass "
        "--create to start an empty one"
    )
    assert not db.exists()


def test_create_starts_an_empty_trace_file(tmp_path: Path) -> None:
    db = tmp_path / "new" / "traces.sqlite3"
    result = run("traces", "list", "--db", str(db), "--create", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["traces"] == []
    assert db.is_file()
    assert run("traces", "list", "--db", str(db)).stdout.startswith("no traces in")


def test_the_default_trace_file_missing_says_how_the_path_was_chosen(tmp_path: Path) -> None:
    result = run("traces", "list", XDG_DATA_HOME=str(tmp_path), MODELSTREAM_TRACES="")
    assert result.returncode == 2
    assert "the default; --db or $MODELSTREAM_TRACES name another" in result.stderr


def test_the_command_list_read_without_importing_the_commands_matches_their_own_help() -> None:
    """`modelstream --help` lists the commands from `COMMANDS` alone; each command's module
    says its help again when it builds its parser: the two must not drift apart."""
    from modelstream.cli.main import build_parser

    assert build_parser(only="").format_help() == build_parser().format_help()
