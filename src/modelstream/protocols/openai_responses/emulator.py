"""The emulator's OpenAI Responses: a `reasoning` item with one summary part, whose signature is
its `encrypted_content`; each text is a `message` item."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from typing import Any

from ...testing.emulation import (
    EmulatedStream,
    StreamEmulator,
    arguments_json,
    compact_json,
    count,
    joined_text,
    last_text,
)
from ...testing.turns import Media, Text, Thinking, ToolCall
from .writer import openai_error_body


def _responses(s: EmulatedStream) -> Iterator[bytes]:
    sequence = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal sequence
        body = {"type": kind, "sequence_number": sequence, **fields}
        sequence += 1
        return b"event: " + kind.encode() + b"\ndata: " + compact_json(body) + b"\n\n"

    response: dict[str, Any] = {
        "id": s.id,
        "object": "response",
        "created_at": s.created,
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "model": s.model,
        "output": [],
        "parallel_tool_calls": True,
        "store": False,
        "usage": None,
    }
    yield event("response.created", response=response)
    yield event("response.in_progress", response=response)
    output: list[dict[str, Any]] = []
    for index, item in enumerate(s.turn.items):
        item_id = f"{s.id[-16:]}{index:04d}"
        if isinstance(item, Text):
            yield from _responses_message(s, event, f"msg_{item_id}", index, item, output)
        elif isinstance(item, Thinking):
            yield from _responses_reasoning(s, event, f"rs_{item_id}", index, item, output)
        elif isinstance(item, ToolCall):
            done = {
                "id": f"fc_{item_id}",
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": s.call_id(item, index, "call_"),
                "name": item.name,
            }
            yield event("response.output_item.added", output_index=index, item=done)
            arguments = arguments_json(item)
            for piece in s.pieces(arguments):
                yield event(
                    "response.function_call_arguments.delta",
                    item_id=done["id"],
                    output_index=index,
                    delta=piece,
                )
            yield event(
                "response.function_call_arguments.done",
                item_id=done["id"],
                output_index=index,
                arguments=arguments,
            )
            done = {**done, "status": "completed", "arguments": arguments}
            output.append(done)
            yield event("response.output_item.done", output_index=index, item=done)
        elif isinstance(item, Media):  # an `image_generation_call`: the image whole at done
            call = {"id": f"ig_{item_id}", "type": "image_generation_call", "status": "generating"}
            yield event("response.output_item.added", output_index=index, item=call)
            result = base64.b64encode(item.data).decode()
            image_format = item.mime_type.split("/", 1)[1]
            call = {**call, "status": "completed", "result": result, "output_format": image_format}
            output.append(call)
            yield event("response.output_item.done", output_index=index, item=call)
    usage = s.usage
    cached = count(usage, "cached_tokens")
    reasoning = count(usage, "thoughts_tokens")
    input_tokens = count(usage, "prompt_tokens") + cached
    output_tokens = count(usage, "response_tokens") + reasoning
    final: dict[str, Any] = {
        **response,
        "output": output,
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": input_tokens + output_tokens,
        },
    }
    if s.finish in ("stop", "tool_call"):
        yield event("response.completed", response={**final, "status": "completed"})
    else:
        reason = "max_output_tokens" if s.finish == "length" else "content_filter"
        final = {**final, "status": "incomplete", "incomplete_details": {"reason": reason}}
        yield event("response.incomplete", response=final)


def _responses_message(
    s: EmulatedStream,
    event: Callable[..., bytes],
    item_id: str,
    index: int,
    item: Text,
    output: list[dict[str, Any]],
) -> Iterator[bytes]:
    added = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant"}
    yield event("response.output_item.added", output_index=index, item={**added, "content": []})
    where = {"item_id": item_id, "output_index": index, "content_index": 0}
    empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    yield event("response.content_part.added", **where, part=empty)
    for piece in s.pieces(item.text):
        yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
    yield event("response.output_text.done", **where, text=item.text, logprobs=[])
    part = {**empty, "text": item.text}
    yield event("response.content_part.done", **where, part=part)
    done = {**added, "status": "completed", "content": [part]}
    output.append(done)
    yield event("response.output_item.done", output_index=index, item=done)


def _responses_reasoning(
    s: EmulatedStream,
    event: Callable[..., bytes],
    item_id: str,
    index: int,
    item: Thinking,
    output: list[dict[str, Any]],
) -> Iterator[bytes]:
    added: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
    if item.signature is not None:
        added["encrypted_content"] = item.signature
    yield event("response.output_item.added", output_index=index, item=added)
    summary = []
    if item.thinking:
        where = {"item_id": item_id, "output_index": index, "summary_index": 0}
        part = {"type": "summary_text", "text": ""}
        yield event("response.reasoning_summary_part.added", **where, part=part)
        for piece in s.pieces(item.thinking):
            yield event("response.reasoning_summary_text.delta", **where, delta=piece)
        yield event("response.reasoning_summary_text.done", **where, text=item.thinking)
        part = {**part, "text": item.thinking}
        yield event("response.reasoning_summary_part.done", **where, part=part)
        summary.append(part)
    done = {**added, "summary": summary}
    output.append(done)
    yield event("response.output_item.done", output_index=index, item=done)


def _responses_text(item: dict[str, Any]) -> str | None:
    if item.get("type") == "function_call_output":
        output = item.get("output")
        return output if isinstance(output, str) else joined_text(output, "input_text")
    if item.get("role") != "user":
        return None
    return joined_text(item.get("content"), "input_text")


def _last_user_text(body: dict[str, Any]) -> str:
    given = body.get("input")
    return given if isinstance(given, str) else last_text(given, _responses_text)


EMULATOR = StreamEmulator(
    write=_responses,
    error_body=openai_error_body,
    last_user_text=_last_user_text,
    response_id_prefix="resp_emu",
    media=frozenset({"image"}),
)
