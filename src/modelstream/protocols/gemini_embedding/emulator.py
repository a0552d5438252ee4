"""The emulator's Gemini embeddings: `embedContent` answers one vector, `batchEmbedContents`
a list."""

from __future__ import annotations

import json
from typing import Any

from ...testing.emulation import EmbeddingEmulator, dimensions_within, parts_text
from ...testing.turns import Embedding
from ...types import Usage
from ..gemini_generate_content.emulator import gemini_error_body

_BATCH = ":batchEmbedContents"


def _write(embeddings: list[Embedding], model: str, usage: Usage, batch: bool | None) -> bytes:
    """`batch` None: a batch unless the turn has exactly one vector."""
    batch = len(embeddings) != 1 if batch is None else batch
    vectors = [{"values": list(item.values)} for item in embeddings]
    body: dict[str, Any] = {"embeddings": vectors} if batch else {"embedding": vectors[0]}
    return json.dumps(body, indent=2).encode() + b"\n"


def _inputs(path: str, body: dict[str, Any]) -> list[str]:
    if path.endswith(_BATCH):
        requests = body.get("requests")
        if not isinstance(requests, list):
            return []
        return [parts_text(r.get("content")) for r in requests if isinstance(r, dict)]
    return [parts_text(body.get("content"))]


def _dimensions(path: str, body: dict[str, Any]) -> int | None:
    if path.endswith(_BATCH):
        requests = body.get("requests")
        first = requests[0] if isinstance(requests, list) and requests else {}
        return dimensions_within(
            first.get("outputDimensionality") if isinstance(first, dict) else None
        )
    return dimensions_within(body.get("outputDimensionality"))


EMULATOR = EmbeddingEmulator(
    write=_write,
    error_body=gemini_error_body,
    inputs=_inputs,
    dimensions=_dimensions,
)
