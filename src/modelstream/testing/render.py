"""Write a `Turn` as a provider's response body, in that protocol's exact wire format.

Each writer is modelled on the real captures in the shared corpus: event names, JSON shapes,
where usage goes, `data: [DONE]`, Gemini's CRLF framing and `"key": value` spacing. Text,
thinking and tool-call arguments are cut into fragments of `fragment_size` characters, so a
turn streams the way a model's does.

How each protocol carries what a `Turn` holds:

  openai-chat              thinking without a signature: `reasoning_content` (DeepSeek);
                           with one: `reasoning` + `reasoning_details` carrying the signature
                           (OpenRouter). Usage in a trailing `choices: []` chunk, only when
                           `include_usage` (the request's `stream_options.include_usage`).
  openai-responses         a `reasoning` item with one summary part; the signature is its
                           `encrypted_content`. Each text is a `message` item.
  anthropic-messages       `thinking` blocks ending in a `signature_delta`; usage in
                           `message_start` and `message_delta` (thinking is counted in
                           `output_tokens`, as Anthropic does).
  gemini-generate-content  `thought: true` parts with `thoughtSignature` on the last one;
                           function calls arrive whole (`args`), as the Gemini API sends them,
                           with `id` only when the call has one.

Two adjacent items of the same kind (text, text) join into one item in Chat Completions and
Gemini, whose wire formats have no block identity: script them as one item there.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from ..errors import ConfigurationError
from ..types import Usage
from .turns import Embedding, Finish, Text, Thinking, ToolCall, Turn

STREAM_PROTOCOLS = (
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "gemini-generate-content",
)
EMBEDDING_PROTOCOLS = ("openai-embedding", "gemini-embedding")
ALL_PROTOCOLS = STREAM_PROTOCOLS + EMBEDDING_PROTOCOLS

DEFAULT_MODEL = "emulated-model"
DEFAULT_FRAGMENT_SIZE = 8


def render(
    protocol: str,
    turn: Turn,
    *,
    model: str = DEFAULT_MODEL,
    fragment_size: int = DEFAULT_FRAGMENT_SIZE,
    include_usage: bool = True,
    response_id: str | None = None,
    created: int | None = None,
    batch: bool | None = None,
) -> bytes:
    """The response body for `turn` in `protocol`'s wire format."""
    return b"".join(
        render_frames(
            protocol,
            turn,
            model=model,
            fragment_size=fragment_size,
            include_usage=include_usage,
            response_id=response_id,
            created=created,
            batch=batch,
        )
    )


def render_frames(
    protocol: str,
    turn: Turn,
    *,
    model: str = DEFAULT_MODEL,
    fragment_size: int = DEFAULT_FRAGMENT_SIZE,
    include_usage: bool = True,
    response_id: str | None = None,
    created: int | None = None,
    batch: bool | None = None,
) -> list[bytes]:
    """Like `render`, as the list of SSE frames (one JSON document for embeddings).

    `batch` (gemini-embedding): answer `batchEmbedContents` rather than `embedContent`;
    None means batch unless the turn has exactly one vector.
    """
    if fragment_size < 1:
        raise ValueError(f"fragment_size must be at least 1, got {fragment_size}")
    embeddings = [item for item in turn.items if isinstance(item, Embedding)]
    if protocol in EMBEDDING_PROTOCOLS:
        if len(embeddings) != len(turn.items):
            raise ValueError(f"{protocol} answers with Embedding items only")
        usage = turn.usage_counts()
        if protocol == "openai-embedding":
            return [_openai_embeddings(embeddings, model, usage)]
        return [_gemini_embeddings(embeddings, len(embeddings) != 1 if batch is None else batch)]
    if embeddings:
        raise ValueError(f"{protocol} streams text, thinking and tool calls, not embeddings")
    writer = _WRITERS.get(protocol)
    if writer is None:
        raise ConfigurationError(
            f"unknown protocol {protocol!r}; choose one of: {', '.join(ALL_PROTOCOLS)}"
        )
    stream = _Stream(
        turn=turn,
        model=model,
        size=fragment_size,
        include_usage=include_usage,
        response_id=response_id or _response_id(protocol, turn, model),
        created=int(time.time()) if created is None else created,
    )
    return list(writer(stream))


