"""Deterministic synthetic response bodies in each provider's real wire format.

The benchmark needs long streams (tens of thousands of chunks) that no capture has, so each
builder here writes one, shaped field for field on a corpus capture (named in its docstring):
the same envelope, the same framing, the same JSON spacing. Words vary (a seeded RNG draws from
a vocabulary that includes quotes, newlines and non-ASCII), so the bodies exercise JSON string
escapes and are not one token repeated. The same (protocol, case, fragments) always gives the
same bytes.

Cases:
  text       one text block in `fragments` text chunks, then the provider's finish.
  tool_call  one tool call whose arguments arrive in `fragments` pieces (raw JSON text pieces
             for OpenAI and Anthropic; Vertex `partialArgs` chunks for Gemini).
"""

from __future__ import annotations

import itertools
import json
import random
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

PROTOCOLS = (
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "gemini-generate-content",
    "bedrock-converse-stream",
)
CASES = ("text", "tool_call")
TOOL_NAME = "write_note"

_VOCABULARY = (
    "the quick brown fox jumps over lazy dog stream decoder event frame chunk token model "
    "provider response request argument function tool call result value field object array "
    "string number boolean null index delta usage finish reason stop length content part item "
    "message assistant user system prompt cache input output thinking signature block start "
    "done added completed created progress sequence buffer socket latency throughput memory "
    "parser grammar assembler accumulator snapshot partial final error retry timeout gateway "
    "router region server client header body line separator payload schema validation test "
    "corpus capture replay benchmark profile linear quadratic constant amortized allocation "
    "garbage collector dictionary list tuple slice join split encode decode bytes unicode "
    "naïve café résumé Zürich São Paulo Ångström 東京 données straße"
)
_WORDS = _VOCABULARY.split()
_PUNCTUATION = (".", ",", ";", ":", "!", "?", " —", " (see below)", "'s")
_SPECIAL = ('"quoted"', "`code`", "\\path\\to", "\n\n", "\n- ", "\t", "“curly”", "50%", "{braces}")


@dataclass(frozen=True)
class Body:
    """One synthetic response body and what a correct decoder must make of it."""

    protocol: str
    case: str
    fragments: int  # text chunks or argument fragments on the wire
    data: bytes
    text: str  # the joined text (text case), else ""
    arguments: dict[str, Any] | None  # the call's arguments object (tool_call case), else None
    finish_reason: str  # the stop event's finish_reason


def build(protocol: str, case: str, fragments: int) -> Body:
    """The body for one protocol, case and fragment count; identical bytes on every call."""
    if protocol not in _BUILDERS:
        raise ValueError(f"unknown protocol {protocol!r}")
    if case not in CASES:
        raise ValueError(f"unknown case {case!r}")
    minimum = 5 if case == "tool_call" else 1
    if fragments < minimum:
        raise ValueError(f"{case} needs at least {minimum} fragments")
    rng = random.Random(zlib.crc32(f"{protocol}/{case}/{fragments}".encode()))
    text_builder, tool_builder = _BUILDERS[protocol]
    if case == "text":
        pieces = _text_pieces(rng, fragments, *_WORDS_PER_CHUNK[protocol])
        data = text_builder(rng, pieces)
        return Body(protocol, case, fragments, data, "".join(pieces), None, "stop")
    arguments = _arguments(rng, fragments * _ARGUMENT_CHARS_PER_FRAGMENT[protocol])
    data = tool_builder(rng, arguments, fragments)
    return Body(protocol, case, fragments, data, "", arguments, "tool_call")


# --- words -----------------------------------------------------------------------------------

# Words per text chunk: OpenAI streams about one token per chunk; Anthropic and Gemini send
# phrases (corpus vercel-anthropic-text, pydanticai-google-text).
_WORDS_PER_CHUNK = {
    "openai-chat": (1, 1),
    "openai-responses": (1, 1),
    "anthropic-messages": (1, 4),
    "gemini-generate-content": (2, 8),
    "bedrock-converse-stream": (1, 4),  # Claude on Bedrock: phrases, as on Anthropic's API
}
# Mean characters per raw argument fragment (OpenAI: a token; Anthropic: a few tokens).
_ARGUMENT_CHARS_PER_FRAGMENT = {
    "openai-chat": 4,
    "openai-responses": 4,
    "anthropic-messages": 8,
    "gemini-generate-content": 10,
    "bedrock-converse-stream": 8,
}


