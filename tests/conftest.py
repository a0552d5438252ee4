from __future__ import annotations

from collections.abc import Iterator

import pytest

from support import ReplayServer


@pytest.fixture(scope="session")
def replay_server() -> Iterator[ReplayServer]:
    server = ReplayServer()
    yield server
    server.close()
