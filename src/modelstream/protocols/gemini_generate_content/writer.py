"""Gemini generateContent answers written from SPEC events (the gateway's outbound half).

A stream is `GenerateContentResponse` chunks, as Gemini streams them: each chunk holds one part
of the candidate's content (`{"candidates": [{"content": {"parts": [part], "role": "model"},
"index": 0}], "modelVersion", "responseId"}`), framed as `data: <json>\\r\\n\\r\\n` with `alt=sse`
(what every SDK asks for), else as one JSON array written element by element (`[{…}\\n,\\r\\n{…}]`,
Gemini's answer without `alt=sse`). JSON is spaced `{"key": value,"key2": …}` like Gemini's.

  text / thinking   a part per fragment as it arrives (`{"text"}`, `{"text", "thought": true}`);
                    an item that follows one of the same kind is held and written whole at its
                    `.done` as one part carrying a signature (its own, else a sealed `{}`),
                    since Gemini decoders join consecutive parts of one kind into one item and
                    begin a new one at a signed part
  tool_call         Gemini never streams arguments: one `{"functionCall": {name, args, id?}}`
                    part at the call's `.done`; `id` is left out when the upstream gave none
                    (the assembler's `call_<n>`, n the call's ordinal in the turn: an id of
                    that form at another place was the upstream's, and goes), as Gemini does
  inline_data       an image as one `inlineData` part at its `.done`; audio chunk by chunk
  inline_thinking   one `inlineData` part with `thought: true` at its `.done`
  embedding         not a generateContent answer: the stream ends with an error object
  stop              a last chunk `{"parts": [{"text": ""}]}` with `finishReason` and
                    `usageMetadata` (the only chunk that carries usage); an `unknown` finish
                    is `OTHER`, or the request option `unknown_finish_reason` when given (the
                    emulator's `SAFETY`)

Fidelity rides in `thoughtSignature` on the part of the fragment that carries it (the
assembler sends it on an empty fragment right before the `.done`: an empty part then carries
it, as Gemini 3 sends its signatures). It is written natively when it is exactly what this
protocol's decoder writes (`{"thought_signature": s}`, `s` canonical base64 as Google's are, so
google-genai's bytes round trip keeps it; from a Gemini upstream, `s` as it came, whatever it
is); anything else (another protocol's fidelity) is sealed (`FidelitySeal`): an alphanumeric
token that survives the SDK's base64 round trip.

Request options (`InboundRequest.options`): `alt` ("sse" unless the request said otherwise) and
`unknown_finish_reason` (see `stop`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ...errors import StreamProtocolError
from ...grammar import GrammarChecker
from ...types import Event, FinishReason, Message, Usage
from ..common.fidelity_seal import FidelitySeal, is_sealed
from ..common.gateway import GatewayError, ServedModel, UnsupportedOutputError, WriteContext

PROTOCOL = "gemini-generate-content"

FINISH_REASONS: Mapping[FinishReason, str] = {
    "stop": "STOP",
    "length": "MAX_TOKENS",
    "tool_call": "STOP",  # Gemini ends a turn of function calls with STOP
    "unknown": "OTHER",  # the raw reason (SAFETY, RECITATION, ...) is not in the event
}

# google.rpc.Code names by HTTP status, as Gemini's error bodies carry them.
ERROR_STATUSES: Mapping[int, str] = {
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
# Statuses only a gateway answers with (a cancelled stream, a broken or overloaded upstream).
_GATEWAY_STATUSES: Mapping[int, str] = {
    **ERROR_STATUSES,
    413: "INVALID_ARGUMENT",
    499: "CANCELLED",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    529: "UNAVAILABLE",
}

GENERATION_METHODS = ("generateContent", "streamGenerateContent", "countTokens")


def gemini_json(value: Any) -> bytes:
    """Gemini's spacing: a space after the colon, none after the comma. Written here because no
    fast JSON library takes separators; the leaves are orjson's, so this costs about a third
    of `json.dumps(..., separators=(",", ": "))` per chunk (the writer's hottest call)."""
    if isinstance(value, dict):
        return b"{" + b",".join([_key(k) + gemini_json(v) for k, v in value.items()]) + b"}"
    if isinstance(value, list):
        return b"[" + b",".join([gemini_json(v) for v in value]) + b"]"
    return orjson.dumps(value)


def _key(key: str) -> bytes:
    return orjson.dumps(key) + b": "


# --- error bodies -------------------------------------------------------------------------------


def error_object(
    status: int,
    message: str,
    *,
    retry_after: float | None = None,
    param: str | None = None,
    statuses: Mapping[int, str] = ERROR_STATUSES,
) -> dict[str, Any]:
    """Google's `{"error": {code, message, status, details?}}`: a RetryInfo detail when the reply
    has a retry delay, a BadRequest field violation when one field is at fault."""
    error: dict[str, Any] = {
        "code": status,
        "message": message,
        "status": statuses.get(status, "UNKNOWN"),
    }
    details: list[dict[str, Any]] = []
    if param is not None:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{"field": param, "description": message}],
            }
        )
    if retry_after is not None:
        value = float(retry_after)
        delay = (str(int(value)) if value.is_integer() else repr(value)) + "s"
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay})
    if details:
        error["details"] = details
    return {"error": error}