def _word(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.04:
        return rng.choice(_SPECIAL)
    if roll < 0.12:
        return rng.choice(_PUNCTUATION)
    if roll < 0.14:
        return f" {rng.randrange(1, 100_000)}"
    word = rng.choice(_WORDS)
    return " " + (word.capitalize() if rng.random() < 0.08 else word)


def _text_pieces(rng: random.Random, count: int, low: int, high: int) -> list[str]:
    pieces = ["".join(_word(rng) for _ in range(rng.randint(low, high))) for _ in range(count)]
    pieces[0] = pieces[0].lstrip() or pieces[0]  # the answer starts without a space
    return pieces


def _text_of_length(rng: random.Random, chars: int) -> str:
    parts: list[str] = []
    size = 0
    while size < chars:
        word = _word(rng)
        parts.append(word)
        size += len(word)
    return "".join(parts).lstrip()


def _arguments(rng: random.Random, chars: int) -> dict[str, Any]:
    slug = "-".join(rng.choice(_WORDS[:60]) for _ in range(3))
    return {
        "path": f"notes/{slug}.md",
        "content": _text_of_length(rng, chars),
        "revision": rng.randrange(1, 50),
    }


def _split(rng: random.Random, text: str, count: int) -> list[str]:
    """`text` cut at `count - 1` distinct random points: fragments of varying size."""
    cuts = sorted(rng.sample(range(1, len(text)), count - 1))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _ident(rng: random.Random, length: int) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(alphabet) for _ in range(length))


def _hex(rng: random.Random, length: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(length))


def _compact(value: Any) -> bytes:
    return orjson.dumps(value)


def _spaced(value: Any) -> bytes:
    """Gemini's spacing: `{"key": value,"key2": ...}` (corpus pydanticai-google-text)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ": ")).encode()


# --- openai-chat -----------------------------------------------------------------------------


def _chat_frame(payload: Any) -> bytes:
    return b"data: " + _compact(payload) + b"\n\n"


def _chat_envelope(rng: random.Random) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{_ident(rng, 29)}",
        "object": "chat.completion.chunk",
        "created": 1727346168,
        "model": "gpt-4o-2024-08-06",
        "system_fingerprint": "fp_5050236cbd",
    }


def _chat_chunk(envelope: dict[str, Any], delta: Any, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return _chat_frame({**envelope, "choices": [choice]})


def _chat_tail(envelope: dict[str, Any], finish: str, completion_tokens: int) -> list[bytes]:
    usage = {
        "prompt_tokens": 14,
        "completion_tokens": completion_tokens,
        "total_tokens": 14 + completion_tokens,
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    return [
        _chat_chunk(envelope, {}, finish),
        _chat_frame({**envelope, "choices": [], "usage": usage}),
        b"data: [DONE]\n\n",
    ]


def openai_chat_text(rng: random.Random, pieces: list[str]) -> bytes:
    """Shaped on corpus openaipy-text-usage: role chunk, content chunks, finish, usage, [DONE]."""
    envelope = _chat_envelope(rng)
    frames = [_chat_chunk(envelope, {"role": "assistant", "content": "", "refusal": None})]
    frames += [_chat_chunk(envelope, {"content": piece}) for piece in pieces]
    frames += _chat_tail(envelope, "stop", len(pieces))
    return b"".join(frames)


def openai_chat_tool(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    """Shaped on corpus openaipy-tool-call: a call opened with id and name, arguments deltas."""
    envelope = _chat_envelope(rng)
    opening = {
        "index": 0,
        "id": f"call_{_ident(rng, 24)}",
        "type": "function",
        "function": {"name": TOOL_NAME, "arguments": ""},
    }
    frames = [
        _chat_chunk(
            envelope,
            {"role": "assistant", "content": None, "tool_calls": [opening], "refusal": None},
        )
    ]
    for piece in _split(rng, _compact(arguments).decode(), count):
        delta = {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}
        frames.append(_chat_chunk(envelope, delta))
    frames += _chat_tail(envelope, "tool_calls", count)
    return b"".join(frames)


# --- openai-responses ------------------------------------------------------------------------


class _ResponsesWriter:
    """Numbers `sequence_number` and writes `event:` + `data:` frames (corpus pydanticai-phase)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sequence = 0
        self.frames: list[bytes] = []
        self.response_id = f"resp_{_hex(rng, 50)}"

    def emit(self, payload: dict[str, Any]) -> None:
        payload["sequence_number"] = self.sequence
        self.sequence += 1
        self.frames.append(
            b"event: " + payload["type"].encode() + b"\ndata: " + _compact(payload) + b"\n\n"
        )

    def obfuscation(self) -> str:
        return _ident(self.rng, self.rng.randint(4, 15))

    def response(self, status: str, output: list[Any], usage: Any) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": 1785273853,
            "status": status,
            "background": False,
            "completed_at": 1785273855 if status == "completed" else None,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": None,
            "model": "gpt-5.1-2025-11-13",
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": "none", "summary": None},
            "service_tier": "default",
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [
                {
                    "type": "function",
                    "description": None,
                    "name": TOOL_NAME,
                    "parameters": {"type": "object", "additionalProperties": True},
                    "strict": False,
                }
            ],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "user": None,
            "metadata": {},
        }

    def start(self) -> None:
        self.emit({"type": "response.created", "response": self.response("in_progress", [], None)})
        self.emit(
            {"type": "response.in_progress", "response": self.response("in_progress", [], None)}
        )

    def complete(self, output: list[Any], output_tokens: int) -> bytes:
        usage = {
            "input_tokens": 278,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 278 + output_tokens,
        }
        self.emit(
            {"type": "response.completed", "response": self.response("completed", output, usage)}
        )
        return b"".join(self.frames)


