"""The value rules of every config key, in one table, checked before a request is encoded.

Each `Config` key has one rule: the type and range no provider refuses (`temperature` a number
from 0 to 2, `max_tokens` an integer of at least 1, ...). A value that breaks it is refused by a
sentence that names the value, says what it must be and shows what it was:
`config['temperature'] must be a number from 0 to 2, got '0.5' (a str)`. A key that is not a
config key is refused with the key it most likely meant (`did you mean 'max_tokens'?`).

Every path reaches `check_config` before anything is sent: the clients before they describe
function tools (`functions=True`), every encoder in `read_config`, and the server before it
encodes the upstream request. What one protocol cannot express (a seed on Anthropic) is still
its encoder's to refuse; tool_choice names that no tool has are checked once the tools are known.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from ...errors import InvalidConfigError
from ...types import Config
from .encoding import THINKING_LEVELS

CONFIG_KEYS: tuple[str, ...] = tuple(Config.__annotations__)

# Other libraries' names for a config key: a "did you mean" that difflib cannot find.
ALIASES: Mapping[str, str] = {
    "system": "system_prompt",
    "system_message": "system_prompt",
    "system_instruction": "system_prompt",
    "instructions": "system_prompt",
    "max_completion_tokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "max_new_tokens": "max_tokens",
    "stop_sequences": "stop",
    "reasoning_effort": "thinking_level",
    "functions": "tools",
    "temp": "temperature",
}

# Provider fields with no config key, which difflib would match to one that means something
# else (`top_k` is not `top_p`): they go through extra_body.
PROVIDER_FIELDS = frozenset(
    {"top_k", "frequency_penalty", "presence_penalty", "logit_bias", "logprobs", "n", "user"}
)

TOOL_CHOICE_MODES = ("auto", "required", "none")
_IMAGE_SETTINGS = ("aspect_ratio", "size")
_SPEECH_SETTINGS = ("voice", "language", "speakers", "format")

Path = tuple[str | int, ...]


class Problem(NamedTuple):
    """What is wrong with a value: where inside it (empty: the value itself) and the rest of
    the sentence after the value's name."""

    where: Path
    says: str


Rule = Callable[[Any, bool], Problem | None]  # (value, functions allowed) -> problem or None


def check_config(config: object, *, protocol: str = "", functions: bool = False) -> None:
    """Raise `InvalidConfigError` for the first key of `config` that is not a config key or
    whose value breaks its rule; None (no config, or a key set to None) is unset.
    `functions`: Python functions may stand in `tools` (the clients describe them)."""
    if config is None:
        return
    if not isinstance(config, Mapping):
        raise InvalidConfigError(
            "config",
            f"config must be a dict of config keys, got {shown(config)}",
            path="config",
            protocol=protocol,
        )
    for key, value in config.items():
        if key not in RULES:
            raise InvalidConfigError(
                str(key), unknown_key(key), path=f"config.{key}", protocol=protocol
            )
        problem = None if value is None else RULES[key](value, functions)
        if problem is not None:
            where = (key, *problem.where)
            raise InvalidConfigError(
                key,
                f"{subscript(where)} {problem.says}",
                path=dotted(where),
                protocol=protocol,
            )


def unknown_key(key: object, also: Iterable[str] = ()) -> str:
    """The sentence for a key that is not a config key, with the key it most likely meant
    among the config keys and `also` (a call's own parameters, for a keyword argument)."""
    if not isinstance(key, str):
        return f"config keys are strings, got {shown(key)}"
    through_extra_body = f"send it through extra_body, e.g. {{'extra_body': {{{key!r}: ...}}}}"
    if key in PROVIDER_FIELDS:
        return f"unknown config key {key!r}: it is a provider's own field, so {through_extra_body}"
    meant = ALIASES.get(key) or _close(key, [*CONFIG_KEYS, *also])
    if meant is not None:
        return f"unknown config key {key!r}: did you mean {meant!r}?"
    return (
        f"unknown config key {key!r}: the config keys are {', '.join(CONFIG_KEYS)}; for a "
        f"provider's own field, {through_extra_body}"
    )


def subscript(path: Path) -> str:
    """`config['tools'][0]['name']`: a value's name as Python reads it."""
    return "config" + "".join(f"[{part!r}]" for part in path)


def dotted(path: Path) -> str:
    """`config.tools[0].name`: a value's name as JSON paths write it."""
    return "config" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def shown(value: object) -> str:
    """A value as a refusal shows it: `'0.5' (a str)`, `the function get_weather`."""
    if inspect.isroutine(value) or _is_function_tool(value):
        return f"the function {getattr(value, '__name__', None) or getattr(value, 'name', '?')}"
    text = repr(value)
    if len(text) > 60:
        text = text[:50] + " …" + text[-6:]
    kind = type(value).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    return f"{text} ({article} {kind})"