def error_body(error: GatewayError) -> dict[str, Any]:
    """The HTTP error body (and the in-stream error object) for a gateway error."""
    return error_object(
        error.status,
        error.message,
        retry_after=error.retry_after,
        param=error.param,
        statuses=_GATEWAY_STATUSES,
    )


def models_body(models: Sequence[ServedModel]) -> dict[str, Any]:
    """`GET /{version}/models`: the served models as Gemini's `Model` resources."""
    return {
        "models": [
            {
                "name": f"models/{model.id}",
                "displayName": model.id,
                "supportedGenerationMethods": list(GENERATION_METHODS),
            }
            for model in models
        ]
    }


def count_tokens_body(total_tokens: int) -> dict[str, Any]:
    """`:countTokens`' answer."""
    return {"totalTokens": total_tokens}


# --- usage and fidelity -------------------------------------------------------------------------


def usage_metadata(usage: Usage | None) -> dict[str, int] | None:
    """The stop event's usage as `usageMetadata` (None when every count is unknown).

    promptTokenCount = cached + prompt (Gemini's prompt count includes cached tokens),
    candidatesTokenCount = response, thoughtsTokenCount = thoughts, cachedContentTokenCount =
    cached (left out when 0, as Gemini does); an unknown count is left out."""
    if usage is None:
        return None
    cached = usage.get("cached_tokens")
    prompt = usage.get("prompt_tokens")
    thoughts = usage.get("thoughts_tokens")
    response = usage.get("response_tokens")
    if cached is None and prompt is None and thoughts is None and response is None:
        return None
    out: dict[str, int] = {}
    total = 0
    if cached is not None or prompt is not None:
        out["promptTokenCount"] = (cached or 0) + (prompt or 0)
        total += out["promptTokenCount"]
    if response is not None:
        out["candidatesTokenCount"] = response
        total += response
    out["totalTokenCount"] = total + (thoughts or 0)
    if cached:
        out["cachedContentTokenCount"] = cached
    if thoughts is not None:
        out["thoughtsTokenCount"] = thoughts
    return out


def _canonical_base64(text: str) -> bool:
    try:
        return base64.b64encode(base64.b64decode(text, validate=True)).decode() == text
    except (binascii.Error, ValueError):
        return False


def thought_signature(
    fidelity: Mapping[str, Any] | None, seal: FidelitySeal, *, same_protocol: bool = False
) -> str | None:
    """What goes in `thoughtSignature` for an item's fidelity (module docstring);
    `same_protocol`: the upstream is Gemini, whose own signature goes as it is, canonical or
    not (SPEC §8: same-family fidelity passes as is)."""
    if not fidelity:
        return None
    signature = fidelity.get("thought_signature")
    if (
        len(fidelity) == 1
        and isinstance(signature, str)
        and signature
        and not is_sealed(signature)
        and (same_protocol or _canonical_base64(signature))
    ):
        return signature
    return seal.seal(dict(fidelity))


def _blob(mime_type: str, data: bytes) -> dict[str, str]:
    return {"mimeType": mime_type, "data": base64.b64encode(data).decode()}


def _function_call(item: Mapping[str, Any], ordinal: int) -> dict[str, Any]:
    """The call's part; `ordinal`: its place among the turn's calls, from 1."""
    call: dict[str, Any] = {"name": item["name"], "args": item["arguments"]}
    call_id = item.get("tool_call_id")
    if call_id and call_id != f"call_{ordinal}":  # else the assembler's (rule E)
        call["id"] = call_id
    return {"functionCall": call}


def _signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


# --- the stream ---------------------------------------------------------------------------------


