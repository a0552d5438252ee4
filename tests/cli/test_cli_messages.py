"""What the `modelstream` commands say, in their users' terms (issue 20 item 8): an unknown model
names the command line's flags (a server config's, its keys), counts agree with their nouns
("1 turn", "2 turns"), and every command that serves pages says the same one line when the
`server` extra is not installed. Run as real subprocesses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from modelstream.testing import Emulator
from modelstream.traces import TraceStore
from support import REPO
from support.cli import KEY, KEY_VAR, command, environment
from support.traces import make_turn, user

UNKNOWN_MODEL = "my-local-model"
CHAT_FLAGS = ("--client-type", "--base-url", "--api-key-env")
PYTHON_KEYWORDS = ("client_type=", "base_url=", "api_key=")


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args), capture_output=True, text=True, timeout=60, env=environment(**env)
    )


# --- an unknown model ----------------------------------------------------------------------


def test_chat_with_an_unknown_model_names_the_flags_that_route_it() -> None:
    result = run("chat", "-m", UNKNOWN_MODEL, "Hello")

    assert result.returncode == 2
    line = result.stderr.strip()
    assert line.startswith(f"modelstream chat: error: unknown model {UNKNOWN_MODEL!r}")
    assert all(flag in line for flag in CHAT_FLAGS)
    assert not any(keyword in line for keyword in PYTHON_KEYWORDS)


def test_chat_with_an_unknown_model_and_its_server_names_the_flag_still_missing(
    emu: Emulator,
) -> None:
    result = run(
        "chat",
        "-m",
        UNKNOWN_MODEL,
        "--base-url",
        emu.base_url("openai-chat"),
        "--api-key-env",
        KEY_VAR,
        "Hello",
        **{KEY_VAR: KEY},
    )

    assert result.returncode == 2
    line = result.stderr.strip()
    assert "--client-type" in line
    assert not any(keyword in line for keyword in PYTHON_KEYWORDS)
    assert emu.requests == []


@pytest.mark.parametrize("command_name", ["serve", "playground"])
def test_a_server_config_with_an_unknown_model_names_the_keys_of_its_entry(
    tmp_path: Path, command_name: str
) -> None:
    config = tmp_path / "server.toml"
    config.write_text(f'[[models]]\nserver_model_id = "local"\nmodel = "{UNKNOWN_MODEL}"\n')

    result = run(command_name, "--config", str(config), "--port", "0")

    assert result.returncode == 2
    line = result.stderr.strip()
    assert line.startswith(f"modelstream {command_name}: error: {config}: models[0]")
    assert all(key in line for key in ("client_type", "base_url", "api_key"))
    assert not any(flag in line for flag in CHAT_FLAGS)  # a config has no flags


# --- counts and their nouns ----------------------------------------------------------------


def test_traces_list_says_1_turn_and_2_turns(store: TraceStore) -> None:
    store.append(make_turn("solo", [user("hi")]))
    store.append(make_turn("pair", [user("hi")]))
    store.append(make_turn("pair", [user("hi"), user("again")]))
    store.close()

    result = run("traces", "list", "--db", str(store.path))

    assert result.returncode == 0, result.stderr
    turns = dict(line.split("\t")[:2] for line in result.stdout.splitlines())
    assert turns == {"solo": "1 turn", "pair": "2 turns"}


def test_check_says_1_event_and_n_events(tmp_path: Path) -> None:
    events = tmp_path / "turn.jsonl"
    replayed = run("replay", "--sample", "--format", "jsonl")
    events.write_text(replayed.stdout)
    stop = tmp_path / "stop.jsonl"
    stop.write_text(replayed.stdout.splitlines()[-1] + "\n")

    many = run("check", str(events))
    one = run("check", str(stop))

    assert many.stdout.startswith(f"ok: {len(replayed.stdout.splitlines())} events, ")
    assert one.stdout.startswith("ok: 1 event, finish reason ")


def test_a_replay_that_lost_one_frame_says_1_frame(tmp_path: Path) -> None:
    sample = REPO / "src/modelstream/samples/anthropic-tool-call.sse"
    frames = sample.read_bytes().split(b"\n\n")
    broken = next(i for i, frame in enumerate(frames) if b"input_json_delta" in frame)
    frames[broken] = frames[broken].replace(b"{", b"", 1)  # its data is no longer JSON
    body = tmp_path / "lost-one.sse"
    body.write_bytes(b"\n\n".join(frames))

    result = run(
        "replay",
        str(body),
        "--protocol",
        "anthropic-messages",
        "--lenient-frames",
        "--lenient-tool-arguments",
    )

    assert result.returncode == 0, result.stderr
    assert "warning: 1 frame of the stream was lost" in result.stderr
    assert "1 frame skipped: content may be missing" in result.stdout


# --- without the server extra --------------------------------------------------------------

# Runs the command as if Starlette were not installed: its import fails as a missing package's
WITHOUT_STARLETTE = """
import sys


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "starlette":
            raise ModuleNotFoundError(f"No module named {name!r}", name="starlette")
        return None


sys.meta_path.insert(0, NotInstalled())
from modelstream.cli.main import main

sys.exit(main())
"""


@pytest.mark.parametrize("command_name", ["serve", "playground", "traces serve"])
def test_a_command_that_serves_pages_without_the_server_extra_says_one_line(
    tmp_path: Path, command_name: str
) -> None:
    config = tmp_path / "server.toml"
    config.write_text(
        '[[models]]\nserver_model_id = "chat"\nmodel = "gpt-5-mini"\n'
        f'base_url = "http://127.0.0.1:9/v1"\napi_key = "${KEY_VAR}"\n'
    )
    trace_file = tmp_path / "traces.sqlite3"
    args = {
        "serve": ["serve", "--config", str(config), "--port", "0"],
        "playground": ["playground", "--config", str(config), "--port", "0", "--open"],
        "traces serve": ["traces", "serve", "--db", str(trace_file), "--create", "--port", "0"],
    }[command_name]

    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_STARLETTE, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(**{KEY_VAR: KEY}),
    )

    assert result.returncode == 2
    assert result.stderr == (
        f"modelstream {command_name}: error: the {command_name} command needs the 'server' "
        "extra (starlette is missing): pip install 'modelstream[server]'\n"
    )
    assert not trace_file.exists()  # nothing was made for a viewer that cannot run