# --- the rules --------------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # True is no token count


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _must(expected: str, value: Any, *where: str | int) -> Problem:
    return Problem(where, f"must be {expected}, got {shown(value)}")


def _plain(expected: str, accepts: Callable[[Any], bool]) -> Rule:
    """A rule that only says what the value must be."""

    def rule(value: Any, functions: bool) -> Problem | None:
        return None if accepts(value) else _must(expected, value)

    return rule


def _between(low: float, high: float) -> Rule:
    return _plain(
        f"a number from {low:g} to {high:g}", lambda v: _is_number(v) and low <= v <= high
    )


def _stop(value: Any, functions: bool) -> Problem | None:
    if isinstance(value, str):
        return None
    if not isinstance(value, list):
        return _must("a string or a list of strings", value)
    for index, sequence in enumerate(value):
        if not isinstance(sequence, str):
            return _must("a string", sequence, index)
    return None


def _tools(value: Any, functions: bool) -> Problem | None:
    if not isinstance(value, list):
        return _not_a_tool_list(value, functions)
    for index, entry in enumerate(value):
        problem = _tool(entry, functions)
        if problem is not None:
            return Problem((index, *problem.where), problem.says)
    return None


def _not_a_tool_list(value: Any, functions: bool) -> Problem:
    if _is_described_function(value):
        name = shown(value).removeprefix("the function ")
        fix = f"pass [{name}]" if functions else _describe_it(name)
        return Problem((), f"must be a list of tools, got {shown(value)}: {fix}")
    if isinstance(value, dict):
        return Problem((), f"must be a list of tools, got {shown(value)}: put the tool in a list")
    expected = "tool schemas or functions" if functions else "tool schemas"
    return _must(f"a list of {expected}", value)


def _tool(entry: Any, functions: bool) -> Problem | None:
    if _is_described_function(entry):
        if functions:
            return None
        function = shown(entry).removeprefix("the function ")
        return Problem(
            (), f"is {shown(entry)}, but a request sends tool schemas: {_describe_it(function)}"
        )
    if not isinstance(entry, dict):
        alternative = " or a function" if functions else ""
        return _must(f"a tool schema (a dict with a 'name'){alternative}", entry)
    if "name" not in entry and isinstance(entry.get("function"), dict):
        return Problem(
            (),
            "is an OpenAI Chat tool ({'type': 'function', 'function': {...}}): give the "
            "function's own dict, {'name': ..., 'description': ..., 'parameters': {...}}",
        )
    if "input_schema" in entry and "parameters" not in entry:
        return Problem(
            ("input_schema",), "is Anthropic's name: the JSON schema goes in 'parameters'"
        )
    name = entry.get("name")
    if name is None:
        return Problem(("name",), "is missing: every tool needs a name")
    if not (isinstance(name, str) and name):
        return _must("a non-empty string", name, "name")
    for key, (kind, expected) in _TOOL_FIELDS.items():
        if entry.get(key) is not None and not isinstance(entry[key], kind):
            return _must(expected, entry[key], key)
    return None


# A tool schema's optional fields (`types.ToolSchema`); None counts as unset, as encoders read it.
_TOOL_FIELDS: Mapping[str, tuple[type, str]] = {
    "description": (str, "a string"),
    "parameters": (dict, "a JSON schema (a dict)"),
    "strict": (bool, "True or False"),
}


def _describe_it(name: str) -> str:
    return (
        f"pass [modelstream.tool({name}).definition] (a Client or Conversation takes the "
        "function itself and describes it)"
    )


def _is_described_function(value: Any) -> bool:
    return inspect.isroutine(value) or _is_function_tool(value)


def _is_function_tool(value: Any) -> bool:
    """A `modelstream.tool(fn)` (read without importing the tools package)."""
    return callable(value) and hasattr(value, "definition") and hasattr(value, "function")


def _tool_choice(value: Any, functions: bool) -> Problem | None:
    if isinstance(value, str) and value in TOOL_CHOICE_MODES:
        return None
    expected = "'auto', 'required', 'none' or a list of tool names"
    if isinstance(value, str):
        meant = {"any": "required"}.get(value) or _close(value, TOOL_CHOICE_MODES)
        if meant is not None:
            return Problem((), f"must be {expected}, got {value!r}: did you mean {meant!r}?")
        return Problem(
            (),
            f"must be {expected}, got {value!r}: to make the model call that tool, pass "
            f"[{value!r}]",
        )
    if not isinstance(value, list):
        return _must(expected, value)
    if not value:
        return Problem((), "is an empty list, which allows no tool: use 'none'")
    for index, name in enumerate(value):
        if not (isinstance(name, str) and name):
            return _must("a tool's name (a non-empty string)", name, index)
    return None


