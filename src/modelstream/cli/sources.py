"""Where `replay` reads a body from and which protocol decodes it: a file, stdin or a sample.

The protocol is `--protocol`, else the sidecar's (`BODY.json` holding `{"protocol": ...}`), else
the one recognized from the body's first bytes (`recognize.py`); `replay` says on stderr which
it recognized, so a wrong guess is seen and overridden.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..console.exit_status import UsageError
from ..protocols import PROTOCOLS
from .recognize import HEAD_BYTES, recognize

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

CHUNK_BYTES = 64 * 1024
DEFAULT_SAMPLE = "anthropic-tool-call"


@dataclass(frozen=True)
class ReplaySource:
    """A response body to replay and the protocol it speaks."""

    label: str
    protocol: str
    path: Path | Traversable | None  # None: standard input
    recognized: bool = False  # the protocol was read from the body, not given
    stdin_head: bytes = b""  # what was read from stdin to recognize it (replayed first)

    def chunks(self) -> Iterator[bytes]:
        """The body in chunks of at most `CHUNK_BYTES`, read as they are needed."""
        if self.path is None:
            if self.stdin_head:
                yield self.stdin_head
            yield from _read(sys.stdin.buffer)
            return
        with self.path.open("rb") as stream:
            yield from _read(stream)

    def head(self) -> bytes:
        """The first `HEAD_BYTES` of the body (for stdin: what has been read so far)."""
        if self.path is None:
            return self.stdin_head
        with self.path.open("rb") as stream:
            return stream.read(HEAD_BYTES)


def _read_head(stream: IO[bytes]) -> bytes:
    """Up to `HEAD_BYTES` of a stream: blocks on a live pipe until that much or its end."""
    parts: list[bytes] = []
    size = 0
    for chunk in _read(stream):
        parts.append(chunk)
        size += len(chunk)
        if size >= HEAD_BYTES:
            break
    return b"".join(parts)


def _read(stream: IO[bytes]) -> Iterator[bytes]:
    # read1 returns what is available, so a piped live stream is decoded as it arrives.
    read = getattr(stream, "read1", stream.read)
    while chunk := read(CHUNK_BYTES):
        yield chunk


def checked_protocol(protocol: str, where: str) -> str:
    if protocol not in PROTOCOLS:
        raise UsageError(
            f"unknown protocol {protocol!r} {where}; use one of: {', '.join(PROTOCOLS)}"
        )
    return protocol


def from_path(path_text: str, protocol: str | None) -> ReplaySource:
    """A body file (or `-` for stdin); the protocol comes from `protocol` or the sidecar."""
    if protocol is not None:
        checked_protocol(protocol, "given to --protocol")
    if path_text == "-":
        if protocol is not None:
            return ReplaySource("<stdin>", protocol, None)
        head = _read_head(sys.stdin.buffer)
        return ReplaySource("<stdin>", _recognized("<stdin>", head), None, True, head)
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path_text} (give the path of a recorded response body)")
    if protocol is not None:
        return ReplaySource(path.name, protocol, path)
    sidecar = path.with_suffix(".json")
    if path.name != sidecar.name and sidecar.is_file():
        return ReplaySource(path.name, _sidecar_protocol(sidecar), path)
    with path.open("rb") as stream:
        head = stream.read(HEAD_BYTES)
    return ReplaySource(path.name, _recognized(path.name, head), path, recognized=True)


def _recognized(label: str, head: bytes) -> str:
    protocol = recognize(head)
    if protocol is None:
        raise UsageError(
            f"cannot tell which protocol {label} speaks: pass --protocol ({', '.join(PROTOCOLS)})"
        )
    return protocol


def _sidecar_protocol(sidecar: Path | Traversable) -> str:
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"cannot read the sidecar {sidecar.name}: {exc}") from None
    protocol = data.get("protocol") if isinstance(data, dict) else None
    if not isinstance(protocol, str):
        raise UsageError(
            f'the sidecar {sidecar.name} has no "protocol" string; pass --protocol instead'
        )
    return checked_protocol(protocol, f"in the sidecar {sidecar.name}")


def _samples() -> Traversable:
    import importlib.resources  # only for a sample: a file's replay starts without it

    return importlib.resources.files("modelstream").joinpath("samples")


def sample_names() -> list[str]:
    """The samples shipped inside the package."""
    return sorted(entry.name[:-4] for entry in _samples().iterdir() if entry.name.endswith(".sse"))


def from_sample(name: str, protocol: str | None) -> ReplaySource:
    """A sample shipped inside the package, decoded with its sidecar's protocol by default."""
    body = _samples().joinpath(f"{name}.sse")
    if not body.is_file():
        raise UsageError(f"no sample named {name!r}; the samples are: {', '.join(sample_names())}")
    if protocol is None:
        protocol = _sidecar_protocol(_samples().joinpath(f"{name}.json"))
    else:
        checked_protocol(protocol, "given to --protocol")
    return ReplaySource(f"sample {name}", protocol, body)