def openai_responses_text(rng: random.Random, pieces: list[str]) -> bytes:
    """Shaped on corpus pydanticai-phase / pydanticai-text: message item, output_text deltas."""
    out = _ResponsesWriter(rng)
    item_id = f"msg_{_hex(rng, 50)}"
    text = "".join(pieces)
    part = {"type": "output_text", "annotations": [], "logprobs": []}
    out.start()
    item = {"id": item_id, "type": "message", "status": "in_progress", "content": []}
    out.emit(
        {
            "type": "response.output_item.added",
            "item": {**item, "role": "assistant"},
            "output_index": 0,
        }
    )
    where = {"content_index": 0, "item_id": item_id, "output_index": 0}
    out.emit({"type": "response.content_part.added", **where, "part": {**part, "text": ""}})
    for piece in pieces:
        out.emit(
            {
                "type": "response.output_text.delta",
                **where,
                "delta": piece,
                "logprobs": [],
                "obfuscation": out.obfuscation(),
            }
        )
    out.emit({"type": "response.output_text.done", **where, "logprobs": [], "text": text})
    out.emit({"type": "response.content_part.done", **where, "part": {**part, "text": text}})
    done_item = {
        **item,
        "status": "completed",
        "content": [{**part, "text": text}],
        "role": "assistant",
    }
    out.emit({"type": "response.output_item.done", "item": done_item, "output_index": 0})
    return out.complete([done_item], len(pieces))


def openai_responses_tool(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    """Shaped on corpus pydanticai-phase: function_call item, function_call_arguments deltas."""
    out = _ResponsesWriter(rng)
    item_id = f"fc_{_hex(rng, 50)}"
    raw = _compact(arguments).decode()
    item = {
        "id": item_id,
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": f"call_{_ident(rng, 24)}",
        "name": TOOL_NAME,
    }
    out.start()
    out.emit({"type": "response.output_item.added", "item": item, "output_index": 0})
    for piece in _split(rng, raw, count):
        out.emit(
            {
                "type": "response.function_call_arguments.delta",
                "delta": piece,
                "item_id": item_id,
                "obfuscation": out.obfuscation(),
                "output_index": 0,
            }
        )
    out.emit(
        {
            "type": "response.function_call_arguments.done",
            "arguments": raw,
            "item_id": item_id,
            "output_index": 0,
        }
    )
    done_item = {**item, "status": "completed", "arguments": raw}
    out.emit({"type": "response.output_item.done", "item": done_item, "output_index": 0})
    return out.complete([done_item], count)


# --- anthropic-messages ----------------------------------------------------------------------


def _anthropic_frame(payload: dict[str, Any]) -> bytes:
    kind: str = payload["type"]
    return b"event: " + kind.encode() + b"\ndata: " + _compact(payload) + b"\n\n"


def _anthropic_start(rng: random.Random) -> bytes:
    message: dict[str, Any] = {
        "model": "claude-sonnet-4-5-20250929",
        "id": f"msg_01{_ident(rng, 22)}",
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 377,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 1,
            "service_tier": "standard",
        },
    }
    return _anthropic_frame({"type": "message_start", "message": message})