def _response_format(value: Any, functions: bool) -> Problem | None:
    if isinstance(value, type):
        from ...structured.output import is_output_class  # the tools' schema builder, lazily

        if is_output_class(value):
            return None
        return Problem(
            (),
            f"is the class {value.__name__}, which is no pydantic model, dataclass or TypedDict: "
            "give one of those, or a JSON schema dict",
        )
    if not isinstance(value, dict):
        return _must(
            "a pydantic model, a dataclass or a TypedDict (the class), a JSON schema (a dict), "
            "or OpenAI's response_format wrapper of one",
            value,
        )
    if value.get("type") == "json_schema":
        wrapper = value.get("json_schema", value)
        if not isinstance(wrapper, dict) or not isinstance(wrapper.get("schema"), dict):
            return Problem(
                (),
                "of type 'json_schema' needs its schema: {'type': 'json_schema', "
                "'json_schema': {'name': ..., 'schema': {...}}}, or give the JSON schema itself",
            )
    return None


def _thinking_level(value: Any, functions: bool) -> Problem | None:
    if isinstance(value, str) and value in THINKING_LEVELS:
        return None
    expected = "one of " + ", ".join(map(repr, THINKING_LEVELS))
    if value == "minimal":  # OpenAI's effort below "low": a provider's value, not a level
        return Problem(
            (),
            f"must be {expected}, got 'minimal': send OpenAI's own effort through extra_body, "
            "e.g. {'reasoning_effort': 'minimal'} on Chat",
        )
    meant = _close(value, THINKING_LEVELS) if isinstance(value, str) else None
    if meant is not None:
        return Problem((), f"must be {expected}, got {value!r}: did you mean {meant!r}?")
    if _is_int(value):
        return Problem(
            (),
            f"must be {expected}, got {shown(value)}: a level, not a token budget (each "
            "protocol turns the level into its own setting)",
        )
    return _must(expected, value)


def _media(known: tuple[str, ...]) -> Rule:
    """`image_output` / `speech_output`: True, False, or a dict of known settings."""

    def rule(value: Any, functions: bool) -> Problem | None:
        if isinstance(value, bool):
            return None
        if not isinstance(value, dict):
            return _must(f"True or a dict of settings ({', '.join(known)})", value)
        unknown = sorted(str(name) for name in value if name not in known)
        if unknown:
            meant = _close(unknown[0], known)
            hint = f" (did you mean {meant!r}?)" if meant else ""
            return Problem(
                (),
                f"has unknown setting(s) {', '.join(unknown)}; known: "
                f"{', '.join(sorted(known))}{hint}",
            )
        for name, setting in value.items():
            if name == "speakers":
                if not _is_speaker_map(setting):
                    return Problem(
                        (name,),
                        "must map each speaker's name to a voice, e.g. {'Joe': 'Kore'}, got "
                        + shown(setting),
                    )
            elif not (isinstance(setting, str) and setting):
                return _must("a non-empty string", setting, name)
        return None

    return rule


def _is_speaker_map(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    )


def _close(value: str, choices: Iterable[str]) -> str | None:
    return next(iter(difflib.get_close_matches(value, list(choices), n=1)), None)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


# One rule per Config key (tests/core/test_config_rules.py holds the two in step).
RULES: Mapping[str, Rule] = {
    "system_prompt": _plain("a string", _is_str),
    "max_tokens": _plain("an integer of at least 1", lambda v: _is_int(v) and v >= 1),
    "temperature": _between(0, 2),
    "top_p": _between(0, 1),
    "stop": _stop,
    "seed": _plain("an integer", _is_int),
    "tools": _tools,
    "tool_choice": _tool_choice,
    "parallel_tool_calls": _plain("True or False", _is_bool),
    "response_format": _response_format,
    "thinking_level": _thinking_level,
    "thinking_summary": _plain("True or False", _is_bool),
    "prompt_caching": _plain("True or False", _is_bool),
    "image_output": _media(_IMAGE_SETTINGS),
    "speech_output": _media(_SPEECH_SETTINGS),
    "extra_body": _plain("a dict of provider fields", lambda v: isinstance(v, dict)),
    "trace_id": _plain("a string", _is_str),
}
