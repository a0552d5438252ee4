"""The blocking client and conversation are generated from the async ones
(`python scripts/generate_sync.py`): these tests fail whenever the committed twins drift from
what their async source generates, so a change made to one side only cannot land."""

from __future__ import annotations

import io
import subprocess
import sys
import tokenize
from pathlib import Path

from support import REPO

SCRIPTS = REPO / "scripts"
sys.path.insert(0, str(SCRIPTS))  # a development tool, not part of the package

import generate_sync  # noqa: E402
from generate_sync import REWRITES, TWINS, generate  # noqa: E402


def test_every_blocking_twin_is_exactly_what_its_async_source_generates() -> None:
    for twin in TWINS:
        assert generate(twin) == twin.target.read_text(), (
            f"{twin.target.name} is stale: run `python scripts/generate_sync.py` and commit it"
        )


def test_the_check_command_reports_nothing_stale() -> None:
    assert generate_sync.main(["--check"]) == 0
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "generate_sync.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (0, "")


def test_the_generator_is_not_shipped_in_the_package() -> None:
    import modelstream

    assert not (Path(modelstream.__file__).parent / "_unasync.py").exists()


def test_the_blocking_twins_use_no_async_keyword() -> None:
    for twin in TWINS:
        tokens = tokenize.generate_tokens(io.StringIO(twin.target.read_text()).readline)
        names = {token.string for token in tokens if token.type == tokenize.NAME}
        assert not names & {"async", "await", "asyncio", "anext", "aclose"}, twin.target.name


def test_each_rewrite_applies_to_exactly_one_place_in_the_async_sources() -> None:
    # a rewrite whose async text changed would silently stop applying
    sources = [twin.source.read_text() for twin in TWINS]
    for rewrite in REWRITES:
        assert sum(source.count(rewrite.async_text) for source in sources) == 1, rewrite.why
        assert sum(twin.target.read_text().count(rewrite.sync_text) for twin in TWINS) == 1


def test_the_blocking_twins_keep_the_names_and_signatures_of_their_async_sources() -> None:
    import inspect

    from modelstream import AsyncConversation, Conversation
    from modelstream.client import AsyncClient, AsyncEventStream, Client, EventStream

    renames = {"aclose": "close", "__aenter__": "__enter__", "__aexit__": "__exit__"}
    renames |= {"__aiter__": "__iter__", "__anext__": "__next__"}
    for async_class, sync_class in [
        (AsyncClient, Client),
        (AsyncEventStream, EventStream),
        (AsyncConversation, Conversation),
    ]:
        for name, member in vars(async_class).items():
            if not callable(member) or (name.startswith("__") and name not in renames):
                continue
            twin = getattr(sync_class, renames.get(name, name))
            assert list(inspect.signature(member).parameters) == list(
                inspect.signature(twin).parameters
            ), f"{sync_class.__name__}.{name}"
