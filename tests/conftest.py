from __future__ import annotations

from collections.abc import Iterator

import pytest

from modelstream.testing import Emulator
from support import ReplayServer


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
