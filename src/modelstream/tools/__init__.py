"""Tools from plain Python functions: the definition a model reads, and the checked call.

`tool(fn)` (or `FunctionTool.from_function`) describes a function, sync or async, as a SPEC
tool definition: the name, the docstring's summary, and a JSON schema of the parameters built
from the signature, the type hints (schema.py lists what is supported) and the docstring's
description of each argument (Google, NumPy or reST style). A call from the model is checked
against that schema (validation.py) and converted back to the hinted types before the function
runs; a call that does not fit raises `ToolArgumentsError`, which the tool loop sends back to
the model as an error result so it can try again.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, ParamSpec, TypeVar, overload

from ..errors import ModelstreamError
from ..types import Config, ToolSchema
from .schema import (
    Field,
    SchemaBuilder,
    docstring_summary,
    documented_names,
    field_of,
    object_converter,
    type_hints,
)
from .type_schema import ToolDefinitionError, TypeSchema
from .validation import SchemaMismatch, checked, without_nulls_for_optional

P = ParamSpec("P")
R = TypeVar("R")

# the names every protocol accepts (OpenAI, Anthropic, Gemini and Bedrock agree on this set)
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ToolArgumentsError(ModelstreamError, ValueError):
    """A tool call's arguments do not fit the tool's parameters; the function was not called.

    `problems` lists each one as "where: what"; the message is written for the model to read."""

    def __init__(self, tool: str, problems: list[str]) -> None:
        self.tool = tool
        self.problems = problems
        super().__init__(
            f"the arguments of tool {tool!r} do not fit its parameters: "
            + "; ".join(problems)
            + ". Call it again with arguments that fit."
        )

    def fields(self) -> dict[str, Any]:
        return {"tool": self.tool, "problems": self.problems}


@dataclass(frozen=True, eq=False)
class FunctionTool(Generic[P, R]):
    """A function described as a tool. Calling it calls the function unchanged; `definition`
    is what a request sends, and `acall`/`call` run it with a model's (checked) arguments."""

    function: Callable[P, R]
    name: str
    description: str | None
    parameters: dict[str, Any]  # the JSON schema of the arguments object
    strict: bool | None = None
    _arguments: TypeSchema = field(repr=False, default=TypeSchema({}, dict))
    _positional: tuple[str, ...] = field(repr=False, default=())

    @classmethod
    def from_function(
        cls,
        function: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool | None = None,
    ) -> FunctionTool[P, R]:
        """Describe `function`; `name` and `description` replace the function's own.

        Raises `ToolDefinitionError` for a parameter whose type has no JSON schema, for
        `*args`/`**kwargs`, and for a name providers refuse."""
        if isinstance(function, FunctionTool):
            inner: FunctionTool[P, R] = function
            return cls.from_function(
                inner.function,
                name=name or inner.name,
                description=description or inner.description,
                strict=inner.strict if strict is None else strict,
            )
        name = name or getattr(function, "__name__", None)
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
            raise ToolDefinitionError(
                f"{name!r} is not a name a model can call: use 1 to 64 letters, digits, _ or -"
                " (give one with tool(fn, name=...) or as the key of the tools mapping)"
            )
        doc = inspect.getdoc(function)
        builder = SchemaBuilder(name)
        fields, positional = _parameters(function, name, builder, documented_names(doc))
        parameters = builder.object_schema(fields)
        if builder.defs:
            parameters["$defs"] = builder.defs
        return cls(
            function,
            name,
            description if description is not None else docstring_summary(doc),
            parameters,
            strict,
            TypeSchema(parameters, object_converter(fields, dict)),
            positional,
        )

    @property
    def definition(self) -> ToolSchema:
        """The SPEC tool definition (`config["tools"]` entry): a new dict at each read."""
        out: ToolSchema = {"name": self.name}
        if self.description:
            out["description"] = self.description
        out["parameters"] = _copy(self.parameters)
        if self.strict is not None:
            out["strict"] = self.strict
        return out

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.function(*args, **kwargs)

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments checked against the schema and converted to the hinted types
        (dataclass instances, enum members, tuples, ...); raises `ToolArgumentsError`."""
        value = dict(arguments) if isinstance(arguments, Mapping) else arguments
        if self.strict:  # strict mode made optional parameters nullable: a null is "left out"
            value = without_nulls_for_optional(
                value, self.parameters, self.parameters.get("$defs") or {}
            )
        try:
            converted: dict[str, Any] = checked(
                value, self.parameters, self._arguments.convert, self.parameters.get("$defs")
            )
        except SchemaMismatch as mismatch:
            raise ToolArgumentsError(self.name, mismatch.problems) from None
        except ValueError as exc:  # a pydantic model's or a dataclass's own checks
            raise ToolArgumentsError(self.name, [" ".join(str(exc).split())]) from exc
        return converted

    async def acall(self, arguments: Mapping[str, Any]) -> Any:
        """Run with a model's arguments: an async function is awaited; a sync one runs in a
        worker thread, so a blocking tool (an HTTP call, a file read) leaves the event loop
        free for the streams sharing it."""
        args, kwargs = self._bind(arguments)
        function: Callable[..., Any] = self.function
        if _is_async(function):
            return await function(*args, **kwargs)
        value = await asyncio.to_thread(function, *args, **kwargs)
        return await value if inspect.isawaitable(value) else value

    def call(self, arguments: Mapping[str, Any]) -> Any:
        """Run with a model's arguments in this thread; an async function runs to its end on
        an event loop of its own."""
        args, kwargs = self._bind(arguments)
        function: Callable[..., Any] = self.function
        value = function(*args, **kwargs)
        return _run_to_end(value) if inspect.isawaitable(value) else value

    def _bind(self, arguments: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        kwargs = self.validate(arguments)
        args = [kwargs.pop(name) for name in self._positional if name in kwargs]
        return args, kwargs


@overload
def tool(function: Callable[P, R], /) -> FunctionTool[P, R]: ...
@overload
def tool(
    *, name: str | None = None, description: str | None = None, strict: bool | None = None
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...
def tool(
    function: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool | None = None,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Describe a function as a tool: `tool(fn)`, `@tool` or `@tool(name=..., strict=True)`.

    The result still calls like the function; its `definition` is the SPEC tool definition."""

    def describe(function: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool.from_function(
            function, name=name, description=description, strict=strict
        )

    return describe if function is None else describe(function)


ToolSpec = ToolSchema | Callable[..., Any]
"""A tool as a request or a conversation takes it: a definition, or a function to describe."""

ToolFunctions = Mapping[str, Callable[..., Any]] | Iterable[Callable[..., Any]]
"""The tools `Conversation.run` may call: functions (or `FunctionTool`s), or a mapping from the
name the model calls to the function."""


def tool_definitions(tools: Iterable[ToolSpec]) -> list[ToolSchema]:
    """The tools as a request sends them: functions described, definitions kept as given."""
    return [
        FunctionTool.from_function(entry).definition if callable(entry) else entry
        for entry in tools
    ]


def config_with_tool_definitions(config: Config | None) -> Config | None:
    """The config with its function tools replaced by their definitions; the same object when
    it has none, so a config of plain definitions costs nothing."""
    if not config or not any(callable(entry) for entry in config.get("tools") or ()):
        return config
    return {**config, "tools": list(tool_definitions(config["tools"]))}


def runnable_tools(
    configured: Iterable[ToolSpec] | None, given: ToolFunctions | None
) -> dict[str, FunctionTool[..., Any]]:
    """The functions a tool loop may call, by name: those in the config's `tools` and those
    given to the loop. One name for two different functions raises `ToolDefinitionError`."""
    found: dict[str, FunctionTool[..., Any]] = {}
    named: list[tuple[str | None, Callable[..., Any]]] = [
        (None, entry) for entry in configured or () if callable(entry)
    ]
    if isinstance(given, Mapping):
        named += list(given.items())
    elif callable(given):
        name = getattr(given, "__name__", "the function")
        raise TypeError(f"tools must be a list of functions (or a dict by name): pass [{name}]")
    elif given is not None:
        named += [(None, function) for function in given]
    for name, function in named:
        described = FunctionTool.from_function(function, name=name)
        earlier = found.setdefault(described.name, described)
        if not _same_function(earlier.function, described.function):
            raise ToolDefinitionError(
                f"two different functions are both given as tool {described.name!r}"
            )
    return found


def config_offering(config: Config, tools: Mapping[str, FunctionTool[..., Any]]) -> Config:
    """The config whose `tools` offer every runnable tool: a definition given in the config
    is kept as written (it wins over the function's own), every other tool is described."""
    given: list[ToolSchema] = [entry for entry in config.get("tools") or () if not callable(entry)]
    names = {entry.get("name") for entry in given}
    offered: list[ToolSpec] = [
        *given,
        *(described.definition for name, described in tools.items() if name not in names),
    ]
    if not offered:
        return config
    return {**config, "tools": offered}


def _parameters(
    function: Callable[..., Any], name: str, builder: SchemaBuilder, notes: dict[str, str]
) -> tuple[list[Field], tuple[str, ...]]:
    """The fields of the arguments object, and the parameters that must be passed by position."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"tool {name!r} has no signature to describe: {exc}") from None
    hints = type_hints(_annotated(function), f"function {name}", name)
    fields: list[Field] = []
    positional: list[str] = []
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {name!r}: *{parameter.name} and **{parameter.name} cannot be described "
                "to a model; give each argument its own parameter"
            )
        if parameter.kind is parameter.POSITIONAL_ONLY:
            positional.append(parameter.name)
        has_default = parameter.default is not parameter.empty
        hint = hints.get(parameter.name, parameter.empty)
        fields.append(
            field_of(
                parameter.name,
                builder.for_type(hint, f"parameter {parameter.name!r}"),
                notes.get(parameter.name),
                required=not has_default,
                default=parameter.default,
            )
        )
    return fields, tuple(positional)


def _annotated(function: Callable[..., Any]) -> Any:
    """What holds the annotations: the function, a partial's function, or a callable object's
    `__call__`."""
    if isinstance(function, functools.partial):
        return _annotated(function.func)
    if inspect.isfunction(function) or inspect.ismethod(function):
        return function
    call = type(function).__call__  # a callable object's method (a function's type's is a slot)
    return call if inspect.isfunction(call) else function


def _is_async(function: Callable[..., Any]) -> bool:
    if isinstance(function, functools.partial):
        return _is_async(function.func)
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        type(function).__call__
    )


def _run_to_end(awaitable: Any) -> Any:
    """Run a coroutine from blocking code: here when no event loop runs in this thread, else
    (blocking code called from async code) on a loop in a thread of its own."""

    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, wait()).result()


def _same_function(one: Callable[..., Any], other: Callable[..., Any]) -> bool:
    """The same function, or the same method of the same object (each access to a method
    makes a new bound-method object)."""
    return all(
        getattr(one, attribute, one) is getattr(other, attribute, other)
        for attribute in ("__func__", "__self__")
    )


def _copy(schema: Any) -> Any:
    """A deep copy of a JSON schema (dicts and lists only; faster than `copy.deepcopy`)."""
    if isinstance(schema, dict):
        return {key: _copy(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_copy(value) for value in schema]
    return schema


__all__ = [
    "FunctionTool",
    "ToolArgumentsError",
    "ToolDefinitionError",
    "ToolFunctions",
    "ToolSpec",
    "config_offering",
    "config_with_tool_definitions",
    "runnable_tools",
    "tool",
    "tool_definitions",
]
