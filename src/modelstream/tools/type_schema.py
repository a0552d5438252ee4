"""The value every part of a tool's schema is built from: one type's JSON schema and the
converter back to that type, with what an `Annotated` hint adds to it."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ModelstreamError

NO_DEFAULT: Any = inspect.Parameter.empty


class ToolDefinitionError(ModelstreamError, TypeError):
    """A function cannot be described to a model as a tool (an unsupported type, a missing
    name); raised when the tool is made, before anything is sent."""


@dataclass(frozen=True)
class TypeSchema:
    """The JSON schema of one type, and how checked JSON becomes a value of that type."""

    schema: dict[str, Any]
    convert: Callable[[Any], Any]
    # the text an `Annotated` hint gives: it wins over the docstring's, which says less closely
    description: str | None = None
    # a default given in the hint (pydantic's `Field(default=...)`), for a value left out
    default: Any = NO_DEFAULT
    default_factory: Callable[[], Any] | None = None
    # the Python class a string-written value becomes (datetime, Decimal, ...): the class
    # decides which constraints apply, since JSON Schema cannot bound such strings
    python_type: type | None = None
