"""The emulated endpoints, read from the protocol and platform registries: which protocol a
request path is, and what the emulator reads from a request to answer it by default."""

from __future__ import annotations

import importlib
import re
from functools import cache
from typing import Any
from urllib.parse import unquote

from ..errors import ConfigurationError
from ..framing import Framing
from ..platforms import REGISTRY as PLATFORMS
from ..protocols import REGISTRY
from .emulation import EmbeddingEmulator, StreamEmulator

DEFAULT_DIMENSIONS = 8


@cache
def _paths() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each protocol's own paths, then the cloud platforms' paths for the protocols they serve."""
    own = [
        (path, name)
        for name, protocol in REGISTRY.items()
        if protocol.emulation is not None
        for path in protocol.emulation.paths
    ]
    on_platforms = [
        (path, name)
        for unit in PLATFORMS.values()
        for name, paths in unit.emulated_paths.items()
        for path in paths
    ]
    return tuple((re.compile(path), name) for path, name in [*own, *on_platforms])


def emulated_protocols(*, embedding: bool | None = None) -> tuple[str, ...]:
    """The protocols the emulator serves (only the embedding ones, or only the streaming ones)."""
    return tuple(
        name
        for name, protocol in REGISTRY.items()
        if protocol.emulation is not None and embedding in (None, protocol.embedding)
    )


@cache
def emulator_for(protocol: str) -> StreamEmulator | EmbeddingEmulator:
    """The protocol's `EMULATOR` (its package's emulator module, imported on first use)."""
    descriptor = REGISTRY.get(protocol)
    if descriptor is None or descriptor.emulation is None:
        raise ConfigurationError(
            f"unknown protocol {protocol!r}; choose one of: {', '.join(emulated_protocols())}"
        )
    emulator: StreamEmulator | EmbeddingEmulator = importlib.import_module(
        descriptor.emulation.module
    ).EMULATOR
    return emulator


def base_path(client_type: str) -> str:
    """What a client's base URL adds to the emulator's URL (`/v1` for the OpenAI family)."""
    descriptor = REGISTRY.get(client_type)
    if descriptor is None or descriptor.emulation is None:
        raise ConfigurationError(
            f"unknown client type {client_type!r}; choose one of: {', '.join(emulated_protocols())}"
        )
    return descriptor.emulation.base_path


def protocol_for(path: str) -> str | None:
    """The protocol served at `path` (no query string), or None when nothing is there."""
    return next((name for pattern, name in _paths() if pattern.fullmatch(path)), None)


def model_for(path: str, body: Any) -> str | None:
    """The model the request names: in the path (Gemini, Bedrock), else in the body."""
    for pattern, _ in _paths():
        match = pattern.fullmatch(path)
        if match and "model" in pattern.groupindex:
            return unquote(match["model"])
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        return str(body["model"])
    return None


def wants_usage(protocol: str, body: Any) -> bool:
    """Whether the answer reports usage (Chat Completions: only when the request asks)."""
    emulator = emulator_for(protocol)
    if not isinstance(emulator, StreamEmulator):
        return True
    return emulator.wants_usage(body if isinstance(body, dict) else {})


def last_user_text(protocol: str, body: Any) -> str:
    """The text of the last user message (or tool result) of a request, "" when none."""
    emulator = emulator_for(protocol)
    if not isinstance(body, dict) or not isinstance(emulator, StreamEmulator):
        return ""
    return emulator.last_user_text(body)


def embedding_inputs(protocol: str, path: str, body: Any) -> list[str]:
    """The texts to embed, one per vector to answer with."""
    emulator = emulator_for(protocol)
    if not isinstance(body, dict) or not isinstance(emulator, EmbeddingEmulator):
        return []
    return emulator.inputs(path, body)


def embedding_dimensions(
    protocol: str, path: str, body: Any, default: int = DEFAULT_DIMENSIONS
) -> int:
    """The vector size asked for (`dimensions`, `outputDimensionality`), else `default`."""
    emulator = emulator_for(protocol)
    if not isinstance(body, dict) or not isinstance(emulator, EmbeddingEmulator):
        return default
    asked = emulator.dimensions(path, body)
    return default if asked is None else asked


def framing(protocol: str) -> Framing:
    """How the protocol's bodies are cut into frames (`framing.SSE`, `JSON_BODY`, ...)."""
    return REGISTRY[protocol].framing


def content_type(protocol: str) -> str:
    """The content type of a protocol's successful answer."""
    emulator = emulator_for(protocol)
    if isinstance(emulator, StreamEmulator):
        return emulator.content_type
    return "application/json"


def error_headers(protocol: str | None, status: int) -> dict[str, str]:
    """The headers an HTTP error of the protocol carries besides its body."""
    emulator = emulator_for(protocol) if protocol is not None else None
    if isinstance(emulator, StreamEmulator) and emulator.error_headers is not None:
        return emulator.error_headers(status)
    return {}


def malformed_frame(protocol: str) -> bytes | None:
    """The broken frame `malformed_frame_at` inserts (None: a broken SSE frame)."""
    emulator = emulator_for(protocol)
    return emulator.malformed_frame if isinstance(emulator, StreamEmulator) else None