class _Stream:
    """What every writer needs to know about the turn it writes."""

    def __init__(
        self,
        *,
        turn: Turn,
        model: str,
        size: int,
        include_usage: bool,
        response_id: str,
        created: int,
    ) -> None:
        self.turn = turn
        self.model = model
        self.size = size
        self.include_usage = include_usage
        self.id = response_id
        self.created = created
        self.usage = turn.usage_counts()
        self.finish: Finish = turn.finish_reason

    def pieces(self, text: str) -> list[str]:
        size = self.size
        return [text[i : i + size] for i in range(0, len(text), size)]

    def call_id(self, call: ToolCall, index: int, prefix: str) -> str:
        return call.id if call.id is not None else f"{prefix}{self.id[-12:]}{index}"


def _count(usage: Usage, key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) else 0


def _json(value: Any) -> bytes:
    return orjson.dumps(value)


def _arguments(call: ToolCall) -> str:
    return json.dumps(dict(call.arguments), ensure_ascii=False, separators=(",", ":"))


def _response_id(protocol: str, turn: Turn, model: str) -> str:
    digest = hashlib.sha256(f"{protocol}|{model}|{turn!r}".encode()).hexdigest()[:24]
    prefix = {
        "openai-chat": "chatcmpl-emu",
        "openai-responses": "resp_emu",
        "anthropic-messages": "msg_emu",
    }.get(protocol, "emu")
    return prefix + digest


# --- OpenAI Chat Completions -------------------------------------------------------------------

_CHAT_FINISH = {"stop": "stop", "length": "length", "tool_call": "tool_calls"}


def _chat(s: _Stream) -> Iterator[bytes]:
    envelope: dict[str, Any] = {
        "id": s.id,
        "object": "chat.completion.chunk",
        "created": s.created,
        "model": s.model,
        "system_fingerprint": "fp_emulator",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = {**envelope, "choices": [choice]}
        if s.include_usage:  # OpenAI sends `usage: null` on every chunk when asked for usage
            body["usage"] = None
        return b"data: " + _json(body) + b"\n\n"

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    calls = details = 0
    for item in s.turn.items:
        if isinstance(item, Text):
            for piece in s.pieces(item.text):
                yield chunk({"content": piece})
        elif isinstance(item, Thinking) and item.signature is None:
            for piece in s.pieces(item.thinking):  # DeepSeek: content null beside it
                yield chunk({"content": None, "reasoning_content": piece})
        elif isinstance(item, Thinking):
            # OpenRouter carries signed reasoning as reasoning_details, mirrored in `reasoning`
            # (corpus pydanticai-openrouter-reasoning-signature); a new detail index is a new item.
            for piece in s.pieces(item.thinking):
                detail = {"type": "reasoning.text", "text": piece, "index": details}
                yield chunk({"content": "", "reasoning": piece, "reasoning_details": [detail]})
            signed = {"type": "reasoning.text", "signature": item.signature, "index": details}
            yield chunk({"content": "", "reasoning": None, "reasoning_details": [signed]})
            details += 1
        elif isinstance(item, ToolCall):
            start = {
                "index": calls,
                "id": s.call_id(item, calls, "call_"),
                "type": "function",
                "function": {"name": item.name, "arguments": ""},
            }
            yield chunk({"tool_calls": [start]})
            for piece in s.pieces(_arguments(item)):
                yield chunk({"tool_calls": [{"index": calls, "function": {"arguments": piece}}]})
            calls += 1
    yield chunk({}, _CHAT_FINISH.get(s.finish, "content_filter"))
    if s.include_usage:
        usage = s.usage
        cached = _count(usage, "cached_tokens")
        prompt = _count(usage, "prompt_tokens") + cached
        reasoning = _count(usage, "thoughts_tokens")
        completion = _count(usage, "response_tokens") + reasoning
        body = {
            **envelope,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0},
            },
        }
        yield b"data: " + _json(body) + b"\n\n"
    yield b"data: [DONE]\n\n"


# --- OpenAI Responses --------------------------------------------------------------------------


