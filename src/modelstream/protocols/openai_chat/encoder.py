"""OpenAI Chat Completions request encoder (`POST /chat/completions`, streamed with usage).

Also the request side of the compatible dialects the decoder reads (Azure, DeepSeek, xAI, Groq,
Mistral, OpenRouter, ...). The full mapping of every config key, the thinking-level table and the
replay rules are in docs/requests-openai.md; in short:

  history     system prompt → first `system` message; user text/images → `user` content (one
              text item alone → a plain string); tool results → `tool` messages, and the images
              of tool results (a tool message takes text only) → one `user` message right after
              them, each image preceded by a label naming its call.
  replay      assistant thinking goes back in the field it came in (`reasoning_content`,
              `reasoning`, OpenRouter `reasoning_details` rebuilt with signature/format, or
              Mistral `thinking` content chunks); refusal text → the `refusal` field; tool calls
              → `tool_calls` with JSON-encoded arguments; an audio answer (inline data with an
              `audio_id`) → `audio: {id}`, standing in for its transcript text. Thinking without
              this protocol's fidelity (another provider's) is dropped, and foreign fidelity
              never goes out.
  tool ids    printable ASCII without spaces, at most 40 characters (OpenAI rejects longer
              `tool_calls[].id`), normalized the same way for a call and its result.

The helpers after the encoder are shared by the Responses encoder; the config rules of every
encoder are in options.py.
"""

from __future__ import annotations

import base64
import copy
import re
from collections.abc import Callable
from typing import Any

import orjson

from ...errors import InvalidMessageError, UnsupportedParameterError
from ...media import url_kind
from ...types import Config, Message, ThinkingLevel, ToolChoice
from ..common.encoding import (
    THINKING_LEVELS,
    ProviderRequest,
    check_messages,
    complete_tool_results,
    items_of,
    normalize_tool_call_id,
)
from ..common.options import (
    check_prompt_caching,
    checked_tool_choice,
    merge_extra_body,
    read_config,
    refuse_media_output,
    response_format_spec,
    speech_output,
    stop_sequences,
    thinking_level,
    tool_choice_applies,
    tool_list,
)
from ..common.schemas import strict_schema, with_strict_schema

PROTOCOL = "openai-chat"
STREAMED_AUDIO_FORMAT = "pcm16"  # a streamed audio answer comes in this format only
TOOL_ID_CHARS = r"[!-~]"  # printable ASCII, no whitespace
CHAT_TOOL_ID_MAX = 40

# thinking_level → reasoning_effort: the protocol takes every level as it is (docs table).
REASONING_EFFORT: dict[ThinkingLevel, str] = {level: level for level in THINKING_LEVELS}

# OpenAI's own models take `max_completion_tokens` (reasoning models reject `max_tokens`);
# compatible servers (DeepSeek, Qwen, GLM, Kimi, MiniMax, Mistral) document `max_tokens`.
_OPENAI_MODEL = re.compile(r"^(gpt-|o\d|chatgpt-|codex-)")

# Fidelity keys the Chat decoder puts on thinking (providers/openai_chat.py docstring);
# `signature` alone is also Anthropic's, so it does not mark an item as this protocol's.
_CHAT_THINKING_KEYS = ("reasoning_field", "format", "encrypted", "reasoning_id", "detail_type")
_OPENROUTER_KEYS = ("format", "signature", "encrypted", "reasoning_id", "detail_type")


