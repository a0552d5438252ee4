"""Gemini Interactions API request encoder (`POST /v1beta/interactions`, `"stream": true`).

Stateless: every request carries the whole history as `input` steps and `"store": false`, so
nothing is kept server-side and no `previous_interaction_id` is ever needed (the Interactions
API stores by default). `tools`, `system_instruction` and `generation_config` are per request.

Config → body (the full table is in docs/requests-anthropic-gemini.md):
  system_prompt        `system_instruction` (a string)
  max_tokens, temperature, top_p, stop, seed
                       `generation_config`: max_output_tokens, temperature, top_p,
                       stop_sequences, seed
  tools                `tools[]` {type: "function", name, description, parameters}: the JSON
                       schema as given
  tool_choice          `generation_config.tool_choice`: "auto" / "any" / "none"; a list of
                       names → {allowed_tools: {mode: "any", tools: [...]}}; with no function
                       offered, auto/none are left out and the rest raise
  parallel_tool_calls  no switch: true is the API's behaviour, false raises
  response_format      `response_format` {type: "text", mime_type: "application/json",
                       schema} (JSON mode: no schema)
  thinking_level       `generation_config.thinking_level` (minimal / low / medium / high), by
                       the same per-model tables as generateContent's thinkingLevel (Pro models
                       cannot turn thinking off); Gemini 2.0 and 1.x do not think: only "none"
  thinking_summary     `generation_config.thinking_summaries`: "auto" (true) / "none" (false)
  prompt_caching       accepted, nothing sent: Gemini caches repeated prefixes implicitly
  extra_body           merged last: objects key by key, None removes a key, else replaces
  trace_id             not sent

History → steps (SPEC §1): a user message is its `function_result` steps (one per tool result,
named after its call) then one `user_input` step of its text and images; an assistant message
is its items in order: thinking → a `thought` step {signature, summary}, a tool call → a
`function_call` step {id, name, arguments, signature?}, and each run of text and media → one
`model_output` step. Replay (SPEC §2 rule 6): the `thought_signature` an item came with goes
back on its step; a thought step goes back only with its signature (the API validates thoughts
by it), so unsigned thinking and another provider's thinking (foreign fidelity) are left out.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from ...errors import InvalidMessageError, UnsupportedParameterError
from ...media import guess_media_type, parse_data_url, url_kind
from ...types import Config, Message, ThinkingLevel
from ..common.encoding import (
    ProviderRequest,
    check_messages,
    complete_tool_results,
    items_of,
    own_fidelity,
)
from ..common.options import (
    check_prompt_caching,
    checked_tool_choice,
    merge_extra_body,
    read_config,
    refuse_media_output,
    response_format_spec,
    stop_sequences,
    thinking_level,
    tool_choice_applies,
    tool_list,
)
from ..gemini_generate_content.encoder import (
    THINKING_LEVELS_GEMINI_3,
    THINKING_LEVELS_GEMINI_3_0_PRO,
    THINKING_LEVELS_GEMINI_3_PRO,
    gemini_version,
    thinking_control,
)

PROTOCOL = "gemini-interactions"
PATH = "/v1beta/interactions"

_FIDELITY_KEYS = frozenset({"thought_signature"})
_NO_MEDIA_YET = (
    "not mapped for Interactions yet: use client_type='gemini-generate-content', or extra_body"
)
_TOOL_CHOICE_MODES = {"auto": "auto", "required": "any", "none": "none"}


class GeminiInteractionsEncoder:
    protocol = PROTOCOL

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        check_messages(messages)
        if not messages:
            raise InvalidMessageError("an Interactions request needs at least one message")
        settings = read_config(config, PROTOCOL)
        refuse_media_output(
            settings, PROTOCOL, dict.fromkeys(("image_output", "speech_output"), _NO_MEDIA_YET)
        )
        steps = _steps(complete_tool_results(messages))
        if not steps:
            raise InvalidMessageError("no message has content the Interactions API accepts")
        body: dict[str, Any] = {"model": model, "input": steps, "stream": True, "store": False}
        system = settings.get("system_prompt")
        if system:
            body["system_instruction"] = system
        generation = _generation_config(model, settings)
        if generation:
            body["generation_config"] = generation
        _tools(body, settings)
        response_format = settings.get("response_format")
        spec = response_format_spec(response_format, PROTOCOL) if response_format else None
        if spec is not None:
            text_format: dict[str, Any] = {"type": "text", "mime_type": "application/json"}
            if "schema" in spec:
                text_format["schema"] = spec["schema"]
            body["response_format"] = text_format
        check_prompt_caching(settings, PROTOCOL)

        extra = settings.get("extra_body")
        body = merge_extra_body(body, extra, PROTOCOL)
        _check_tool_choice(body, settings, extra)
        return ProviderRequest("POST", PATH, body, {})


# --- config -----------------------------------------------------------------------------------


def interactions_thinking_level(model: str, level: ThinkingLevel) -> str | None:
    """The `thinking_level` for a level on this model; None when nothing is to be sent."""
    if thinking_control(model) == "unsupported":
        if level == "none":
            return None  # the model does not think: "none" is what it does anyway
        raise UnsupportedParameterError(
            "thinking_level", PROTOCOL, f"{model} does not think; use Gemini 2.5 or later"
        )
    if "-pro" not in model.lower():
        return THINKING_LEVELS_GEMINI_3[level]
    if gemini_version(model) == (3, 0):
        return THINKING_LEVELS_GEMINI_3_0_PRO[level]
    return THINKING_LEVELS_GEMINI_3_PRO[level]


def _generation_config(model: str, settings: dict[str, Any]) -> dict[str, Any]:
    generation: dict[str, Any] = {}
    for key, field in (
        ("max_tokens", "max_output_tokens"),
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("seed", "seed"),
    ):
        if key in settings:
            generation[field] = settings[key]
    if settings.get("stop"):
        generation["stop_sequences"] = stop_sequences(settings["stop"], PROTOCOL)
    level = settings.get("thinking_level")
    if level is not None:
        mapped = interactions_thinking_level(model, thinking_level(level, PROTOCOL))
        if mapped is not None:
            generation["thinking_level"] = mapped
    if "thinking_summary" in settings:
        generation["thinking_summaries"] = "auto" if settings["thinking_summary"] else "none"
    return generation


def _tools(body: dict[str, Any], settings: dict[str, Any]) -> None:
    if settings.get("parallel_tool_calls") is False:
        raise UnsupportedParameterError(
            "parallel_tool_calls",
            PROTOCOL,
            "the Interactions API has no switch to turn parallel function calls off",
        )
    tools = tool_list(settings, PROTOCOL)
    if tools:
        declared = []
        for tool in tools:
            function: dict[str, Any] = {"type": "function", "name": tool["name"]}
            if tool.get("description"):
                function["description"] = tool["description"]
            if tool.get("parameters"):
                function["parameters"] = copy.deepcopy(tool["parameters"])
            declared.append(function)
        body["tools"] = declared
    choice = checked_tool_choice(settings, PROTOCOL)
    if choice is None:
        return
    if isinstance(choice, list):
        value: Any = {"allowed_tools": {"mode": "any", "tools": list(choice)}}
    else:
        value = _TOOL_CHOICE_MODES[choice]
    body.setdefault("generation_config", {})["tool_choice"] = value


def _check_tool_choice(body: dict[str, Any], settings: dict[str, Any], extra: Any) -> None:
    """The config's tool_choice against the functions of the final body, so functions given in
    extra_body count (`tool_choice_applies` has the rule)."""
    generation = body.get("generation_config")
    if not isinstance(generation, dict) or "tool_choice" not in generation:
        return
    extra_generation = (extra or {}).get("generation_config")
    if isinstance(extra_generation, dict) and "tool_choice" in extra_generation:
        return  # the caller set it by hand
    offered = {
        tool.get("name")
        for tool in body.get("tools") or ()
        if isinstance(tool, dict) and tool.get("type") == "function"
    }
    choice = checked_tool_choice(settings, PROTOCOL)
    if choice is not None and not tool_choice_applies(choice, offered, PROTOCOL):
        del generation["tool_choice"]
        if not generation:
            del body["generation_config"]


# --- history ----------------------------------------------------------------------------------


def _steps(history: list[Message]) -> list[dict[str, Any]]:
    names: dict[str, str] = {}  # tool_call_id -> function name, for the results
    steps: list[dict[str, Any]] = []
    for message in history:
        if message["role"] == "assistant":
            steps.extend(_model_steps(message, names))
        else:
            steps.extend(_user_steps(message, names))
    return steps


def _model_steps(message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    output: list[dict[str, Any]] | None = None  # the open model_output step's content
    for item in items_of(message):
        kind = item["type"]
        raw = item.get("fidelity")
        fidelity = own_fidelity(raw, _FIDELITY_KEYS)
        signature = fidelity.get("thought_signature") if fidelity else None
        if kind in ("text.done", "inline_data.done"):
            if kind == "text.done":
                if not item["text"] and not signature:
                    continue
                content: dict[str, Any] = {"type": "text", "text": item["text"]}
            else:
                content = _media(item["mime_type"], item["data"])
            if signature:
                content["signature"] = signature
            if output is None:
                output = []
                steps.append({"type": "model_output", "content": output})
            output.append(content)
            continue
        output = None  # any other item ends the run of output content
        if kind in ("thinking.done", "inline_thinking.done"):
            if not signature:
                continue  # unsigned or another provider's thinking (module docstring)
            thought: dict[str, Any] = {"type": "thought", "signature": signature}
            if kind == "thinking.done" and item["thinking"]:
                thought["summary"] = [{"type": "text", "text": item["thinking"]}]
            elif kind == "inline_thinking.done":
                thought["summary"] = [_media(item["mime_type"], item["data"])]
            steps.append(thought)
        elif kind == "tool_call.done":
            call: dict[str, Any] = {
                "type": "function_call",
                "id": item["tool_call_id"],
                "name": item["name"],
                "arguments": copy.deepcopy(item["arguments"]),
            }
            if signature:
                call["signature"] = signature
            names[item["tool_call_id"]] = item["name"]
            steps.append(call)
        else:
            raise InvalidMessageError(
                f"the Interactions API cannot take {kind} in an assistant message"
            )
    return steps


def _user_steps(message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    for item in items_of(message):
        kind = item["type"]
        if kind == "tool_result.done":
            call_id = item["tool_call_id"]
            if call_id not in names:
                raise InvalidMessageError(
                    f"the tool result for {call_id!r} answers no tool call in the history; "
                    "the Interactions API needs the call's function name"
                )
            images = item.get("images") or []
            result: Any = item["text"]
            if images:
                result = [{"type": "text", "text": item["text"]}, *map(media_content, images)]
            results.append(
                {
                    "type": "function_result",
                    "call_id": call_id,
                    "name": names[call_id],
                    "result": result,
                }
            )
        elif kind == "text.done":
            if item["text"]:
                content.append({"type": "text", "text": item["text"]})
        elif kind == "image_url.done":
            content.append(media_content(item["image_url"]))
        elif kind == "inline_data.done":
            content.append(_media(item["mime_type"], item["data"]))
        else:
            raise InvalidMessageError(f"the Interactions API cannot take {kind} in a user message")
    if content:
        results.append({"type": "user_input", "content": content})
    return results


def _content_type(mime_type: str) -> str:
    """The content block a media type goes in: image, audio, video, or document."""
    major = mime_type.split("/", 1)[0]
    return major if major in ("image", "audio", "video") else "document"


def _media(mime_type: str, data: bytes) -> dict[str, Any]:
    return {
        "type": _content_type(mime_type),
        "data": base64.b64encode(data).decode(),
        "mime_type": mime_type,
    }


def media_content(url: str) -> dict[str, Any]:
    """An image content block: the bytes of a data: URL, or an http(s) URL as `uri` (never
    downloaded; its mime type guessed from the extension and left out when unknown)."""
    if url_kind(url) == "data":
        mime_type, data = parse_data_url(url)
        if not mime_type:
            raise InvalidMessageError("a data: URL for the Interactions API needs a media type")
        return {"type": _content_type(mime_type), "data": data, "mime_type": mime_type}
    block: dict[str, Any] = {"type": "image", "uri": url}
    guessed = guess_media_type(url)
    if guessed:
        block["mime_type"] = guessed
        block["type"] = _content_type(guessed)
    return block
