"""Deterministic synthetic response bodies in each provider's real wire format.

The benchmark needs long streams (tens of thousands of chunks) that no capture has, so each
builder here writes one, shaped field for field on a corpus capture (named in its docstring):
the same envelope, the same framing, the same JSON spacing. Words vary (a seeded RNG draws from
a vocabulary that includes quotes, newlines and non-ASCII), so the bodies exercise JSON string
escapes and are not one token repeated. The same (protocol, case, fragments) always gives the
same bytes.

Each protocol's builders live in `synthetic_streams/<package>.py` (the package's name in
`modelstream/protocols/`): `text(rng, pieces)`, `tool_call(rng, arguments, fragments)`, and the
wire's `WORDS_PER_CHUNK` (OpenAI streams about one token per chunk; Anthropic and Gemini send
phrases) and `ARGUMENT_CHARS_PER_FRAGMENT`. A protocol with such a module is benchmarked.

Cases:
  text       one text block in `fragments` text chunks, then the provider's finish.
  tool_call  one tool call whose arguments arrive in `fragments` pieces (raw JSON text pieces
             for OpenAI and Anthropic; Vertex `partialArgs` chunks for Gemini).
"""

from __future__ import annotations

import importlib
import itertools
import json
import random
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from modelstream.protocols import REGISTRY

CASES = ("text", "tool_call")
TOOL_NAME = "write_note"

_VOCABULARY = (
    "the quick brown fox jumps over lazy dog stream decoder event frame chunk token model "
    "provider response request argument function tool call result value field object array "
    "string number boolean null index delta usage finish reason stop length content part item "
    "message assistant user system prompt cache input output thinking signature block start "
    "done added completed created progress sequence buffer socket latency throughput memory "
    "parser grammar assembler accumulator snapshot partial final error retry timeout gateway "
    "router region server client header body line separator payload schema validation test "
    "corpus capture replay benchmark profile linear quadratic constant amortized allocation "
    "garbage collector dictionary list tuple slice join split encode decode bytes unicode "
    "naïve café résumé Zürich São Paulo Ångström 東京 données straße"
)
_WORDS = _VOCABULARY.split()
_PUNCTUATION = (".", ",", ";", ":", "!", "?", " —", " (see below)", "'s")
_SPECIAL = ('"quoted"', "`code`", "\\path\\to", "\n\n", "\n- ", "\t", "“curly”", "50%", "{braces}")


@dataclass(frozen=True)
class Body:
    """One synthetic response body and what a correct decoder must make of it."""

    protocol: str
    case: str
    fragments: int  # text chunks or argument fragments on the wire
    data: bytes
    text: str  # the joined text (text case), else ""
    arguments: dict[str, Any] | None  # the call's arguments object (tool_call case), else None
    finish_reason: str  # the stop event's finish_reason


def build(protocol: str, case: str, fragments: int) -> Body:
    """The body for one protocol, case and fragment count; identical bytes on every call."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}")
    if case not in CASES:
        raise ValueError(f"unknown case {case!r}")
    minimum = 5 if case == "tool_call" else 1
    if fragments < minimum:
        raise ValueError(f"{case} needs at least {minimum} fragments")
    rng = random.Random(zlib.crc32(f"{protocol}/{case}/{fragments}".encode()))
    stream = streams_of(protocol)
    if case == "text":
        pieces = text_pieces(rng, fragments, *stream.WORDS_PER_CHUNK)
        data = stream.text(rng, pieces)
        return Body(protocol, case, fragments, data, "".join(pieces), None, "stop")
    arguments = arguments_object(rng, fragments * stream.ARGUMENT_CHARS_PER_FRAGMENT)
    data = stream.tool_call(rng, arguments, fragments)
    return Body(protocol, case, fragments, data, "", arguments, "tool_call")


def streams_of(protocol: str) -> Any:
    """The protocol's module in `synthetic_streams/` (named like its package in the registry)."""
    return importlib.import_module(f"synthetic_streams.{_module_name(protocol)}")


def _module_name(protocol: str) -> str:
    return protocol.replace("-", "_")


_STREAMS = Path(__file__).resolve().parent / "synthetic_streams"
# The registry's protocols that have a synthetic stream module, in registry order.
PROTOCOLS = tuple(name for name in REGISTRY if (_STREAMS / f"{_module_name(name)}.py").exists())


# --- words -----------------------------------------------------------------------------------


def random_word(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.04:
        return rng.choice(_SPECIAL)
    if roll < 0.12:
        return rng.choice(_PUNCTUATION)
    if roll < 0.14:
        return f" {rng.randrange(1, 100_000)}"
    word = rng.choice(_WORDS)
    return " " + (word.capitalize() if rng.random() < 0.08 else word)


def text_pieces(rng: random.Random, count: int, low: int, high: int) -> list[str]:
    pieces = [
        "".join(random_word(rng) for _ in range(rng.randint(low, high))) for _ in range(count)
    ]
    pieces[0] = pieces[0].lstrip() or pieces[0]  # the answer starts without a space
    return pieces


def text_of_length(rng: random.Random, chars: int) -> str:
    parts: list[str] = []
    size = 0
    while size < chars:
        word = random_word(rng)
        parts.append(word)
        size += len(word)
    return "".join(parts).lstrip()


def arguments_object(rng: random.Random, chars: int) -> dict[str, Any]:
    slug = "-".join(rng.choice(_WORDS[:60]) for _ in range(3))
    return {
        "path": f"notes/{slug}.md",
        "content": text_of_length(rng, chars),
        "revision": rng.randrange(1, 50),
    }


def split(rng: random.Random, text: str, count: int) -> list[str]:
    """`text` cut at `count - 1` distinct random points: fragments of varying size."""
    cuts = sorted(rng.sample(range(1, len(text)), count - 1))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def ident(rng: random.Random, length: int) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(alphabet) for _ in range(length))


def hex_digits(rng: random.Random, length: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(length))


def compact(value: Any) -> bytes:
    return orjson.dumps(value)


def spaced(value: Any) -> bytes:
    """Gemini's spacing: `{"key": value,"key2": ...}` (corpus pydanticai-google-text)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ": ")).encode()