class OpenAIChatEncoder:
    protocol = PROTOCOL

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        check_messages(messages)
        options = read_config(config, self.protocol)
        body: dict[str, Any] = {"model": model, "messages": self._messages(messages, options)}
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        if "max_tokens" in options:
            key = "max_completion_tokens" if _OPENAI_MODEL.match(model) else "max_tokens"
            body[key] = options["max_tokens"]
        for key in ("temperature", "top_p", "seed"):
            if key in options:
                body[key] = options[key]
        if "stop" in options:
            body["stop"] = stop_sequences(options["stop"], self.protocol)
        body.update(tool_fields(options, self.protocol, _function_tool, flat=False))
        if "response_format" in options:
            spec = response_format_spec(options["response_format"], self.protocol)
            if spec is not None and spec["type"] == "json_schema":
                spec = with_strict_schema(spec)
                schema = {key: value for key, value in spec.items() if key != "type"}
                body["response_format"] = {"type": "json_schema", "json_schema": schema}
            elif spec is not None:
                body["response_format"] = spec
        if "thinking_level" in options:
            level = thinking_level(options["thinking_level"], self.protocol)
            body["reasoning_effort"] = REASONING_EFFORT[level]
        if options.get("thinking_summary"):
            raise UnsupportedParameterError(
                "thinking_summary",
                self.protocol,
                "Chat Completions has no reasoning summaries; use openai-responses",
            )
        check_prompt_caching(options, self.protocol)
        body.update(_speech_fields(options))
        body = merge_extra_body(body, options.get("extra_body"), self.protocol)
        return ProviderRequest("POST", "/chat/completions", body)

    # --- history ---------------------------------------------------------------------------

    def _messages(self, messages: list[Message], options: dict[str, Any]) -> list[Any]:
        out: list[Any] = []
        system = options.get("system_prompt")
        if system:
            out.append({"role": "system", "content": system})
        for index, message in enumerate(complete_tool_results(messages)):
            if message["role"] == "user":
                out.extend(self._user(index, message))
            else:
                assistant = self._assistant(message)
                if assistant is not None:
                    out.append(assistant)
        return out

    def _user(self, index: int, message: Message) -> list[Any]:
        tool_messages: list[Any] = []
        tool_images: list[Any] = []
        parts: list[Any] = []
        for item in items_of(message):
            kind = item["type"]
            if kind == "tool_result.done":
                call_id = chat_tool_id(item["tool_call_id"])
                text = item["text"]
                tool_messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
                images = item.get("images") or []
                if images:
                    label = f"Images returned by tool call {call_id}:"
                    tool_images.append({"type": "text", "text": label})
                    for url in images:
                        tool_images.append(_image_part(index, url))
            elif kind == "text.done":
                parts.append({"type": "text", "text": item["text"]})
            elif kind == "image_url.done":
                parts.append(_image_part(index, item["image_url"]))
            elif kind == "inline_data.done":
                url = inline_image_url(index, item, self.protocol)
                parts.append(_image_part(index, url))
            else:
                raise InvalidMessageError(f"message {index}: {kind} cannot be sent to openai-chat")
        content = tool_images + parts
        if not content:
            return tool_messages
        if len(content) == 1 and content[0]["type"] == "text":
            return [*tool_messages, {"role": "user", "content": content[0]["text"]}]
        return [*tool_messages, {"role": "user", "content": content}]

    def _assistant(self, message: Message) -> dict[str, Any] | None:
        texts: list[str] = []
        refusals: list[str] = []
        fields: dict[str, list[str]] = {}  # reasoning field -> its texts, in order
        details: list[dict[str, Any]] = []  # OpenRouter reasoning_details, rebuilt
        detail_index = 0  # OpenRouter numbers the details of one turn 0, 1, ...
        thinking_chunks: list[Any] = []  # Mistral `thinking` content chunks
        calls: list[Any] = []
        audio_id = _audio_id(message)
        for item in items_of(message):
            kind = item["type"]
            fidelity: dict[str, Any] = item.get("fidelity") or {}
            if kind == "text.done":
                if audio_id is not None and fidelity.get("audio_id") == audio_id:
                    continue  # the clip's transcript: the audio id stands for it
                text: str = item["text"]
                (refusals if fidelity.get("refusal") else texts).append(text)
            elif kind == "thinking.done":
                if not any(key in fidelity for key in _CHAT_THINKING_KEYS):
                    continue  # another provider's thinking: dropped (docs: handoff)
                thinking: str = item["thinking"]
                field = fidelity.get("reasoning_field")
                if field == "content.thinking":
                    chunk = {"type": "thinking", "thinking": [{"type": "text", "text": thinking}]}
                    thinking_chunks.append(chunk)
                    continue
                if field in ("reasoning_content", "reasoning") and thinking:
                    fields.setdefault(field, []).append(thinking)
                if field == "reasoning_details" or any(k in fidelity for k in _OPENROUTER_KEYS):
                    details.extend(_reasoning_details(thinking, fidelity, detail_index))
                    detail_index += 1
            elif kind == "tool_call.done":
                calls.append(
                    {
                        "id": chat_tool_id(item["tool_call_id"]),
                        "type": "function",
                        "function": {
                            "name": item["name"],
                            "arguments": arguments_json(item["arguments"]),
                        },
                    }
                )
            # other inline data, inline thinking: Chat has no assistant form for them (docs)
        text = "".join(texts)
        content: Any = text or None
        if thinking_chunks:
            content = [*thinking_chunks, *([{"type": "text", "text": text}] if text else [])]
        out: dict[str, Any] = {"role": "assistant", "content": content}
        for field, parts in fields.items():
            out[field] = "".join(parts)
        if details:
            out["reasoning_details"] = details
        if refusals:
            out["refusal"] = "".join(refusals)
        if calls:
            out["tool_calls"] = calls
        if audio_id is not None:
            out["audio"] = {"id": audio_id}
        if content is None and not refusals and not calls and audio_id is None:
            return None  # nothing this protocol can carry (e.g. only foreign thinking)
        return out


