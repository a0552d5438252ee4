"""Where `replay` reads a body from and which protocol decodes it: a file, stdin or a sample."""

from __future__ import annotations

import importlib.resources
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import IO

from ..protocols import PROTOCOLS

CHUNK_BYTES = 64 * 1024
DEFAULT_SAMPLE = "anthropic-tool-call"


class UsageError(Exception):
    """Bad usage: the message says what to do; the command exits with status 2."""


@dataclass(frozen=True)
class ReplaySource:
    """A response body to replay and the protocol it speaks."""

    label: str
    protocol: str
    path: Path | Traversable | None  # None: standard input

    def chunks(self) -> Iterator[bytes]:
        """The body in chunks of at most `CHUNK_BYTES`, read as they are needed."""
        if self.path is None:
            yield from _read(sys.stdin.buffer)
            return
        with self.path.open("rb") as stream:
            yield from _read(stream)


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
        if protocol is None:
            raise UsageError("reading the body from stdin needs --protocol")
        return ReplaySource("<stdin>", protocol, None)
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path_text} (give the path of a recorded response body)")
    if protocol is None:
        protocol = _sidecar_protocol(path, path.with_suffix(".json"))
    return ReplaySource(path.name, protocol, path)


def _sidecar_protocol(body: Path | Traversable, sidecar: Path | Traversable) -> str:
    if body.name == sidecar.name or not sidecar.is_file():
        raise UsageError(
            f"no protocol for {body.name}: pass --protocol ({', '.join(PROTOCOLS)}) or put "
            f'{{"protocol": ...}} in a sidecar file {sidecar.name} beside it'
        )
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
        protocol = _sidecar_protocol(body, _samples().joinpath(f"{name}.json"))
    else:
        checked_protocol(protocol, "given to --protocol")
    return ReplaySource(f"sample {name}", protocol, body)
