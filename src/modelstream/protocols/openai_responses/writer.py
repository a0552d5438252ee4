"""The OpenAI Responses wire, outbound: SPEC events → the stream OpenAI sends (docs/gateway.md).

One `ResponsesWriter` per stream, fed the events in order. It writes what `POST /v1/responses`
with `stream: true` answers (corpus `pydanticai-reasoning-summary`, `vercel-azure-tool-call`):

  start      `response.created`, `response.in_progress` (the response object, status
             in_progress, output [], usage null), before the first item.
  text       a `message` item per text group: `output_item.added`, `content_part.added`
             (output_text), one `output_text.delta` per fragment, then at `.done`
             `output_text.done`, `content_part.done`, `output_item.done`. A refusal (fidelity
             `refusal`, known only at `.done`) ends as a `refusal` part: an empty
             `refusal.delta`, `refusal.done`, and the part and item hold a `refusal` part.
  thinking   a `reasoning` item per thinking group: `output_item.added`; at its first text a
             `reasoning_summary_part.added`, then `reasoning_summary_text.delta`s; at `.done`
             `reasoning_summary_text.done`, `reasoning_summary_part.done`, `output_item.done`.
  tool_call  a `function_call` item: `output_item.added` (call_id, name, namespace when the
             caller's tool sat in a namespace), `function_call_arguments.delta`s,
             `function_call_arguments.done`, `output_item.done`. The arguments stream as they
             arrive from upstreams whose calls carry no fidelity (Chat, Anthropic, Bedrock);
             from the others the call is written whole at its `.done`, since its call_id (which
             carries the fidelity) must be the same in `.added` and `.done`.
  inline_data  an image is an `image_generation_call` item written whole at its `.done`
             (base64 `result`, `output_format`); audio, inline thinking or embeddings have no
             output item here: the stream ends as failed, naming what came.
  end        `stop` → `response.completed` (finish stop / tool_call) or `response.incomplete`
             (length → reason max_output_tokens, unknown → content_filter), the whole response
             object with output and usage. `fail` → an `error` event, then `response.failed`
             (status failed, error {code, message}, the output so far), as OpenAI ends a stream
             that fails (corpus `vercel-openai-error`); the open item is never finished.

Every frame is numbered (`sequence_number`) from 0 by its position in all the frames the writer
returned, so a resume (`GET /v1/responses/{id}?stream=true&starting_after=N`) replays the stored
events through a fresh writer and drops the frames numbered ≤ N. The writer reads no clock and
no randomness: the same events give the same bytes.

Item ids and fidelity. An item's id is written at its `output_item.added`, and the SDK refuses a
`.done` whose id differs; but fidelity reaches the writer only with a group's last fragment
(the item assembler's rule C). So streamed items get generated ids, `<prefix>_gw_<response>_<n>`
(`msg_`, `rs_`, `fc_`, `ig_`; `_gw_` never occurs in OpenAI's hex ids), which the inbound decoder
recognises and leaves out of the fidelity; with the request option `provider_item_ids` (the
emulator's, which plays OpenAI itself) they are `<prefix>_<response>_<n>`, ids a client sends
back as the provider's. What each item's fidelity rides on:
  thinking   `encrypted_content` = the sealed fidelity, whatever the upstream (a Responses
             upstream's `id`, `part` and encrypted content included): Codex sends reasoning
             items back with their encrypted content, but not always with their id. Only a
             Responses upstream's fidelity with no item id in it (`encrypted_content`, `part`:
             what the emulator scripts) has nothing to lose: its encrypted content goes as it is.
  tool_call  a call held whole: the upstream's own `id` (Responses), else the sealed fidelity
             suffixed to the call_id, `<call_id>.<token>` (the call_id is what every client
             sends back, with the call and with its output).
  image      the id: the upstream's (Responses), else `ig_<token>`.
  text       the streamed message keeps its generated id (phase and refusal are written at its
             `.done`); the terminal response object, written when every fidelity is known, holds
             the upstream's message ids (Responses) or `msg_<token>` (another upstream's text
             fidelity, e.g. a Gemini thought signature): the SDK's final response is built from
             it, and so is the non-stream body. A client that replays the streamed
             `output_item.done` items instead (Codex) loses text fidelity other than phase and
             refusal.
In the terminal response object a Responses upstream's items are native: the upstream's ids,
one `reasoning` item per upstream reasoning item (its summary parts joined), its encrypted
content as it came.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...types import Event, FinishReason, Message, Usage
from ..common.fidelity_seal import FidelitySeal
from ..common.gateway import GatewayError, WriteContext

# The OpenAI family's error bodies and model list are one, the Chat wire's: the same HTTP error
# body (and, inside a stream, the same error object), the same emulator bytes.
from ..openai_chat.writer import error_body, error_object, models_body, openai_error_body

PROTOCOL = "openai-responses"

# Upstreams whose tool calls carry no fidelity (docs/providers.md, "Fidelity keys"): their calls'
# arguments stream as they arrive. Any other upstream's calls are held until their `.done`.
STREAMED_CALL_UPSTREAMS = frozenset(
    {"openai-chat", "anthropic-messages", "bedrock-converse-stream"}
)

# Fidelity keys the Responses stream decoder writes, per item kind (docs/providers.md).
NATIVE_KEYS: Mapping[str, frozenset[str]] = {
    "thinking": frozenset({"id", "part", "encrypted_content"}),
    "text": frozenset({"id", "phase", "refusal"}),
    "tool_call": frozenset({"id"}),
    "inline_data": frozenset({"id"}),
}
ID_PREFIXES: Mapping[str, str] = {
    "text": "msg",
    "thinking": "rs",
    "tool_call": "fc",
    "inline_data": "ig",
}
# a Responses upstream's reasoning fidelity that holds no item id: written as it is (docstring)
_WITHOUT_ID = frozenset({"part", "encrypted_content"})
CALL_ID_SEPARATOR = "."  # `<call_id>.<sealed token>`
GENERATED_ID = re.compile(r"(?:msg|rs|fc|ig)_gw_[A-Za-z0-9]*_\d+")

_INCOMPLETE_REASONS: Mapping[FinishReason, str] = {
    "length": "max_output_tokens",
    "unknown": "content_filter",
}


def is_generated_id(value: Any) -> bool:
    """Whether an item id is one this writer made up (module docstring: item ids)."""
    return isinstance(value, str) and GENERATED_ID.fullmatch(value) is not None


def response_object_id(response_id: str) -> str:
    """The Responses id (`resp_…`) of a gateway stream id."""
    return response_id if response_id.startswith("resp_") else f"resp_{response_id}"


def _stem(response_id: str) -> str:
    bare = response_id.removeprefix("resp_")
    return re.sub(r"[^A-Za-z0-9]", "", bare)


def _frame(kind: str, sequence: int, fields: dict[str, Any]) -> bytes:
    body = {"type": kind, "sequence_number": sequence, **fields}
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(body) + b"\n\n"


# --- items ------------------------------------------------------------------------------------


@dataclass
class _Item:
    """One output item: how it was streamed, and its form in the terminal response object."""

    kind: str
    streamed: dict[str, Any]  # the item of its `output_item.done`
    final: dict[str, Any]  # the item in the terminal response's `output`
    merge_key: str | None = None  # a Responses upstream's item id: consecutive parts join


@dataclass
class _Open:
    """The group being written (SPEC §2: one at a time)."""

    kind: str
    index: int
    item_id: str
    first: dict[str, Any]
    parts: list[str] = field(default_factory=list)  # the growing field's fragments
    announced: bool = False  # `output_item.added` written
    part_open: bool = False  # thinking: the summary part was added


class _Items:
    """How the items of one turn are written: ids, fidelity placement, terminal forms."""

    def __init__(self, ctx: WriteContext) -> None:
        self.seal: FidelitySeal = ctx.seal
        self.native = ctx.upstream == PROTOCOL
        self.stem = _stem(ctx.response_id)
        options = ctx.request.options
        self.include_encrypted = bool(options.get("include_encrypted_content"))
        self.marker = "_" if options.get("provider_item_ids") else "_gw_"
        namespaces = options.get("tool_namespaces")
        self.namespaces: Mapping[str, Any] = namespaces if isinstance(namespaces, Mapping) else {}

    def generated_id(self, kind: str, index: int) -> str:
        return f"{ID_PREFIXES[kind]}{self.marker}{self.stem}_{index}"

    def native_fidelity(self, kind: str, fidelity: dict[str, Any]) -> bool:
        """Fidelity this wire carries as its own fields (a Responses upstream's)."""
        if not fidelity or not set(fidelity) <= NATIVE_KEYS[kind]:
            return False
        if kind == "text" and set(fidelity) == {"refusal"}:
            return fidelity["refusal"] is True  # common to every decoder (SPEC §2)
        item_id = fidelity.get("id")
        return self.native and isinstance(item_id, str) and bool(item_id)

    def call_name(self, name: str) -> tuple[str, str | None]:
        """(name, namespace) of a tool the caller declared inside a namespace (inbound.py)."""
        entry = self.namespaces.get(name)
        if isinstance(entry, Sequence) and len(entry) == 2:
            return str(entry[1]), str(entry[0])
        return name, None

    # --- each kind's done item ---

    def message(self, item_id: str, text: str, fidelity: dict[str, Any]) -> _Item:
        refusal = fidelity.get("refusal") is True
        part = _text_part(text, refusal)
        streamed: dict[str, Any] = {
            "id": item_id,
            "type": "message",
            "status": "completed",
            "content": [part],
            "role": "assistant",
        }
        native = self.native_fidelity("text", fidelity)
        if native and isinstance(fidelity.get("phase"), str):
            streamed["phase"] = fidelity["phase"]
        final = dict(streamed)
        merge_key = None
        if native and isinstance(fidelity.get("id"), str):
            final["id"] = merge_key = fidelity["id"]
        elif fidelity and not native:
            final["id"] = f"msg_{self.seal.seal(fidelity)}"
        return _Item("text", streamed, final, merge_key)

    def reasoning(self, item_id: str, thinking: str, fidelity: dict[str, Any], part: bool) -> _Item:
        summary = [{"type": "summary_text", "text": thinking}] if part else []
        streamed: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": summary}
        encrypted = fidelity.get("encrypted_content")
        if self.native and fidelity and set(fidelity) <= _WITHOUT_ID:  # nothing to seal
            if isinstance(encrypted, str) or self.include_encrypted:
                streamed["encrypted_content"] = encrypted if isinstance(encrypted, str) else None
        elif fidelity:
            streamed["encrypted_content"] = self.seal.seal(fidelity)
        elif self.include_encrypted:
            streamed["encrypted_content"] = None
        if not self.native_fidelity("thinking", fidelity):
            return _Item("thinking", streamed, dict(streamed))
        final: dict[str, Any] = {"id": fidelity["id"], "type": "reasoning", "summary": []}
        kind = fidelity.get("part")
        if kind == "reasoning_text":
            final["content"] = [{"type": "reasoning_text", "text": thinking}]
        elif kind is not None or thinking:
            final["summary"] = [{"type": "summary_text", "text": thinking}]
        if isinstance(fidelity.get("encrypted_content"), str):
            final["encrypted_content"] = fidelity["encrypted_content"]
        elif self.include_encrypted:
            final["encrypted_content"] = None
        return _Item("thinking", streamed, final, fidelity["id"])

    def function_call(
        self, index: int, call_id: str, name: str, fidelity: dict[str, Any], held: bool
    ) -> dict[str, Any]:
        """The call's item as `.added` shows it (arguments empty, status in_progress)."""
        item_id = self.generated_id("tool_call", index)
        if held and fidelity:
            if self.native_fidelity("tool_call", fidelity):
                item_id = fidelity["id"]
            else:
                call_id = f"{call_id}{CALL_ID_SEPARATOR}{self.seal.seal(fidelity)}"
        tool, namespace = self.call_name(name)
        item: dict[str, Any] = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call_id,
            "name": tool,
        }
        if namespace is not None:
            item["namespace"] = namespace
        return item

    def image(self, index: int, data: bytes, mime_type: str, fidelity: dict[str, Any]) -> _Item:
        item_id = self.generated_id("inline_data", index)
        if self.native_fidelity("inline_data", fidelity):
            item_id = fidelity["id"]
        elif fidelity:
            item_id = f"ig_{self.seal.seal(fidelity)}"
        done = {
            "id": item_id,
            "type": "image_generation_call",
            "status": "completed",
            "result": base64.b64encode(data).decode("ascii"),
            "output_format": mime_type.split("/", 1)[1].split(";", 1)[0] or "png",
        }
        return _Item("inline_data", done, dict(done))