def _responses(s: _Stream) -> Iterator[bytes]:
    sequence = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal sequence
        body = {"type": kind, "sequence_number": sequence, **fields}
        sequence += 1
        return b"event: " + kind.encode() + b"\ndata: " + _json(body) + b"\n\n"

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
            arguments = _arguments(item)
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
    usage = s.usage
    cached = _count(usage, "cached_tokens")
    reasoning = _count(usage, "thoughts_tokens")
    input_tokens = _count(usage, "prompt_tokens") + cached
    output_tokens = _count(usage, "response_tokens") + reasoning
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
    s: _Stream,
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
    s: _Stream,
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


# --- Anthropic Messages ------------------------------------------------------------------------

_ANTHROPIC_FINISH = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_call": "tool_use",
    "unknown": "pause_turn",
}


def _anthropic(s: _Stream) -> Iterator[bytes]:
    def event(kind: str, **fields: Any) -> bytes:
        return b"event: " + kind.encode() + b"\ndata: " + _json({"type": kind, **fields}) + b"\n\n"

    usage = s.usage
    output_tokens = _count(usage, "response_tokens") + _count(usage, "thoughts_tokens")
    yield event(
        "message_start",
        message={
            "id": s.id,
            "type": "message",
            "role": "assistant",
            "model": s.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": _count(usage, "prompt_tokens"),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": _count(usage, "cached_tokens"),
                "output_tokens": 1,
                "service_tier": "standard",
            },
        },
    )
    for index, item in enumerate(s.turn.items):
        if isinstance(item, Text):
            block: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in s.pieces(item.text)]
        elif isinstance(item, Thinking):
            block = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": piece} for piece in s.pieces(item.thinking)
            ]
            if item.signature is not None:
                deltas.append({"type": "signature_delta", "signature": item.signature})
        elif isinstance(item, ToolCall):
            block = {
                "type": "tool_use",
                "id": s.call_id(item, index, "toolu_"),
                "name": item.name,
                "input": {},
            }
            pieces = ["", *s.pieces(_arguments(item))]  # the first fragment is empty on the wire
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
        else:
            continue
        yield event("content_block_start", index=index, content_block=block)
        if index == 0:
            yield b'event: ping\ndata: {"type": "ping"}\n\n'
        for delta in deltas:
            yield event("content_block_delta", index=index, delta=delta)
        yield event("content_block_stop", index=index)
    yield event(
        "message_delta",
        delta={"stop_reason": _ANTHROPIC_FINISH[s.finish], "stop_sequence": None},
        usage={"output_tokens": output_tokens},
    )
    yield event("message_stop")


# --- Gemini generateContent --------------------------------------------------------------------

_GEMINI_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_call": "STOP", "unknown": "SAFETY"}


def _gemini_json(value: Any) -> bytes:
    # Gemini writes `{"key": value,"key2": ...}`: a space after the colon, none after the comma
    return json.dumps(value, ensure_ascii=False, separators=(",", ": ")).encode()


def _gemini(s: _Stream) -> Iterator[bytes]:
    parts: list[dict[str, Any]] = []  # one part per chunk, in order
    for item in s.turn.items:
        if isinstance(item, Text):
            parts.extend({"text": piece} for piece in s.pieces(item.text))
        elif isinstance(item, Thinking):
            thoughts = [{"text": piece, "thought": True} for piece in s.pieces(item.thinking)]
            if item.signature is not None:
                if not thoughts:
                    thoughts.append({"text": "", "thought": True})
                thoughts[-1]["thoughtSignature"] = item.signature  # on the part it came with
            parts.extend(thoughts)
        elif isinstance(item, ToolCall):
            call: dict[str, Any] = {"name": item.name, "args": dict(item.arguments)}
            if item.id is not None:
                call["id"] = item.id
            part: dict[str, Any] = {"functionCall": call}
            if item.signature is not None:
                part["thoughtSignature"] = item.signature
            parts.append(part)
    if not parts:
        parts.append({"text": ""})
    usage = s.usage
    cached = _count(usage, "cached_tokens")
    prompt = _count(usage, "prompt_tokens") + cached
    thoughts_total = _count(usage, "thoughts_tokens")
    response_total = _count(usage, "response_tokens")
    for number, part in enumerate(parts, start=1):
        # usageMetadata is a snapshot of the turn so far; proto3 JSON omits zero counts
        response = -(-response_total * number // len(parts))
        counts: dict[str, int] = {"promptTokenCount": prompt}
        if response:
            counts["candidatesTokenCount"] = response
        counts["totalTokenCount"] = prompt + response + thoughts_total
        if cached:
            counts["cachedContentTokenCount"] = cached
        if thoughts_total:
            counts["thoughtsTokenCount"] = thoughts_total
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}}
        if number == len(parts):
            candidate["finishReason"] = _GEMINI_FINISH[s.finish]
        candidate["index"] = 0
        chunk = {
            "candidates": [candidate],
            "usageMetadata": counts,
            "modelVersion": s.model,
            "responseId": s.id,
        }
        yield b"data: " + _gemini_json(chunk) + b"\r\n\r\n"


