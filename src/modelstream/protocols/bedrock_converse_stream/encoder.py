"""Amazon Bedrock ConverseStream request encoder (`POST /model/{modelId}/converse-stream`).

The model id goes into the path percent-encoded as the AWS SDKs do (every byte but
`A-Za-z0-9-._~`: `…-v1:0` → `…-v1%3A0`, an ARN's `/` → `%2F`). The body carries no model.
Credentials are the transport's (SigV4 or a Bedrock API key, `modelstream.auth`).

Config → body (the full tables are in docs/requests-bedrock.md):
  system_prompt        `system: [{text}]` (+ a `cachePoint` when prompt_caching)
  max_tokens           `inferenceConfig.maxTokens` (Bedrock's default is the model's maximum)
  temperature, top_p   `inferenceConfig.temperature`, `.topP`; with Claude thinking on, only
                       temperature 1 and top_p from 0.95 are accepted: raised before sending
  stop                 `inferenceConfig.stopSequences`
  seed                 no equivalent: UnsupportedParameterError
  tools                `toolConfig.tools[].toolSpec` {name, description, inputSchema.json, strict}
  tool_choice          auto → {auto: {}}, required → {any: {}}, one name → {tool: {name}};
                       Converse has no "none" and cannot choose among several names: raised;
                       with no tools in `tools` auto/none are left out, the rest raise
  parallel_tool_calls  true is the only behaviour (nothing sent); false: UnsupportedParameterError
  response_format      `outputConfig.textFormat` {type: json_schema, structure.jsonSchema
                       {schema (a JSON string), name, description}}; JSON mode without a schema
                       has no equivalent: UnsupportedParameterError
  thinking_level       per model family through `additionalModelRequestFields` (table below)
  thinking_summary     Claude only: `thinking.display` as for Anthropic; others: raised
  prompt_caching       `cachePoint: {type: default}` after the tools, the system prompt and the
                       last message (Claude and Nova cache; other families raise on true)
  extra_body           merged last: objects key by key, None removes a key, anything else
                       replaces (e.g. `guardrailConfig`, `performanceConfig`, more
                       `additionalModelRequestFields`)
  trace_id             not sent

Thinking per model family (the family is the id's provider part, after an inference-profile
region prefix such as `us.` or `global.` and after an ARN's resource type):
  anthropic.claude-*   Claude 4.6 and later: `thinking: {type: adaptive}` +
                       `outputConfig.effort`; older: `thinking: {type: enabled, budget_tokens}`
                       (the Anthropic encoder's budgets, below maxTokens); none →
                       `thinking: {type: disabled}`
  amazon.nova-2-*      `reasoningConfig: {type: enabled, maxReasoningEffort}` low/medium/high
                       (xhigh and max → high); none → `{type: disabled}`
  openai.gpt-oss-*     `reasoning_effort` low/medium/high (xhigh and max → high); none raises
                       (gpt-oss always reasons)
  any other family     none sends nothing; any other level raises (set the model's own field
                       through extra_body.additionalModelRequestFields)

Replay (SPEC §2 rule 6): reasoning goes back as `reasoningContent.reasoningText` with its
`signature`, redacted reasoning as `reasoningContent.redactedContent` (base64, as Bedrock sent
it), tool calls as `toolUse`, results as `toolResult` (first in their turn, status error for a
call that was never answered). Fidelity keys other than signature / redacted_content are
foreign: that thinking is dropped when it has no signature and the model family needs one
(Claude); families that take unsigned reasoning text get it back as text. Images go as bytes
(base64 in the JSON body) with their format, PDFs and other documents as `document` blocks
named `document-<n>`: data: URLs and inline data only, since Converse cannot fetch a URL.
"""

from __future__ import annotations

import base64
import copy
import itertools
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from ...errors import InvalidMessageError, UnsupportedParameterError
from ...media import parse_data_url, url_kind
from ...types import Config, Message, ThinkingLevel
from ..anthropic_messages.encoder import check_claude_sampling, claude_thinking
from ..common.encoding import (
    MISSING_RESULT_TEXT,
    ProviderRequest,
    check_messages,
    complete_tool_results,
    items_of,
    normalize_tool_call_id,
    own_fidelity,
)
from ..common.options import (
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
from ..common.schemas import closed_schema

PROTOCOL = "bedrock-converse-stream"
EVENT_STREAM = "application/vnd.amazon.eventstream"  # the response body: AWS event-stream

_FIDELITY_KEYS = frozenset({"signature", "redacted_content"})
_TOOL_ID_ALLOWED = r"[a-zA-Z0-9_.:-]"  # the ToolUseId pattern of the service model
_TOOL_ID_MAX = 64
_IMAGE_FORMATS = {f"image/{name}": name for name in ("png", "jpeg", "gif", "webp")}
_DOCUMENT_FORMATS = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}
# cross-region inference profiles put a geography before the provider: us.anthropic.claude-…
_PROFILE_PREFIXES = frozenset({"us", "eu", "apac", "global", "us-gov", "jp", "au", "ca"})
_CACHING_MODELS = ("anthropic.claude", "amazon.nova")  # the families Bedrock caches prompts for
_UPPER_EFFORTS: dict[ThinkingLevel, str] = {
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}


