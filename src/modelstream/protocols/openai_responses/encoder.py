"""OpenAI Responses request encoder (`POST /responses`, `stream: true`).

The history becomes `input` items (docs/requests-openai.md has the full mapping):

  user        text/images → one `message` (a lone text → a plain string), tool results →
              `function_call_output` items before it (output: the text, or a list of
              `input_text` + `input_image` parts when the result has images).
  assistant   replayed as the decoder received it (providers/openai_responses.py fidelity):
              consecutive thinking items with one fidelity `id` → one `reasoning` item
              (summary parts or `reasoning_text` content, `encrypted_content`, `id`); text with
              an `id` → an output `message` item (`id`, `phase`, `output_text` / `refusal`
              parts, consecutive parts of one item joined); `function_call` items (`call_id`,
              `name`, JSON arguments, `id`); a generated image (inline data with an `id`) → its
              `image_generation_call` item (`id`, `status`, base64 `result`). Text without this
              protocol's fidelity → a plain assistant message; thinking and other inline data
              without it → dropped.
  stateless   with `extra_body={"store": False}` the server keeps nothing to look ids up in:
              reasoning items without `encrypted_content` and generated images (their item needs
              its id) are dropped, and message / function call ids are left out (reasoning
              items keep theirs with the encrypted content).
  tool ids    printable ASCII without spaces, at most 64 characters (`call_id` limit), the
              same for a call and its output.
"""

from __future__ import annotations

import base64
from typing import Any

from ...errors import InvalidMessageError, UnsupportedParameterError
from ...types import Config, Message, ThinkingLevel
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
    image_output,
    merge_extra_body,
    read_config,
    refuse_media_output,
    response_format_spec,
    thinking_level,
)
from ..common.schemas import with_strict_schema
from ..openai_chat.encoder import (
    TOOL_ID_CHARS,
    arguments_json,
    check_image_url,
    function_definition,
    inline_image_url,
    tool_fields,
)

PROTOCOL = "openai-responses"
RESPONSES_TOOL_ID_MAX = 64

# thinking_level → reasoning.effort: the protocol takes every level as it is (docs table).
REASONING_EFFORT: dict[ThinkingLevel, str] = {level: level for level in THINKING_LEVELS}

# Parameters Chat Completions has and Responses does not.
_UNSUPPORTED = {
    "stop": "Responses has no stop sequences",
    "seed": "Responses has no seed",
}


class OpenAIResponsesEncoder:
    protocol = PROTOCOL

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        check_messages(messages)
        options = read_config(config, self.protocol)
        for key, why in _UNSUPPORTED.items():
            if key in options:
                raise UnsupportedParameterError(key, self.protocol, why)
        extra = options.get("extra_body")
        stateless = isinstance(extra, dict) and extra.get("store") is False
        body: dict[str, Any] = {"model": model, "input": _Input(stateless).build(messages)}
        body["stream"] = True
        if options.get("system_prompt"):
            body["instructions"] = options["system_prompt"]
        if "max_tokens" in options:
            body["max_output_tokens"] = options["max_tokens"]
        for key in ("temperature", "top_p"):
            if key in options:
                body[key] = options[key]
        body.update(tool_fields(options, self.protocol, _function_tool, flat=True))
        image_tool = _image_generation_tool(options)
        if image_tool is not None:
            body["tools"] = [*body.get("tools", []), image_tool]
        if "response_format" in options:
            spec = response_format_spec(options["response_format"], self.protocol)
            if spec is not None:
                body["text"] = {"format": with_strict_schema(spec)}
        reasoning: dict[str, Any] = {}
        if "thinking_level" in options:
            level = thinking_level(options["thinking_level"], self.protocol)
            reasoning["effort"] = REASONING_EFFORT[level]
            if level != "none":
                # the reasoning comes back encrypted, so the history replays without the
                # server's copy (stored responses expire; ZDR and store=false keep none)
                body["include"] = ["reasoning.encrypted_content"]
        if options.get("thinking_summary"):
            reasoning["summary"] = "auto"
        if reasoning:
            body["reasoning"] = reasoning
        check_prompt_caching(options, self.protocol)
        return ProviderRequest("POST", "/responses", merge_extra_body(body, extra, self.protocol))


