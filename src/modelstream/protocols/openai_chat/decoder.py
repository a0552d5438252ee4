"""OpenAI Chat Completions (`POST /v1/chat/completions`, `stream: true`) stream decoder.

Also reads the compatible dialects of Azure, DeepSeek, xAI, Groq, Mistral and OpenRouter.
Only choice 0 is the assistant turn. Text, thinking and refusal arrive as runs of deltas with no
block identity, so each run gets its own key and ends when a different kind of content starts
(reasoning → content, or a tool call starting). Tool calls are keyed by their `index` (they may
interleave) and have no end signal of their own: the finish reason closes them. `data: [DONE]`
is the terminal event; a body that ends after a finish reason without it still ends in `stop`.

Usage arithmetic (SPEC §2). One usage report is the turn's total (the trailing `choices: []`
chunk, the finish chunk for DeepSeek and Mistral, or `x_groq.usage`); the latest one wins.
  cached_tokens   = prompt_cache_hit_tokens (DeepSeek) when present,
                    else prompt_tokens_details.cached_tokens, else null (unknown)
  prompt_tokens   = prompt_tokens − (cached_tokens or 0)
  thoughts_tokens = completion_tokens_details.reasoning_tokens, else null (unknown)
  response_tokens = completion_tokens − (reasoning_tokens or 0); except where completion_tokens
                    already excludes reasoning (xAI: total_tokens = prompt + completion +
                    reasoning, corpus vercel-xai-tool-call), where it is completion_tokens.

Audio output (`delta.audio`, SPEC §3): the `data` chunks of one clip (one audio `id`) join one
`inline_data` item, `audio/pcm;rate=24000` (a streamed clip is always pcm16: 16-bit
little-endian mono PCM at 24 kHz), fidelity `{"audio_id", "expires_at"}`; it ends at the finish
reason, or when a clip with another id begins. Its `transcript` pieces are the answer's words:
one text item (its own run), fidelity `{"audio_id"}`, so replay can send the clip's id in place
of the words.

Fidelity: thinking `{"reasoning_field": "reasoning_content" | "reasoning" | "reasoning_details"
| "content.thinking"}` (where the text came from; "content.thinking" is Mistral's thinking chunk
inside `content`), plus OpenRouter `reasoning_details` facts: `format`, `signature`,
`encrypted` (the data of a `reasoning.encrypted` detail), `reasoning_id`, and `detail_type` when
the detail is not `reasoning.text`. Refusal text `{"refusal": true}`.

Skipped and counted (no item in the grammar): `other_choice` (n>1), `logprobs` (chunks carrying
token logprobs), `content_filter_results` (Azure, when non-empty), `chunk:<key>` (what a chunk
without choices carries besides usage: Azure `prompt_filter_results`, OpenAI `moderation`),
`empty_chunk`, `delta:<key>` (annotations, ...), `audio_undecodable`, `content_part:<type>`,
`tool_call:<type>` (non-function tools), `finish_repeated`, `after_finish`, `after_done`,
`event:<name>`, `chunk:not_an_object`. A frame that is not JSON raises `MalformedFrameError`.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...error_bodies import ErrorWords, provider_error
from ...types import FinishReason, Usage
from ..common.decoding import int_or_none, malformed_frame
from ..common.inline_media import decode_base64

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
}
_RETRYABLE = {
    "server_error",
    "rate_limit_exceeded",
    "rate_limit_error",
    "overloaded_error",
    "service_unavailable",
    "timeout",
}

# Run kinds of text-like content; each run is one item.
_TEXT = "text"
_THINKING = "thinking"
_REFUSAL = "refusal"
_TRANSCRIPT = "transcript"  # the words of an audio answer

# Streamed audio is pcm16 whatever else the request could name (OpenAI's audio guide).
AUDIO_MIME_TYPE = "audio/pcm;rate=24000"

# Delta fields read below, or carrying nothing to keep (Groq's `channel`, Mistral's stray
# `index` in vercel-mistral-incremental-tool-call).
_DELTA_KEYS = frozenset(
    (
        "role",
        "content",
        "refusal",
        "tool_calls",
        "function_call",
        "reasoning_content",
        "reasoning",
        "reasoning_details",
        "audio",
        "channel",
        "index",
    )
)
# Envelope fields of a chunk; anything else on a chunk without choices is counted.
_CHUNK_KEYS = frozenset(
    (
        "id",
        "object",
        "created",
        "model",
        "system_fingerprint",
        "service_tier",
        "obfuscation",
        "provider",
        "choices",
        "usage",
        "x_groq",
    )
)
_CHOICE_KEYS = frozenset(("index", "delta", "logprobs", "finish_reason", "native_finish_reason"))


class OpenAIChatDecoder:
    protocol = "openai-chat"
    default_provider = "openai"

    def __init__(self, sink: Any, error_words: ErrorWords) -> None:
        self.sink = sink
        self.error_words = error_words  # every provider's (`error_bodies.provider_error`)
        self._run_kind: str | None = None  # kind of the open text/thinking/refusal run
        self._run_key: tuple[str, int] | None = None
        self._runs = 0
        self._run_field: str | None = None  # the reasoning field recorded on this thinking run
        self._detail_index: Any = None  # OpenRouter reasoning_details index of this run
        self._tool_keys: dict[Any, tuple[str, int]] = {}  # tool call index -> its block key
        self._tool_ids: dict[Any, str] = {}  # tool call index -> the id of its call
        self._last_index: Any = None
        self._calls = 0
        self._finished = False
        self._done = False
        self._need_metadata = True
        self._clips = 0  # audio clips so far; the open one is keyed ("audio", self._clips)
        self._audio_id: str | None = None  # the open clip's id
        self._audio_open = False  # a data chunk of the open clip reached the assembler
        self._audio_fidelity: dict[str, Any] = {}  # fidelity waiting for the clip's data

    def on_frame(self, event: str, data: str) -> None:
        # The common path, one chunk per token: keep it lean (no copies, `delta.content` first).
        if data == "[DONE]" or event != "message" or self._done:
            self._special_frame(event, data)
            return
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise malformed_frame(data) from None
        if chunk.__class__ is not dict:
            self.sink.skip("chunk:not_an_object")
            return
        sink = self.sink
        try:
            if self._need_metadata:
                self._metadata(chunk)
            if "error" in chunk:
                self._error(chunk)
            choices = chunk.get("choices")
            if choices:
                for choice in choices:
                    if choice.get("index"):  # n>1: only choice 0 is the assistant turn
                        sink.skip("other_choice")
                        continue
                    delta = choice.get("delta")
                    if delta:
                        content = delta.get("content")
                        if content.__class__ is str and len(delta) == 1:
                            if content and (self._run_kind is _TEXT or self._start_run(_TEXT)):
                                sink.text(self._run_key, content)
                        else:
                            self._delta(delta, content)
                    # more than index, delta, logprobs and finish_reason: Azure, OpenRouter
                    if choice.get("finish_reason") or choice.get("logprobs") or len(choice) > 4:
                        self._choice_rest(choice)
            else:
                self._without_choices(chunk)
            usage = chunk.get("usage")
            if usage:
                self._usage(usage)
            elif "x_groq" in chunk:
                # Groq reports usage in x_groq.usage (corpus vercel-groq-tool-call has both)
                groq = chunk["x_groq"]
                if isinstance(groq, dict) and groq.get("usage"):
                    self._usage(groq["usage"])
        except (AttributeError, TypeError, KeyError) as exc:  # a chunk of an unexpected shape
            sink.skip("malformed_chunk")
            sink.diagnostic({"type": "malformed_chunk", "error": str(exc), "preview": data[:120]})

    def on_end(self) -> None:
        pass

    def _special_frame(self, event: str, data: str) -> None:
        """`[DONE]`, a named SSE event, or anything after `[DONE]`."""
        if self._done:
            self.sink.skip("after_done")
        elif data == "[DONE]":
            self._done = True
            self.sink.terminal()
        else:
            self._named_event(event, data)

    # --- the rest -------------------------------------------------------------------------

    def _delta(self, delta: dict[str, Any], content: Any) -> None:
        sink = self.sink
        if len(delta) == 1 and "tool_calls" in delta:  # the common argument fragment
            for call in delta["tool_calls"] or ():
                self._tool_call(call)
            return
        # Reasoning first: a chunk that carries both is reasoning that ends as content starts.
        reasoning = delta.get("reasoning_content")
        field = "reasoning_content"  # DeepSeek, xAI
        if reasoning is None:
            reasoning = delta.get("reasoning")
            field = "reasoning"  # Groq, OpenRouter
        if reasoning is not None and reasoning.__class__ is not str:
            sink.skip("delta:" + field)
            reasoning = None
        details = delta.get("reasoning_details")
        if details:
            self._reasoning_details(details, reasoning)
        elif reasoning:
            self._thinking(reasoning, field)
        if content:
            if content.__class__ is str:
                if self._run_kind is _TEXT or self._start_run(_TEXT):
                    sink.text(self._run_key, content)
            elif isinstance(content, list):
                self._content_parts(content)
            else:
                sink.skip("delta:content")
        refusal = delta.get("refusal")
        if refusal:
            # openaipy-refusal: the refusal streams in delta.refusal, content stays null
            if self._run_kind is _REFUSAL:
                sink.text(self._run_key, refusal)
            elif self._start_run(_REFUSAL):
                sink.text(self._run_key, refusal, {"refusal": True})
        calls = delta.get("tool_calls")
        if calls:
            for call in calls:
                self._tool_call(call)
        audio = delta.get("audio")
        if audio:
            self._audio(audio)
        legacy = delta.get("function_call")  # the deprecated `functions` API: one call
        if legacy:
            self._tool_call({"index": "function_call", "function": legacy})
        for key, value in delta.items():
            if key not in _DELTA_KEYS and value is not None:
                sink.skip("delta:" + key)

    def _audio(self, audio: Any) -> None:
        """A piece of an audio answer: its id, data, transcript, or the final expiry."""
        sink = self.sink
        if not isinstance(audio, dict):
            sink.skip("delta:audio")
            return
        if self._finished:
            sink.skip("after_finish")
            return
        audio_id = audio.get("id")
        if isinstance(audio_id, str) and audio_id and audio_id != self._audio_id:
            if self._audio_open:  # a clip with another id: the open one is done
                sink.end_item(("audio", self._clips))
            self._clips += 1
            self._audio_id, self._audio_open = audio_id, False
            self._audio_fidelity = {"audio_id": audio_id}
        elif self._clips == 0:
            self._clips = 1  # a clip whose id has not come (yet)
        transcript = audio.get("transcript")
        if (
            transcript
            and isinstance(transcript, str)
            and (self._run_kind is _TRANSCRIPT or self._start_run(_TRANSCRIPT))
        ):
            # on every piece: the id may come after the first one (merging is idempotent)
            fidelity = {"audio_id": self._audio_id} if self._audio_id else None
            sink.text(self._run_key, transcript, fidelity)
        if isinstance(audio.get("expires_at"), int):
            self._audio_fidelity["expires_at"] = audio["expires_at"]
        data = audio.get("data")
        chunk = decode_base64(data) if isinstance(data, str) and data else None
        if data and chunk is None:
            sink.skip("audio_undecodable")
        if chunk or (self._audio_open and self._audio_fidelity):
            fidelity = self._audio_fidelity or None
            self._audio_fidelity = {}
            sink.inline_data(("audio", self._clips), chunk or b"", AUDIO_MIME_TYPE, fidelity)
            self._audio_open = True

    def _start_run(self, kind: str) -> bool:
        """Close the current run and open a new key for `kind`; False after the finish."""
        if self._finished:
            self.sink.skip("after_finish")
            return False
        self._end_run()
        self._runs += 1
        self._run_kind = kind
        self._run_key = (kind, self._runs)
        return True

    def _end_run(self) -> None:
        if self._run_key is not None:
            self.sink.end_item(self._run_key)
        self._run_kind = self._run_key = None
        self._run_field = self._detail_index = None

    def _thinking(self, text: str, field: str, fidelity: dict[str, Any] | None = None) -> None:
        """A thinking fragment; the run records once which field its text came from."""
        if self._run_kind is not _THINKING and not self._start_run(_THINKING):
            return
        if text and self._run_field != field:
            self._run_field = field
            fidelity = (
                {**fidelity, "reasoning_field": field} if fidelity else {"reasoning_field": field}
            )
        self.sink.thinking(self._run_key, text, fidelity)

    def _reasoning_details(self, details: Any, reasoning: str | None) -> None:
        """OpenRouter's structured reasoning; `reasoning` mirrors the detail texts.

        pydanticai-openrouter-reasoning-signature: the format comes first, the signature in a
        late detail of its own with no text. A new detail `index` is a new thinking item.
        """
        field = "reasoning" if reasoning else "reasoning_details"
        texts: list[str] = []
        fidelity: dict[str, Any] = {}
        had_text = False
        current = self._detail_index if self._run_kind is _THINKING else None
        for detail in details:
            if not isinstance(detail, dict):
                continue
            index = detail.get("index")
            if index is not None:
                if current is not None and index != current:
                    if texts or fidelity:
                        self._thinking("".join(texts), field, fidelity or None)
                        texts, fidelity = [], {}
                    if self._run_kind is _THINKING:
                        self._end_run()
                current = index
            detail_type = detail.get("type")
            if detail_type == "reasoning.text":
                text = detail.get("text")
            elif detail_type == "reasoning.summary":
                text = detail.get("summary")
                fidelity["detail_type"] = detail_type
            elif detail_type == "reasoning.encrypted":
                text = None
                if detail.get("data"):
                    fidelity["encrypted"] = detail["data"]
                fidelity["detail_type"] = detail_type
            else:
                self.sink.skip(f"reasoning_detail:{detail_type}")
                continue
            if isinstance(text, str) and text:
                texts.append(text)
                had_text = True
            if detail.get("format"):
                fidelity["format"] = detail["format"]
            if detail.get("signature"):
                fidelity["signature"] = detail["signature"]
            if detail.get("id"):
                fidelity["reasoning_id"] = detail["id"]
        text = "".join(texts) if had_text else (reasoning or "")
        if text or fidelity:
            self._thinking(text, field, fidelity or None)
        if self._run_kind is _THINKING:
            self._detail_index = current

    def _content_parts(self, parts: list[Any]) -> None:
        """Mistral's typed content chunks (corpus pydanticai-mistral-thinking)."""
        for part in parts:
            if not isinstance(part, dict):
                continue
            part_type = part.get("type")
            if part_type == "thinking":
                text = thinking_part_text(part)
                if text:
                    self._thinking(text, "content.thinking")
            elif part_type == "text":
                value = part.get("text")
                if value and (self._run_kind is _TEXT or self._start_run(_TEXT)):
                    self.sink.text(self._run_key, value)
            else:
                self.sink.skip(f"content_part:{part_type}")

    def _tool_call(self, call: dict[str, Any]) -> None:
        sink = self.sink
        if len(call) == 2 and not self._finished:  # {"index", "function"}: a call continues
            key = self._tool_keys.get(call.get("index"))
            function = call.get("function")
            if key is not None and function:
                arguments = function.get("arguments")
                if arguments.__class__ is str and len(function) == 1:
                    sink.tool_call(key, arguments)
                    return
        call_type = call.get("type")
        if call_type is not None and call_type != "function":
            sink.skip(f"tool_call:{call_type}")
            return
        index = call.get("index")
        call_id = call.get("id") or ""
        if index is None:  # no index: the last call continues, unless a new id starts one
            index = self._last_index
            if index is None or (call_id and call_id != self._tool_ids.get(index)):
                index = ("no_index", self._calls)
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if arguments is None:  # `arguments: null` on a first fragment
            arguments = ""
        elif arguments.__class__ is not str:  # a gateway sending the parsed object
            arguments = orjson.dumps(arguments).decode()
        if self._finished:
            sink.skip("after_finish")
            return
        key = self._tool_keys.get(index)
        if key is not None:
            if not call_id or call_id == self._tool_ids[index]:
                # a gateway may name the call a chunk after its id: the assembler holds it
                sink.tool_call(key, arguments, name=function.get("name") or "")
                return
            sink.end_item(key)  # a gateway reusing an index for a new call: the old one is done
        self._end_run()  # the text or thinking before a tool call is finished
        self._calls += 1
        key = self._tool_keys[index] = ("tool_call", self._calls)
        self._tool_ids[index] = call_id
        self._last_index = index
        sink.tool_call(key, arguments, name=function.get("name") or "", tool_call_id=call_id)

    def _choice_rest(self, choice: dict[str, Any]) -> None:
        sink = self.sink
        logprobs = choice.get("logprobs")
        if logprobs and (
            not isinstance(logprobs, dict) or logprobs.get("content") or logprobs.get("refusal")
        ):
            sink.skip("logprobs")
        if len(choice) > 4:
            for key, value in choice.items():
                if key not in _CHOICE_KEYS and value:
                    sink.skip(key)  # Azure content_filter_results
        reason = choice.get("finish_reason")
        if reason:
            if self._finished:
                # pydanticai-openrouter-stream-error repeats finish_reason "length"
                sink.skip("finish_repeated")
                return
            self._finished = True
            self._end_run()
            sink.finish(_FINISH.get(reason, "unknown"), str(reason))

    def _without_choices(self, chunk: dict[str, Any]) -> None:
        """A chunk with `choices: []`: usage (handled by the caller) or provider extras."""
        counted = False
        for key, value in chunk.items():
            if key not in _CHUNK_KEYS and key != "error" and value:
                self.sink.skip("chunk:" + key)
                counted = True
        if not counted and not chunk.get("usage"):
            self.sink.skip("empty_chunk")

    def _metadata(self, chunk: dict[str, Any]) -> None:
        # vercel-azure-model-router: the first chunk has an empty id and model
        metadata = self.sink.metadata
        if metadata.response_id is None and chunk.get("id"):
            metadata.response_id = str(chunk["id"])
        if metadata.model is None and chunk.get("model"):
            metadata.model = str(chunk["model"])
        if metadata.response_id is not None and metadata.model is not None:
            self._need_metadata = False

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        prompt_total = int_or_none(usage.get("prompt_tokens"))
        completion = int_or_none(usage.get("completion_tokens"))
        cached = int_or_none(usage.get("prompt_cache_hit_tokens"))
        if cached is None:
            details = usage.get("prompt_tokens_details")
            if isinstance(details, dict):
                cached = int_or_none(details.get("cached_tokens"))
        reasoning = None
        details = usage.get("completion_tokens_details")
        if isinstance(details, dict):
            reasoning = int_or_none(details.get("reasoning_tokens"))
        response = completion
        if completion is not None and reasoning:
            total = int_or_none(usage.get("total_tokens"))
            excluded = reasoning > completion or (
                prompt_total is not None and total == prompt_total + completion + reasoning
            )
            if not excluded:
                response = completion - reasoning
        mapped: Usage = {
            "cached_tokens": cached,
            "prompt_tokens": prompt_total - (cached or 0) if prompt_total is not None else None,
            "thoughts_tokens": reasoning,
            "response_tokens": response,
        }
        self.sink.usage_update(mapped)

    def _error(self, chunk: dict[str, Any]) -> None:
        """A chunk whose top-level `error` object reports a failure mid-stream."""
        error = chunk["error"]
        if not error:
            return
        if chunk.get("usage"):  # pydanticai-openrouter-stream-error: usage rides on it
            self._usage(chunk["usage"])
        self._raise(error)

    def _named_event(self, name: str, data: str) -> None:
        if name != "error":
            self.sink.skip(f"event:{name}")
            return
        # pydanticai-groq-tool-use-failed: `event: error` ends the stream, no finish, no [DONE]
        try:
            payload: Any = orjson.loads(data)
        except orjson.JSONDecodeError:
            payload = {"message": data}
        if isinstance(payload, dict) and "error" in payload:
            payload = payload["error"]
        self._raise(payload)

    def _raise(self, error: Any) -> None:
        if not isinstance(error, dict):
            error = {"message": str(error)}
        self.sink.diagnostic({"type": "provider_error", "error": error})
        code = error.get("code")
        if code is not None and not isinstance(code, str | int):
            code = str(code)
        error_type = error.get("type")
        error_type = str(error_type) if error_type is not None else None
        status = error.get("status_code") or (code if isinstance(code, int) else None)
        retryable = (error_type in _RETRYABLE or code in _RETRYABLE) or (
            isinstance(status, int) and (status == 429 or status >= 500)
        )
        self.sink.provider_error(
            provider_error(
                str(error.get("message") or "the stream reported an error"),
                error_type=error_type,
                code=code,
                retryable=retryable,
                provider=self.sink.metadata.provider,
                words=self.error_words,
            )
        )


def thinking_part_text(part: dict[str, Any]) -> str:
    """The text of a Mistral thinking content part: `{"type": "thinking", "thinking": [{"type":
    "text", "text": ...}]}` (or, leniently, a plain string)."""
    inner = part.get("thinking")
    if isinstance(inner, list):
        return "".join(p.get("text") or "" for p in inner if isinstance(p, dict))
    return inner if isinstance(inner, str) else ""