def _text_part(text: str, refusal: bool) -> dict[str, Any]:
    if refusal:
        return {"type": "refusal", "refusal": text}
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def terminal_output(items: Sequence[_Item]) -> list[dict[str, Any]]:
    """The terminal response's `output`: consecutive parts of one upstream item joined."""
    out: list[dict[str, Any]] = []
    last: _Item | None = None
    for item in items:
        final = dict(item.final)
        if (
            last is not None
            and item.merge_key is not None
            and last.merge_key == item.merge_key
            and last.kind == item.kind
        ):
            joined = out[-1]
            if item.kind == "text":
                joined["content"] = [*joined["content"], *final["content"]]
            else:
                joined["summary"] = [*joined["summary"], *final["summary"]]
                if "content" in final:
                    joined["content"] = [*joined.get("content", []), *final["content"]]
                if final.get("encrypted_content") is not None:  # it rides on the last part
                    joined["encrypted_content"] = final["encrypted_content"]
            last = item
            continue
        out.append(final)
        last = item
    return out


# --- usage, errors, the response object ---------------------------------------------------------


def usage_body(usage: Usage | None) -> dict[str, Any] | None:
    """SPEC usage → Responses usage (input includes cached, output includes reasoning); unknown
    counts are 0, and a turn whose usage is wholly unknown has `usage: null`."""
    if usage is None or all(value is None for value in usage.values()):
        return None
    cached = usage.get("cached_tokens") or 0
    reasoning = usage.get("thoughts_tokens") or 0
    input_tokens = cached + (usage.get("prompt_tokens") or 0)
    output_tokens = reasoning + (usage.get("response_tokens") or 0)
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def _stream_error(error: GatewayError) -> dict[str, Any]:
    """A failed response's `error` {code, message}: the codes Codex acts on (a context window
    exceeded, a rate limit whose message says when to try again), else server_error."""
    message = error.message
    if error.type == "ContextWindowExceededError":
        code = "context_length_exceeded"
    elif error.status == 429:
        code = "rate_limit_exceeded"
        if error.retry_after is not None:
            message = f"{message} Please try again in {error.retry_after:g}s."
    elif 400 <= error.status < 500:
        code = "invalid_prompt"
    else:
        code = "server_error"
    return {"code": code, "message": message}


