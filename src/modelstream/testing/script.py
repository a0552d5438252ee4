"""Emulator replies written in a JSON or TOML file, for `modelstream emulate --script FILE`.

A test written in another language starts the emulator from a shell and says what it answers in
a file instead of Python (docs/testing.md, "From another language"). The file holds a list
`replies`, served in order to the requests that arrive (one each); when it runs out, every
request gets the emulator's default answer (an echo of the user's text). Each reply is one of:

    {"text": "Hello!"}                                    a turn with one text item
    {"items": [{"thinking": "…", "signature": "…"},       a turn with items in this order
               {"text": "…"},
               {"tool_call": "get_weather", "arguments": {"city": "Lisbon"}, "id": "call_1"}],
     "finish": "tool_call", "usage": {"prompt_tokens": 12, ...}}
    {"status": 429, "retry_after": 2}                     an HTTP error in the protocol's shape
    {"error_in_body": 500, "message": "…"}                that error's JSON as a 200 body
    {"body": "data: …\\n\\n", "content_type": "…"}        these exact bytes

and may add `path` (only a request to that path takes it) and the pacing and fault options of
`Reply` (`delay`, `chunk_size`, `fragment_size`, `delay_first_byte`, `disconnect_after_bytes`,
`malformed_frame_at`, `model`, `headers`). An unknown key or a wrong value (a timing of `nan` or
`inf` included) is a `ScriptError` naming the reply and the key; so is a file nesting objects and
arrays more than `bounded_json.MAX_DEPTH` (64) levels deep.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast, get_args

from .. import bounded_json
from ..bounded_json import MAX_DEPTH, JSONTooDeepError, loads_toml
from ..types import Usage
from .replies import Reply
from .turns import Finish, Text, Thinking, ToolCall, Turn, TurnItem

_FINISHES: tuple[str, ...] = get_args(Finish)
_USAGE_KEYS = ("cached_tokens", "prompt_tokens", "thoughts_tokens", "response_tokens")
# What each kind of reply takes besides the key that names it (and `path`).
_PACING = {"delay": float, "chunk_size": int, "delay_first_byte": float}
_FAULTS = {"disconnect_after_bytes": int, "malformed_frame_at": int}
_OPTIONS: dict[str, dict[str, type]] = {
    "turn": {
        **_PACING,
        **_FAULTS,
        "fragment_size": int,
        "model": str,
        "headers": dict,
        "finish": str,
        "usage": dict,
    },
    "status": {"retry_after": float, "body": object, "headers": dict, "delay_first_byte": float},
    "error_in_body": {"message": str, "status": int, "retry_after": float, "headers": dict},
    "body": {**_PACING, **_FAULTS, "status": int, "content_type": str, "headers": dict},
}


class ScriptError(ValueError):
    """The script file cannot be read or says something the emulator cannot do."""


@dataclass(frozen=True)
class ScriptedReply:
    """One reply of a script and the path it is kept for (None: any endpoint)."""

    reply: Reply
    path: str | None = None


def load_script(path: str | Path) -> list[ScriptedReply]:
    """The replies of a `.json` or `.toml` script file, in order."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise ScriptError(f"cannot read the script {file}: {exc.strerror or exc}") from None
    toml = file.suffix.lower() == ".toml"
    try:
        # orjson reads JSON proper: NaN and Infinity, which json.loads took, are refused
        data = loads_toml(raw.decode("utf-8")) if toml else bounded_json.loads(raw)
    except JSONTooDeepError:
        raise ScriptError(
            f"the script {file} nests objects and arrays more than {MAX_DEPTH} levels deep, "
            "the limit; flatten it"
        ) from None
    except ValueError as exc:  # TOMLDecodeError, orjson's JSONDecodeError, UnicodeDecodeError
        kind = "TOML" if toml else "JSON"
        raise ScriptError(f"the script {file} is not valid {kind}: {exc}") from None
    return script_replies(data)


def script_replies(data: Any) -> list[ScriptedReply]:
    """The replies of a parsed script: `{"replies": [...]}`."""
    if not isinstance(data, Mapping) or set(data) - {"replies"}:
        raise ScriptError('a script is {"replies": [...]} (in TOML: [[replies]] tables)')
    replies = data.get("replies", [])
    if not isinstance(replies, list):
        raise ScriptError('"replies" must be a list')
    return [_reply(entry, f"reply {number}") for number, entry in enumerate(replies, start=1)]


