"""Reading `Config` the same way in every encoder (docs/requests-*.md, "rules for every key").

Each encoder maps the config to its own body, but what a config value means is decided here,
once: what `None` means, how `extra_body` merges, what a `response_format` or a `tool_choice`
asks for. Which keys exist and which values each takes is the table of config_rules.py, which
`read_config` applies first. A rule changed here changes for every protocol.
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from typing import Any

from ...errors import UnsupportedParameterError
from ...types import Config, ThinkingLevel, ToolChoice
from .config_rules import TOOL_CHOICE_MODES, check_config
from .encoding import THINKING_LEVELS

_EMBEDDING_KEYS = frozenset({"extra_body", "trace_id"})


def read_config(config: Config, protocol: str) -> dict[str, Any]:
    """The config's keys that have a value (None counts as unset), once every key and value has
    passed its rule (config_rules.py): a typo or a value no provider takes is refused with
    `InvalidConfigError`, never sent or ignored."""
    check_config(config, protocol=protocol)
    return {key: value for key, value in config.items() if value is not None}


def check_embedding_config(options: dict[str, Any], protocol: str) -> None:
    """An embedding has no sampling, tools or reasoning: any key but extra_body and trace_id
    is refused rather than dropped."""
    for key in options:
        if key not in _EMBEDDING_KEYS:
            raise UnsupportedParameterError(
                key, protocol, "an embedding request takes only extra_body (and trace_id)"
            )


def merge_extra_body(body: dict[str, Any], extra: Any, protocol: str) -> dict[str, Any]:
    """`body` with `extra_body` merged in last: objects merge key by key, None removes the
    encoder's key, anything else replaces it. Values are copied, so the request never shares an
    object with the caller's config."""
    if extra is None:
        return body
    if not isinstance(extra, dict):
        raise UnsupportedParameterError("extra_body", protocol, "must be a dict")
    out = dict(body)
    for key, value in extra.items():
        current = out.get(key)
        if value is None:
            out.pop(key, None)
        elif isinstance(current, dict) and isinstance(value, dict):
            out[key] = merge_extra_body(current, value, protocol)
        else:
            out[key] = copy.deepcopy(value)
    return out


def stop_sequences(stop: Any, protocol: str) -> list[str]:
    """`stop` as a list: one string is one stop sequence."""
    if isinstance(stop, str):
        return [stop]
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise UnsupportedParameterError("stop", protocol, "must be a list of strings")
    return list(stop)


def thinking_level(level: Any, protocol: str) -> ThinkingLevel:
    """`thinking_level` checked against the levels every encoder has a mapping for."""
    if level not in THINKING_LEVELS:
        raise UnsupportedParameterError(
            "thinking_level", protocol, f"{level!r} is not one of {', '.join(THINKING_LEVELS)}"
        )
    checked: ThinkingLevel = level
    return checked


def check_prompt_caching(options: dict[str, Any], protocol: str) -> None:
    """For a provider that caches prompt prefixes by itself: both values are honoured with no
    request field, but a value that is not a bool is still refused."""
    if "prompt_caching" in options and not isinstance(options["prompt_caching"], bool):
        raise UnsupportedParameterError("prompt_caching", protocol, "must be True or False")


def tool_list(options: dict[str, Any], protocol: str) -> list[dict[str, Any]]:
    """`tools`, checked to be a list of tool schemas with string names (empty when unset)."""
    tools = options.get("tools") or []
    if not isinstance(tools, list):
        raise UnsupportedParameterError("tools", protocol, "must be a list of tool schemas")
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise UnsupportedParameterError("tools", protocol, "every tool needs a string name")
    return tools


def checked_tool_choice(options: dict[str, Any], protocol: str) -> ToolChoice | None:
    """`tool_choice` checked: "auto", "required", "none", or a list of tool names (each kept
    once, in order); None when unset."""
    choice = options.get("tool_choice")
    if choice is None or choice in TOOL_CHOICE_MODES:
        mode: ToolChoice | None = choice
        return mode
    if isinstance(choice, list) and choice and all(isinstance(name, str) for name in choice):
        return list(dict.fromkeys(choice))
    raise UnsupportedParameterError(
        "tool_choice",
        protocol,
        "an empty list allows no tool; use 'none'"
        if choice == []
        else f"{choice!r} is not 'auto', 'required', 'none' or a list of tool names",
    )


def tool_choice_applies(choice: ToolChoice, offered: Collection[Any], protocol: str) -> bool:
    """Whether a checked tool_choice goes out, given the names of the tools the request offers.

    Without tools, "auto" and "none" mean nothing and are left out (APIs reject a tool_choice
    with no tools); "required" or names cannot be honoured and are refused, as is a name that
    is not one of the tools."""
    if not offered:
        if choice in ("auto", "none"):
            return False
        raise UnsupportedParameterError(
            "tool_choice",
            protocol,
            f"{choice!r} needs tools to choose from; there are no tools to call",
        )
    if isinstance(choice, list):
        unknown = [name for name in choice if name not in offered]
        if unknown:
            raise UnsupportedParameterError(
                "tool_choice",
                protocol,
                f"names tools the request does not offer: {', '.join(map(repr, unknown))}",
            )
    return True


