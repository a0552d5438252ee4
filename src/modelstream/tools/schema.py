"""JSON schemas from Python type hints, each with the converter that turns checked JSON back
into the hinted type (a dataclass instance, an enum member, a tuple, a pydantic model).

Supported: str, int, float, bool, None, Any, list / tuple / dict, `Literal`, unions
(`X | None`, `Optional`), `Annotated` (descriptions and constraints: annotations.py), the
classes JSON writes as strings (datetime, date, time, UUID, Decimal, Path: formats.py), enums,
dataclasses, TypedDicts, and pydantic models (found by their methods, so pydantic is never
imported here).
Nested classes are written inline; pydantic's own `$defs` are lifted to the top of the tool's
schema, where its `$ref`s point. Anything else is refused when the tool is made, naming the
parameter, rather than sent to a model as a schema it cannot fill.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin

from .annotations import annotate
from .formats import FORMATS
from .type_schema import NO_DEFAULT, ToolDefinitionError, TypeSchema
from .validation import ArgumentProblem, schema_errors


@dataclass(frozen=True)
class Field:
    """One named value of an object: a parameter, a dataclass field, a TypedDict key."""

    name: str
    type: TypeSchema
    description: str | None = None
    required: bool = True
    default: Any = NO_DEFAULT  # written into the schema when JSON can hold it
    # the value to pass when the model leaves it out and Python has no default of its own
    # (a default given in `Annotated`: pydantic's `Field(default=...)`)
    fill: Callable[[], Any] | None = None


def field_of(
    name: str,
    described: TypeSchema,
    note: str | None,
    *,
    required: bool,
    default: Any = NO_DEFAULT,
) -> Field:
    """A field of an object; `note` is the docstring's description of it, `required` and
    `default` what Python says. The `Annotated` hint's description wins over the note (it is
    written next to the type), and its default counts where Python gives none."""
    if default is NO_DEFAULT:
        default = described.default
    fill: Callable[[], Any] | None = None
    if required and described.default_factory is not None:
        fill = described.default_factory
    elif required and described.default is not NO_DEFAULT:
        fill = functools.partial(_same, described.default)
    return Field(
        name,
        described,
        described.description or note,
        required=required and fill is None,
        default=default,
        fill=fill,
    )


def object_converter(fields: list[Field], make: Callable[..., Any]) -> Callable[[Any], Any]:
    """Checked JSON object → `make(**converted fields)`, each left-out field with an
    `Annotated` default filled in; a problem found inside names the field."""
    converters = {field.name: field.type.convert for field in fields}
    fills = {field.name: field.fill for field in fields if field.fill is not None}

    def convert(value: dict[str, Any]) -> Any:
        out: dict[str, Any] = {}
        for name, item in value.items():
            try:
                out[name] = converters[name](item)
            except ArgumentProblem as problem:
                raise problem.within(name) from None
        for name, fill in fills.items():
            if name not in out:
                out[name] = fill()
        return make(**out)

    return convert


def _each(convert: Callable[[Any], Any], items: Iterable[Any]) -> Iterable[Any]:
    """The items converted, a problem inside one naming its index."""
    for index, item in enumerate(items):
        try:
            yield convert(item)
        except ArgumentProblem as problem:
            raise problem.within(f"[{index}]") from None


def _same(value: Any) -> Any:
    return value


_SCALARS: dict[Any, TypeSchema] = {
    str: TypeSchema({"type": "string"}, _same),
    bool: TypeSchema({"type": "boolean"}, _same),
    int: TypeSchema({"type": "integer"}, int),  # 3.0 is a JSON integer: it arrives as 3
    float: TypeSchema({"type": "number"}, float),
    type(None): TypeSchema({"type": "null"}, _same),
    None: TypeSchema({"type": "null"}, _same),
    Any: TypeSchema({}, _same),
    inspect.Parameter.empty: TypeSchema({}, _same),  # no annotation: any JSON value
}
_JSON_SCALAR_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number"}


class SchemaBuilder:
    """Builds the schemas of one tool: collects pydantic `$defs` and refuses recursive types
    (written inline, they would never end)."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.defs: dict[str, Any] = {}
        self._open: list[type] = []

    def object_schema(
        self, fields: list[Field], *, description: str | None = None
    ) -> dict[str, Any]:
        """An object with these fields; names not listed are refused."""
        properties: dict[str, Any] = {}
        for field in fields:
            schema = dict(field.type.schema)
            if field.description:
                schema["description"] = field.description
            default = field.default
            if isinstance(default, enum.Enum):
                default = default.value
            if default is not NO_DEFAULT and _is_json_scalar(default):
                schema["default"] = default
            properties[field.name] = schema
        out: dict[str, Any] = {"type": "object"}
        if description:
            out["description"] = description
        out["properties"] = properties
        required = [field.name for field in fields if field.required]
        if required:
            out["required"] = required
        out["additionalProperties"] = False
        return out

    def for_type(self, hint: Any, where: str) -> TypeSchema:
        """The schema of `hint`; `where` names it in errors ("parameter 'x' of f")."""
        origin = get_origin(hint)
        if origin is typing.Annotated:
            inner, *metadata = get_args(hint)
            return annotate(
                self.for_type(inner, where), metadata, f"{where} of tool {self.owner!r}"
            )
        if origin in (Required, NotRequired):
            return self.for_type(get_args(hint)[0], where)
        if _hashable(hint) and hint in _SCALARS:
            return _SCALARS[hint]
        if _hashable(hint) and hint in FORMATS:
            return FORMATS[hint]
        if origin is Literal:
            return _literal(list(get_args(hint)), where)
        if origin in (Union, types.UnionType):
            return self._union(get_args(hint), where)
        if hint is list or origin is list:
            return self._list(get_args(hint), where)
        if hint is tuple or origin is tuple:
            return self._tuple(get_args(hint), where)
        if hint is dict or origin is dict:
            return self._dict(get_args(hint), where)
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return _enum(hint, where)
        if isinstance(hint, type) and hint in self._open:
            raise ToolDefinitionError(
                f"{where} of tool {self.owner!r}: {hint.__name__} refers to itself; a tool's "
                "schema is written inline, so recursive types cannot be described"
            )
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self._class(hint, where, self._dataclass_fields)
        if typing.is_typeddict(hint):
            return self._class(hint, where, self._typeddict_fields)
        if _is_pydantic_model(hint):
            return self._pydantic(hint, where)
        raise ToolDefinitionError(
            f"{where} of tool {self.owner!r} has type {_name(hint)}, which has no JSON schema "
            "here: use str, int, float, bool, None, list, tuple, dict, Literal, datetime, date, "
            "time, UUID, Decimal, Path, an Enum, a dataclass, a TypedDict or a pydantic model"
        )

    def _union(self, arms: tuple[Any, ...], where: str) -> TypeSchema:
        built = [self.for_type(arm, where) for arm in arms]
        defs = self.defs  # filled as the tool is built; read when a value is converted

        def convert(value: Any) -> Any:
            # the first arm the value fits, as the schema was checked, and converts in (a
            # string fits both `datetime` and `str`, and only one of them may read it)
            first: ArgumentProblem | None = None
            for arm in built:
                if not schema_errors(value, arm.schema, defs):
                    try:
                        return arm.convert(value)
                    except ArgumentProblem as problem:
                        first = first or problem
            if first is not None:
                raise first
            return value

        return TypeSchema({"anyOf": [arm.schema for arm in built]}, convert)

    def _list(self, args: tuple[Any, ...], where: str) -> TypeSchema:
        if not args:
            return TypeSchema({"type": "array"}, _same)
        item = self.for_type(args[0], where)
        return TypeSchema(
            {"type": "array", "items": item.schema}, lambda v: list(_each(item.convert, v))
        )

    def _tuple(self, args: tuple[Any, ...], where: str) -> TypeSchema:
        if not args:
            return TypeSchema({"type": "array"}, tuple)
        if len(args) == 2 and args[1] is Ellipsis:
            item = self.for_type(args[0], where)
            return TypeSchema(
                {"type": "array", "items": item.schema}, lambda v: tuple(_each(item.convert, v))
            )
        items = [self.for_type(arg, where) for arg in args]
        schema = {
            "type": "array",
            "prefixItems": [item.schema for item in items],
            "minItems": len(items),
            "maxItems": len(items),
        }

        def convert(value: list[Any]) -> tuple[Any, ...]:
            pairs = zip(items, value, strict=True)
            return tuple(_each(lambda pair: pair[0].convert(pair[1]), pairs))

        return TypeSchema(schema, convert)

    def _dict(self, args: tuple[Any, ...], where: str) -> TypeSchema:
        if not args:
            return TypeSchema({"type": "object"}, _same)
        key, value = args
        if key not in (str, Any):
            raise ToolDefinitionError(
                f"{where} of tool {self.owner!r}: JSON object keys are strings, not {_name(key)}"
            )
        item = self.for_type(value, where)
        return TypeSchema(
            {"type": "object", "additionalProperties": item.schema},
            functools.partial(_convert_values, item.convert),
        )

    def _class(self, cls: type, where: str, fields_of: Callable[[type], list[Field]]) -> TypeSchema:
        self._open.append(cls)
        try:
            fields = fields_of(cls)
        finally:
            self._open.pop()
        schema = self.object_schema(fields, description=class_description(cls))
        make: Callable[..., Any] = cls if dataclasses.is_dataclass(cls) else dict
        return TypeSchema(schema, object_converter(fields, make))

    def _dataclass_fields(self, cls: type) -> list[Field]:
        hints = type_hints(cls, f"dataclass {cls.__name__}", self.owner)
        notes = documented_names(cls.__doc__) if class_description(cls) else {}
        fields = []
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            has_default = field.default is not dataclasses.MISSING
            fields.append(
                field_of(
                    field.name,
                    self.for_type(hints[field.name], f"field {field.name!r} of {cls.__name__}"),
                    notes.get(field.name),
                    required=not has_default and field.default_factory is dataclasses.MISSING,
                    default=field.default if has_default else NO_DEFAULT,
                )
            )
        return fields

    def _typeddict_fields(self, cls: type) -> list[Field]:
        hints = type_hints(cls, f"TypedDict {cls.__name__}", self.owner)
        notes = documented_names(cls.__doc__)
        required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
        fields = []
        for name, hint in hints.items():
            # the wrapper, when there is one, decides (__required_keys__ misses it on 3.11
            # when the annotations are strings)
            origin = get_origin(hint)
            required = origin is Required or (origin is not NotRequired and name in required_keys)
            where = f"key {name!r} of {cls.__name__}"
            fields.append(
                field_of(name, self.for_type(hint, where), notes.get(name), required=required)
            )
        return fields

    def _pydantic(self, model: Any, where: str) -> TypeSchema:
        schema: dict[str, Any] = model.model_json_schema()
        for name, definition in schema.pop("$defs", {}).items():
            if self.defs.setdefault(name, definition) != definition:
                raise ToolDefinitionError(
                    f"{where} of tool {self.owner!r}: two different models are both named "
                    f"{name!r}; rename one"
                )
        return TypeSchema(schema, model.model_validate)


