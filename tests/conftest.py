from __future__ import annotations

from collections.abc import Iterator

import pytest

# Before the first import of `support`: its modules' asserts then report as a test's do.
pytest.register_assert_rewrite("support")

from modelstream.testing import Emulator  # noqa: E402
from support import ReplayServer  # noqa: E402

# The fixtures the helper modules define, for the tests of every folder: `drive` (client),
# `serve` (server), `config_file` and `running` (server_process), `redis_url` and `prefix`
# (redis_server), `west` and `backup` (routing), `store` (traces).
pytest_plugins = [
    "support.client",
    "support.redis_server",
    "support.routing",
    "support.server",
    "support.server_process",
    "support.traces",
]


@pytest.fixture
def emu() -> Iterator[Emulator]:
    """A scripted provider on loopback (modelstream.testing), fresh for each test."""
    with Emulator() as emulator:
        yield emulator


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs with the blocking client and with the async one."""
    return str(request.param)


@pytest.fixture(scope="session")
def replay_server() -> Iterator[ReplayServer]:
    server = ReplayServer()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def traces_in_a_temporary_file(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test records a trace into the user's home: the default trace file is a temp path."""
    path = tmp_path_factory.getbasetemp() / "default-traces.sqlite3"
    monkeypatch.setenv("MODELSTREAM_TRACES", str(path))