def model_path(model: str) -> str:
    return f"/model/{quote(model, safe='-._~')}/converse-stream"


def model_name(model: str) -> str:
    """The model id without an ARN's resource type or an inference profile's geography:
    `arn:…:inference-profile/us.anthropic.claude-…` → `anthropic.claude-…`."""
    name = model.rsplit("/", 1)[-1]
    head, dot, rest = name.partition(".")
    if dot and head in _PROFILE_PREFIXES and "." in rest:
        return rest
    return name


def model_family(model: str) -> str:
    """The provider part of a Bedrock model id (`anthropic`, `amazon`, `meta`, `openai`, …);
    "" for an id that names none (an application inference profile, a provisioned model)."""
    name = model_name(model)
    family, dot, _ = name.partition(".")
    return family if dot else ""


class BedrockConverseStreamEncoder:
    protocol = PROTOCOL

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        check_messages(messages)
        if not messages:
            raise InvalidMessageError("a Bedrock request needs at least one message")
        settings = read_config(config, PROTOCOL)
        refuse_media_output(
            settings,
            PROTOCOL,
            {
                "image_output": "Converse answers in text only",
                "speech_output": "Converse answers in text only",
            },
        )
        if "seed" in settings:
            raise UnsupportedParameterError("seed", PROTOCOL, "Converse has no seed")
        if settings.get("parallel_tool_calls") is False:
            raise UnsupportedParameterError(
                "parallel_tool_calls", PROTOCOL, "Converse has no switch for parallel tool calls"
            )
        family = model_family(model)
        caching = _caching(settings, model)
        claude = family == "anthropic"
        body: dict[str, Any] = {"messages": _messages(complete_tool_results(messages), claude)}
        if not body["messages"]:
            raise InvalidMessageError("no message has content Bedrock accepts")

        system = settings.get("system_prompt")
        if system:
            body["system"] = [{"text": system}]
            if caching:
                body["system"].append(_cache_point())

        thinking_on = _thinking(body, model, family, settings)
        _inference(body, settings, thinking_on and claude)
        _tools(body, settings, thinking_on and claude, caching)
        _response_format(body, settings)
        if caching:
            body["messages"][-1]["content"].append(_cache_point())

        body = merge_extra_body(body, settings.get("extra_body"), PROTOCOL)
        return ProviderRequest("POST", model_path(model), body, {"accept": EVENT_STREAM})


# --- config -----------------------------------------------------------------------------------


def _caching(settings: dict[str, Any], model: str) -> bool:
    caching = settings.get("prompt_caching")
    if caching is None or caching is False:
        return False
    if caching is not True:
        raise UnsupportedParameterError("prompt_caching", PROTOCOL, "must be True or False")
    if not model_name(model).startswith(_CACHING_MODELS):
        raise UnsupportedParameterError(
            "prompt_caching",
            PROTOCOL,
            f"Bedrock caches prompts for Claude and Nova models only, not {model!r}",
        )
    return True


def _cache_point() -> dict[str, Any]:
    return {"cachePoint": {"type": "default"}}  # a fresh object each time


