"""A structured answer watched as it streams: the events' text fed to `PartialJSON`, a
`Partial` after each fragment that changes what may be shown, and each element of a list once
it is complete. Sans-IO: the client's streams drive it (`stream.partial_objects`).

What is never shown: a number or literal still being written (the parser holds them back), and
a string still being written where the schema allows only some strings (an `enum`, a `const`,
a `format`): a step where one is open yields nothing, so `"pen"` of `"pending"` is never seen
as a value. The end is checked strictly, once, by `output.parsed_answer`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from ..types import Event
from .output import OutputType
from .partial_json import NOTHING, PartialJSON, PartialJSONError

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Partial:
    """The answer so far. `value` is the same object at every step, grown in place (copy it to
    keep one step's); `open_path` is the path of the value still being written (every
    container on it is incomplete too), None once the whole answer is written."""

    value: Any
    open_path: Path | None
    _output: OutputType[Any]

    def is_complete(self, path: Path) -> bool:
        """Whether the value at `path` is there and written to its end."""
        if self.open_path is not None and self.open_path[: len(path)] == path:
            return False
        return _at(self.value, path) is not NOTHING

    @property
    def instance(self) -> Any:
        """The answer so far as the type asked for, leniently: for a pydantic model, an instance
        built without validation (missing fields are absent; validators run at the end); for
        other types, the value itself. Costs a walk of the value: read it when you need it."""
        return _lenient(self.value, self._output)


class PartialReader:
    """Feeds a turn's text to the parser (module docstring)."""

    def __init__(self, output: OutputType[Any]) -> None:
        self.output = output
        self.parser = PartialJSON()
        self.failed: PartialJSONError | None = None  # the text stopped being JSON here
        self._head = ""  # the text before the value starts: a Markdown fence is skipped
        self._started = False
        self._completed: list[Path] = []

    def feed(self, event: Event) -> Partial | None:
        """The answer after `event`, when it changed and may be shown; None otherwise."""
        changed = False
        self._completed = []
        was_done = self.parser.done
        for item in event["content_items"]:
            if item["type"] == "text.delta" and item["text"]:
                changed = self._text(item["text"]) or changed
        changed = changed or self.parser.done != was_done  # the last bracket closes it
        if not changed or self._hidden():
            return None
        return Partial(self.parser.value, self.parser.open_path, self.output)

    def completed(self) -> list[Path]:
        """The paths whose values completed with the last event, inner before outer."""
        return self._completed

    def _text(self, text: str) -> bool:
        parser = self.parser
        if self.failed is not None or parser.done:
            return False  # past the value: a closing fence, or text that is no JSON
        if not self._started:
            self._head += text
            body = _after_fence(self._head)
            if body is None:
                return False
            text, self._started = body, True
        try:
            changed = parser.feed(text)
        except PartialJSONError as exc:
            self.failed = exc  # the end says so (StructuredOutputError); partials stop here
            return False
        self._completed += parser.completed()
        return changed

    def _hidden(self) -> bool:
        """Whether the string being written is one the schema restricts."""
        path = self.parser.open_path
        if not path:
            return False
        leaf = _at(self.parser.value, path)
        if not isinstance(leaf, str):
            return False
        schema = _schema_at(self.output.schema, path, self.output.schema.get("$defs", {}))
        return schema is None or _restricts_strings(schema)


def elements_of(reader: PartialReader, path: Path) -> Iterator[Any]:
    """The elements of the list at `path` that completed with the last event, in order."""
    depth = len(path) + 1
    for done in reader.completed():
        if len(done) == depth and done[:-1] == path and isinstance(done[-1], int):
            yield _at(reader.parser.value, done)


def _after_fence(head: str) -> str | None:
    """The text after an opening Markdown fence (```json), or `head` when it has none; None
    while it cannot be told yet."""
    stripped = head.lstrip()
    if not stripped:
        return None
    if not stripped.startswith("`"):
        return head
    if len(stripped) < 3:
        return None
    if not stripped.startswith("```"):
        return head  # not a fence: the parser says what is wrong
    newline = stripped.find("\n")
    return None if newline < 0 else stripped[newline + 1 :]


def _at(value: Any, path: Path) -> Any:
    for step in path:
        found = isinstance(value, dict) and isinstance(step, str) and step in value
        found = found or (isinstance(value, list) and isinstance(step, int) and step < len(value))
        if not found:
            return NOTHING
        value = value[step]
    return value


def _schema_at(schema: Any, path: Path, defs: Mapping[str, Any]) -> Any:
    """The schema of the value at `path` (None when the path leaves the schema, or goes
    through a union: then its strings are held back, to be safe)."""
    for step in path:
        schema = _resolved(schema, defs)
        if not isinstance(schema, Mapping):
            return None
        if isinstance(step, str):
            properties = schema.get("properties")
            if isinstance(properties, Mapping) and step in properties:
                schema = properties[step]
            elif isinstance(schema.get("additionalProperties"), Mapping):
                schema = schema["additionalProperties"]
            else:
                return None
        else:
            prefix = schema.get("prefixItems")
            if isinstance(prefix, list) and step < len(prefix):
                schema = prefix[step]
            elif isinstance(schema.get("items"), Mapping):
                schema = schema["items"]
            else:
                return None
    return _resolved(schema, defs)


def _resolved(schema: Any, defs: Mapping[str, Any]) -> Any:
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        ref = schema["$ref"]
        if not ref.startswith("#/$defs/"):
            return None
        schema = defs.get(ref[len("#/$defs/") :])
    if isinstance(schema, Mapping):
        arms = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(arms, list):
            # `X | None`: the one arm that is not null; any other union is not followed
            real = [a for a in arms if not (isinstance(a, Mapping) and a.get("type") == "null")]
            return _resolved(real[0], defs) if len(real) == 1 else None
    return schema


def _restricts_strings(schema: Mapping[str, Any]) -> bool:
    return any(key in schema for key in ("enum", "const", "format", "pattern"))


def _lenient(value: Any, output: OutputType[Any]) -> Any:
    model = getattr(output.convert, "__self__", None)  # a pydantic model's model_validate
    if not (isinstance(model, type) and hasattr(model, "model_construct")):
        return value
    return _construct(model, value)


def _construct(model: Any, value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    fields = getattr(model, "model_fields", {})
    values: dict[str, Any] = {}
    for name, item in value.items():
        annotation = getattr(fields.get(name), "annotation", None)
        values[name] = _construct_as(annotation, item)
    return model.model_construct(**values)


def _construct_as(annotation: Any, item: Any) -> Any:
    if isinstance(annotation, type) and hasattr(annotation, "model_construct"):
        return _construct(annotation, item)
    if get_origin(annotation) is list and isinstance(item, list):
        (inner,) = get_args(annotation) or (None,)
        return [_construct_as(inner, element) for element in item]
    return item
