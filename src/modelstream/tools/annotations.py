"""What an `Annotated` hint adds to its type's schema: a description (a string, a `Doc`,
pydantic's `Field(description=...)`), a title and examples, a default, and constraints
(`Field(ge=0, max_length=5, pattern=...)`, annotated_types' `Ge(0)`, `Len(1, 3)`,
`Predicate(...)`).

A constraint is written as its JSON Schema keyword, so the model is told, and enforced before
the call: the keyword by the schema check, a bound JSON Schema cannot state (on a Decimal, a
date, a time) or a predicate by a check on the converted value. pydantic and annotated_types
are never imported here: their objects are recognised through the modules the hint holding
them has already imported. Other libraries' markers (a CLI's option, a web framework's
dependency) are left alone; an object of pydantic's or annotated_types' not understood here is
refused, since ignoring it would let a value that breaks it reach the function.
"""

from __future__ import annotations

import datetime
import decimal
import operator
import re
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from .type_schema import NO_DEFAULT, ToolDefinitionError, TypeSchema
from .validation import ArgumentProblem, is_multiple, json_type, preview, type_words

Check = Callable[[Any], str | None]
"""A check of a converted value: what is wrong with it, or None."""

_BOUNDS: dict[str, tuple[str, Callable[[Any, Any], bool], str]] = {
    "ge": ("minimum", operator.ge, "at least"),
    "gt": ("exclusiveMinimum", operator.gt, "more than"),
    "le": ("maximum", operator.le, "at most"),
    "lt": ("exclusiveMaximum", operator.lt, "less than"),
}
_NUMBERS = {"integer", "number"}
_LENGTHS: dict[str, dict[str, str]] = {
    "min_length": {"string": "minLength", "array": "minItems", "object": "minProperties"},
    "max_length": {"string": "maxLength", "array": "maxItems", "object": "maxProperties"},
}
# annotated_types' constraints understood here: each class and its one field (`Not`,
# `Timezone`, `Unit` and any added later are refused)
_ANNOTATED_TYPES = {
    "Gt": "gt",
    "Ge": "ge",
    "Lt": "lt",
    "Le": "le",
    "MultipleOf": "multiple_of",
    "MinLen": "min_length",
    "MaxLen": "max_length",
    "Predicate": "func",
}
# pydantic's own markers: how it coerces, which a schema check followed by a conversion
# already settles (strict, no NaN in JSON, one error at a time)
_PYDANTIC_MODES = {"Strict", "AllowInfNan", "FailFast"}
_PYDANTIC_MODE_KEYS = {
    "strict",
    "allow_inf_nan",
    "union_mode",
    "coerce_numbers_to_str",
    "fail_fast",
}
_PYDANTIC_CHECK_KEYS = {"pattern", "max_digits", "decimal_places"}


@dataclass
class _Reading:
    """The metadata of one `Annotated` hint, gathered in order."""

    where: str
    descriptions: list[str] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)  # title, examples, ...
    constraints: list[tuple[str, Any]] = field(default_factory=list)
    default: Any = NO_DEFAULT
    default_factory: Callable[[], Any] | None = None


def annotate(found: TypeSchema, metadata: Sequence[Any], where: str) -> TypeSchema:
    """`found` (the schema of `Annotated`'s type) with what the metadata adds; `where` names
    the hint in errors ("parameter 'x' of tool 'f'")."""
    reading = _Reading(where)
    for item in metadata:
        _read(item, reading)
    schema = dict(found.schema)
    checks: list[Check] = []
    for name, value in reading.constraints:
        schema, more = _constrain(found, schema, name, value, where)
        checks += more
    schema.update(reading.notes)
    description = " ".join(reading.descriptions) or found.description
    if description:
        schema["description"] = description
    return TypeSchema(
        schema,
        _checked(found.convert, checks) if checks else found.convert,
        description,
        reading.default if reading.default is not NO_DEFAULT else found.default,
        reading.default_factory or found.default_factory,
        found.python_type,
    )