def _thinking(body: dict[str, Any], model: str, family: str, settings: dict[str, Any]) -> bool:
    """Write the family's thinking fields; True when thinking is on."""
    level = settings.get("thinking_level")
    summary = settings.get("thinking_summary")
    if summary is not None and family != "anthropic":
        raise UnsupportedParameterError(
            "thinking_summary", PROTOCOL, "only Claude models on Bedrock take a thinking display"
        )
    if level is None:
        return False
    level = thinking_level(level, PROTOCOL)
    fields: dict[str, Any]
    name = model_name(model)
    if family == "anthropic":
        if level == "none":
            fields = {"thinking": {"type": "disabled"}}
        else:
            thinking, effort = claude_thinking(
                name, level, settings.get("max_tokens"), summary, PROTOCOL
            )
            if effort is not None:
                body.setdefault("outputConfig", {})["effort"] = effort
            fields = {"thinking": thinking}
    elif family == "amazon" and name.startswith("amazon.nova-2"):
        reasoning: dict[str, Any] = {"type": "disabled" if level == "none" else "enabled"}
        if level != "none":
            reasoning["maxReasoningEffort"] = _UPPER_EFFORTS[level]
        fields = {"reasoningConfig": reasoning}
    elif family == "openai" and "gpt-oss" in name:
        if level == "none":
            raise UnsupportedParameterError(
                "thinking_level", PROTOCOL, "gpt-oss always reasons; use low for the least"
            )
        fields = {"reasoning_effort": _UPPER_EFFORTS[level]}
    elif level == "none":
        return False
    else:
        raise UnsupportedParameterError(
            "thinking_level",
            PROTOCOL,
            f"modelstream has no thinking mapping for {model!r} on Bedrock; send the model's own "
            "field in extra_body.additionalModelRequestFields",
        )
    body["additionalModelRequestFields"] = fields
    return level != "none"


def _inference(body: dict[str, Any], settings: dict[str, Any], claude_thinking: bool) -> None:
    inference: dict[str, Any] = {}
    if "max_tokens" in settings:
        inference["maxTokens"] = settings["max_tokens"]
    check_claude_sampling(settings, claude_thinking, PROTOCOL)
    if settings.get("temperature") is not None:
        inference["temperature"] = settings["temperature"]
    if settings.get("top_p") is not None:
        inference["topP"] = settings["top_p"]
    stop = settings.get("stop")
    if stop:
        inference["stopSequences"] = stop_sequences(stop, PROTOCOL)
    if inference:
        body["inferenceConfig"] = inference


def _tools(
    body: dict[str, Any], settings: dict[str, Any], claude_thinking: bool, caching: bool
) -> None:
    tools = tool_list(settings, PROTOCOL)
    encoded: list[dict[str, Any]] = []
    for tool in tools:
        spec: dict[str, Any] = {"name": tool["name"]}
        if tool.get("description"):
            spec["description"] = tool["description"]
        parameters = tool.get("parameters")
        schema = copy.deepcopy(parameters) if parameters else {"type": "object", "properties": {}}
        spec["inputSchema"] = {"json": schema}
        if tool.get("strict") is not None:
            spec["strict"] = bool(tool["strict"])
        encoded.append({"toolSpec": spec})
    choice_setting = checked_tool_choice(settings, PROTOCOL)
    if not encoded:
        if choice_setting is not None:
            tool_choice_applies(choice_setting, (), PROTOCOL)  # raises unless auto/none
        return
    tool_config: dict[str, Any] = {"tools": encoded}
    if caching:
        encoded.append(_cache_point())
    if choice_setting is not None:
        tool_config["toolChoice"] = _tool_choice(choice_setting, [t["name"] for t in tools])
        if claude_thinking and "auto" not in tool_config["toolChoice"]:
            raise UnsupportedParameterError(
                "tool_choice",
                PROTOCOL,
                "Claude cannot be forced to use a tool while thinking; use 'auto' or "
                "thinking_level 'none'",
            )
    body["toolConfig"] = tool_config


def _tool_choice(choice: Any, offered: list[str]) -> dict[str, Any]:
    tool_choice_applies(choice, offered, PROTOCOL)  # raises on a name that is not offered
    if choice == "auto":
        return {"auto": {}}
    if choice == "required":
        return {"any": {}}
    if choice == "none":
        raise UnsupportedParameterError(
            "tool_choice", PROTOCOL, "Converse has no 'none'; leave the tools out instead"
        )
    if len(choice) == 1:
        return {"tool": {"name": choice[0]}}
    raise UnsupportedParameterError(
        "tool_choice", PROTOCOL, "Converse can force one named tool, not a choice among several"
    )


def _response_format(body: dict[str, Any], settings: dict[str, Any]) -> None:
    response_format = settings.get("response_format")
    if not response_format:
        return
    spec = response_format_spec(response_format, PROTOCOL)
    if spec is None:
        return
    if spec["type"] == "json_object":
        raise UnsupportedParameterError(
            "response_format", PROTOCOL, "Converse has no JSON mode without a schema"
        )
    # every object closed, as Converse's structured output wants them
    closed = closed_schema(spec["schema"])
    schema: dict[str, Any] = {"schema": json.dumps(closed), "name": spec["name"]}
    if spec.get("description"):
        schema["description"] = spec["description"]
    body.setdefault("outputConfig", {})["textFormat"] = {
        "type": "json_schema",
        "structure": {"jsonSchema": schema},
    }