# --- embeddings --------------------------------------------------------------------------------


def _openai_embeddings(embeddings: list[Embedding], model: str, usage: Usage) -> bytes:
    prompt = _count(usage, "prompt_tokens") + _count(usage, "cached_tokens")
    body = {
        "object": "list",
        "data": [
            {"object": "embedding", "index": index, "embedding": list(item.values)}
            for index, item in enumerate(embeddings)
        ],
        "model": model,
        "usage": {"prompt_tokens": prompt, "total_tokens": prompt},
    }
    return json.dumps(body, indent=2).encode() + b"\n"  # OpenAI pretty-prints this body


def _gemini_embeddings(embeddings: list[Embedding], batch: bool) -> bytes:
    vectors = [{"values": list(item.values)} for item in embeddings]
    body: dict[str, Any] = {"embeddings": vectors} if batch else {"embedding": vectors[0]}
    return json.dumps(body, indent=2).encode() + b"\n"


def embedding_for(text: str, dimensions: int = 8) -> list[float]:
    """A deterministic vector for `text` (what the emulator answers when nothing is queued)."""
    values: list[float] = []
    seed = text.encode()
    while len(values) < dimensions:
        seed = hashlib.sha256(seed).digest()
        values.extend(round(byte / 127.5 - 1.0, 6) for byte in seed)
    return values[:dimensions]


def seconds_text(seconds: float) -> str:
    """A number of seconds as a header writes it: `2`, `1.5` (never `1e+06`)."""
    value = float(seconds)
    return str(int(value)) if value.is_integer() else repr(value)


# --- error bodies ------------------------------------------------------------------------------

_OPENAI_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    405: ("invalid_request_error", None),
    408: ("timeout", None),
    409: ("server_error", None),
    429: ("requests", "rate_limit_exceeded"),
}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_GEMINI_ERRORS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def error_body(
    protocol: str | None,
    status: int,
    message: str | None = None,
    *,
    retry_after: float | None = None,
) -> bytes:
    """An HTTP error body in the shape `protocol`'s provider uses (OpenAI's when None)."""
    message = message or f"emulated error: HTTP {status}"
    body: dict[str, Any]
    if protocol is not None and protocol.startswith("anthropic"):
        kind = _ANTHROPIC_ERRORS.get(status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": message}}
        return _json(body)  # Anthropic's error bodies are compact
    elif protocol is not None and protocol.startswith("gemini"):
        error: dict[str, Any] = {
            "code": status,
            "message": message,
            "status": _GEMINI_ERRORS.get(status, "UNKNOWN"),
        }
        if retry_after is not None:
            delay = seconds_text(retry_after) + "s"
            error["details"] = [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
            ]
        body = {"error": error}
    else:
        kind, code = _OPENAI_ERRORS.get(status, ("server_error", None))
        if protocol is None:  # no endpoint: OpenAI's answer to an invalid URL has no code
            kind, code = "invalid_request_error", None
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return json.dumps(body, indent=2).encode() + b"\n"


_WRITERS: dict[str, Callable[[_Stream], Iterator[bytes]]] = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "anthropic-messages": _anthropic,
    "gemini-generate-content": _gemini,
}