def _convert_values(convert: Callable[[Any], Any], value: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        try:
            out[key] = convert(item)
        except ArgumentProblem as problem:
            raise problem.within(key) from None
    return out


def _literal(values: list[Any], where: str) -> TypeSchema:
    if not all(_is_json_scalar(value) for value in values):
        raise ToolDefinitionError(f"{where}: Literal values must be str, int, float, bool or None")
    return TypeSchema(_choices(values), _same)


def _enum(cls: type[enum.Enum], where: str) -> TypeSchema:
    values = [member.value for member in cls]
    if not all(_is_json_scalar(value) for value in values):
        raise ToolDefinitionError(f"{where}: the values of {cls.__name__} are not JSON scalars")
    return TypeSchema(_choices(values), cls)


def _choices(values: list[Any]) -> dict[str, Any]:
    """`enum`, with the values' `type` when they share one."""
    kinds = {_JSON_SCALAR_TYPES.get(type(value)) for value in values}
    if len(kinds) == 1 and None not in kinds:
        return {"type": kinds.pop(), "enum": values}
    return {"enum": values}


def type_hints(owner: Any, what: str, tool: str) -> dict[str, Any]:
    """The resolved annotations of a function or class, with `Annotated` kept."""
    try:
        return typing.get_type_hints(owner, include_extras=True)
    except NameError as exc:  # a string annotation that names something not importable there
        raise ToolDefinitionError(
            f"the type hints of {what} (tool {tool!r}) cannot be resolved: {exc} (a string "
            "annotation is looked up in the module's globals: define the class at module level)"
        ) from None


def class_description(cls: type) -> str | None:
    """A class's own docstring summary, not the signature dataclasses write as a default."""
    doc = cls.__doc__
    if not doc or (dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}(")):
        return None
    return docstring_summary(doc)


def docstring_summary(doc: str | None) -> str | None:
    """The text of a docstring before its sections (Args:, :param x:, Parameters ...)."""
    if not doc:
        return None
    from docstring_parser import parse  # imported when a tool is made, not at import time

    parsed = parse(doc)
    parts = [part for part in (parsed.short_description, parsed.long_description) if part]
    return "\n\n".join(parts) or None


def documented_names(doc: str | None) -> dict[str, str]:
    """The description of each parameter or attribute a docstring lists, in any of the Google
    (`Args:` / `Attributes:`), NumPy (`Parameters` + dashes) or reST (`:param x:`) styles."""
    if not doc:
        return {}
    from docstring_parser import parse

    return {
        param.arg_name: " ".join(param.description.split())
        for param in parse(doc).params
        if param.description
    }


def _is_pydantic_model(hint: Any) -> bool:
    return (
        isinstance(hint, type)
        and callable(getattr(hint, "model_json_schema", None))
        and callable(getattr(hint, "model_validate", None))
    )


def _is_json_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _name(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else repr(hint)
