"""Checking that messages and a config have the SPEC shapes (SPEC §1, `types.py`) before
anything is built from them: the first value of a wrong type is named by its path, as in
`messages[0].content_items[1].text must be a string`.

The expected shapes are read from the TypedDicts in `types.py` (`Message`, the done items),
so a field added there is checked here without a second list to keep in step. A config is only
checked to be an object here: its keys and values follow `protocols/common/config_rules.py`.
Sans-IO and side-effect free: the server refuses a body with it (400), and a client can turn a
`ShapeError` into its own `InvalidMessageError`.

Inline `data` is bytes in memory and base64 text on the wire: `binary="base64"` checks the wire
form (strict base64), `binary="bytes"` the in-memory one.
"""

from __future__ import annotations

import binascii
import functools
import types
import typing
from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from .types import Message

Binary = Literal["bytes", "base64"]


class ShapeError(ValueError):
    """A value that does not have its SPEC shape: `path` names it, `expected` says what it
    should be."""

    def __init__(self, path: str, expected: str) -> None:
        self.path = path
        self.expected = expected
        super().__init__(f"{path} {expected}")


def check_messages(messages: Any, *, binary: Binary = "bytes", path: str = "messages") -> None:
    """Raise `ShapeError` for the first part of `messages` that is not a list of `Message`."""
    _check(messages, list[Message], path, binary)


def check_config(config: Any, *, path: str = "config") -> None:
    """Raise `ShapeError` when `config` is not an object. Its keys and values have rules of
    their own, with suggestions (`protocols/common/config_rules.py`): every path, the server's
    included, applies them before a request is encoded."""
    if not isinstance(config, Mapping):
        raise ShapeError(path, "must be an object")


@functools.cache
def _hints(typed_dict: type) -> dict[str, Any]:
    return {key: hint for key, (hint, _) in _fields(typed_dict).items()}


@functools.cache
def _fields(typed_dict: type) -> dict[str, tuple[Any, bool]]:
    """Each key's type and whether it is required. Read from the annotations rather than
    `__required_keys__`, which misses `NotRequired` in postponed (string) annotations."""
    total = bool(getattr(typed_dict, "__total__", True))
    out: dict[str, tuple[Any, bool]] = {}
    for key, hint in get_type_hints(typed_dict, include_extras=True).items():
        required = total
        if get_origin(hint) in (NotRequired, Required):
            required = get_origin(hint) is Required
            (hint,) = get_args(hint)
        out[key] = (hint, required)
    return out


@functools.cache
def _by_type_tag(members: tuple[Any, ...]) -> dict[str, type] | None:
    """For a union of TypedDicts told apart by a `type` literal (the items): tag → TypedDict."""
    tags: dict[str, type] = {}
    for member in members:
        if not is_typeddict(member):
            return None
        tag = _hints(member).get("type")
        if get_origin(tag) is not Literal:
            return None
        tags.update((value, member) for value in get_args(tag))
    return tags


def _check(value: Any, expected: Any, path: str, binary: Binary) -> None:
    if expected is Any:
        return
    origin = get_origin(expected)
    if origin is Literal:
        if value not in get_args(expected) or isinstance(value, bool):
            raise ShapeError(path, f"must be {_describe(expected)}, got {_preview(value)}")
        return
    if origin is Union or origin is types.UnionType:
        _check_union(value, get_args(expected), path, binary)
        return
    if is_typeddict(expected):
        _check_typed_dict(value, expected, path, binary)
        return
    if origin is list:
        if not isinstance(value, list):
            raise ShapeError(path, f"must be {_describe(expected)}")
        (element,) = get_args(expected)
        for index, item in enumerate(value):
            _check(item, element, f"{path}[{index}]", binary)
        return
    if origin is dict or expected is dict:
        if not isinstance(value, dict):
            raise ShapeError(path, "must be an object")
        return
    if expected is bytes:
        _check_binary(value, path, binary)
        return
    if not _matches_outer(value, expected):
        raise ShapeError(path, f"must be {_describe(expected)}, got {_preview(value)}")


def _check_union(value: Any, members: tuple[Any, ...], path: str, binary: Binary) -> None:
    tags = _by_type_tag(members)
    if tags is not None:
        if not isinstance(value, dict):
            raise ShapeError(path, "must be an object with a 'type'")
        member = tags.get(value.get("type"))  # type: ignore[arg-type]
        if member is None:
            raise ShapeError(
                f"{path}.type", f"must be one of {_quoted(tags)}, got {_preview(value.get('type'))}"
            )
        _check_typed_dict(value, member, path, binary)
        return
    candidates = [m for m in members if _matches_outer(value, m)]
    if len(candidates) == 1:  # e.g. a list for `Literal[...] | list[str]`: say which element
        _check(value, candidates[0], path, binary)
        return
    for member in candidates:
        try:
            _check(value, member, path, binary)
            return
        except ShapeError:
            continue
    described = " or ".join(_describe(m) for m in members)
    raise ShapeError(path, f"must be {described}, got {_preview(value)}")


def _check_typed_dict(value: Any, typed_dict: type, path: str, binary: Binary) -> None:
    if not isinstance(value, dict):
        raise ShapeError(path, "must be an object")
    fields = _fields(typed_dict)
    for key, (_, required) in fields.items():
        if required and key not in value:
            raise ShapeError(f"{path}.{key}", "is missing")
    for key, (field, _) in fields.items():  # keys the SPEC does not name: left to the encoders
        if key in value:
            _check(value[key], field, f"{path}.{key}", binary)


def _check_binary(value: Any, path: str, binary: Binary) -> None:
    if binary == "bytes":
        if not isinstance(value, bytes | bytearray):
            raise ShapeError(path, "must be bytes")
        return
    if not isinstance(value, str):
        raise ShapeError(path, "must be a base64 string")
    try:
        binascii.a2b_base64(value, strict_mode=True)
    except binascii.Error as exc:
        raise ShapeError(path, f"must be valid base64 ({exc})") from None


def _matches_outer(value: Any, expected: Any) -> bool:
    """Whether `value` has the JSON type of `expected`, without looking inside it."""
    origin = get_origin(expected) or expected
    if origin is Literal:
        return value in get_args(expected) and not isinstance(value, bool)
    if origin is Union or origin is types.UnionType:
        return any(_matches_outer(value, m) for m in get_args(expected))
    if is_typeddict(origin) or origin is dict:
        return isinstance(value, dict)
    if origin is bool:
        return isinstance(value, bool)
    if origin is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is float:  # JSON has one number type: 1 is a valid temperature
        return isinstance(value, int | float) and not isinstance(value, bool)
    if origin is type(None):
        return value is None
    if isinstance(origin, type):
        return isinstance(value, origin)
    return True


def _describe(expected: Any) -> str:
    origin = get_origin(expected) or expected
    if origin is Literal:
        return "one of " + _quoted(get_args(expected))
    if origin is Union or origin is types.UnionType:
        return " or ".join(_describe(m) for m in get_args(expected))
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        list: "a list",
        dict: "an object",
        bytes: "bytes",
        type(None): "null",
    }
    if is_typeddict(origin):
        return "an object"
    return names.get(origin, str(expected))


def _quoted(values: typing.Iterable[Any]) -> str:
    return ", ".join(repr(v) for v in values)


def _preview(value: Any) -> str:
    """The offending value's JSON type, and the value itself when it is short."""
    kind = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} {text}" if len(text) <= 40 and not isinstance(value, list | dict) else kind


__all__ = ["Binary", "ShapeError", "check_config", "check_messages"]
