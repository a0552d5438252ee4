"""Checking a tool call's arguments against the JSON schema of its tool, before the call.

Written by hand, for the subset of JSON Schema that `tools/schema.py` emits (and pydantic's
`model_json_schema` adds: `$ref`/`$defs`, `allOf`/`oneOf`, string, number, array and object
bounds, `multipleOf`). The
`jsonschema` package would pull a compiled dependency (rpds-py) into the core install, and
`fastjsonschema` compiles code with `exec` and knows no draft 2020-12 (`prefixItems`); neither
lists every problem in one message worded for the model, which is what a tool error is for.
Keywords outside the subset (`format`, `title`, ...) are annotations here: they never fail.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import orjson

_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    # JSON has one number type: 3.0 is an integer too (orjson reads it as a float)
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def schema_errors(
    value: Any, schema: Any, defs: Mapping[str, Any] | None = None, path: str = ""
) -> list[str]:
    """Every way `value` breaks `schema`, each as "where: what" (empty when it conforms).

    `defs` are the `$defs` that `#/$defs/...` references point into."""
    return _Checker(defs or {}).errors(value, schema, path)


class ArgumentProblem(ValueError):
    """A value that fits the schema but not its type: a string that is no date, a bound JSON
    Schema cannot state. Found while converting; `path` grows as it passes out through the
    arrays and objects holding the value, so the message names where it is."""

    def __init__(self, what: str, path: str = "") -> None:
        self.what = what
        self.path = path
        super().__init__(self.text)

    @property
    def text(self) -> str:
        """The problem as "where: what", like each of `schema_errors`."""
        return f"{_where(self.path)}: {self.what}"

    def within(self, step: str) -> ArgumentProblem:
        """The same problem, seen from the value holding this one under `step` (a name or
        `[index]`)."""
        if not self.path:
            return ArgumentProblem(self.what, step)
        joined = self.path if self.path.startswith("[") else f".{self.path}"
        return ArgumentProblem(self.what, step + joined)


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPE_CHECKS[name](value):
            return name
    return type(value).__name__


def preview(value: Any, limit: int = 60) -> str:
    """A short JSON rendering of a value, for messages."""
    try:
        text = orjson.dumps(value, default=repr).decode()
    except TypeError:  # an integer past 64 bits, which orjson does not write
        import json

        text = json.dumps(value, default=repr, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Checker:
    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs

    def errors(self, value: Any, schema: Any, path: str) -> list[str]:
        if schema is True or not isinstance(schema, Mapping):
            return []
        if schema is False:
            return [f"{_where(path)}: not allowed"]
        found: list[str] = []
        if "$ref" in schema:
            found += self.errors(value, self._resolve(schema["$ref"]), path)
        for combiner, check in (
            ("allOf", self._all_of),
            ("anyOf", self._any_of),
            ("oneOf", self._one_of),
        ):
            if combiner in schema:
                found += check(value, schema[combiner], path)
        if "type" in schema and not self._has_type(value, schema["type"]):
            found.append(f"{_where(path)}: expected {type_words(schema['type'])}, {_got(value)}")
            return found  # the other keywords would only restate it
        if "enum" in schema and not any(_same(value, choice) for choice in schema["enum"]):
            choices = ", ".join(preview(choice) for choice in schema["enum"])
            found.append(f"{_where(path)}: {preview(value)} is not one of {choices}")
        if "const" in schema and not _same(value, schema["const"]):
            found.append(f"{_where(path)}: must be {preview(schema['const'])}")
        if isinstance(value, str):
            found += _string_errors(value, schema, path)
        elif _TYPE_CHECKS["number"](value):
            found += _number_errors(value, schema, path)
        elif isinstance(value, list):
            found += self._array_errors(value, schema, path)
        elif isinstance(value, dict):
            found += self._object_errors(value, schema, path)
        return found

    def _resolve(self, ref: Any) -> Any:
        for prefix in ("#/$defs/", "#/definitions/"):
            if isinstance(ref, str) and ref.startswith(prefix):
                return self.defs.get(ref[len(prefix) :], True)
        return True  # a reference this subset does not follow checks nothing

    @staticmethod
    def _has_type(value: Any, expected: Any) -> bool:
        names = expected if isinstance(expected, list) else [expected]
        return any(_TYPE_CHECKS.get(name, lambda _: True)(value) for name in names)

    def _all_of(self, value: Any, schemas: list[Any], path: str) -> list[str]:
        return [error for schema in schemas for error in self.errors(value, schema, path)]

    def _any_of(self, value: Any, schemas: list[Any], path: str) -> list[str]:
        results = [self.errors(value, schema, path) for schema in schemas]
        if any(not errors for errors in results):
            return []
        # the arms whose type the value has say best what is wrong inside it
        typed = [
            errors
            for schema, errors in zip(schemas, results, strict=True)
            if self._type_fits(value, schema)
        ]
        if len(typed) == 1:
            return typed[0]
        return [f"{_where(path)}: expected {self._describe_arms(schemas)}, {_got(value)}"]

    def _one_of(self, value: Any, schemas: list[Any], path: str) -> list[str]:
        matches = sum(not self.errors(value, schema, path) for schema in schemas)
        if matches == 1:
            return []
        if matches == 0:
            return self._any_of(value, schemas, path)
        return [f"{_where(path)}: {preview(value)} fits more than one of its allowed forms"]

    def _type_fits(self, value: Any, schema: Any) -> bool:
        if isinstance(schema, Mapping) and "$ref" in schema:
            schema = self._resolve(schema["$ref"])
        if not isinstance(schema, Mapping) or "type" not in schema:
            return True
        return self._has_type(value, schema["type"])

    def _describe_arms(self, schemas: list[Any]) -> str:
        names: list[str] = []
        for schema in schemas:
            text = self._describe(schema)
            if text not in names:
                names.append(text)
        return " or ".join(names)

    def _describe(self, schema: Any) -> str:
        if isinstance(schema, Mapping) and "$ref" in schema:
            schema = self._resolve(schema["$ref"])
        if not isinstance(schema, Mapping):
            return "a value"
        if "enum" in schema:
            return " or ".join(preview(choice) for choice in schema["enum"])
        if "const" in schema:
            return preview(schema["const"])
        return type_words(schema["type"]) if "type" in schema else "a value"

    def _array_errors(self, value: list[Any], schema: Mapping[str, Any], path: str) -> list[str]:
        found: list[str] = []
        if "minItems" in schema and len(value) < schema["minItems"]:
            found.append(f"{_where(path)}: needs at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            found.append(f"{_where(path)}: takes at most {schema['maxItems']} items")
        prefix = schema.get("prefixItems", [])
        for index, item in enumerate(value):
            item_schema = prefix[index] if index < len(prefix) else schema.get("items", True)
            found += self.errors(item, item_schema, f"{path}[{index}]")
        return found

    def _object_errors(
        self, value: dict[str, Any], schema: Mapping[str, Any], path: str
    ) -> list[str]:
        found: list[str] = []
        properties: Mapping[str, Any] = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                found.append(f"{_where(_join(path, name))}: missing (it is required)")
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in properties:
                found += self.errors(item, properties[name], _join(path, name))
            elif extra is False:
                known = ", ".join(properties) or "none"
                found.append(
                    f"{_where(_join(path, name))}: unexpected (the known names are: {known})"
                )
            else:
                found += self.errors(item, extra, _join(path, name))
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            found.append(f"{_where(path)}: needs at least {schema['minProperties']} entries")
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            found.append(f"{_where(path)}: takes at most {schema['maxProperties']} entries")
        return found


def _string_errors(value: str, schema: Mapping[str, Any], path: str) -> list[str]:
    found: list[str] = []
    if "minLength" in schema and len(value) < schema["minLength"]:
        found.append(f"{_where(path)}: needs at least {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        found.append(f"{_where(path)}: takes at most {schema['maxLength']} characters")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        found.append(f"{_where(path)}: {preview(value)} does not match {schema['pattern']!r}")
    return found


def _number_errors(value: float, schema: Mapping[str, Any], path: str) -> list[str]:
    bounds: tuple[tuple[str, Callable[[Any, Any], bool], str], ...] = (
        ("minimum", operator.ge, "at least"),
        ("maximum", operator.le, "at most"),
        ("exclusiveMinimum", operator.gt, "more than"),
        ("exclusiveMaximum", operator.lt, "less than"),
    )
    found = [
        f"{_where(path)}: must be {words} {schema[keyword]}, not {preview(value)}"
        for keyword, holds, words in bounds
        if keyword in schema and not holds(value, schema[keyword])
    ]
    if "multipleOf" in schema and not is_multiple(value, schema["multipleOf"]):
        found.append(
            f"{_where(path)}: must be a multiple of {schema['multipleOf']}, not {preview(value)}"
        )
    return found


def is_multiple(value: Any, step: Any) -> bool:
    """Whether `value` is a whole number of `step`s, in decimal as the numbers are written
    (in binary floating point 0.3 is not a multiple of 0.1)."""
    if isinstance(value, int) and isinstance(step, int):
        return step != 0 and value % step == 0
    try:
        return Decimal(str(value)) % Decimal(str(step)) == 0
    except ArithmeticError:  # a step of 0, or a quotient past Decimal's precision
        return False


def _same(value: Any, choice: Any) -> bool:
    """JSON equality: `true` is not `1`, while `1` is `1.0`."""
    return isinstance(value, bool) == isinstance(choice, bool) and bool(value == choice)


def type_words(expected: Any) -> str:
    """JSON type names as a message says them: "a string or null"."""
    names = expected if isinstance(expected, list) else [expected]
    return " or ".join(_ARTICLES.get(name, str(name)) for name in names)


_ARTICLES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
    "array": "an array",
    "object": "an object",
}


def _got(value: Any) -> str:
    return f"got {json_type(value)} {preview(value)}"


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _where(path: str) -> str:
    return f"`{path}`" if path else "the arguments"


def without_nulls_for_optional(value: Any, schema: Any, defs: Mapping[str, Any]) -> Any:
    """`value` without the nulls a strict provider writes for the optional fields it had to
    require (an optional field becomes a required nullable one there: protocols/common/
    schemas.py), where the schema does not allow null: the field is left out instead, as the
    type means."""
    if not isinstance(schema, Mapping):
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return without_nulls_for_optional(value, defs.get(ref[len("#/$defs/") :]), defs)
    if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        properties, required = schema["properties"], set(schema.get("required") or ())
        out = {}
        for key, item in value.items():
            inner = properties.get(key)
            if item is None and key not in required and not _allows_null(inner, defs):
                continue
            out[key] = without_nulls_for_optional(item, inner, defs)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [without_nulls_for_optional(item, schema["items"], defs) for item in value]
    for key in ("anyOf", "oneOf"):
        arms = schema.get(key)
        if isinstance(arms, list):
            for arm in arms:
                fitted = without_nulls_for_optional(value, arm, defs)
                if not schema_errors(fitted, arm, defs):
                    return fitted
    return value


def _allows_null(schema: Any, defs: Mapping[str, Any]) -> bool:
    if not isinstance(schema, Mapping):
        return True
    return not schema_errors(None, schema, defs)


class SchemaMismatch(Exception):
    """A value does not fit its schema or its type; `problems` are each "where: what"."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def checked(
    value: Any,
    schema: Mapping[str, Any],
    convert: Callable[[Any], Any],
    defs: Mapping[str, Any] | None = None,
) -> Any:
    """`value` checked against `schema`, then converted to its type by `convert`: what a tool's
    arguments and a structured answer both go through. Raises `SchemaMismatch` listing what does
    not fit; a `ValueError` of `convert` itself (a pydantic validator, a dataclass's
    `__post_init__`) is raised as it is, for the caller to word."""
    problems = schema_errors(value, schema, defs)
    if problems:
        raise SchemaMismatch(problems)
    try:
        return convert(value)
    except ArgumentProblem as problem:  # a date that is no date, a bound on a Decimal
        raise SchemaMismatch([problem.text]) from None
