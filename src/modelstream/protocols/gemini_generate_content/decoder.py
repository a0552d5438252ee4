"""Gemini generateContent (`:streamGenerateContent?alt=sse`, Gemini API and Vertex AI) decoder.

Every frame is a whole `GenerateContentResponse`. Only the candidate with `index` 0 (absent
means 0) is the assistant turn; other candidates are skipped and counted. Its `content.parts`
arrive in order and map to items:
  text                    `text` item (`thought: true` → `thinking`); consecutive parts of one
                          kind join one item, a part of another kind ends it
  functionCall            one `tool_call` item per call: whole (`args`, absent → `{}`), or
                          streamed by Vertex (`willContinue` + `partialArgs`, see
                          `_ArgumentsWriter`), ended by an empty `functionCall` or by a part
                          without `willContinue`
  inlineData              `inline_data` (base64-decoded): audio chunks of one clip join, each
                          image is its own item; `thought: true` → `inline_thinking`
  anything else           executableCode, codeExecutionResult, ...: skipped and counted
Gemini has no terminal event: `finishReason` is the end of the turn (STOP → stop, MAX_TOKENS →
length, anything else → unknown; a `finishMessage` becomes a diagnostic) and the end of the body
ends the stream. A call whose arguments were still streaming is closed by STOP only: cut off by
any other reason, its text stays an unfinished object so it is never executed. Candidate metadata
(groundingMetadata, citationMetadata, urlContextMetadata, safetyRatings, ...) is skipped and
counted when not empty.

Fidelity (SPEC §3): `{"thought_signature": ...}` on the item whose run of parts carried it; replay
puts it on the item's first part. A signature never ends an item by itself: Gemini signs the
first part of an answer (`pydanticai-google-thinking`) or sends the signature on an empty part
after the text (`vercel-google-text`), and either way the answer stays one item. A second
signature within one run begins a new item at the part that carries it, so no signature is
lost. An empty text part that only carries a signature attaches to the open item (or, when
none is open or it is signed already, is an item of its own with empty text). A signature on a
skipped part (`pydanticai-google-code-execution`: executableCode) cannot be kept: a diagnostic
says so.

Usage arithmetic (SPEC §2): every chunk's `usageMetadata` is a snapshot of the turn so far, so
the latest one with token counts replaces the previous one (never summed).
  cached_tokens   = cachedContentTokenCount (absent → 0 when promptTokenCount is present)
  prompt_tokens   = promptTokenCount − cachedContentTokenCount + toolUsePromptTokenCount
                    (tool-use prompt tokens are input too: search/code results fed back to the
                    model; totalTokenCount counts them, corpus `pydanticai-google-web-search`)
  thoughts_tokens = thoughtsTokenCount; absent → 0 when candidatesTokenCount is present and the
                    turn streamed no thought part (proto3 JSON omits zero counts), else null
  response_tokens = candidatesTokenCount (excludes thoughts)

Errors: an in-band `{"error": {code, message, status}}` object and a prompt blocked before any
candidate (`promptFeedback.blockReason`, no candidates) are `ProviderError`s: the provider
refused the request, which no finish reason describes honestly.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import orjson

from ...error_bodies import (
    ErrorWords,
    gemini_error_reason,
    gemini_retry_delay,
    is_retryable_kind,
    provider_error,
)
from ...errors import ProviderError
from ...types import FinishReason
from ..common.decoding import load_json
from ..common.inline_media import decode_base64

_FINISH: dict[str, FinishReason] = {"STOP": "stop", "MAX_TOKENS": "length"}
# Candidate fields this decoder reads; any other non-empty field is skipped and counted.
_CANDIDATE_KEYS = frozenset({"content", "finishReason", "finishMessage", "index"})
# Part fields that qualify a part's data rather than being its data.
_PART_META = frozenset(
    {"thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution"}
)


class GeminiGenerateContentDecoder:
    protocol = "gemini-generate-content"
    default_provider = "google"

    def __init__(self, sink: Any, error_words: ErrorWords) -> None:
        self.sink = sink
        self.error_words = error_words  # every provider's (`error_bodies.provider_error`)
        self._kind: str | None = None  # kind of the open item: text, thinking, inline_data, ...
        self._key = 0  # the open item's key; items are numbered in order
        self._mime = ""  # the open inline item's mime type (audio chunks join while it matches)
        self._signed = False  # the open item carries a signature already
        self._call: _ArgumentsWriter | None = None  # the open streamed function call
        self._thought_seen = False
        self._identified = False  # metadata has the response id and the model
        self._usage_seen: tuple[Any, bool] | None = None  # the last usage mapped

    def on_frame(self, event: str, data: str) -> None:
        chunk = load_json(self.sink, data)
        if not isinstance(chunk, dict):
            if chunk is not None:
                self.sink.skip("chunk:not_an_object")
            return
        sink = self.sink
        if "error" in chunk:
            self._error(chunk["error"])
        if not self._identified:
            self._identify(chunk)
        candidates = chunk.get("candidates")
        if candidates:
            for candidate in candidates:
                if isinstance(candidate, dict) and candidate.get("index", 0) == 0:
                    self._candidate(candidate)
                else:
                    sink.skip("other_candidate")
        usage = chunk.get("usageMetadata")
        if usage:
            self._usage(usage)
        if not candidates:
            feedback = chunk.get("promptFeedback")
            if isinstance(feedback, dict) and feedback.get("blockReason"):
                self._blocked(feedback)
            elif not usage:
                sink.skip("chunk:no_candidates")

    def on_end(self) -> None:
        pass

    def _identify(self, chunk: dict[str, Any]) -> None:
        meta = self.sink.metadata
        meta.response_id = meta.response_id or chunk.get("responseId")
        meta.model = meta.model or chunk.get("modelVersion")
        self._identified = meta.response_id is not None and meta.model is not None

    # --- a candidate and its parts ----------------------------------------------------------

    def _candidate(self, candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        if isinstance(content, dict):
            parts = content.get("parts")
            if parts:
                for part in parts:
                    if not isinstance(part, dict):
                        self.sink.skip("part:not_an_object")
                        continue
                    text = part.get("text")
                    if text is not None:
                        self._text(text, part)
                    elif "functionCall" in part:
                        self._function_call(part["functionCall"], part.get("thoughtSignature"))
                    elif "inlineData" in part:
                        self._inline_data(part["inlineData"], part)
                    else:
                        self._other_part(part)
        if not _CANDIDATE_KEYS.issuperset(candidate):
            for key in candidate:
                if key not in _CANDIDATE_KEYS and candidate[key]:
                    self.sink.skip("candidate:" + key)
        reason = candidate.get("finishReason")
        if reason:
            self._finish(reason, candidate.get("finishMessage"))

    def _text(self, text: Any, part: dict[str, Any]) -> None:
        kind = "thinking" if part.get("thought") else "text"
        signature = part.get("thoughtSignature")
        if not text or not isinstance(text, str):
            if signature:
                self._lone_signature(kind, signature)
            return  # an empty part opens nothing and ends nothing (vercel-google-tool-call)
        if kind == "thinking":
            self._thought_seen = True
        if kind != self._kind or (signature and self._signed):
            self._open(kind)
        fidelity = self._signature(signature)
        if kind == "text":
            self.sink.text(self._key, text, fidelity)
        else:
            self.sink.thinking(self._key, text, fidelity)

    def _lone_signature(self, kind: str, signature: str) -> None:
        """An empty text part carrying only a signature: it belongs to the open item."""
        if self._kind in (None, "tool_call") or self._signed:
            self._open(kind)
            if kind == "thinking":
                self._thought_seen = True
        fidelity = self._signature(signature)
        sink, key, open_kind = self.sink, self._key, self._kind
        if open_kind == "text":
            sink.text(key, "", fidelity)
        elif open_kind == "thinking":
            sink.thinking(key, "", fidelity)
        elif open_kind == "inline_data":
            sink.inline_data(key, b"", self._mime, fidelity)
        else:
            sink.inline_thinking(key, b"", self._mime, fidelity)

    def _signature(self, signature: Any) -> dict[str, Any] | None:
        """The fidelity a part's signature gives the open item (the caller began a new item
        if the open one was signed already)."""
        if not signature:
            return None
        self._signed = True
        return {"thought_signature": signature}

    def _function_call(self, call: Any, signature: str | None) -> None:
        if not isinstance(call, dict):
            self.sink.skip("part:functionCall")
            return
        sink = self.sink
        writer = self._call
        if writer is not None and "name" not in call:  # Vertex: the open call continues
            fragment = writer.feed(call.get("partialArgs"), sink)
            if signature or fragment:
                fidelity = {"thought_signature": signature} if signature else None
                sink.tool_call(self._key, fragment, fidelity=fidelity)
            if not call.get("willContinue"):
                # An empty `functionCall` ends the call (vercel-vertex-stream-tool-call-args),
                # so does a last `partialArgs` part without `willContinue`
                # (vercel-vertex-stream-array-args-no-terminal).
                self._end()
            return
        name = call.get("name")
        if name is None and "args" not in call:
            sink.skip("part:functionCall_without_call")  # e.g. a terminator after the call ended
            return
        self._open("tool_call")
        fidelity = {"thought_signature": signature} if signature else None
        name = name if isinstance(name, str) else ""
        call_id = call.get("id") or ""
        if "args" in call or not (call.get("willContinue") or "partialArgs" in call):
            args = call.get("args")
            whole = orjson.dumps(args if isinstance(args, dict) else {}).decode()
            sink.tool_call(self._key, whole, name=name, tool_call_id=call_id, fidelity=fidelity)
            self._end()
            return
        sink.tool_call(self._key, "", name=name, tool_call_id=call_id, fidelity=fidelity)
        writer = self._call = _ArgumentsWriter()
        fragment = writer.feed(call.get("partialArgs"), sink)
        if fragment:
            sink.tool_call(self._key, fragment)
        if not call.get("willContinue"):
            self._end()

    def _inline_data(self, blob: Any, part: dict[str, Any]) -> None:
        sink = self.sink
        if not isinstance(blob, dict):
            sink.skip("part:inlineData")
            return
        mime = blob.get("mimeType") or "application/octet-stream"
        encoded = blob.get("data") or ""
        data = decode_base64(encoded) if isinstance(encoded, str) else None
        if data is None:
            sink.skip("part:inlineData_undecodable")
            sink.diagnostic({"type": "inline_data_undecodable", "mime_type": mime})
            return
        signature = part.get("thoughtSignature")
        if part.get("thought"):
            self._thought_seen = True
            self._open("inline_thinking")
            self._mime = mime
            sink.inline_thinking(self._key, data, mime, self._signature(signature))
            self._end()  # every thought image is its own item
            return
        audio = mime.startswith("audio/")
        joins = audio and self._kind == "inline_data" and self._mime == mime
        if not joins or (signature and self._signed):
            self._open("inline_data")
            self._mime = mime
        sink.inline_data(self._key, data, mime, self._signature(signature))
        if not audio:
            self._end()  # every image is its own item; audio chunks of one clip join

    def _other_part(self, part: dict[str, Any]) -> None:
        """executableCode, codeExecutionResult, fileData, ...: executed or held by the provider."""
        kind = next((key for key in part if key not in _PART_META), None)
        if kind is None:
            signature = part.get("thoughtSignature")
            if signature:  # a part that is only a signature: like an empty text part
                self._lone_signature("text", signature)
            return
        self._end()  # a change of kind ends the open item
        self.sink.skip("part:" + kind)
        if part.get("thoughtSignature"):
            self.sink.diagnostic({"type": "thought_signature_dropped", "part": kind})

    # --- items ------------------------------------------------------------------------------

    def _open(self, kind: str) -> None:
        """End the open item and number a new one of `kind` (the assembler opens it lazily)."""
        if self._kind is not None:
            self._end()
        self._key += 1
        self._kind = kind
        self._signed = False

    def _end(self) -> None:
        if self._kind is None:
            return
        if self._call is not None:
            self.sink.tool_call(self._key, self._call.close())
            self._call = None
        self.sink.end_item(self._key)
        self._kind = None

    def _finish(self, reason: Any, message: Any) -> None:
        reason = str(reason)
        if self._call is not None:
            if reason == "STOP":  # the model ended normally: the arguments are complete
                self._end()
            else:
                # Cut off (MAX_TOKENS, SAFETY, ...) while arguments were still streaming: the
                # text stays unclosed, so the call is never executed as if it were complete.
                self.sink.tool_call(self._key, self._call.cut())
                self._call = None
        self._kind = None
        if message:
            self.sink.diagnostic({"type": "finish_message", "reason": reason, "message": message})
        self.sink.finish(_FINISH.get(reason, "unknown"), reason)

    # --- usage and errors -------------------------------------------------------------------

    def _usage(self, usage: Any) -> None:
        seen = (usage, self._thought_seen)  # the mapping depends on both
        if seen == self._usage_seen or not isinstance(usage, dict):
            return  # most chunks repeat the previous snapshot
        self._usage_seen = seen
        get = usage.get
        # `type(x) is int` rejects bools and anything else that is not a count (hot path).
        prompt = get("promptTokenCount")
        prompt = prompt if type(prompt) is int else None
        response = get("candidatesTokenCount")
        response = response if type(response) is int else None
        thoughts = get("thoughtsTokenCount")
        thoughts = thoughts if type(thoughts) is int else None
        if prompt is None and response is None and thoughts is None:
            return  # Vertex's early chunks carry only {"trafficType": ...}
        cached = get("cachedContentTokenCount")
        cached = cached if type(cached) is int else None
        fresh = None
        if prompt is not None:
            cached = cached or 0
            tool_use = get("toolUsePromptTokenCount")
            fresh = prompt - cached + (tool_use if type(tool_use) is int else 0)
        if thoughts is None and response is not None and not self._thought_seen:
            thoughts = 0
        self.sink.usage_update(
            {
                "cached_tokens": cached,
                "prompt_tokens": fresh,
                "thoughts_tokens": thoughts,
                "response_tokens": response,
            }
        )

    def _error(self, error: Any) -> None:
        self.sink.provider_error(gemini_error(error, self.sink.metadata.provider, self.error_words))

    def _blocked(self, feedback: dict[str, Any]) -> None:
        reason = str(feedback["blockReason"])
        detail = feedback.get("blockReasonMessage")
        self.sink.provider_error(
            provider_error(
                f"the prompt was blocked ({reason})" + (f": {detail}" if detail else ""),
                error_type="prompt_blocked",
                code=reason,
                provider=self.sink.metadata.provider,
                words=self.error_words,
            )
        )


# --- Vertex streamed function-call arguments ---------------------------------------------------

# One step of a jsonPath: `.name`, `[0]`, `['name']` or `["name"]`.
_PATH_STEP = re.compile(
    r"\.([^.\[\]]+)"
    r"|\[(\d+)\]"
    r"|\['((?:[^'\\]|\\.)*)'\]"
    r'|\["((?:[^"\\]|\\.)*)"\]'
)
_ESCAPE = re.compile(r"\\(.)")


@lru_cache(maxsize=512)
def _parse_path(path: str) -> tuple[str | int, ...] | None:
    """`$.recipe.ingredients[0].name` → ("recipe", "ingredients", 0, "name"); None if invalid."""
    if not path.startswith("$"):
        return None
    steps: list[str | int] = []
    pos, end = 1, len(path)
    while pos < end:
        match = _PATH_STEP.match(path, pos)
        if match is None:
            return None
        name, index, single, double = match.groups()
        if name is not None:
            steps.append(name)
        elif index is not None:
            steps.append(int(index))
        else:
            steps.append(_ESCAPE.sub(r"\1", single if single is not None else double))
        pos = match.end()
    return tuple(steps) or None


def _value_json(arg: dict[str, Any]) -> str | None:
    """The JSON text of a partial argument's value (a `google.protobuf.Value` field)."""
    if "stringValue" in arg:
        value = arg["stringValue"]
        return orjson.dumps(value).decode() if isinstance(value, str) else None
    if "numberValue" in arg:
        value = arg["numberValue"]
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return orjson.dumps(value).decode() if ok else None
    if "boolValue" in arg:
        value = arg["boolValue"]
        return ("true" if value else "false") if isinstance(value, bool) else None
    if "nullValue" in arg:
        return "null"
    for field in ("structValue", "listValue"):
        if field in arg:
            return orjson.dumps(arg[field]).decode()
    return None