def _anthropic_end(reason: str, output_tokens: int) -> list[bytes]:
    usage = {
        "input_tokens": 377,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }
    delta = {"stop_reason": reason, "stop_sequence": None}
    return [
        _anthropic_frame({"type": "content_block_stop", "index": 0}),
        _anthropic_frame({"type": "message_delta", "delta": delta, "usage": usage}),
        _anthropic_frame({"type": "message_stop"}),
    ]


def anthropic_text(rng: random.Random, pieces: list[str]) -> bytes:
    """Shaped on corpus vercel-anthropic-text: message_start, one text block, ping, message_stop."""
    block = {"type": "text", "text": ""}
    frames = [
        _anthropic_start(rng),
        _anthropic_frame({"type": "content_block_start", "index": 0, "content_block": block}),
        b'event: ping\ndata: {"type": "ping"}\n\n',
    ]
    for piece in pieces:
        delta = {"type": "text_delta", "text": piece}
        frames.append(_anthropic_frame({"type": "content_block_delta", "index": 0, "delta": delta}))
    frames += _anthropic_end("end_turn", len(pieces))
    return b"".join(frames)


def anthropic_tool(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    """Shaped on corpus anthropicsdk-tool-use: tool_use block with `input: {}`, then an empty
    input_json_delta, then the arguments in `count` input_json_delta pieces (`": "` spacing)."""
    raw = json.dumps(arguments, ensure_ascii=False)
    block = {"type": "tool_use", "id": f"toolu_01{_ident(rng, 22)}", "name": TOOL_NAME, "input": {}}
    frames = [
        _anthropic_start(rng),
        _anthropic_frame({"type": "content_block_start", "index": 0, "content_block": block}),
        b'event: ping\ndata: {"type": "ping"}\n\n',
    ]
    for piece in ["", *_split(rng, raw, count)]:
        delta = {"type": "input_json_delta", "partial_json": piece}
        frames.append(_anthropic_frame({"type": "content_block_delta", "index": 0, "delta": delta}))
    frames += _anthropic_end("tool_use", count)
    return b"".join(frames)


# --- gemini-generate-content -----------------------------------------------------------------


def _gemini_frame(payload: dict[str, Any]) -> bytes:
    return b"data: " + _spaced(payload) + b"\r\n\r\n"


def gemini_text(rng: random.Random, pieces: list[str]) -> bytes:
    """Shaped on corpus pydanticai-google-text: usageMetadata on every chunk, finishReason on
    the last chunk together with its text, CRLF framing."""
    response_id = _ident(rng, 23)
    prompt = {
        "promptTokenCount": 15,
        "totalTokenCount": 15,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 15}],
    }
    final_usage = {
        "promptTokenCount": 15,
        "candidatesTokenCount": len(pieces),
        "totalTokenCount": 15 + len(pieces),
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 15}],
        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": len(pieces)}],
    }
    frames = []
    last = len(pieces) - 1
    for n, piece in enumerate(pieces):
        candidate: dict[str, Any] = {"content": {"parts": [{"text": piece}], "role": "model"}}
        if n == last:
            candidate["finishReason"] = "STOP"
        frames.append(
            _gemini_frame(
                {
                    "candidates": [candidate],
                    "usageMetadata": final_usage if n == last else prompt,
                    "modelVersion": "gemini-2.5-flash",
                    "responseId": response_id,
                }
            )
        )
    return b"".join(frames)