def response_object(
    ctx: WriteContext,
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None,
    *,
    error: dict[str, Any] | None = None,
    incomplete: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The response object, echoing the request as OpenAI does (`options["response"]`)."""
    echo = ctx.request.options.get("response")
    echo = echo if isinstance(echo, Mapping) else {}
    return {
        "id": response_object_id(ctx.response_id),
        "object": "response",
        "created_at": ctx.created,
        "status": status,
        "background": False,
        "error": error,
        "incomplete_details": incomplete,
        "instructions": echo.get("instructions"),
        "max_output_tokens": echo.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": ctx.model,
        "output": output,
        "parallel_tool_calls": echo.get("parallel_tool_calls", True),
        "previous_response_id": echo.get("previous_response_id"),
        "prompt_cache_key": echo.get("prompt_cache_key"),
        "reasoning": echo.get("reasoning") or {"effort": None, "summary": None},
        "safety_identifier": echo.get("safety_identifier"),
        "service_tier": echo.get("service_tier") or "default",
        "store": echo.get("store", True),
        "temperature": echo.get("temperature", 1.0),
        "text": echo.get("text") or {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": echo.get("tool_choice", "auto"),
        "tools": echo.get("tools") or [],
        "top_logprobs": 0,
        "top_p": echo.get("top_p", 1.0),
        "truncation": echo.get("truncation") or "disabled",
        "usage": usage,
        "user": echo.get("user"),
        "metadata": echo.get("metadata") or {},
    }


def _terminal_status(finish: FinishReason | None) -> tuple[str, dict[str, Any] | None]:
    """(status, incomplete_details) of a finish reason (SPEC §8)."""
    if finish in ("stop", "tool_call"):
        return "completed", None
    return "incomplete", {"reason": _INCOMPLETE_REASONS.get(finish or "unknown", "content_filter")}


def _unwritable(kind: str, mime_type: str = "") -> GatewayError:
    what = {
        "inline_data": f"generated media ({mime_type or 'unknown type'})",
        "inline_thinking": f"inline thinking media ({mime_type or 'unknown type'})",
        "embedding": "an embedding",
    }.get(kind, kind)
    return GatewayError(
        502,
        "UnsupportedOutputError",
        f"the upstream answered with {what}, which the Responses API has no output item for "
        "(it carries text, reasoning, function calls and images)",
    )


# --- the writer -----------------------------------------------------------------------------


class ResponsesWriter:
    """One Responses stream (module docstring): `feed` events, or `fail`."""

    def __init__(self, ctx: WriteContext) -> None:
        self._ctx = ctx
        self._items = _Items(ctx)
        self._hold_calls = ctx.upstream not in STREAMED_CALL_UPSTREAMS
        self._sequence = 0
        self._started = False
        self._ended = False
        self._output: list[_Item] = []
        self._open: _Open | None = None

    # --- the interface ---

    def feed(self, event: Event) -> list[bytes]:
        if self._ended:
            return []
        frames = self._start()
        if event["event_type"] == "stop":
            if self._open is not None:  # a grammar the relay should never pass on
                return frames + self._fail(_broken(f"stop while a {self._open.kind} is open"))
            return frames + self._stop(event)
        for item in event["content_items"]:
            frames += self._item(item)
            if self._ended:
                break
        return frames

    def fail(self, error: GatewayError) -> list[bytes]:
        if self._ended:
            return []
        return self._start() + self._fail(error)

    # --- frames ---

    def _emit(self, kind: str, **fields: Any) -> bytes:
        frame = _frame(kind, self._sequence, fields)
        self._sequence += 1
        return frame

    def _response(self, status: str, output: list[dict[str, Any]], usage: Any, **extra: Any) -> Any:
        return response_object(self._ctx, status, output, usage, **extra)

    def _start(self) -> list[bytes]:
        if self._started:
            return []
        self._started = True
        response = self._response("in_progress", [], None)
        return [
            self._emit("response.created", response=response),
            self._emit("response.in_progress", response=response),
        ]

    def _stop(self, event: Event) -> list[bytes]:
        self._ended = True
        status, incomplete = _terminal_status(event["finish_reason"])
        response = self._response(
            status,
            terminal_output(self._output),
            usage_body(event["usage_metadata"]),
            incomplete=incomplete,
        )
        kind = "response.completed" if status == "completed" else "response.incomplete"
        return [self._emit(kind, response=response)]

    def _fail(self, error: GatewayError) -> list[bytes]:
        self._ended = True
        frames = [self._emit("error", error=error_object(error))]
        output = terminal_output(self._output)
        open_ = self._open
        if open_ is not None and open_.announced:
            output.append(self._unfinished(open_))
        response = self._response("failed", output, None, error=_stream_error(error))
        frames.append(self._emit("response.failed", response=response))
        return frames

    def _unfinished(self, open_: _Open) -> dict[str, Any]:
        """The open item as it stood when the stream failed (never finished: status incomplete)."""
        text = "".join(open_.parts)
        if open_.kind == "text":
            return {
                "id": open_.item_id,
                "type": "message",
                "status": "incomplete",
                "content": [_text_part(text, False)],
                "role": "assistant",
            }
        if open_.kind == "thinking":
            summary = [{"type": "summary_text", "text": text}] if open_.part_open else []
            return {"id": open_.item_id, "type": "reasoning", "summary": summary}
        return {**open_.first, "status": "incomplete", "arguments": text}

    # --- items ---

    def _item(self, item: Any) -> list[bytes]:
        kind, _, phase = str(item.get("type", "")).rpartition(".")
        open_ = self._open
        if open_ is not None and open_.kind != kind:
            return self._fail(_broken(f"{item.get('type')} while a {open_.kind} is open"))
        if kind in ("inline_thinking", "embedding") or (
            kind == "inline_data" and not str(item.get("mime_type", "")).startswith("image/")
        ):
            return self._fail(_unwritable(kind, str(item.get("mime_type", ""))))
        if kind not in ID_PREFIXES or phase not in ("delta", "done"):
            return self._fail(_broken(f"an item of type {item.get('type')!r}"))
        if open_ is None:
            if phase == "done":  # a group is delta+ done (SPEC §2)
                return self._fail(_broken(f"{item.get('type')} without a delta"))
            open_ = self._open = _Open(kind, len(self._output), "", dict(item))
            open_.item_id = self._items.generated_id(kind, open_.index)
        if kind == "text":
            return self._text(open_, item, phase)
        if kind == "thinking":
            return self._thinking(open_, item, phase)
        if kind == "tool_call":
            return self._tool_call(open_, item, phase)
        return self._image(open_, item, phase)

    def _close(self, item: _Item) -> None:
        self._output.append(item)
        self._open = None

    def _text(self, open_: _Open, item: Any, phase: str) -> list[bytes]:
        frames: list[bytes] = []
        where = {"item_id": open_.item_id, "output_index": open_.index, "content_index": 0}
        if not open_.announced:
            open_.announced = True
            added = {
                "id": open_.item_id,
                "type": "message",
                "status": "in_progress",
                "content": [],
                "role": "assistant",
            }
            frames.append(
                self._emit("response.output_item.added", output_index=open_.index, item=added)
            )
            frames.append(
                self._emit("response.content_part.added", **where, part=_text_part("", False))
            )
        if phase == "delta":
            if item["text"]:
                open_.parts.append(item["text"])
                frames.append(
                    self._emit(
                        "response.output_text.delta", **where, delta=item["text"], logprobs=[]
                    )
                )
            return frames
        fidelity = dict(item.get("fidelity") or {})
        text: str = item["text"]
        done = self._items.message(open_.item_id, text, fidelity)
        part = done.streamed["content"][0]
        if part["type"] == "refusal":
            frames.append(self._emit("response.refusal.delta", **where, delta=""))
            frames.append(self._emit("response.refusal.done", **where, refusal=text))
        else:
            frames.append(self._emit("response.output_text.done", **where, text=text, logprobs=[]))
        frames.append(self._emit("response.content_part.done", **where, part=part))
        frames.append(
            self._emit("response.output_item.done", output_index=open_.index, item=done.streamed)
        )
        self._close(done)
        return frames

    def _thinking(self, open_: _Open, item: Any, phase: str) -> list[bytes]:
        frames: list[bytes] = []
        where = {"item_id": open_.item_id, "output_index": open_.index, "summary_index": 0}
        if not open_.announced:
            open_.announced = True
            added: dict[str, Any] = {"id": open_.item_id, "type": "reasoning", "summary": []}
            if self._items.include_encrypted:
                added["encrypted_content"] = None
            frames.append(
                self._emit("response.output_item.added", output_index=open_.index, item=added)
            )
        fidelity = dict(item.get("fidelity") or {})
        text: str = item["thinking"]
        # the summary part opens at the first text; at `.done` also when the upstream had an
        # (empty) part, so that the part comes back
        if not open_.part_open and (text if phase == "delta" else text or "part" in fidelity):
            open_.part_open = True
            empty = {"type": "summary_text", "text": ""}
            frames.append(self._emit("response.reasoning_summary_part.added", **where, part=empty))
        if phase == "delta":
            if text:
                open_.parts.append(text)
                frames.append(
                    self._emit("response.reasoning_summary_text.delta", **where, delta=text)
                )
            return frames
        if open_.part_open:
            part = {"type": "summary_text", "text": text}
            frames.append(self._emit("response.reasoning_summary_text.done", **where, text=text))
            frames.append(self._emit("response.reasoning_summary_part.done", **where, part=part))
        done = self._items.reasoning(open_.item_id, text, fidelity, open_.part_open)
        frames.append(
            self._emit("response.output_item.done", output_index=open_.index, item=done.streamed)
        )
        self._close(done)
        return frames

    def _tool_call(self, open_: _Open, item: Any, phase: str) -> list[bytes]:
        held = self._hold_calls
        frames: list[bytes] = []
        if phase == "delta":
            if item["arguments"]:
                open_.parts.append(item["arguments"])
            if held:
                return []
            if not open_.announced:
                frames += self._call_added(open_, {}, held=False)
            if item["arguments"]:
                frames.append(self._call_delta(open_, item["arguments"]))
            return frames
        fidelity = dict(item.get("fidelity") or {})
        if held:  # written whole now that its fidelity is known
            frames += self._call_added(open_, fidelity, held=True)
            frames += [self._call_delta(open_, piece) for piece in open_.parts]
        arguments = "".join(open_.parts) or orjson.dumps(item["arguments"]).decode()
        done = {**open_.first, "status": "completed", "arguments": arguments}
        frames.append(
            self._emit(
                "response.function_call_arguments.done",
                item_id=open_.item_id,
                output_index=open_.index,
                arguments=arguments,
            )
        )
        frames.append(self._emit("response.output_item.done", output_index=open_.index, item=done))
        self._close(_Item("tool_call", done, dict(done)))
        return frames

    def _call_added(self, open_: _Open, fidelity: dict[str, Any], *, held: bool) -> list[bytes]:
        first = open_.first
        added = self._items.function_call(
            open_.index,
            str(first.get("tool_call_id", "")),
            str(first.get("name", "")),
            fidelity,
            held,
        )
        open_.first = added
        open_.item_id = added["id"]
        open_.announced = True
        return [self._emit("response.output_item.added", output_index=open_.index, item=added)]

    def _call_delta(self, open_: _Open, piece: str) -> bytes:
        return self._emit(
            "response.function_call_arguments.delta",
            item_id=open_.item_id,
            output_index=open_.index,
            delta=piece,
        )

    def _image(self, open_: _Open, item: Any, phase: str) -> list[bytes]:
        if phase == "delta":  # the image is written whole at its `.done`
            return []
        done = self._items.image(
            open_.index, item["data"], item["mime_type"], dict(item.get("fidelity") or {})
        )
        added = {
            "id": done.streamed["id"],
            "type": "image_generation_call",
            "status": "in_progress",
        }
        frames = [
            self._emit("response.output_item.added", output_index=open_.index, item=added),
            self._emit("response.output_item.done", output_index=open_.index, item=done.streamed),
        ]
        self._close(done)
        return frames


def _broken(what: str) -> GatewayError:
    return GatewayError(
        502, "StreamProtocolError", f"the upstream's events broke the stream grammar: {what}"
    )


def writer(ctx: WriteContext) -> ResponsesWriter:
    return ResponsesWriter(ctx)


# --- the non-stream body ------------------------------------------------------------------------


def final_body(ctx: WriteContext, message: Message) -> dict[str, Any]:
    """The finished turn as `POST /v1/responses` without `stream` answers: the response object
    the stream's terminal event would hold. A turn holding an item this wire cannot carry is a
    response with status failed, naming it."""
    items = _Items(ctx)
    output: list[_Item] = []
    done: Any
    for index, done in enumerate(message["content_items"]):
        kind = done["type"].removesuffix(".done")
        fidelity = dict(done.get("fidelity") or {})
        item_id = items.generated_id(kind, index) if kind in ID_PREFIXES else ""
        if kind == "text":
            output.append(items.message(item_id, done["text"], fidelity))
        elif kind == "thinking":
            part = bool(done["thinking"] or "part" in fidelity)
            output.append(items.reasoning(item_id, done["thinking"], fidelity, part))
        elif kind == "tool_call":
            call = items.function_call(index, done["tool_call_id"], done["name"], fidelity, True)
            call.update(status="completed", arguments=orjson.dumps(done["arguments"]).decode())
            output.append(_Item("tool_call", call, dict(call)))
        elif kind == "inline_data" and str(done.get("mime_type", "")).startswith("image/"):
            output.append(items.image(index, done["data"], done["mime_type"], fidelity))
        else:
            error = _stream_error(_unwritable(kind, str(done.get("mime_type", ""))))
            return response_object(ctx, "failed", terminal_output(output), None, error=error)
    status, incomplete = _terminal_status(message.get("finish_reason"))
    return response_object(
        ctx,
        status,
        terminal_output(output),
        usage_body(message.get("usage_metadata")),
        incomplete=incomplete,
    )


__all__ = [
    "CALL_ID_SEPARATOR",
    "NATIVE_KEYS",
    "ResponsesWriter",
    "error_body",
    "final_body",
    "is_generated_id",
    "models_body",
    "openai_error_body",
    "response_object_id",
    "usage_body",
    "writer",
]