class _ArgumentsWriter:
    """Writes a streamed call's arguments as JSON text, fragment by fragment, as they arrive.

    Vertex sends each leaf value with its `jsonPath` in the order the model wrote the JSON
    (depth first); a string may come in pieces (`willContinue` on all but its last piece). The
    writer keeps the stack of open containers and writes the commas, keys, brackets and values
    that lead from the previous leaf to the next, so the joined fragments are the arguments'
    JSON text (corpus `vercel-vertex-stream-tool-call-args-nested`). A string's closing quote
    waits for the next leaf, so further pieces of the same path always join it.
    """

    __slots__ = ("_stack", "_string_json_path", "_string_path")

    def __init__(self) -> None:
        # open containers, root first: [path step, is an array, members written]
        self._stack: list[list[Any]] = []
        self._string_path: tuple[str | int, ...] | None = None  # the last leaf, a string
        self._string_json_path: str | None = None  # ... as it was spelled on the wire

    def feed(self, partial_args: Any, sink: Any) -> str:
        if not partial_args:
            return ""
        out: list[str] = []
        for arg in partial_args:
            json_path = arg.get("jsonPath") if isinstance(arg, dict) else None
            piece = arg.get("stringValue") if json_path == self._string_json_path else None
            if type(piece) is str:  # the next piece of the open string (the common case)
                out.append(orjson.dumps(piece).decode()[1:-1])
                continue
            path = _parse_path(json_path) if isinstance(json_path, str) else None
            if path is None:
                sink.skip("partial_arg:invalid_path")
                continue
            if path == self._string_path and isinstance(arg.get("stringValue"), str):
                out.append(orjson.dumps(arg["stringValue"]).decode()[1:-1])
                continue
            value = _value_json(arg)
            if value is None:
                sink.skip("partial_arg:no_value")
                continue
            if self._string_path is not None:
                out.append('"')
                self._string_path = self._string_json_path = None
            self._walk_to(path, out)
            if value[0] == '"':
                out.append(value[:-1])
                self._string_path, self._string_json_path = path, json_path
            else:
                out.append(value)
        return "".join(out)

    def close(self) -> str:
        """What completes the JSON text: `{}` when no argument came at all."""
        if not self._stack:
            return "{}"  # vercel-vertex-stream-no-args-parallel
        out = '"' if self._string_path is not None else ""
        return out + "".join("]" if entry[1] else "}" for entry in reversed(self._stack))

    def cut(self) -> str:
        """The call was cut off: its text must stay an unfinished object, never `{}`."""
        return "" if self._stack else "{"

    def _walk_to(self, path: tuple[str | int, ...], out: list[str]) -> None:
        """Close the containers the new leaf is not in, open the ones it is, write its key."""
        stack = self._stack
        if not stack:
            stack.append([None, False, 0])
            out.append("{")
        *containers, leaf = path
        depth = 1  # the root always stays open
        while (
            depth < len(stack)
            and depth <= len(containers)
            and stack[depth][0] == containers[depth - 1]
        ):
            depth += 1
        while len(stack) > depth:
            out.append("]" if stack.pop()[1] else "}")
        for i in range(len(stack) - 1, len(containers)):
            self._member(containers[i], out)
            is_array = isinstance(containers[i + 1] if i + 1 < len(containers) else leaf, int)
            out.append("[" if is_array else "{")
            stack.append([containers[i], is_array, 0])
        self._member(leaf, out)

    def _member(self, step: str | int, out: list[str]) -> None:
        """The comma and (in an object) the key before a new member of the innermost container."""
        parent = self._stack[-1]
        if parent[2]:
            out.append(",")
        parent[2] += 1
        if not parent[1]:
            out.append(orjson.dumps(str(step)).decode() + ":")


def gemini_error(error: Any, provider: str | None, words: ErrorWords) -> ProviderError:
    """A Gemini `{"error": {code, message, status, details}}` object as a `ProviderError`."""
    if not isinstance(error, dict):
        error = {"message": str(error)}
    status = error.get("status")
    status = status if isinstance(status, str) else None
    code = error.get("code")
    code = code if isinstance(code, int | str) else None
    return provider_error(
        str(error.get("message") or "the provider reported an error"),
        error_type=status,
        code=code,
        reason=gemini_error_reason(error.get("details")),
        retryable=is_retryable_kind(status, code, words),
        retry_after=gemini_retry_delay(error.get("details")),
        provider=provider,
        words=words,
    )
