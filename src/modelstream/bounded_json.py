"""JSON (and TOML) from outside with its nesting bounded: a request body, a catalogue file,
an emulator script. orjson parses up to 1,024 levels, but what reads the result afterwards (a
deep copy, an encoder, a schema walk) recurses in Python and fails far earlier with a
`RecursionError`; one documented limit, checked once where the text is parsed, keeps that from
ever happening.
"""

from __future__ import annotations

import tomllib
from typing import Any

import orjson

MAX_DEPTH = 64  # docs/server.md "Limits and exposure": no real request or schema comes close


class JSONTooDeepError(ValueError):
    """A JSON document nests its objects and arrays deeper than the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the JSON nests objects and arrays more than {limit} levels deep, the limit; "
            "flatten it"
        )
        self.limit = limit


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` (parsed JSON) nests containers more than `limit` levels deep.

    Recursive, but never more than `limit` calls deep: it stops where the limit is passed.
    (An explicit stack measured seven times slower on a 5 MB body of 50,000 messages.)"""
    kind = type(value)
    return (kind is dict or kind is list) and (limit < 1 or _deeper(value, limit - 1))


def _deeper(node: Any, budget: int) -> bool:
    """Whether container `node` holds a container more than `budget` levels below it."""
    for child in node.values() if type(node) is dict else node:
        kind = type(child)
        if (kind is dict or kind is list) and (budget == 0 or _deeper(child, budget - 1)):
            return True
    return False


def loads(data: bytes | bytearray | memoryview | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """`orjson.loads`, then `JSONTooDeepError` if the document nests deeper than `max_depth`.

    orjson's own limit (1,024 levels) raises `orjson.JSONDecodeError`; it is reported as too
    deep as well, so the caller sees one error for one fault."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "depth" in str(exc):  # orjson: "depth limit exceeded"
            raise JSONTooDeepError(max_depth) from None
        raise
    if too_deep(value, max_depth):
        raise JSONTooDeepError(max_depth)
    return value


def loads_toml(text: str, *, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """`tomllib.loads`, then `JSONTooDeepError` past `max_depth`: tomllib recurses into nested
    arrays and inline tables (a `RecursionError` long before any limit of ours), while dotted
    table headers nest without recursing, so both are checked."""
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise JSONTooDeepError(max_depth) from None
    if too_deep(value, max_depth):
        raise JSONTooDeepError(max_depth)
    return value