# --- messages ---------------------------------------------------------------------------------


def _messages(history: list[Message], claude: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    documents = itertools.count(1)  # Converse needs a name for every document
    for message in history:
        if message["role"] == "user":
            content = _user_content(message, documents)
        else:
            content = _assistant_content(message, claude)
        if content:  # a turn left with nothing (foreign thinking only) is left out
            out.append({"role": message["role"], "content": content})
    return out


def _user_content(message: Message, documents: Iterator[int]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []  # Claude wants tool results first in their turn
    rest: list[dict[str, Any]] = []
    for item in items_of(message):
        kind = item["type"]
        if kind == "tool_result.done":
            results.append(_tool_result(item, documents))
        elif kind == "text.done":
            if item["text"]:  # Converse rejects blank text blocks
                rest.append({"text": item["text"]})
        elif kind == "image_url.done":
            rest.append(_media_from_url(item["image_url"], documents))
        elif kind == "inline_data.done":
            data = base64.b64encode(item["data"]).decode()
            rest.append(_media(item["mime_type"], data, documents))
        else:
            raise InvalidMessageError(f"Bedrock cannot take {kind} in a user message")
    return results + rest


def _tool_result(item: Any, documents: Iterator[int]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if item["text"] or not item.get("images"):
        content.append({"text": item["text"]})
    content.extend(_media_from_url(url, documents) for url in item.get("images") or [])
    block: dict[str, Any] = {
        "toolUseId": normalize_tool_call_id(
            item["tool_call_id"], allowed=_TOOL_ID_ALLOWED, max_length=_TOOL_ID_MAX
        ),
        "content": content,
    }
    if item["text"] == MISSING_RESULT_TEXT:  # the synthetic result of an unanswered call
        block["status"] = "error"
    return {"toolResult": block}


def _assistant_content(message: Message, claude: bool) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for item in items_of(message):
        kind = item["type"]
        fidelity = own_fidelity(item.get("fidelity"), _FIDELITY_KEYS)
        if kind == "text.done":
            if item["text"]:
                content.append({"text": item["text"]})
        elif kind == "thinking.done":
            reasoning = _reasoning(item["thinking"], fidelity, claude)
            if reasoning is not None:
                content.append({"reasoningContent": reasoning})
        elif kind == "tool_call.done":
            content.append(
                {
                    "toolUse": {
                        "toolUseId": normalize_tool_call_id(
                            item["tool_call_id"], allowed=_TOOL_ID_ALLOWED, max_length=_TOOL_ID_MAX
                        ),
                        "name": item["name"],
                        "input": copy.deepcopy(item["arguments"]),
                    }
                }
            )
        elif kind in ("inline_data.done", "inline_thinking.done"):
            continue  # generated media: Converse takes images from the user only
        else:
            raise InvalidMessageError(f"Bedrock cannot take {kind} in an assistant message")
    return content


def _reasoning(text: str, fidelity: dict[str, Any] | None, claude: bool) -> dict[str, Any] | None:
    if fidelity and "redacted_content" in fidelity:
        return {"redactedContent": fidelity["redacted_content"]}
    if fidelity and "signature" in fidelity:
        return {"reasoningText": {"text": text, "signature": fidelity["signature"]}}
    if claude or not text:
        return None  # Claude accepts only reasoning it signed
    return {"reasoningText": {"text": text}}


# --- images and documents ---------------------------------------------------------------------


def _media_from_url(url: str, documents: Iterator[int]) -> dict[str, Any]:
    if url_kind(url) != "data":
        raise InvalidMessageError(
            "Bedrock takes images and documents as bytes, not URLs: pass a data: URL or "
            f"inline_data (got {url[:40]!r}; files and URLs are never fetched)"
        )
    media_type, data = parse_data_url(url)
    return _media(media_type, data, documents)


def _media(media_type: str, data: str, documents: Iterator[int]) -> dict[str, Any]:
    image_format = _IMAGE_FORMATS.get(media_type)
    if image_format is not None:
        return {"image": {"format": image_format, "source": {"bytes": data}}}
    document_format = _DOCUMENT_FORMATS.get(media_type)
    if document_format is not None:
        name = f"document-{next(documents)}"
        return {"document": {"format": document_format, "name": name, "source": {"bytes": data}}}
    raise InvalidMessageError(
        "Bedrock takes png, jpeg, gif and webp images and pdf, csv, doc(x), xls(x), html, txt "
        f"and md documents, not {media_type or 'untyped data'}"
    )
