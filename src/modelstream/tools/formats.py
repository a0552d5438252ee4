"""Python values that JSON writes as strings: dates and times, UUIDs, decimals and paths.

Each is described as a string with its `format` (the names JSON Schema and the providers'
structured outputs know) and converted back after the check, so the function receives a
`datetime`, not its text. A string that does not parse is an `ArgumentProblem` the model reads,
naming the form to write, never an exception from inside the call.
"""

from __future__ import annotations

import datetime
import decimal
import pathlib
import uuid
from collections.abc import Callable
from typing import Any

from .type_schema import TypeSchema
from .validation import ArgumentProblem, preview

# A decimal is offered as a string first: a JSON number is read as a binary float on the way
# (by orjson here, by most SDKs and gateways in between), so "0.1" or a 20-digit amount would
# lose digits before it became a Decimal. A number is still accepted: models sometimes write
# one, and its shortest float text (repr) is the number it wrote when it has up to 15 digits.
DECIMAL_PATTERN = r"^-?\d+(\.\d+)?$"


def _parser(parse: Callable[[str], Any], what: str, example: str) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        try:
            return parse(value)
        except ValueError:
            raise ArgumentProblem(
                f"{preview(value)} is not {what}: write it like {example}"
            ) from None

    return convert


def _utc_z(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` that also takes a trailing `Z` or `z` for UTC, as JSON and most models write it
    (Python 3.11's `fromisoformat` takes only the upper-case one)."""

    def read(text: str) -> Any:
        return parse(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)

    return read


def _decimal(value: Any) -> decimal.Decimal:
    # the schema let through a string of digits, an integer or a float
    return decimal.Decimal(value if isinstance(value, str | int) else repr(value))


FORMATS: dict[type, TypeSchema] = {
    datetime.datetime: TypeSchema(
        {"type": "string", "format": "date-time"},
        _parser(
            _utc_z(datetime.datetime.fromisoformat),
            "a date-time",
            '"2025-01-31T09:30:00Z" (ISO 8601)',
        ),
        python_type=datetime.datetime,
    ),
    datetime.date: TypeSchema(
        {"type": "string", "format": "date"},
        _parser(datetime.date.fromisoformat, "a date", '"2025-01-31" (ISO 8601)'),
        python_type=datetime.date,
    ),
    datetime.time: TypeSchema(
        {"type": "string", "format": "time"},
        _parser(_utc_z(datetime.time.fromisoformat), "a time", '"09:30:00" (ISO 8601)'),
        python_type=datetime.time,
    ),
    uuid.UUID: TypeSchema(
        {"type": "string", "format": "uuid"},
        _parser(uuid.UUID, "a UUID", '"123e4567-e89b-12d3-a456-426614174000"'),
        python_type=uuid.UUID,
    ),
    decimal.Decimal: TypeSchema(
        {"anyOf": [{"type": "string", "pattern": DECIMAL_PATTERN}, {"type": "number"}]},
        _decimal,
        python_type=decimal.Decimal,
    ),
    pathlib.Path: TypeSchema(
        {"type": "string", "description": "a file system path"},
        pathlib.Path,
        python_type=pathlib.Path,
    ),
}
"""The schema of each class written as a string, keyed by the exact class."""
