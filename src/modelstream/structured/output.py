"""The type a final answer is asked to have (`response_format`), and reading the answer into it.

`response_format` may be a pydantic model, a dataclass, a TypedDict or a JSON schema dict (any
of OpenAI's wrappers too). A class is described with the tools' schema builder, so a field
means the same in a tool's parameters and in an answer, and is sent as a strict json_schema:
each protocol's encoder makes the schema acceptable to its provider (protocols/common/
schemas.py), possibly looser than the type. The answer is then checked here against the whole
schema and converted to the type, so what a provider could not enforce is enforced at the end.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import orjson

from ..errors import (
    StructuredOutputCutOffError,
    StructuredOutputError,
    StructuredOutputRefusedError,
    StructuredOutputStoppedError,
)
from ..tools.schema import SchemaBuilder, class_description
from ..tools.validation import SchemaMismatch, checked, without_nulls_for_optional

T = TypeVar("T")
M = TypeVar("M")

_NAME = re.compile(r"[^A-Za-z0-9_-]")
# a JSON answer wrapped in a Markdown fence, as models without native structured output write it
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


@dataclass(frozen=True)
class OutputType(Generic[T]):
    """What an answer must be: its JSON schema, the name it is sent under, and how checked JSON
    becomes a `T` (a model instance, a dataclass, a dict)."""

    name: str
    schema: dict[str, Any]
    convert: Callable[[Any], T]
    strict: bool = False  # built from a class: the schema says all the class allows
    description: str | None = None

    @property
    def response_format(self) -> dict[str, Any]:
        """The config's `response_format` as every encoder reads it (OpenAI Chat's wrapper)."""
        wrapper: dict[str, Any] = {"name": self.name, "schema": self.schema}
        if self.strict:
            wrapper["strict"] = True
        if self.description:
            wrapper["description"] = self.description
        return {"type": "json_schema", "json_schema": wrapper}

    def parse(self, text: str) -> T:
        """`text` (the answer) read, checked and converted; `StructuredOutputError` otherwise."""
        value = self.load(text)
        return self.check(value, text)

    def load(self, text: str) -> Any:
        """`text` as JSON (a Markdown fence around it is allowed)."""
        fenced = _FENCE.match(text)
        try:
            return orjson.loads(fenced.group(1) if fenced else text)
        except orjson.JSONDecodeError as exc:
            raise StructuredOutputError(
                f"the answer is not the JSON of a {self.name} ({exc})", text
            ) from None

    def check(self, value: Any, text: str) -> T:
        """`value` checked against the schema and converted to the type."""
        defs = self.schema.get("$defs")
        value = without_nulls_for_optional(value, self.schema, defs or {})
        what = f"the answer does not fit {self.name}"
        try:
            converted: T = checked(value, self.schema, self.convert, defs)
        except SchemaMismatch as mismatch:
            raise StructuredOutputError(what, text, mismatch.problems) from None
        except ValueError as exc:  # a pydantic validator, a dataclass's __post_init__
            errors = getattr(exc, "errors", None)
            found = (
                _pydantic_problems(errors()) if callable(errors) else [" ".join(str(exc).split())]
            )
            raise StructuredOutputError(what, text, found) from exc
        return converted


def output_type(response_format: Any) -> OutputType[Any] | None:
    """The `OutputType` a `response_format` asks for; None for plain text or JSON mode.
    A class it cannot describe raises `ToolDefinitionError`, naming the field."""
    if isinstance(response_format, type):
        return _of_class(response_format)
    if not isinstance(response_format, Mapping):
        return None
    kind = response_format.get("type")
    if kind in ("json_object", "text"):
        return None
    wrapper: Any = response_format
    if kind == "json_schema":
        wrapper = response_format.get("json_schema", response_format)
    if not isinstance(wrapper, Mapping):
        return None
    if isinstance(wrapper.get("schema"), dict):
        return OutputType(
            str(wrapper.get("name") or "response"),
            dict(wrapper["schema"]),
            _same,
            strict=bool(wrapper.get("strict")),
            description=wrapper.get("description"),
        )
    return OutputType("response", dict(wrapper), _same)


def is_output_class(value: Any) -> bool:
    """Whether `value` is a class `response_format` takes."""
    return isinstance(value, type) and (
        dataclasses.is_dataclass(value)
        or typing.is_typeddict(value)
        or callable(getattr(value, "model_json_schema", None))
    )


def config_with_output_type(config: Any) -> tuple[Any, OutputType[Any] | None]:
    """The config with a class in `response_format` replaced by its json_schema (the same
    object when there is none), and the type the answer is read into."""
    if not config or "response_format" not in config:
        return config, None
    found = output_type(config["response_format"])
    if found is None or not isinstance(config["response_format"], type):
        return config, found
    return {**config, "response_format": found.response_format}, found


def parsed_answer(output: OutputType[T], message: Any, raw_reason: str | None = None) -> T:
    """The final `message`'s answer as a `T`: a refusal, a cut-off answer, one the provider
    stopped (`raw_reason` its word for why) and a text that does not fit each raise their
    `StructuredOutputError` (carrying the message)."""
    texts = [item for item in message["content_items"] if item["type"] == "text.done"]
    refusals = [item for item in texts if (item.get("fidelity") or {}).get("refusal")]
    text = "".join(item["text"] for item in texts if item not in refusals)
    if refusals:  # an empty refusal is one too (Anthropic's `refusal` stop reason has no text)
        refusal = "".join(item["text"] for item in refusals)
        raise StructuredOutputRefusedError(
            f"the model refused to answer as a {output.name}" + (f": {refusal}" if refusal else ""),
            refusal or text,
            message=message,
        )
    if message.get("finish_reason") == "length":
        raise StructuredOutputCutOffError(
            f"the answer reached the output limit (max_tokens) before its {output.name} was "
            "whole; raise max_tokens",
            text,
            message=message,
        )
    if message.get("finish_reason") == "unknown":
        because = f" ({raw_reason})" if raw_reason else ""
        raise StructuredOutputStoppedError(
            f"the provider stopped the answer{because} before its {output.name} was given; "
            "it is not read as one",
            text,
            raw_reason,
            message=message,
        )
    try:
        return output.parse(text)
    except StructuredOutputError as exc:
        exc.message = message
        raise


def parsed_message(output: OutputType[Any] | None, message: M, raw_reason: str | None = None) -> M:
    """`message` with its answer read into `output` (`message.parsed`), once; unchanged when
    the turn asked for no type. Raises the answer's `StructuredOutputError`."""
    if output is not None and getattr(message, "_parsed", None) is None:
        parsed = parsed_answer(output, message, raw_reason)
        message._parsed = parsed  # type: ignore[attr-defined]
    return message


def _of_class(cls: type) -> OutputType[Any]:
    builder = SchemaBuilder(cls.__name__)
    found = builder.for_type(cls, f"response_format {cls.__name__}")
    schema = dict(found.schema)
    defs = {**builder.defs, **schema.pop("$defs", {})}
    if defs:
        schema["$defs"] = defs
    return OutputType(
        _NAME.sub("_", cls.__name__)[:64] or "response",
        schema,
        found.convert,
        strict=True,
        description=class_description(cls),
    )


def _pydantic_problems(errors: list[dict[str, Any]]) -> list[str]:
    out = []
    for error in errors:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.get("loc", ()))
        out.append(f"{where.lstrip('.') or 'the answer'}: {error.get('msg', 'invalid')}")
    return out


def _same(value: Any) -> Any:
    return value