# the image sizes of the `image_generation` tool, by the aspect ratio each has
_IMAGE_SIZES = {"1:1": "1024x1024", "2:3": "1024x1536", "3:2": "1536x1024"}


def _image_generation_tool(options: dict[str, Any]) -> dict[str, Any] | None:
    """`image_output` → the built-in `image_generation` tool (its `size` from `size`, or from
    `aspect_ratio` by the three sizes it has); a spoken answer is refused."""
    refuse_media_output(
        options,
        PROTOCOL,
        {"speech_output": "Responses cannot answer in audio; use openai-chat with an audio model"},
    )
    image = image_output(options, PROTOCOL)
    if image is None:
        return None
    tool: dict[str, Any] = {"type": "image_generation"}
    size = image.get("size")
    if size is not None and size != "auto" and size not in _IMAGE_SIZES.values():
        raise UnsupportedParameterError(
            "image_output",
            PROTOCOL,
            f"size {size!r} is not one of auto, {', '.join(_IMAGE_SIZES.values())}",
        )
    ratio = image.get("aspect_ratio")
    if ratio is not None:
        if ratio not in _IMAGE_SIZES:
            raise UnsupportedParameterError(
                "image_output",
                PROTOCOL,
                f"aspect_ratio {ratio!r} is not one of {', '.join(_IMAGE_SIZES)}",
            )
        if size is not None and size != _IMAGE_SIZES[ratio]:
            raise UnsupportedParameterError(
                "image_output", PROTOCOL, f"size {size!r} does not have the aspect ratio {ratio}"
            )
        size = _IMAGE_SIZES[ratio]
    if size is not None:
        tool["size"] = size
    return tool