def gemini_tool(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    """Shaped on corpus vercel-vertex-stream-tool-call-args(-nested) (Vertex AI streamed
    function-call arguments): `functionCall {name, willContinue}` with a thoughtSignature, then
    `count` partialArgs chunks (string values in pieces, each closed by an empty stringValue
    without willContinue; a numberValue whole), then an empty `functionCall {}` with
    finishReason STOP. Written with the Gemini spacing of the original-framing Vertex capture
    pydanticai-vertex-flex."""
    envelope = {"modelVersion": "gemini-3.1-pro-preview", "createTime": "2026-04-02T17:03:50Z"}
    envelope["responseId"] = _ident(rng, 23)
    traffic = {"trafficType": "ON_DEMAND"}

    def chunk(part: dict[str, Any], usage: dict[str, Any], finish: bool = False) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}}
        if finish:
            candidate["finishReason"] = "STOP"
        return _gemini_frame({"candidates": [candidate], "usageMetadata": usage, **envelope})

    def partial(arg: dict[str, Any]) -> bytes:
        return chunk({"functionCall": {"partialArgs": [arg], "willContinue": True}}, traffic)

    opening = {
        "functionCall": {"name": TOOL_NAME, "willContinue": True},
        "thoughtSignature": _ident(rng, 120),
    }
    frames = [chunk(opening, traffic)]
    # $.path (value + close), $.content (count - 4 pieces + close), $.revision: count chunks.
    frames.append(
        partial({"jsonPath": "$.path", "stringValue": arguments["path"], "willContinue": True})
    )
    frames.append(partial({"jsonPath": "$.path", "stringValue": ""}))
    for piece in _split(rng, arguments["content"], count - 4):
        frames.append(
            partial({"jsonPath": "$.content", "stringValue": piece, "willContinue": True})
        )
    frames.append(partial({"jsonPath": "$.content", "stringValue": ""}))
    frames.append(partial({"jsonPath": "$.revision", "numberValue": arguments["revision"]}))
    final_usage = {
        "promptTokenCount": 26,
        "candidatesTokenCount": count,
        "totalTokenCount": 26 + count,
        "trafficType": "ON_DEMAND",
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 26}],
        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": count}],
    }
    frames.append(chunk({"functionCall": {}}, final_usage, finish=True))
    return b"".join(frames)


# --- bedrock-converse-stream -----------------------------------------------------------------

_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _aws_message(event_type: str, payload: dict[str, Any]) -> bytes:
    """One AWS event-stream message as Bedrock sends it (corpus pydanticai-bedrock-nova-text):
    string headers :event-type, :content-type, :message-type; compact JSON with sorted keys."""
    headers = b""
    for name, value in (
        (":event-type", event_type),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ):
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    body = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    prelude = struct.pack(">II", 16 + len(headers) + len(body), len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


class _BedrockWriter:
    """Messages with AWS's random-length `p` padding field."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.messages: list[bytes] = []

    def emit(self, event_type: str, payload: dict[str, Any]) -> None:
        padded = {**payload, "p": _PADDING[: self.rng.randint(1, len(_PADDING))]}
        self.messages.append(_aws_message(event_type, padded))

    def end(self, reason: str, output_tokens: int) -> bytes:
        self.emit("contentBlockStop", {"contentBlockIndex": 0})
        self.emit("messageStop", {"stopReason": reason})
        usage = {"inputTokens": 377, "outputTokens": output_tokens}
        usage["totalTokens"] = 377 + output_tokens
        self.emit("metadata", {"metrics": {"latencyMs": 2281}, "usage": usage})
        return b"".join(self.messages)


def bedrock_text(rng: random.Random, pieces: list[str]) -> bytes:
    out = _BedrockWriter(rng)
    out.emit("messageStart", {"role": "assistant"})
    for piece in pieces:
        out.emit("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}})
    return out.end("end_turn", len(pieces))


def bedrock_tool(rng: random.Random, arguments: dict[str, Any], count: int) -> bytes:
    out = _BedrockWriter(rng)
    out.emit("messageStart", {"role": "assistant"})
    tool = {"name": TOOL_NAME, "toolUseId": f"tooluse_{_ident(rng, 22)}"}
    out.emit("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": tool}})
    for piece in _split(rng, _compact(arguments).decode(), count):
        out.emit(
            "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": piece}}}
        )
    return out.end("tool_use", count)


_TextBuilder = Callable[[random.Random, list[str]], bytes]
_ToolBuilder = Callable[[random.Random, dict[str, Any], int], bytes]
_BUILDERS: dict[str, tuple[_TextBuilder, _ToolBuilder]] = {
    "openai-chat": (openai_chat_text, openai_chat_tool),
    "openai-responses": (openai_responses_text, openai_responses_tool),
    "anthropic-messages": (anthropic_text, anthropic_tool),
    "gemini-generate-content": (gemini_text, gemini_tool),
    "bedrock-converse-stream": (bedrock_text, bedrock_tool),
}