def _read(item: Any, reading: _Reading) -> None:
    library = type(item).__module__.partition(".")[0]
    if item is None:  # pydantic's con* types leave Nones among their metadata
        pass
    elif isinstance(item, str):
        reading.descriptions.append(item)
    elif type(item).__name__ in ("Doc", "DocInfo") and isinstance(
        getattr(item, "documentation", None), str
    ):
        reading.descriptions.append(item.documentation)
    elif _is_field_info(item):
        _read_field_info(item, reading)
    elif getattr(item, "__is_annotated_types_grouped_metadata__", False) is True:
        for part in item:  # Interval, Len, pydantic's StringConstraints
            _read(part, reading)
    elif library == "annotated_types":
        name = _ANNOTATED_TYPES.get(type(item).__name__)
        if name is None:
            raise _not_understood(item, reading.where)
        value = getattr(item, name)
        reading.constraints.append(("predicate" if name == "func" else name, value))
    elif library == "pydantic" and type(item).__name__ == "_PydanticGeneralMetadata":
        _read_pydantic_options(item, reading)
    elif library == "pydantic" and type(item).__name__ not in _PYDANTIC_MODES:
        raise _not_understood(item, reading.where)


def _read_field_info(info: Any, reading: _Reading) -> None:
    """pydantic's `Field(...)`: its constraints are annotated_types objects in `metadata`."""
    for alias in ("alias", "validation_alias"):
        if getattr(info, alias, None) is not None:
            raise ToolDefinitionError(
                f"{reading.where}: Field({alias}=...) would give the argument another name, "
                "which a tool here does not do; name the parameter as the model should write it"
            )
    if info.description:
        reading.descriptions.append(info.description)
    for key in ("title", "examples"):
        if getattr(info, key, None) is not None:
            reading.notes[key] = getattr(info, key)
    if getattr(info, "deprecated", None):
        reading.notes["deprecated"] = True
    extra = info.json_schema_extra
    if callable(extra):
        raise ToolDefinitionError(
            f"{reading.where}: Field(json_schema_extra=...) is a function; give the keywords "
            "to add to the schema as a dict"
        )
    reading.notes.update(extra or {})
    if not info.is_required():
        if info.default_factory is not None:
            reading.default_factory = info.default_factory
        else:
            reading.default = info.default
    for item in info.metadata:
        _read(item, reading)


def _read_pydantic_options(item: Any, reading: _Reading) -> None:
    for key, value in vars(item).items():
        if value is None or key in _PYDANTIC_MODE_KEYS:
            continue
        if key in _PYDANTIC_CHECK_KEYS:
            reading.constraints.append((key, value))
        elif value is not False:
            raise ToolDefinitionError(
                f"{reading.where}: {key}={value!r} would change the value before the call, "
                "which a tool here does not do; change it in the function instead"
            )


def _constrain(
    found: TypeSchema, schema: dict[str, Any], name: str, value: Any, where: str
) -> tuple[dict[str, Any], list[Check]]:
    """`schema` with the constraint's keyword, and the checks of the converted value it needs
    beyond that."""
    kinds = _kinds(found.schema)
    python = found.python_type
    spelled = f"{name}={value!r}" if name != "predicate" else f"Predicate({_name_of(value)})"
    if name in _BOUNDS or name == "multiple_of":
        keyword = "multipleOf" if name == "multiple_of" else _BOUNDS[name][0]
        number = _json_number(value)
        if python in (datetime.datetime, datetime.date, datetime.time) and name != "multiple_of":
            if type(value) is not python:
                raise ToolDefinitionError(
                    f"{where}: {spelled} cannot bound a {python.__name__}: give a "
                    f"{python.__name__} as the bound"
                )
            return schema, [_bound_check(name, value)]
        if python is decimal.Decimal and number is not None:
            # a float bound as written: Decimal("0.1") is less than the binary float 0.1
            exact = decimal.Decimal(repr(value)) if isinstance(value, float) else value
            return _write(schema, _NUMBERS, keyword, number), [_bound_check(name, exact)]
        if kinds & {"integer", "number", "any"} and number is not None:
            return _write(schema, _NUMBERS, keyword, number), []
        raise ToolDefinitionError(
            f"{where}: {spelled} bounds a number, a Decimal, a date or a time, not "
            f"{_kind_words(kinds, python)}; put the Annotated on the part it bounds"
        )
    if name in _LENGTHS:
        if not kinds & {*_LENGTHS[name], "any"} or not _is_count(value):
            raise ToolDefinitionError(
                f"{where}: {spelled} measures a string, a list or a dict, not "
                f"{_kind_words(kinds, python)}"
            )
        for kind, keyword in _LENGTHS[name].items():
            schema = _write(schema, {kind}, keyword, value)
        return schema, []
    if name == "pattern":
        pattern = value.pattern if isinstance(value, re.Pattern) else value
        if not kinds & {"string", "any"} or not isinstance(pattern, str):
            raise ToolDefinitionError(
                f"{where}: {spelled} matches a string, not {_kind_words(kinds, python)}"
            )
        return _write(schema, {"string"}, "pattern", pattern), []
    if name in ("max_digits", "decimal_places"):
        if python is not decimal.Decimal or not _is_count(value):
            raise ToolDefinitionError(f"{where}: {spelled} counts the digits of a Decimal only")
        return schema, [_digits_check(name, value)]
    return schema, [_predicate_check(value)]  # "predicate"