def _function_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A flat function tool. Responses makes an omitted `strict` mean strict, Chat the
    opposite: a tool that does not ask for strict mode gets `strict: false` explicitly."""
    definition = function_definition(tool)
    definition.setdefault("parameters", {"type": "object", "properties": {}})
    definition.setdefault("strict", False)
    return {"type": "function", **definition}


def responses_tool_id(call_id: str) -> str:
    return normalize_tool_call_id(call_id, allowed=TOOL_ID_CHARS, max_length=RESPONSES_TOOL_ID_MAX)


class _Input:
    """Builds the `input` list of one request."""

    def __init__(self, stateless: bool) -> None:
        self.stateless = stateless
        self.items: list[dict[str, Any]] = []

    def build(self, messages: list[Message]) -> list[dict[str, Any]]:
        for index, message in enumerate(complete_tool_results(messages)):
            if message["role"] == "user":
                self._user(index, message)
            else:
                self._assistant(message)
        return [item for item in self.items if not _unusable(item, self.stateless)]

    def _user(self, index: int, message: Message) -> None:
        parts: list[Any] = []
        for item in items_of(message):
            kind = item["type"]
            if kind == "tool_result.done":
                self.items.append(_function_call_output(index, item))
            elif kind == "text.done":
                parts.append({"type": "input_text", "text": item["text"]})
            elif kind == "image_url.done":
                parts.append(_input_image(index, item["image_url"]))
            elif kind == "inline_data.done":
                parts.append(_input_image(index, inline_image_url(index, item, PROTOCOL)))
            else:
                raise InvalidMessageError(f"message {index}: {kind} cannot be sent to {PROTOCOL}")
        if len(parts) == 1 and parts[0]["type"] == "input_text":
            self.items.append({"role": "user", "content": parts[0]["text"]})
        elif parts:
            self.items.append({"role": "user", "content": parts})

    def _assistant(self, message: Message) -> None:
        last: dict[str, Any] | None = None  # the item the next part may join
        for item in items_of(message):
            kind = item["type"]
            fidelity: dict[str, Any] = item.get("fidelity") or {}
            item_id = fidelity.get("id")  # never "item_id": MMSP strips it (SPEC §2 rule 6)
            if not isinstance(item_id, str):
                item_id = None  # another protocol's fidelity: nothing of it goes out
            if kind == "thinking.done":
                if item_id is None:
                    last = None
                    continue  # thinking from another provider: dropped (docs: handoff)
                thinking: str = item["thinking"]
                last = self._reasoning(last, item_id, thinking, fidelity)
            elif kind == "text.done":
                text: str = item["text"]
                last = self._text(last, item_id, text, fidelity)
            elif kind == "tool_call.done":
                call: dict[str, Any] = {
                    "type": "function_call",
                    "call_id": responses_tool_id(item["tool_call_id"]),
                    "name": item["name"],
                    "arguments": arguments_json(item["arguments"]),
                }
                if item_id is not None and not self.stateless:
                    call["id"] = item_id
                self.items.append(call)
                last = None
            elif kind == "inline_data.done" and item_id is not None and not self.stateless:
                self.items.append(_image_generation_call(item_id, item["data"]))
                last = None
            else:
                last = None  # other inline data, inline thinking: no input form here (docs)

    def _reasoning(
        self, last: dict[str, Any] | None, item_id: str, thinking: str, fidelity: dict[str, Any]
    ) -> dict[str, Any]:
        if last is None or last.get("type") != "reasoning" or last.get("id") != item_id:
            last = {"type": "reasoning", "id": item_id, "summary": []}
            self.items.append(last)
        part = fidelity.get("part")
        if part == "reasoning_text":
            last.setdefault("content", []).append({"type": "reasoning_text", "text": thinking})
        elif part is not None or thinking:
            last["summary"].append({"type": "summary_text", "text": thinking})
        if fidelity.get("encrypted_content"):
            last["encrypted_content"] = fidelity["encrypted_content"]
        return last

    def _text(
        self, last: dict[str, Any] | None, item_id: str | None, text: str, fidelity: dict[str, Any]
    ) -> dict[str, Any] | None:
        refusal = bool(fidelity.get("refusal"))
        if item_id is None or self.stateless:
            # no output item to name: an ordinary assistant message (a refusal as its text)
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if item_id is not None and fidelity.get("phase"):
                message["phase"] = fidelity["phase"]
            self.items.append(message)
            return None
        part = (
            {"type": "refusal", "refusal": text}
            if refusal
            else {"type": "output_text", "text": text, "annotations": []}
        )
        if last is not None and last.get("type") == "message" and last.get("id") == item_id:
            last["content"].append(part)
            return last
        message = {
            "type": "message",
            "role": "assistant",
            "id": item_id,
            "status": "completed",
            "content": [part],
        }
        if fidelity.get("phase"):
            message["phase"] = fidelity["phase"]
        self.items.append(message)
        return message


def _unusable(item: dict[str, Any], stateless: bool) -> bool:
    """A reasoning item the server cannot resolve: stateless and without encrypted content."""
    return stateless and item.get("type") == "reasoning" and "encrypted_content" not in item


def _image_generation_call(item_id: str, data: bytes) -> dict[str, Any]:
    """A generated image goes back as the built-in tool's output item it came from."""
    result = base64.b64encode(data).decode()
    return {"type": "image_generation_call", "id": item_id, "status": "completed", "result": result}


def _function_call_output(index: int, item: Any) -> dict[str, Any]:
    output: Any = item["text"]
    images = item.get("images") or []
    if images:
        output = [{"type": "input_text", "text": item["text"]}] if item["text"] else []
        output.extend(_input_image(index, url) for url in images)
    return {
        "type": "function_call_output",
        "call_id": responses_tool_id(item["tool_call_id"]),
        "output": output,
    }


def _input_image(index: int, url: str) -> dict[str, Any]:
    return {"type": "input_image", "image_url": check_image_url(index, url), "detail": "auto"}


__all__ = ["OpenAIResponsesEncoder", "responses_tool_id"]