def _function_tool(tool: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": function_definition(tool)}


def _audio_id(message: Message) -> str | None:
    """The id of the audio answer a turn holds (Chat replays a clip by its id alone)."""
    for item in items_of(message):
        if item["type"] == "inline_data.done":
            audio_id = (item.get("fidelity") or {}).get("audio_id")
            if isinstance(audio_id, str) and audio_id:
                return audio_id
    return None


# --- shared by the OpenAI-family encoders ----------------------------------------------------


def tool_fields(
    options: dict[str, Any],
    protocol: str,
    function_tool: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    flat: bool,
) -> dict[str, Any]:
    """`tools`, `tool_choice` and `parallel_tool_calls` for the body. `flat` is Responses'
    shape, where a function's name sits beside `type` rather than under `function`."""
    tools = tool_list(options, protocol)
    fields: dict[str, Any] = {}
    if tools:
        fields["tools"] = [function_tool(tool) for tool in tools]
    choice = checked_tool_choice(options, protocol)
    offered = {tool["name"] for tool in tools}
    if choice is not None and tool_choice_applies(choice, offered, protocol):
        fields["tool_choice"] = _tool_choice(choice, flat)
    if "parallel_tool_calls" in options and tools:  # the API rejects it without tools
        fields["parallel_tool_calls"] = options["parallel_tool_calls"]
    return fields


def _tool_choice(choice: ToolChoice, flat: bool) -> Any:
    """A mode as it is; one name forces that function, several allow any of them."""
    if isinstance(choice, str):
        return choice
    functions: list[dict[str, Any]] = [
        {"type": "function", "name": name}
        if flat
        else {"type": "function", "function": {"name": name}}
        for name in choice
    ]
    if len(functions) == 1:
        return functions[0]
    allowed = {"mode": "required", "tools": functions}
    if flat:
        return {"type": "allowed_tools", **allowed}
    return {"type": "allowed_tools", "allowed_tools": allowed}


def function_definition(tool: dict[str, Any]) -> dict[str, Any]:
    """name, description (when not empty), parameters, and `strict` when the tool sets it."""
    out: dict[str, Any] = {"name": tool["name"]}
    if tool.get("description"):
        out["description"] = tool["description"]
    if tool.get("parameters") is not None:
        out["parameters"] = copy.deepcopy(tool["parameters"])
    if tool.get("strict") is not None:
        out["strict"] = bool(tool["strict"])
    if out.get("strict") and isinstance(out.get("parameters"), dict):
        # strict mode's form of the schema (every property required, optional ones nullable)
        out["parameters"] = strict_schema(out["parameters"]) or out["parameters"]
    return out


def chat_tool_id(call_id: str) -> str:
    return normalize_tool_call_id(call_id, allowed=TOOL_ID_CHARS, max_length=CHAT_TOOL_ID_MAX)


def arguments_json(arguments: Any) -> str:
    """Tool-call arguments as the JSON text the API carries (compact, key order kept)."""
    return orjson.dumps(arguments).decode()


def check_image_url(index: int, url: Any) -> str:
    """Image URLs go out as given (never downloaded); only http(s) and data: URLs are valid."""
    url_kind(url, message_index=index)
    checked: str = url
    return checked


def inline_image_url(index: int, item: Any, protocol: str) -> str:
    """A user's inline image as a data: URL; other inline data has no input form here."""
    mime = item.get("mime_type") or ""
    if not mime.startswith("image/"):
        raise UnsupportedParameterError(
            "inline_data", protocol, f"message {index}: only images can be sent, not {mime!r}"
        )
    return f"data:{mime};base64,{base64.b64encode(item['data']).decode()}"


def _image_part(index: int, url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": check_image_url(index, url)}}


def _reasoning_details(thinking: str, fidelity: dict[str, Any], index: int) -> list[Any]:
    """OpenRouter `reasoning_details` for one thinking item, as the decoder read them."""
    common: dict[str, Any] = {}
    if fidelity.get("reasoning_id"):
        common["id"] = fidelity["reasoning_id"]
    if fidelity.get("format"):
        common["format"] = fidelity["format"]
    detail_type = fidelity.get("detail_type") or "reasoning.text"
    out: list[Any] = []
    if thinking or "encrypted" not in fidelity:
        if detail_type == "reasoning.text":
            detail: dict[str, Any] = {"type": "reasoning.text", "text": thinking}
            if fidelity.get("signature"):
                detail["signature"] = fidelity["signature"]
        else:  # a summary, or the summary that came with an encrypted detail
            detail = {"type": "reasoning.summary", "summary": thinking}
        out.append({**detail, **common, "index": index})
    if "encrypted" in fidelity:
        data = fidelity["encrypted"]
        out.append({"type": "reasoning.encrypted", "data": data, **common, "index": index})
    return out


def _speech_fields(options: dict[str, Any]) -> dict[str, Any]:
    """`speech_output` → `modalities: [text, audio]` + `audio: {voice, format}`; images are
    refused (Chat Completions answers in text and audio only)."""
    refuse_media_output(
        options,
        PROTOCOL,
        {"image_output": "Chat Completions cannot answer with images; use openai-responses"},
    )
    speech = speech_output(options, PROTOCOL)
    if speech is None:
        return {}
    for key in ("language", "speakers"):
        if key in speech:
            raise UnsupportedParameterError(
                "speech_output", PROTOCOL, f"Chat Completions audio has no {key}: leave it out"
            )
    if "voice" not in speech:
        raise UnsupportedParameterError(
            "speech_output", PROTOCOL, "Chat Completions audio needs a voice, e.g. 'alloy'"
        )
    audio_format = speech.get("format", STREAMED_AUDIO_FORMAT)
    if audio_format != STREAMED_AUDIO_FORMAT:
        raise UnsupportedParameterError(
            "speech_output",
            PROTOCOL,
            f"a streamed Chat Completions answer speaks {STREAMED_AUDIO_FORMAT} only, not "
            f"{audio_format!r}",
        )
    return {
        "modalities": ["text", "audio"],
        "audio": {"voice": speech["voice"], "format": audio_format},
    }