def _write(schema: dict[str, Any], kinds: set[str], keyword: str, value: Any) -> dict[str, Any]:
    """`schema` with `keyword` set where a value of one of `kinds` is described: in each arm of
    a union that can take one (`Annotated[int | None, Field(ge=0)]` bounds the integer arm)."""
    if "anyOf" in schema:
        arms = [_write(arm, kinds, keyword, value) for arm in schema["anyOf"]]
        return {**schema, "anyOf": arms}
    own = _kinds(schema)
    if own & kinds or "any" in own:
        return {**schema, keyword: value}
    return schema


def _bound_check(name: str, bound: Any) -> Check:
    if name == "multiple_of":

        def multiple(value: Any) -> str | None:
            if is_multiple(value, bound):
                return None
            return f"must be a multiple of {_show(bound)}, not {_show(value)}"

        return multiple
    _, holds, words = _BOUNDS[name]

    def within(value: Any) -> str | None:
        try:
            if holds(value, bound):
                return None
        except TypeError:  # a datetime with a time zone and one without do not compare
            pass
        return f"must be {words} {_show(bound)}, not {_show(value)}"

    return within


def _digits_check(name: str, limit: int) -> Check:
    def digits(value: decimal.Decimal) -> str | None:
        # as pydantic counts them: zeros after the last digit after the point do not count
        _, numbers, exponent = value.normalize().as_tuple()
        places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        if name == "decimal_places":
            found, what = places, "decimal places"
        else:
            whole = len(numbers) + (exponent if isinstance(exponent, int) and exponent > 0 else 0)
            found, what = max(whole, places), "digits"
        return None if found <= limit else f"must have at most {limit} {what}, not {_show(value)}"

    return digits


def _predicate_check(predicate: Callable[[Any], Any]) -> Check:
    def passes(value: Any) -> str | None:
        try:
            if predicate(value):
                return None
        except Exception:  # a predicate that cannot judge a value does not pass it
            pass
        return f"{_show(value)} does not pass the check {_name_of(predicate)}"

    return passes


def _checked(convert: Callable[[Any], Any], checks: list[Check]) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        converted = convert(value)
        for check in checks:
            problem = check(converted)
            if problem:
                raise ArgumentProblem(problem)
        return converted

    return run


def _kinds(schema: dict[str, Any]) -> set[str]:
    """The JSON types a schema's values can have; "any" where it does not say."""
    if "anyOf" in schema:
        return set().union(*(_kinds(arm) for arm in schema["anyOf"]))
    if "type" in schema:
        kind = schema["type"]
        return set(kind) if isinstance(kind, list) else {kind}
    if "enum" in schema:
        return {json_type(choice) for choice in schema["enum"]}
    return {"any"}


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _json_number(value: Any) -> float | None:
    """A bound as JSON writes it, or None when it is no number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, decimal.Decimal) and value.is_finite():
        return int(value) if value == value.to_integral_value() else float(value)
    return None


def _kind_words(kinds: set[str], python: type | None) -> str:
    if python is not None:
        return f"a {python.__name__}"
    return type_words(sorted(kinds))


def _show(value: Any) -> str:
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID | PurePath):
        return str(value)
    return preview(value)


def _name_of(function: Any) -> str:
    return str(getattr(function, "__qualname__", None) or repr(function))


def _is_field_info(item: Any) -> bool:
    fields = sys.modules.get("pydantic.fields")  # imported already when one was made
    return fields is not None and isinstance(item, fields.FieldInfo)


def _not_understood(item: Any, where: str) -> ToolDefinitionError:
    return ToolDefinitionError(
        f"{where}: {item!r} is not understood in a tool's Annotated hint, so the model's value "
        "would reach the function unchecked; check it in the function, or give the tool a "
        "pydantic model parameter that checks it"
    )