class GeminiStreamWriter:
    """One Gemini stream: SPEC events in, `GenerateContentResponse` frames out (module doc).

    The events are checked with the grammar checker as they come: an event that breaks the
    grammar raises `GrammarViolation` (the caller ends the stream with `fail`); after `stop` or
    `fail` any event raises `StreamProtocolError`."""

    def __init__(self, ctx: WriteContext) -> None:
        self._ctx = ctx
        self._sse = ctx.request.options.get("alt", "sse") == "sse"
        self._part_around: tuple[bytes, bytes] | None = None  # a part chunk's head and tail
        self._checker = GrammarChecker()
        self._written = 0  # frames written
        self._ended = False
        self._kind: str | None = None  # the open group's kind
        self._previous: str | None = None  # the kind of the group before it
        self._hold = False  # the open text/thinking item is written whole at its .done
        self._signature_written = False
        self._mime = ""
        self._calls = 0  # tool calls so far

    # StreamWriter

    def feed(self, event: Event) -> list[bytes]:
        if self._ended:
            raise StreamProtocolError("4", "an event came after the Gemini stream ended")
        self._checker.feed(event)
        if event["event_type"] == "stop":
            return self._stop(event)
        item: dict[str, Any] = dict(event["content_items"][0])
        kind, _, phase = item["type"].partition(".")
        try:
            parts = self._delta(kind, item) if phase == "delta" else self._done(kind, item)
        except UnsupportedOutputError as exc:
            return self.fail(GatewayError(status=502, type="UnsupportedItem", message=str(exc)))
        return [self._part_frame(part) for part in parts]

    def fail(self, error: GatewayError) -> list[bytes]:
        if self._ended:
            return []
        self._ended = True
        frame = self._frame(error_body(error))
        return [frame + b"]"] if not self._sse else [frame]

    # items

    def _delta(self, kind: str, item: dict[str, Any]) -> list[dict[str, Any]]:
        if self._kind is None:
            self._open(kind, item)
        streamed = kind in ("text", "thinking") and not self._hold
        if streamed or (kind == "inline_data" and self._mime.startswith("audio/")):
            piece = item["data"] if kind == "inline_data" else item[kind]
            fidelity = item.get("fidelity")
            signature = self._signature(fidelity) if fidelity else None
            if not (piece or signature):
                return []
            self._signature_written = self._signature_written or signature is not None
            if kind == "inline_data":
                return [_signed({"inlineData": _blob(self._mime, piece)}, signature)]
            return [_signed(_text_part(kind, piece), signature)]
        if kind in ("text", "thinking", "tool_call", "inline_data", "inline_thinking"):
            return []  # written whole at the .done
        raise UnsupportedOutputError(
            f"the upstream answered with an item a Gemini generateContent answer cannot hold "
            f"({kind}); this gateway route cannot serve it"
        )

    def _signature(self, fidelity: Mapping[str, Any]) -> str | None:
        same = self._ctx.upstream == PROTOCOL
        return thought_signature(fidelity, self._ctx.seal, same_protocol=same)

    def _open(self, kind: str, item: dict[str, Any]) -> None:
        self._kind = kind
        self._hold = kind in ("text", "thinking") and kind == self._previous
        self._signature_written = False
        self._mime = item.get("mime_type") or ""

    def _done(self, kind: str, item: dict[str, Any]) -> list[dict[str, Any]]:
        self._kind = None
        self._previous = kind
        streamed = kind in ("text", "thinking") and not self._hold
        streamed = streamed or (kind == "inline_data" and self._mime.startswith("audio/"))
        if streamed and self._signature_written:
            return []  # the parts went as the fragments came, the signature with them
        fidelity = item.get("fidelity")
        signature = self._signature(fidelity) if fidelity else None
        if streamed:  # a signature that rode on no fragment gets an empty part of its own
            if signature is None:
                return []
            if kind == "inline_data":
                return [_signed({"inlineData": _blob(self._mime, b"")}, signature)]
            return [_signed(_text_part(kind, ""), signature)]
        if kind in ("text", "thinking"):  # held: a signed first part begins it (docstring)
            marker = signature if signature is not None else self._ctx.seal.seal({})
            return [_signed(_text_part(kind, item[kind]), marker)]
        if kind == "tool_call":
            self._calls += 1
            return [_signed(_function_call(item, self._calls), signature)]
        if kind == "inline_data":
            return [_signed({"inlineData": _blob(item["mime_type"], item["data"])}, signature)]
        if kind == "inline_thinking":
            part = {"inlineData": _blob(item["mime_type"], item["data"]), "thought": True}
            return [_signed(part, signature)]
        raise UnsupportedOutputError(f"a Gemini generateContent answer cannot hold {kind}")

    def _stop(self, event: Event) -> list[bytes]:
        self._ended = True
        reason = _finish_reason(self._ctx, event["finish_reason"])
        chunk = self._chunk({"text": ""}, reason, usage_metadata(event["usage_metadata"]))
        frame = self._frame(chunk)
        return [frame if self._sse else frame + b"]"]

    # frames

    def _chunk(
        self, part: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None
    ) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}}
        if finish is not None:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        chunk: dict[str, Any] = {"candidates": [candidate]}
        if usage is not None:
            chunk["usageMetadata"] = usage
        chunk["modelVersion"] = self._ctx.model
        chunk["responseId"] = self._ctx.response_id
        return chunk

    def _part_frame(self, part: dict[str, Any]) -> bytes:
        """`_frame(_chunk(part))`, from the chunk's fixed head and tail (the hot path)."""
        if self._part_around is None:
            marker = {"marker": True}
            head, _, tail = gemini_json(self._chunk(marker)).partition(gemini_json(marker))
            self._part_around = (head, tail)
        head, tail = self._part_around
        return self._framed(head + gemini_json(part) + tail)

    def _frame(self, value: dict[str, Any]) -> bytes:
        return self._framed(gemini_json(value))

    def _framed(self, json_text: bytes) -> bytes:
        self._written += 1
        if self._sse:
            return b"data: " + json_text + b"\r\n\r\n"
        # the JSON array Gemini streams without alt=sse: `[` first, `\n,\r\n` between elements
        return (b"[" if self._written == 1 else b"\n,\r\n") + json_text


