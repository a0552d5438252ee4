"""A JSON schema rewritten into what a provider's structured output accepts, by the rules each
encoder names (docs/structured-output.md has the table per protocol).

The rewrites only ever loosen what the provider is asked to enforce, or say the same thing
another way (an optional field as a required nullable one): the answer is still checked
against the schema as written, when it is read (`structured.output`)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

# the keywords whose value is one schema, or a list or map of schemas
_ONE = ("items", "additionalProperties", "not", "contains")
_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP = ("properties", "$defs", "definitions", "patternProperties")


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The schema as OpenAI's strict mode wants it (every object closed, every property
    required, an optional one nullable instead, no `default`); None when it cannot be (an
    object with free keys, `dict[str, X]`, has no strict form)."""
    open_maps: list[bool] = []

    def rewrite(node: dict[str, Any]) -> None:
        node.pop("default", None)
        properties = node.get("properties")
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) or extra is True:
            open_maps.append(True)
        if isinstance(properties, dict) and not properties:
            return  # no fields: as written (an empty object is the same in strict mode)
        if isinstance(properties, dict):
            required = set(node.get("required") or ())
            for name, inner in properties.items():
                if name not in required and isinstance(inner, dict) and not _nullable(inner):
                    properties[name] = {"anyOf": [inner, {"type": "null"}]}
            given = list(node.get("required") or ())
            node["required"] = given + [name for name in properties if name not in given]
            node["additionalProperties"] = False
        elif node.get("type") == "object" and extra is None:
            open_maps.append(True)  # an object of any keys

    out = rewritten(schema, rewrite)
    return None if open_maps else out


def closed_schema(schema: dict[str, Any], unsupported: Iterable[str] = ()) -> dict[str, Any]:
    """The schema with every object that lists its properties closed (`additionalProperties:
    false` where unset) and the `unsupported` keywords left out (Anthropic's structured output
    takes no numeric, length or count bounds)."""
    dropped = frozenset(unsupported)

    def rewrite(node: dict[str, Any]) -> None:
        for keyword in dropped & node.keys():
            del node[keyword]
        if isinstance(node.get("properties"), dict):
            node.setdefault("additionalProperties", False)
        if node.get("minItems", 0) > 1:  # only 0 and 1 are taken
            del node["minItems"]

    return rewritten(schema, rewrite)


def rewritten(schema: dict[str, Any], rewrite: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A copy of `schema` with `rewrite` applied to every schema in it, the outer one first."""
    out = copy.deepcopy(schema)
    stack = [out]
    while stack:
        node = stack.pop()
        rewrite(node)
        for key in _ONE:
            if isinstance(node.get(key), dict):
                stack.append(node[key])
        for key in _LIST:
            stack += [inner for inner in node.get(key) or () if isinstance(inner, dict)]
        for key in _MAP:
            inner_map = node.get(key)
            if isinstance(inner_map, dict):
                stack += [inner for inner in inner_map.values() if isinstance(inner, dict)]
    return out


def _nullable(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(
        isinstance(arm, dict) and _nullable(arm)
        for arm in (schema.get("anyOf") or []) + (schema.get("oneOf") or [])
    )


def with_strict_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """A `response_format_spec` asking for strict mode, its schema in strict form; as given
    when the schema has none (an object of free keys): the provider then says what it refuses,
    rather than strictness being dropped unasked."""
    if not spec.get("strict") or "schema" not in spec:
        return spec
    strict = strict_schema(spec["schema"])
    return spec if strict is None else {**spec, "schema": strict}


# what Anthropic's structured output refuses in a schema (its docs' list of limitations)
UNBOUNDED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
)
