"""The emulator's Gemini Interactions API, in the current vocabulary of the corpus captures
(`vercel-interactions-basic`, `-tool-call`, `-stateless-turn2`): `interaction.created`, one
`interaction.status_update`, a step per item (`step.start` / `step.delta` / `step.stop`) and
`interaction.completed` with the status (completed; requires_action after a function call;
incomplete when cut by the token limit) and the usage. A thought step streams
`thought_summary` deltas then one `thought_signature` delta; a function call step names its
`id`, `name` and `signature` at its start (with `arguments: {}`, as the API does) and streams
the arguments as JSON text in `arguments_delta`s. Frames are `event: <event_type>` then
`data: <json>` with LF line ends (the README: no raw body was available to confirm them).
In-stream errors: an `error` event, or the interaction ending with status `failed`."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from ...testing.emulation import (
    EmulatedStream,
    StreamEmulator,
    StreamError,
    arguments_json,
    compact_json,
    count,
    last_text,
)
from ...testing.turns import Text, Thinking, ToolCall
from ..gemini_generate_content.emulator import gemini_error_body

_STATUS = {"stop": "completed", "tool_call": "requires_action", "length": "incomplete"}
_ERROR_STATUS = {
    400: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    return (
        b"event: "
        + kind.encode()
        + b"\ndata: "
        + compact_json({**payload, "event_type": kind})
        + b"\n\n"
    )


def _interactions(s: EmulatedStream) -> Iterator[bytes]:
    yield _event(
        "interaction.created",
        {
            "interaction": {
                "id": s.id,
                "status": "in_progress",
                "object": "interaction",
                "model": s.model,
            }
        },
    )
    yield _event("interaction.status_update", {"interaction_id": s.id, "status": "in_progress"})
    for index, item in enumerate(s.turn.items):
        deltas: list[dict[str, Any]]
        if isinstance(item, Text):
            step: dict[str, Any] = {"type": "model_output"}
            deltas = [{"text": piece, "type": "text"} for piece in s.pieces(item.text)]
        elif isinstance(item, Thinking):
            step = {"type": "thought"}
            deltas = [
                {"content": {"type": "text", "text": piece}, "type": "thought_summary"}
                for piece in s.pieces(item.thinking)
            ]
            if item.signature is not None:
                deltas.append({"signature": item.signature, "type": "thought_signature"})
        elif isinstance(item, ToolCall):
            step = {
                "id": s.call_id(item, index, "call_"),
                "signature": item.signature or "",
                "type": "function_call",
                "name": item.name,
                "arguments": {},
            }
            deltas = [
                {"arguments": piece, "type": "arguments_delta"}
                for piece in s.pieces(arguments_json(item))
            ]
        else:
            continue
        yield _event("step.start", {"index": index, "step": step})
        for delta in deltas:
            yield _event("step.delta", {"index": index, "delta": delta})
        yield _event("step.stop", {"index": index})
    interaction: dict[str, Any] = {"id": s.id, "status": _STATUS.get(s.finish, "completed")}
    if s.finish == "unknown":  # no status says it: the reason the model stopped does
        interaction["finish_reason"] = "SAFETY"
    if s.include_usage:
        interaction["usage"] = _usage(s)
    stamp = datetime.fromtimestamp(s.created, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    interaction |= {
        "created": stamp,
        "updated": stamp,
        "service_tier": "standard",
        "object": "interaction",
        "model": s.model,
    }
    yield _event("interaction.completed", {"interaction": interaction})


def _usage(s: EmulatedStream) -> dict[str, Any]:
    usage = s.usage
    cached = count(usage, "cached_tokens")
    input_tokens = count(usage, "prompt_tokens") + cached
    output = count(usage, "response_tokens")
    thoughts = count(usage, "thoughts_tokens")
    return {
        "total_tokens": input_tokens + output + thoughts,
        "total_input_tokens": input_tokens,
        "input_tokens_by_modality": [{"modality": "text", "tokens": input_tokens}],
        "total_cached_tokens": cached,
        "total_output_tokens": output,
        "total_tool_use_tokens": 0,
        "total_thought_tokens": thoughts,
    }


def _stream_error(error: StreamError, s: EmulatedStream) -> bytes:
    code = error.status or 500
    body = {"code": code, "status": _ERROR_STATUS.get(code, "UNKNOWN"), "message": error.message}
    if error.kind == "failed":
        interaction = {"id": s.id, "status": "failed", "error": body, "object": "interaction"}
        return _event("interaction.completed", {"interaction": interaction})
    if error.kind != "error":
        raise ValueError(f"gemini-interactions reports 'error' or 'failed', not {error.kind!r}")
    return _event("error", {"error": body})


def _interactions_text(step: dict[str, Any]) -> str | None:
    kind = step.get("type")
    if kind == "user_input":
        content = step.get("content")
        if isinstance(content, str):
            return content
        texts = [
            part["text"]
            for part in content or ()
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        return " ".join(text for text in texts if text)
    if kind == "function_result":
        result = step.get("result")
        return result if isinstance(result, str) else compact_json(result).decode()
    return None


def _last_user_text(body: dict[str, Any]) -> str:
    steps = body.get("input")
    if isinstance(steps, str):
        return steps
    return last_text(steps, _interactions_text)


EMULATOR = StreamEmulator(
    write=_interactions,
    error_body=gemini_error_body,
    last_user_text=_last_user_text,
    response_id_prefix="v1_emu",
    stream_error=_stream_error,
)
