"""Generate the blocking client and conversation from their async source, unasync-style.

`Client`/`EventStream` (client/sync_client.py) and `Conversation`
(conversation/sync_conversation.py) are the async code with the asyncio words taken out:
`async`/`await` dropped, async names renamed to their blocking twins (`RENAMES`), and the few places
where blocking code must differ rewritten (`REWRITES`, each with its reason). The output is
committed and formatted by ruff; tests/client/test_unasync.py regenerates it and fails on any
difference, and `.ci/run` runs `--check` as a step of its own, so the twins cannot drift. A
development tool, not part of the package: it needs the test extra's pinned ruff, whose formatting
the committed twins are in.

    .venv/bin/python scripts/generate_sync.py          # regenerate after editing async code
    .venv/bin/python scripts/generate_sync.py --check  # exit 1 when a generated file is stale

Written by hand because it is one table and a regex: the `unasync` package does the same
renaming but knows nothing of our rewrites.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the checkout; ruff reads its pyproject.toml
PACKAGE = ROOT / "src" / "modelstream"

# async name -> blocking name, whole words, in code, docstrings and comments alike
RENAMES = {
    "AsyncClient": "Client",  # ours and httpx's
    "AsyncEventStream": "EventStream",
    "AsyncConversation": "Conversation",
    "AsyncGenerator": "Generator",
    "AsyncIterator": "Iterator",
    "asynccontextmanager": "contextmanager",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "__aiter__": "__iter__",
    "__anext__": "__next__",
    "aiter_raw": "iter_raw",
    "aiter_bytes": "iter_bytes",
    "aclose": "close",
    "acall": "call",  # a FunctionTool's
    "async_transport": "sync_transport",  # client/transports.py
    "anext": "next",
    "from asyncio import timeout_at": "from .timeouts import timeout_at",
    "import asyncio": "import time",
    "asyncio.sleep": "time.sleep",
    "async with": "with",
    "async for": "for",
    "async def": "def",
    "await": "",
}


@dataclass(frozen=True)
class Rewrite:
    """Async text that becomes other blocking text (not a rename), and why."""

    async_text: str
    sync_text: str
    why: str


REWRITES = (
    Rewrite(
        """\
                    # the planned POST, or a resume, signed for this attempt; a signer that may
                    # fetch credentials (AWS chain, Google ADC) does it off the event loop
                    if call.signing_may_block:
                        req = await asyncio.to_thread(call.request, plan.request)
                    else:
                        req = call.request(plan.request)
""",
        """\
                    req = call.request(plan.request)  # the planned POST, or a resume, signed
""",
        "a blocking client may block while a signer fetches credentials: no loop to keep free",
    ),
    Rewrite(
        "Callable[[float], Awaitable[None]]",
        "Callable[[float], None]",
        "a blocking sleep returns nothing to await",
    ),
    Rewrite(
        """\
    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events  # the generator itself: `async for` skips a wrapper per event
""",
        """\
    def __iter__(self) -> Iterator[Event]:
        # A generator of its own, so that `break` (which drops it) closes the stream at once;
        # Python gives an async generator no such hook, so the async stream needs no wrapper.
        try:
            yield from self._events
        finally:
            self.close()
""",
        "`break` out of a `for` closes a sync stream at once",
    ),
)


@dataclass(frozen=True)
class Twin:
    """A generated file and its async source."""

    source: Path
    target: Path
    docstring: str  # the generated file's, in place of the async source's


TWINS = (
    Twin(
        PACKAGE / "client" / "async_client.py",
        PACKAGE / "client" / "sync_client.py",
        docstring='''"""`Client`: the blocking shell around `StreamCall`, the twin of `AsyncClient`.

GENERATED from async_client.py by `python scripts/generate_sync.py`; do not edit: edit the
async client and regenerate (tests/client/test_unasync.py fails while this file is stale).
"""''',
    ),
    Twin(
        PACKAGE / "conversation" / "async_conversation.py",
        PACKAGE / "conversation" / "sync_conversation.py",
        docstring='''"""`Conversation`: the conversation of a `Client`, twin of `AsyncConversation`.

GENERATED from async_conversation.py by `python scripts/generate_sync.py`; do not edit: edit the
async conversation and regenerate (tests/client/test_unasync.py fails while this file is stale).
"""''',
    ),
)

_WORDS = re.compile(
    "|".join(rf"\b{re.escape(name)}\b ?" for name in sorted(RENAMES, key=len, reverse=True))
)


def unasync(source: str) -> str:
    """The blocking twin of async `source`: rewrites first, then renames around them."""
    parts: list[str | Rewrite] = [source]
    for rewrite in REWRITES:
        if rewrite.async_text in source:
            parts = [piece for part in parts for piece in _split_keep(part, rewrite)]
    return "".join(part if isinstance(part, str) else part.sync_text for part in _renamed(parts))


def _split_keep(part: str | Rewrite, rewrite: Rewrite) -> list[str | Rewrite]:
    if not isinstance(part, str):
        return [part]
    pieces: list[str | Rewrite] = []
    for i, text in enumerate(part.split(rewrite.async_text)):
        if i:
            pieces.append(rewrite)
        pieces.append(text)
    return pieces


def _renamed(parts: list[str | Rewrite]) -> list[str | Rewrite]:
    return [_WORDS.sub(_rename, part) if isinstance(part, str) else part for part in parts]


def _rename(match: re.Match[str]) -> str:
    word = match.group(0)
    name = word.rstrip(" ")
    blocking = RENAMES[name]
    return blocking + word[len(name) :] if blocking else ""


def generate(twin: Twin) -> str:
    """What `twin.target` must hold."""
    text = twin.source.read_text()
    body = text[text.index('"""', 3) + 3 :]  # the async docstring goes
    return _ruff(twin.docstring + unasync(body), twin.target)


def _ruff(code: str, path: Path) -> str:
    """The project's ruff formatting and import order, so the twin is as a person would write it."""
    for command in (
        ["check", "--fix-only", "--exit-zero", "--select", "I,F401", "--quiet"],
        ["format", "--quiet"],
    ):
        code = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", str(path), "-"],
            input=code,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
    return code


def stale() -> list[Path]:
    """The generated files that differ from what their async source generates."""
    return [twin.target for twin in TWINS if generate(twin) != twin.target.read_text()]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        paths = stale()
        for path in paths:
            print(f"{path.relative_to(ROOT)} is stale: run python scripts/generate_sync.py")
        return 1 if paths else 0
    for twin in TWINS:
        twin.target.write_text(generate(twin))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
