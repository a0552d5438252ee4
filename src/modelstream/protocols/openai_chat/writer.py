"""SPEC events written back as OpenAI Chat Completions: the stream, the non-stream body, errors.

Stream frames (`data: <chunk>\\n\\n`), as OpenAI streams them (corpus openaipy-*):

  start       `{"role": "assistant", "content": "", "refusal": null}` before anything else
  text        `delta.content`; a text whose first fragment is marked `{"refusal": true}` streams
              in `delta.refusal` (the assembler marks a refusal on its last fragment, SPEC rule C,
              so an upstream's refusal text has gone out as content by then: docs/gateway.md)
  thinking    `delta.reasoning_content`, mirrored in the same chunk as OpenRouter's
              `reasoning_details: [{type: reasoning.text, text, index: n}]` (n counts the turn's
              thinking items, so item boundaries survive); a thinking item with fidelity ends
              with `reasoning_details: [{type: reasoning.text, signature: <sealed>, index: n}]`.
              An openai-chat upstream's own fidelity (the decoder's `reasoning_field`,
              `signature`, `format`, `reasoning_id`) goes as it is (SPEC §8): its `signature`,
              `format` and `id` in that closing detail, none when it has only the field.
  tool calls  `delta.tool_calls: [{index, id, type: function, function: {name, arguments}}]`,
              id and name on the first fragment, then argument fragments as they arrive; a
              call's fidelity is sealed into its id (`<id>-<token>`). Tool-call fidelity reaches
              the writer only at the call's end (SPEC rule C), so a call from an upstream whose
              calls can carry fidelity (Gemini, Responses, Interactions, a modelstream server)
              is written when it is done; from the others its arguments stream.
  audio       an audio answer (`inline_data` audio/*, its bytes as they are: Chat streams
              pcm16) as OpenAI streams one: `delta.audio: {id, data}` chunks, then
              `{id, expires_at}`. The id and expiry are an openai-chat upstream's (its fidelity
              `audio_id`, `expires_at`: that clip is held until its `.done`, when they are
              known), else `audio_<response id>_<n>` and an hour after `created`. The
              non-stream body carries one clip whole in `message.audio`, as OpenAI's does.
  finish      `{"delta": {}, "finish_reason": stop | length | tool_calls | content_filter}`,
              then with `stream_options.include_usage` a `choices: []` chunk with `usage` (and
              `"usage": null` on every chunk before it, as OpenAI does), then `data: [DONE]`.
  error       `data: {"error": {message, type, param, code}}` and nothing after it: no finish,
              no `[DONE]` (the openai SDK raises `APIError` on the error chunk itself).

Items Chat cannot carry in an answer (images and other inline data, inline thinking,
embeddings) end the stream with such an error chunk naming them.

Request options (`InboundRequest.options`): `include_usage` (see `finish`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any

import orjson

from ...types import Event, FinishReason, Message, Usage
from ..common.gateway import GatewayError, ServedModel, UnsupportedOutputError, WriteContext

# `<original id><separator><sealed token>`: a token holds no `-`, so the last one splits it
# off, and ids stay within `[A-Za-z0-9_-]` when the original was.
TOOL_ID_SEPARATOR = "-"

# Upstreams whose decoders put no fidelity on tool calls (docs/providers.md, "Fidelity keys"):
# their calls' arguments stream as they arrive.
_CALLS_WITHOUT_FIDELITY = frozenset(
    {"openai-chat", "anthropic-messages", "bedrock-converse-stream"}
)

FINISH_REASON: dict[FinishReason, str] = {
    "stop": "stop",
    "length": "length",
    "tool_call": "tool_calls",
    "unknown": "content_filter",  # the closest documented value (safety, recitation, ...)
}

_DONE_FRAME = b"data: [DONE]\n\n"

PROTOCOL = "openai-chat"
# the thinking fidelity keys of this protocol's decoder (docs/providers.md, "Fidelity keys")
# that a reasoning detail carries as they are, by detail field; `reasoning_field` is where the
# text went, so it needs none
_DETAIL_FIELDS = {"signature": "signature", "format": "format", "reasoning_id": "id"}
_NATIVE_THINKING_KEYS = frozenset({"reasoning_field", *_DETAIL_FIELDS})
AUDIO_LIFETIME_S = 3600  # an audio answer's `expires_at`, when the upstream gave none


class ChatStreamWriter:
    """One Chat Completions stream: SPEC events in, `data:` frames out (module docstring)."""

    def __init__(self, ctx: WriteContext) -> None:
        self._ctx = ctx
        self._include_usage = bool(ctx.request.options.get("include_usage"))
        self._envelope = {
            "id": completion_id(ctx),
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
        }
        self._live_calls = ctx.upstream in _CALLS_WITHOUT_FIDELITY
        self._started = False
        self._ended = False
        self._open: str | None = None  # the kind of the open group
        self._text_field: str | None = None  # "content" or "refusal", once the text shows it
        self._thinking = -1  # the open (or last) thinking item's detail index
        self._thinking_open = False
        self._calls = -1  # the open (or last) tool call's index
        self._call: dict[str, Any] = {}  # the open call's first fragment
        self._held: list[str] | None = None  # its argument fragments, when written at its end
        self._clips = 0  # audio clips so far
        self._clip_open = False
        self._clip: list[bytes] | None = None  # the open clip's chunks, when held to its end

    # --- the StreamWriter surface ------------------------------------------------------------

    def feed(self, event: Event) -> list[bytes]:
        if self._ended:
            return []
        frames: list[bytes] = []
        if event["event_type"] == "stop":
            if self._open is not None:
                return self._broken(f"the turn stopped inside an open {self._open} item")
            return self._stop(event, frames)
        items = event["content_items"]
        if len(items) != 1:
            return self._broken("a delta event must carry exactly one item")
        item: dict[str, Any] = items[0]  # type: ignore[assignment]
        kind, _, phase = item["type"].partition(".")
        if not self._started:
            frames.append(self._start(item))
        audio = kind == "inline_data" and str(item.get("mime_type", "")).startswith("audio/")
        if kind not in ("text", "thinking", "tool_call") and not audio:
            return frames + self._fail_frames(
                500,
                f"the answer holds a {kind} item ({item.get('mime_type') or 'no type'}), which "
                "an OpenAI Chat Completions answer cannot carry",
                code="unsupported_content",
            )
        if phase == "delta":
            if self._open is None:
                self._open = kind
            elif self._open != kind:
                return frames + self._broken(f"a {kind} fragment inside an open {self._open} item")
        elif self._open != kind:
            return frames + self._broken(f"{item['type']} without its fragments")
        getattr(self, f"_{kind}_{phase}")(item, frames)
        if phase == "done":
            self._open = None
        return frames

    def fail(self, error: GatewayError) -> list[bytes]:
        if self._ended:
            return []
        self._ended = True
        return [_frame({"error": error_object(error)})]

    # --- items -------------------------------------------------------------------------------

    def _text_delta(self, item: dict[str, Any], frames: list[bytes]) -> None:
        text = item["text"]
        if self._text_field is None and (text or item.get("fidelity")):
            refusal = (item.get("fidelity") or {}).get("refusal") is True
            self._text_field = "refusal" if refusal else "content"
        if text:
            frames.append(self._chunk({self._text_field or "content": text}))

    def _text_done(self, item: dict[str, Any], frames: list[bytes]) -> None:
        self._text_field = None

    def _thinking_delta(self, item: dict[str, Any], frames: list[bytes]) -> None:
        if not self._thinking_open:
            self._thinking += 1
            self._thinking_open = True
        text = item["thinking"]
        if text:
            detail = {"type": "reasoning.text", "text": text, "index": self._thinking}
            frames.append(self._chunk({"reasoning_content": text, "reasoning_details": [detail]}))

    def _thinking_done(self, item: dict[str, Any], frames: list[bytes]) -> None:
        self._thinking_open = False
        fidelity = item.get("fidelity")
        facts = detail_fidelity(self._ctx, fidelity) if fidelity else {}
        if facts:
            detail = {"type": "reasoning.text", **facts, "index": self._thinking}
            frames.append(self._chunk({"reasoning_details": [detail]}))

    def _inline_data_delta(self, item: dict[str, Any], frames: list[bytes]) -> None:
        if not self._clip_open:
            self._clip_open = True
            self._clips += 1
            if self._ctx.upstream == PROTOCOL:  # its clip id comes with the fidelity, at the end
                self._clip = []
        data: bytes = item["data"]
        if self._clip is not None:
            self._clip.append(data)
        elif data:
            frames.append(self._audio({"data": base64.b64encode(data).decode()}, {}))

    def _inline_data_done(self, item: dict[str, Any], frames: list[bytes]) -> None:
        fidelity: dict[str, Any] = item.get("fidelity") or {}
        if self._clip is not None:
            for data in self._clip:
                if data:
                    frames.append(self._audio({"data": base64.b64encode(data).decode()}, fidelity))
        expires = fidelity.get("expires_at")
        if not isinstance(expires, int):
            expires = self._ctx.created + AUDIO_LIFETIME_S
        frames.append(self._audio({"expires_at": expires}, fidelity))
        self._clip, self._clip_open = None, False

    def _audio(self, fields: dict[str, Any], fidelity: dict[str, Any]) -> bytes:
        clip_id = fidelity.get("audio_id")
        if not isinstance(clip_id, str) or not clip_id:
            clip_id = f"audio_{_stem(self._ctx.response_id)}_{self._clips}"
        return self._chunk({"audio": {"id": clip_id, **fields}})

    def _tool_call_delta(self, item: dict[str, Any], frames: list[bytes]) -> None:
        if not self._call:
            self._calls += 1
            self._call = item
            if self._live_calls:
                fidelity = item.get("fidelity")
                frames.append(self._call_start(item["tool_call_id"], fidelity))
            else:
                self._held = []
        arguments = item["arguments"]
        if self._held is not None:
            self._held.append(arguments)
        elif arguments:
            frames.append(self._call_arguments(arguments))

    def _tool_call_done(self, item: dict[str, Any], frames: list[bytes]) -> None:
        if self._held is not None:
            frames.append(self._call_start(self._call["tool_call_id"], item.get("fidelity")))
            frames.extend(self._call_arguments(piece) for piece in self._held if piece)
        self._call, self._held = {}, None

    def _call_start(self, call_id: str, fidelity: dict[str, Any] | None) -> bytes:
        call = {
            "index": self._calls,
            "id": sealed_call_id(self._ctx, call_id, fidelity),
            "type": "function",
            "function": {"name": self._call["name"], "arguments": ""},
        }
        return self._chunk({"tool_calls": [call]})

    def _call_arguments(self, arguments: str) -> bytes:
        call = {"index": self._calls, "function": {"arguments": arguments}}
        return self._chunk({"tool_calls": [call]})

    # --- start and end -----------------------------------------------------------------------

    def _start(self, first: dict[str, Any] | None) -> bytes:
        """The role chunk, shaped by what comes first, as OpenAI shapes it."""
        self._started = True
        delta: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if first is None or first["type"] == "text.delta":
            if first is not None and (first.get("fidelity") or {}).get("refusal") is True:
                delta["refusal"] = ""
            else:
                delta["content"] = ""
        return self._chunk(delta)

    def _stop(self, event: Event, frames: list[bytes]) -> list[bytes]:
        if not self._started:
            frames.append(self._start(None))
        self._ended = True
        finish = FINISH_REASON.get(event["finish_reason"] or "stop", "content_filter")
        frames.append(self._chunk({}, finish))
        if self._include_usage:
            usage = usage_fields(event["usage_metadata"])
            frames.append(_frame({**self._envelope, "choices": [], "usage": usage}))
        frames.append(_DONE_FRAME)
        return frames

    def _broken(self, why: str) -> list[bytes]:
        """Events that break the grammar: a bug upstream of the writer, never a normal end."""
        return self._fail_frames(500, f"the gateway produced an invalid stream: {why}")

    def _fail_frames(self, status: int, message: str, code: str | None = None) -> list[bytes]:
        error = error_object(
            GatewayError(status=status, type="StreamProtocolError", message=message)
        )
        if code is not None:
            error["code"] = code
        self._ended = True
        return [_frame({"error": error})]

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body: dict[str, Any] = {**self._envelope, "choices": [choice]}
        if self._include_usage:
            body["usage"] = None
        return _frame(body)


def writer(ctx: WriteContext) -> ChatStreamWriter:
    return ChatStreamWriter(ctx)


# --- the non-stream body ---------------------------------------------------------------------


def final_body(ctx: WriteContext, message: Message) -> dict[str, Any]:
    """The finished turn as a `chat.completion` body: the stream's content in one message.
    An item Chat cannot carry raises `UnsupportedOutputError`."""
    texts: list[str] = []
    refusals: list[str] = []
    reasoning: list[str] = []
    details: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    audio: dict[str, Any] | None = None
    for item in message["content_items"]:
        fidelity: dict[str, Any] = item.get("fidelity") or {}  # type: ignore[assignment]
        if item["type"] == "text.done":
            (refusals if fidelity.get("refusal") is True else texts).append(item["text"])
        elif item["type"] == "thinking.done":
            detail: dict[str, Any] = {"type": "reasoning.text", "text": item["thinking"]}
            if fidelity:
                detail.update(detail_fidelity(ctx, fidelity))
            details.append({**detail, "index": len(details)})
            reasoning.append(item["thinking"])
        elif item["type"] == "tool_call.done":
            calls.append(
                {
                    "id": sealed_call_id(ctx, item["tool_call_id"], fidelity),
                    "type": "function",
                    "function": {
                        "name": item["name"],
                        "arguments": orjson.dumps(item["arguments"]).decode(),
                    },
                }
            )
        elif (
            item["type"] == "inline_data.done"
            and item["mime_type"].startswith("audio/")
            and audio is None
        ):  # one audio answer, whole, as OpenAI's message carries it
            clip_id = fidelity.get("audio_id")
            expires = fidelity.get("expires_at")
            audio = {
                "id": clip_id
                if isinstance(clip_id, str) and clip_id
                else f"audio_{_stem(ctx.response_id)}_1",
                "data": base64.b64encode(item["data"]).decode(),
                "expires_at": expires
                if isinstance(expires, int)
                else ctx.created + AUDIO_LIFETIME_S,
                "transcript": "",
            }
        else:
            raise UnsupportedOutputError(
                f"the answer holds a {item['type']} item, which an OpenAI Chat Completions "
                "answer cannot carry"
            )
    out: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(texts) if texts else None,
        "refusal": "".join(refusals) if refusals else None,
        "annotations": [],
    }
    if details:
        out["reasoning_content"] = "".join(reasoning)
        out["reasoning_details"] = details
    if calls:
        out["tool_calls"] = calls
    if audio is not None:
        out["audio"] = audio
    finish = FINISH_REASON.get(message.get("finish_reason") or "stop", "content_filter")
    return {
        "id": completion_id(ctx),
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [{"index": 0, "message": out, "logprobs": None, "finish_reason": finish}],
        "usage": usage_fields(message.get("usage_metadata")),
    }


# --- shared pieces ---------------------------------------------------------------------------


def completion_id(ctx: WriteContext) -> str:
    """`chatcmpl-<the gateway's stream id>`: every chunk of the stream carries it."""
    rid = ctx.response_id
    return rid if rid.startswith("chatcmpl-") else f"chatcmpl-{rid}"


def detail_fidelity(ctx: WriteContext, fidelity: dict[str, Any]) -> dict[str, Any]:
    """A thinking item's fidelity as reasoning-detail fields (module docstring, `thinking`):
    an openai-chat upstream's own as it is, anything else sealed in `signature`."""
    if (
        ctx.upstream == PROTOCOL
        and set(fidelity) <= _NATIVE_THINKING_KEYS
        and all(isinstance(value, str) for value in fidelity.values())
    ):
        return {field: fidelity[key] for key, field in _DETAIL_FIELDS.items() if key in fidelity}
    return {"signature": ctx.seal.seal(fidelity)}


