"""Turning a tool call's joined argument text into a JSON object, strictly or leniently.

Strict (the default) accepts only a JSON object; an empty string means "no arguments" (`{}`),
as Anthropic (`partial_json: ""`) and Gemini (no `args`) send for argument-less calls.
Lenient mode (seed `002_…`, opt-in) recovers what it can and says how:
`partial` (the text was cut off; the fields received so far, via jiter's partial mode),
`repaired` (malformed but fixable, via json-repair), `invalid` (nothing usable: `{}`).
"""

from __future__ import annotations

from typing import Any, Literal

import jiter
import orjson

RecoveryMode = Literal["repaired", "partial", "invalid"]


def parse_strict(raw: str) -> tuple[dict[str, Any] | None, str]:
    """The arguments object, or None and why not."""
    if not raw.strip():
        return {}, ""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"a JSON {_json_type(value)}, not an object"
    return value, ""


def is_cut_off(raw: str) -> bool:
    """Whether the text is the start of a JSON object that stopped before its end, as the
    output limit leaves it (rather than malformed JSON)."""
    if not raw.lstrip().startswith("{"):
        return False
    return _ends_early(raw.encode("utf-8", "replace"))


def _ends_early(data: bytes) -> bool:
    try:
        jiter.from_json(data)
    except ValueError as exc:
        return "EOF while parsing" in str(exc)
    return False


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null"


def recover(raw: str) -> tuple[dict[str, Any], RecoveryMode]:
    """Best-effort arguments for text that `parse_strict` rejected."""
    # "replace": a lone surrogate from a lax upstream decoder must not crash the recovery.
    data = raw.encode("utf-8", "replace")
    if _ends_early(data):
        try:
            prefix = jiter.from_json(data, partial_mode="trailing-strings")
        except ValueError:  # nothing parseable before the cut (e.g. only whitespace)
            prefix = None
        if isinstance(prefix, dict):
            return prefix, "partial"
    # imported here: only a lenient turn with broken arguments needs it, and its import costs
    # more start-up time (~12 ms) than the rest of a `modelstream replay` of a short file
    from json_repair import repair_json

    try:
        repaired = repair_json(raw, return_objects=True)
    except Exception:  # json-repair raises assorted errors on hopeless input
        repaired = None
    if isinstance(repaired, dict) and repaired:
        return repaired, "repaired"
    return {}, "invalid"