def _finish_reason(ctx: WriteContext, finish: FinishReason | None) -> str:
    """`finishReason` of a finish (module docstring, `stop`)."""
    unknown = ctx.request.options.get("unknown_finish_reason")
    if finish in (None, "unknown") and isinstance(unknown, str) and unknown:
        return unknown
    return FINISH_REASONS[finish] if finish is not None else "OTHER"


def _text_part(kind: str, text: str) -> dict[str, Any]:
    return {"text": text, "thought": True} if kind == "thinking" else {"text": text}


def writer(ctx: WriteContext) -> GeminiStreamWriter:
    return GeminiStreamWriter(ctx)


# --- the non-stream body ------------------------------------------------------------------------


def final_body(ctx: WriteContext, message: Message) -> dict[str, Any]:
    """`:generateContent`'s answer: one `GenerateContentResponse` with every item as one part,
    its signature on that part."""
    parts: list[dict[str, Any]] = []
    calls = 0
    for raw in message["content_items"]:
        item: dict[str, Any] = dict(raw)
        kind = item["type"]
        signature = thought_signature(
            item.get("fidelity"), ctx.seal, same_protocol=ctx.upstream == PROTOCOL
        )
        if kind in ("text.done", "thinking.done"):
            name = kind.partition(".")[0]
            if item[name] or signature is not None:
                parts.append(_signed(_text_part(name, item[name]), signature))
        elif kind == "tool_call.done":
            calls += 1
            parts.append(_signed(_function_call(item, calls), signature))
        elif kind in ("inline_data.done", "inline_thinking.done"):
            part: dict[str, Any] = {"inlineData": _blob(item["mime_type"], item["data"])}
            if kind == "inline_thinking.done":
                part["thought"] = True
            parts.append(_signed(part, signature))
        else:
            raise UnsupportedOutputError(
                f"the upstream answered with an item a Gemini generateContent answer cannot "
                f"hold ({kind})"
            )
    finish = message.get("finish_reason")
    candidate: dict[str, Any] = {
        "content": {"parts": parts or [{"text": ""}], "role": "model"},
        "finishReason": _finish_reason(ctx, finish),
        "index": 0,
    }
    body: dict[str, Any] = {"candidates": [candidate]}
    usage = usage_metadata(message.get("usage_metadata"))
    if usage is not None:
        body["usageMetadata"] = usage
    body["modelVersion"] = ctx.model
    body["responseId"] = ctx.response_id
    return body


__all__ = [
    "ERROR_STATUSES",
    "FINISH_REASONS",
    "GeminiStreamWriter",
    "UnsupportedOutputError",
    "count_tokens_body",
    "error_body",
    "error_object",
    "final_body",
    "gemini_json",
    "models_body",
    "thought_signature",
    "usage_metadata",
    "writer",
]