def _stem(response_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", response_id.removeprefix("chatcmpl-"))


def sealed_call_id(ctx: WriteContext, call_id: str, fidelity: dict[str, Any] | None) -> str:
    """The call id a client sends back: `<id>-<sealed fidelity>` when the call has fidelity
    (no client keeps anything else of a call: a Gemini thought signature rides here)."""
    if not fidelity:
        return call_id
    return f"{call_id}{TOOL_ID_SEPARATOR}{ctx.seal.seal(fidelity)}"


def usage_fields(usage: Usage | None) -> dict[str, Any]:
    """SPEC usage as Chat's: input includes cached, output includes reasoning; an unknown
    count is 0, and an unknown cached / reasoning count leaves its details object out."""
    counts: dict[str, int | None] = dict(usage or {})  # type: ignore[arg-type]
    cached = counts.get("cached_tokens")
    thoughts = counts.get("thoughts_tokens")
    prompt = (cached or 0) + (counts.get("prompt_tokens") or 0)
    completion = (thoughts or 0) + (counts.get("response_tokens") or 0)
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        out["prompt_tokens_details"] = {"cached_tokens": cached}
    if thoughts is not None:
        out["completion_tokens_details"] = {"reasoning_tokens": thoughts}
    return out


def _frame(body: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(body) + b"\n\n"


# --- errors ----------------------------------------------------------------------------------

# OpenAI's (type, code) by HTTP status, as the API answers them (and the emulator writes them)
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

# the library's error types whose OpenAI code is more precise than the status's
_CODES_BY_TYPE = {"ContextWindowExceededError": "context_length_exceeded"}


def error_object(error: GatewayError) -> dict[str, Any]:
    """The inner object of OpenAI's `{"error": {...}}`, for an HTTP error and in a stream."""
    kind, code = _OPENAI_ERRORS.get(error.status, ("server_error", None))
    code = _CODES_BY_TYPE.get(error.type, code)
    return {"message": error.message, "type": kind, "param": error.param, "code": code}


def error_body(error: GatewayError) -> dict[str, Any]:
    """OpenAI's HTTP error body for the gateway's error (the status is `error.status`)."""
    return {"error": error_object(error)}


def openai_error_body(
    status: int, message: str, *, retry_after: float | None, endpoint: bool = True
) -> bytes:
    """OpenAI's error body (the OpenAI family's, and the emulator's for a path that is none)."""
    kind, code = _OPENAI_ERRORS.get(status, ("server_error", None))
    if not endpoint:  # OpenAI's answer to an invalid URL has no code
        kind, code = "invalid_request_error", None
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return json.dumps(body, indent=2).encode() + b"\n"


def models_body(models: Sequence[ServedModel]) -> dict[str, Any]:
    """`GET /v1/models` in OpenAI's list shape."""
    return {
        "object": "list",
        "data": [
            {"id": m.id, "object": "model", "created": m.created, "owned_by": m.owned_by}
            for m in models
        ],
    }


__all__ = [
    "FINISH_REASON",
    "TOOL_ID_SEPARATOR",
    "ChatStreamWriter",
    "UnsupportedOutputError",
    "detail_fidelity",
    "error_body",
    "error_object",
    "final_body",
    "models_body",
    "openai_error_body",
    "sealed_call_id",
    "usage_fields",
    "writer",
]
