"""The `modelstream` command run as a real subprocess: its command line (`command`), an
environment without the machine's provider keys (`environment`), the arguments of a `chat` with
the loopback emulator (`chat_args`), a run with bytes on stdin (`run_cli`), `emulate --script`
and `models`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from modelstream.client import CLIENT_TYPE_ROUTES, ROUTES
from modelstream.protocols import REGISTRY
from modelstream.testing import Emulator
from modelstream.testing.render import STREAM_PROTOCOLS

KEY_VAR = "MODELSTREAM_TEST_CHAT_KEY"
KEY = "test-key-for-chat"
# Every variable the client reads a key or base URL from: unset in the subprocesses, so a key
# on the machine running the tests can neither be used nor leak.
PROVIDER_VARS = {
    name
    for route in [*(route for _, route in ROUTES), *CLIENT_TYPE_ROUTES.values()]
    for name in (*route.key_envs, route.base_url_env)
}
# client type → a model name (the chat tests pass `--client-type` too)
MODELS = {name: REGISTRY[name].example_model or "emulated-model" for name in STREAM_PROTOCOLS}


def environment(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in PROVIDER_VARS
        and k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS")
    }
    env.update(extra)
    return env


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "modelstream.cli.main", *args]


def chat_args(emu: Emulator, client_type: str, *extra: str, prompt: str = "Hello?") -> list[str]:
    return [
        "chat",
        "-m",
        MODELS[client_type],
        prompt,
        "--client-type",
        client_type,
        "--base-url",
        emu.base_url(client_type),
        "--api-key-env",
        KEY_VAR,
        *extra,
    ]


def run_cli(*args: str, stdin: bytes | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`modelstream ARGS` fed `stdin`, in this process's environment plus `env` (less the
    terminal's settings), with its output decoded."""
    environment = {
        k: v
        for k, v in os.environ.items()
        if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS")
    }
    environment.update(env)
    result = subprocess.run(
        [sys.executable, "-m", "modelstream.cli.main", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env=environment,
    )
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )


def emulate_script(script: Path) -> subprocess.CompletedProcess[str]:
    """`modelstream emulate --script SCRIPT` run to its end (a script it refuses)."""
    return subprocess.run(
        command("emulate", "--script", str(script)),
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
    )


def run_models(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "MODELSTREAM_MODELS"}
    return subprocess.run(
        [sys.executable, "-m", "modelstream", "models", *args],
        capture_output=True,
        text=True,
        env={**environment, **env},
        timeout=60,
    )