def _reply(entry: Any, where: str) -> ScriptedReply:
    if not isinstance(entry, Mapping):
        raise ScriptError(f"{where} must be a table/object, got {type(entry).__name__}")
    options = dict(entry)
    path = options.pop("path", None)
    if path is not None and not isinstance(path, str):
        raise ScriptError(f"{where}: path must be a string")
    kinds = [k for k in ("text", "items", "status", "error_in_body", "body") if k in options]
    if len(kinds) != 1:
        raise ScriptError(
            f"{where} needs exactly one of text, items, status, error_in_body, body; "
            f"got {', '.join(kinds) or 'none'}"
        )
    kind = kinds[0]
    value = options.pop(kind)
    family = "turn" if kind in ("text", "items") else kind
    _check_options(options, _OPTIONS[family], where)
    try:
        if family == "turn":
            return ScriptedReply(_turn_reply(kind, value, options, where), path)
        if kind == "status":
            return ScriptedReply(Reply.status(_int(value, where, kind), **options), path)
        if kind == "error_in_body":
            return ScriptedReply(Reply.error_in_body(_int(value, where, kind), **options), path)
        if not isinstance(value, str):
            raise ScriptError(f"{where}: body must be a string")
        return ScriptedReply(Reply.body(value, **options), path)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ScriptError):
            raise
        raise ScriptError(f"{where}: {exc}") from None


def _turn_reply(kind: str, value: Any, options: dict[str, Any], where: str) -> Reply:
    finish = options.pop("finish", None)
    if finish is not None and finish not in _FINISHES:
        raise ScriptError(f"{where}: finish must be one of {', '.join(_FINISHES)}")
    usage = options.pop("usage", None)
    if kind == "text":
        if not isinstance(value, str):
            raise ScriptError(f"{where}: text must be a string")
        items: list[TurnItem] = [Text(value)]
    else:
        if not isinstance(value, list):
            raise ScriptError(f"{where}: items must be a list")
        items = [_item(item, f"{where}, item {n}") for n, item in enumerate(value, start=1)]
    turn = Turn(items=items, finish=cast(Finish | None, finish), usage=_usage(usage, where))
    return Reply.turn(turn, **options)


def _item(entry: Any, where: str) -> TurnItem:
    if not isinstance(entry, Mapping):
        raise ScriptError(f"{where} must be a table/object")
    keys = set(entry)
    if "text" in keys and keys == {"text"}:
        return Text(_str(entry["text"], where, "text"))
    if "thinking" in keys and keys <= {"thinking", "signature"}:
        signature = entry.get("signature")
        return Thinking(
            _str(entry["thinking"], where, "thinking"),
            signature=None if signature is None else _str(signature, where, "signature"),
        )
    if "tool_call" in keys and keys <= {"tool_call", "arguments", "id"}:
        arguments = entry.get("arguments", {})
        if not isinstance(arguments, Mapping):
            raise ScriptError(f"{where}: arguments must be a table/object")
        call_id = entry.get("id")
        return ToolCall(
            _str(entry["tool_call"], where, "tool_call"),
            dict(arguments),
            id=None if call_id is None else _str(call_id, where, "id"),
        )
    raise ScriptError(
        f"{where} is one of {{text}}, {{thinking, signature?}}, "
        f"{{tool_call, arguments?, id?}}; got keys {', '.join(sorted(keys))}"
    )


def _usage(value: Any, where: str) -> Usage | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) - set(_USAGE_KEYS):
        raise ScriptError(f"{where}: usage takes {', '.join(_USAGE_KEYS)}")
    counts = {key: value.get(key) for key in _USAGE_KEYS}
    for key, count in counts.items():
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            raise ScriptError(f"{where}: usage {key} must be a whole number")
    return {
        "cached_tokens": counts["cached_tokens"],
        "prompt_tokens": counts["prompt_tokens"],
        "thoughts_tokens": counts["thoughts_tokens"],
        "response_tokens": counts["response_tokens"],
    }


def _check_options(options: Mapping[str, Any], known: Mapping[str, type], where: str) -> None:
    for key, value in options.items():
        if key not in known:
            raise ScriptError(
                f"{where}: unknown key {key!r}; this reply takes {', '.join(sorted(known))}"
            )
        wanted = known[key]
        if wanted is float and isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):  # TOML's nan and inf
                raise ScriptError(f"{where}: {key} must be a finite number, got {value!r}")
            continue
        if wanted is not object and (isinstance(value, bool) or not isinstance(value, wanted)):
            raise ScriptError(f"{where}: {key} must be a {wanted.__name__}")


def _int(value: Any, where: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScriptError(f"{where}: {key} must be an HTTP status code")
    return value


def _str(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str):
        raise ScriptError(f"{where}: {key} must be a string")
    return value


__all__ = ["ScriptError", "ScriptedReply", "load_script", "script_replies"]