def response_format_spec(response_format: Any, protocol: str) -> dict[str, Any] | None:
    """What `response_format` asks for, in the shape of OpenAI Responses' `text.format`:
    `{type: json_schema, name, schema, strict?, description?}`, `{type: json_object}`, or None
    for plain text. Every encoder reads it through here, so every protocol accepts the same
    values.

    `response_format` is a JSON schema (named "response"), or one of OpenAI's wrappers of one:
    Chat's `{type: json_schema, json_schema: {name, schema, strict?, description?}}`, Responses'
    `{type: json_schema, name, schema, ...}`, the bare `{name, schema, ...}` (a dict `schema`
    key is no JSON-schema keyword), `{type: json_object}` (JSON mode) or `{type: text}`. A
    json_schema wrapper without its schema is refused. A class (a pydantic model, a dataclass,
    a TypedDict) is its strict json_schema (`structured.output`)."""
    if isinstance(response_format, type):
        from ...structured.output import output_type  # imports the tools' schema builder

        found = output_type(response_format)
        assert found is not None
        response_format = found.response_format
    if not isinstance(response_format, dict):
        raise UnsupportedParameterError("response_format", protocol, "must be a JSON schema dict")
    kind = response_format.get("type")
    if kind == "json_object":
        return {"type": "json_object"}
    if kind == "text" and set(response_format) == {"type"}:
        return None
    wrapper = response_format
    if kind == "json_schema":
        wrapper = response_format.get("json_schema", response_format)
        if not isinstance(wrapper, dict) or not isinstance(wrapper.get("schema"), dict):
            raise UnsupportedParameterError(
                "response_format", protocol, "a json_schema response_format needs its schema"
            )
    if not isinstance(wrapper.get("schema"), dict):  # the JSON schema itself
        return {"type": "json_schema", "name": "response", "schema": copy.deepcopy(wrapper)}
    spec: dict[str, Any] = {
        "type": "json_schema",
        "name": wrapper.get("name") or "response",
        "schema": copy.deepcopy(wrapper["schema"]),
    }
    for key in ("strict", "description"):
        if wrapper.get(key) is not None:
            spec[key] = wrapper[key]
    return spec


_IMAGE_KEYS = frozenset({"aspect_ratio", "size"})
_SPEECH_KEYS = frozenset({"voice", "language", "speakers", "format"})


def image_output(options: dict[str, Any], protocol: str) -> dict[str, str] | None:
    """`image_output` checked: True (the model's own defaults) or a dict of `aspect_ratio` and
    `size` strings; None when unset or False. Whether a value suits the protocol is the
    encoder's to say."""
    return _media_output(options, "image_output", _IMAGE_KEYS, protocol)


def speech_output(options: dict[str, Any], protocol: str) -> dict[str, Any] | None:
    """`speech_output` checked: True or a dict of `voice`, `language`, `format` strings and
    `speakers` (speaker name -> voice); None when unset or False."""
    speech = _media_output(options, "speech_output", _SPEECH_KEYS, protocol)
    speakers = (speech or {}).get("speakers")
    if speakers is not None and not (
        isinstance(speakers, dict)
        and speakers
        and all(isinstance(k, str) and isinstance(v, str) for k, v in speakers.items())
    ):
        raise UnsupportedParameterError(
            "speech_output",
            protocol,
            "speakers must map each speaker's name to a voice, e.g. {'Joe': 'Kore'}",
        )
    return speech


def refuse_media_output(options: dict[str, Any], protocol: str, why: dict[str, str]) -> None:
    """Refuse `image_output` / `speech_output` (the keys of `why`) when asked for."""
    for key, reason in why.items():
        if options.get(key):
            raise UnsupportedParameterError(key, protocol, reason)


def _media_output(
    options: dict[str, Any], key: str, known: frozenset[str], protocol: str
) -> dict[str, Any] | None:
    value = options.get(key)
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if not isinstance(value, dict):
        raise UnsupportedParameterError(key, protocol, "must be True or a dict of settings")
    unknown = sorted(set(value) - known)
    if unknown:
        raise UnsupportedParameterError(
            key,
            protocol,
            f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}",
        )
    for name, setting in value.items():
        if name != "speakers" and not (isinstance(setting, str) and setting):
            raise UnsupportedParameterError(key, protocol, f"{name} must be a non-empty string")
    return {name: setting for name, setting in value.items() if setting is not None}
