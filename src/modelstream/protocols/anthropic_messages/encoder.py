"""Anthropic Messages request encoder (`POST /v1/messages`, `stream: true`).

Config → body (the full tables are in docs/requests-anthropic-gemini.md):
  system_prompt        `system` (a text block with `cache_control` when prompt_caching)
  max_tokens           `max_tokens` (required by Anthropic: 8192 when not given, 32000 when
                       thinking is on, 4096 for the Claude 3.0 models)
  temperature, top_p   `temperature`, `top_p`; with thinking on, Anthropic accepts neither a
                       temperature other than 1 nor a top_p under 0.95: raised before sending
  stop                 `stop_sequences`
  seed                 no equivalent: UnsupportedParameterError
  tools                `tools[]` {name, description, input_schema, strict?} (strict: the
                       schema closed and without bounds, as for response_format)
  tool_choice          auto/required/none → {type: auto|any|none}; one name → {type: tool};
                       several names → UnsupportedParameterError; a forced choice with thinking
                       on is rejected by Anthropic, so it raises here; with no tools at all
                       (server tools in extra_body count) auto/none are left out, the rest raise
  parallel_tool_calls  false → `disable_parallel_tool_use: true` inside tool_choice
  response_format      `output_config.format` {type: json_schema, schema}; JSON mode without
                       a schema has no equivalent: UnsupportedParameterError
  thinking_level       Claude 4.6 and later (and unversioned Claude names): `thinking:
                       {type: adaptive}` + `output_config.effort`; older models and
                       Anthropic-compatible gateways: `thinking: {type: enabled,
                       budget_tokens}` from `THINKING_BUDGETS`, below max_tokens; none →
                       `{type: disabled}`
  thinking_summary     `thinking.display` summarized/omitted where it changes the model default
  prompt_caching       `cache_control: {type: ephemeral}` on the last tool, the system prompt
                       and the last block of the last message (3 of the 4 breakpoints allowed)
  extra_body           merged last: objects key by key, None removes a key, anything else
                       replaces; its `betas` list becomes the `anthropic-beta` header
  trace_id             not sent

Replay (SPEC §2 rule 6): thinking goes back with its `signature`, redacted thinking as a
`redacted_thinking` block, tool calls as `tool_use` blocks, refusal text as plain text. Fidelity
this protocol's decoder did not produce (keys other than signature / redacted_thinking /
refusal) is foreign: it is dropped, and thinking without an Anthropic signature is dropped with
it, because Anthropic only accepts thinking it signed. Generated images and image thinking from
another provider have no place in an Anthropic assistant turn and are dropped too. Tool-call ids
are normalized to `^[A-Za-z0-9_-]{1,64}$`, the same way for a call and its result.
"""

from __future__ import annotations

import base64
import copy
import re
from typing import Any, Literal
from urllib.parse import quote

from ...errors import InvalidMessageError, UnsupportedParameterError
from ...media import guess_media_type, parse_data_url, url_kind
from ...types import Config, Message, ThinkingLevel
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
from ..common.schemas import UNBOUNDED, closed_schema

PROTOCOL = "anthropic-messages"
ANTHROPIC_VERSION = "2023-06-01"
VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16"  # Claude on Vertex AI: in the body, not a header

DEFAULT_MAX_TOKENS = 8192
DEFAULT_MAX_TOKENS_THINKING = 32000  # the smallest output limit of the thinking models (Opus 4.1)
CLAUDE_3_MAX_TOKENS = 4096  # Claude 3 Opus / Sonnet / Haiku cannot produce more
MIN_THINKING_BUDGET = 1024  # Anthropic rejects a smaller budget_tokens

# thinking_level → budget_tokens, for models with budget thinking (before Claude 4.6)
THINKING_BUDGETS: dict[ThinkingLevel, int] = {
    "low": 1024,
    "medium": 4096,
    "high": 16384,
    "xhigh": 24576,
    "max": 28672,
}
# thinking_level → output_config.effort, for adaptive models; Claude 4.6 has no `xhigh`
EFFORTS: dict[ThinkingLevel, str] = {
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
EFFORTS_CLAUDE_4_6: dict[ThinkingLevel, str] = {**EFFORTS, "xhigh": "max"}

_FIDELITY_KEYS = frozenset({"signature", "redacted_thinking", "refusal"})
_TOOL_ID_ALLOWED = r"[A-Za-z0-9_-]"
_TOOL_ID_MAX = 64
_IMAGE_TYPES = ("image/",)
_DOCUMENT_TYPES = ("application/pdf",)

# claude-3-7-sonnet-20250219, claude-3-opus-20240229 (version before the family name)
_CLAUDE_OLD_NAME = re.compile(r"claude-(\d+)(?:[-.](\d)(?!\d))?-[a-z]")
# claude-sonnet-4-5-20250929, claude-opus-4-1, claude-sonnet-4-20250514, claude-opus-4.6
_CLAUDE_NEW_NAME = re.compile(r"claude-[a-z]+-(\d+)(?:[-.](\d)(?!\d))?")

ThinkingMode = Literal["adaptive", "budget"]


class AnthropicMessagesEncoder:
    protocol = PROTOCOL

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        check_messages(messages)
        if not messages:
            raise InvalidMessageError("an Anthropic request needs at least one message")
        settings = read_config(config, PROTOCOL)
        refuse_media_output(
            settings,
            PROTOCOL,
            {
                "image_output": "Claude answers in text only",
                "speech_output": "Claude answers in text only",
            },
        )
        if "seed" in settings:
            raise UnsupportedParameterError(
                "seed", PROTOCOL, "Anthropic has no seed; remove it for Claude models"
            )
        history = complete_tool_results(messages)
        body: dict[str, Any] = {"model": model, "messages": _messages(history)}
        if not body["messages"]:
            raise InvalidMessageError("no message has content Anthropic accepts")
        caching = bool(settings.get("prompt_caching"))

        system = settings.get("system_prompt")
        if system:
            if caching:
                body["system"] = [{"type": "text", "text": system, "cache_control": _ephemeral()}]
            else:
                body["system"] = system

        thinking_on = _thinking(body, model, settings)
        _sampling(body, settings, thinking_on)
        _tools(body, settings, thinking_on)
        _response_format(body, settings)
        if caching:
            _cache_last_block(body["messages"])
        body["stream"] = True

        headers = {"anthropic-version": ANTHROPIC_VERSION}
        extra = settings.get("extra_body")
        if isinstance(extra, dict) and "betas" in extra:  # a header, not a body field
            extra = dict(extra)
            betas = extra.pop("betas")
            if betas:
                headers["anthropic-beta"] = betas if isinstance(betas, str) else ",".join(betas)
        body = merge_extra_body(body, extra, PROTOCOL)
        if "tool_choice" in body and "tool_choice" not in (extra or {}):
            _check_tool_choice(body, settings)
        return ProviderRequest("POST", "/v1/messages", body, headers)


def vertex_request(
    request: ProviderRequest, model: str, *, project: str, location: str
) -> ProviderRequest:
    """The same request to Claude on Vertex AI: `streamRawPredict` on the publisher model's
    path; the model is in the path, not the body, and `anthropic_version` moves into the body."""
    body = {k: v for k, v in request.json.items() if k != "model"}
    body = {"anthropic_version": VERTEX_ANTHROPIC_VERSION, **body}
    headers = {k: v for k, v in request.headers.items() if k != "anthropic-version"}
    path = (
        f"/v1/projects/{quote(project, safe='')}/locations/{quote(location, safe='')}"
        f"/publishers/anthropic/models/{quote(model, safe='@')}:streamRawPredict"
    )
    return ProviderRequest(request.method, path, body, headers)


# --- config -----------------------------------------------------------------------------------


def claude_version(model: str) -> tuple[int, int] | None:
    """(major, minor) of a Claude model id, None when the id carries no version."""
    match = _CLAUDE_OLD_NAME.search(model) or _CLAUDE_NEW_NAME.search(model)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def thinking_mode(model: str) -> ThinkingMode:
    """Adaptive for Claude 4.6 and later (4.7 rejects budgets); budgets for the rest, including
    Anthropic-compatible gateways serving other models."""
    version = claude_version(model)
    if version is None:
        return "adaptive" if "claude" in model.lower() else "budget"
    return "adaptive" if version >= (4, 6) else "budget"


def _omits_thinking_by_default(model: str) -> bool:
    """Claude Opus 4.7 and later return thinking blocks without text unless asked."""
    version = claude_version(model)
    return version >= (4, 7) if version is not None else "claude" in model.lower()


def default_max_tokens(model: str, thinking_on: bool) -> int:
    version = claude_version(model)
    if version is not None and version[0] == 3 and version[1] == 0:
        return CLAUDE_3_MAX_TOKENS
    return DEFAULT_MAX_TOKENS_THINKING if thinking_on else DEFAULT_MAX_TOKENS


def _thinking(body: dict[str, Any], model: str, settings: dict[str, Any]) -> bool:
    """Write `thinking`, `output_config.effort` and `max_tokens`; True when thinking is on."""
    level = settings.get("thinking_level")
    if level is not None:
        level = thinking_level(level, PROTOCOL)
    max_tokens = settings.get("max_tokens")
    if level is None or level == "none":
        if level == "none":
            body["thinking"] = {"type": "disabled"}
        body["max_tokens"] = max_tokens or default_max_tokens(model, False)
        return False
    max_tokens = max_tokens or default_max_tokens(model, True)
    thinking, effort = claude_thinking(
        model, level, max_tokens, settings.get("thinking_summary"), PROTOCOL
    )
    if effort is not None:
        body.setdefault("output_config", {})["effort"] = effort
    body["max_tokens"] = max_tokens
    body["thinking"] = thinking
    return True


def claude_thinking(
    model: str, level: ThinkingLevel, max_tokens: int | None, summary: Any, protocol: str
) -> tuple[dict[str, Any], str | None]:
    """Claude's `thinking` object for a level other than "none", and the effort that goes with
    adaptive thinking (None for a budget): one rule for every protocol that serves Claude. A
    budget is kept under `max_tokens` when it is known, so half the output stays for the answer."""
    thinking: dict[str, Any]
    effort: str | None = None
    if thinking_mode(model) == "adaptive":
        thinking = {"type": "adaptive"}
        version = claude_version(model)
        efforts = EFFORTS_CLAUDE_4_6 if version is not None and version < (4, 7) else EFFORTS
        effort = efforts[level]
    else:
        budget = THINKING_BUDGETS[level]
        if max_tokens is not None:
            if max_tokens <= MIN_THINKING_BUDGET:
                raise UnsupportedParameterError(
                    "thinking_level",
                    protocol,
                    f"thinking needs max_tokens above {MIN_THINKING_BUDGET} (the smallest "
                    f"budget Claude accepts), got {max_tokens}",
                )
            if budget >= max_tokens:
                budget = max(MIN_THINKING_BUDGET, max_tokens // 2)
        thinking = {"type": "enabled", "budget_tokens": budget}
    if summary is False:
        thinking["display"] = "omitted"
    elif summary and _omits_thinking_by_default(model):
        thinking["display"] = "summarized"
    return thinking, effort


def _sampling(body: dict[str, Any], settings: dict[str, Any], thinking_on: bool) -> None:
    check_claude_sampling(settings, thinking_on, PROTOCOL)
    if settings.get("temperature") is not None:
        body["temperature"] = settings["temperature"]
    if settings.get("top_p") is not None:
        body["top_p"] = settings["top_p"]
    stop = settings.get("stop")
    if stop:
        body["stop_sequences"] = stop_sequences(stop, PROTOCOL)


def check_claude_sampling(settings: dict[str, Any], thinking_on: bool, protocol: str) -> None:
    """Claude takes temperature 1 and top_p from 0.95 only while it thinks: refused before
    sending, on every protocol that serves Claude."""
    if not thinking_on:
        return
    temperature = settings.get("temperature")
    if temperature is not None and temperature != 1:
        raise UnsupportedParameterError(
            "temperature",
            protocol,
            "Claude accepts no temperature but 1 with thinking on; drop temperature or set "
            "thinking_level to 'none'",
        )
    top_p = settings.get("top_p")
    if top_p is not None and top_p < 0.95:
        raise UnsupportedParameterError(
            "top_p", protocol, "Claude accepts top_p only from 0.95 to 1 with thinking on"
        )


def _tools(body: dict[str, Any], settings: dict[str, Any], thinking_on: bool) -> None:
    tools = tool_list(settings, PROTOCOL)
    if tools:
        encoded = []
        for tool in tools:
            entry: dict[str, Any] = {"name": tool["name"]}
            if tool.get("description"):
                entry["description"] = tool["description"]
            parameters = tool.get("parameters")
            entry["input_schema"] = (
                copy.deepcopy(parameters) if parameters else {"type": "object", "properties": {}}
            )
            if tool.get("strict"):  # strict tool use: the schema in the form it takes
                entry["strict"] = True
                entry["input_schema"] = closed_schema(entry["input_schema"], UNBOUNDED)
            encoded.append(entry)
        if settings.get("prompt_caching"):
            encoded[-1]["cache_control"] = _ephemeral()
        body["tools"] = encoded

    choice_setting = checked_tool_choice(settings, PROTOCOL)
    parallel = settings.get("parallel_tool_calls")
    if choice_setting is None and parallel is not False:
        return
    choice: dict[str, Any]
    if choice_setting is None or choice_setting == "auto":
        choice = {"type": "auto"}
    elif choice_setting == "required":
        choice = {"type": "any"}
    elif choice_setting == "none":
        choice = {"type": "none"}
    elif len(choice_setting) == 1:
        choice = {"type": "tool", "name": choice_setting[0]}
    else:
        raise UnsupportedParameterError(
            "tool_choice",
            PROTOCOL,
            "Anthropic can force one named tool, not a choice among several",
        )
    if thinking_on and choice["type"] in ("any", "tool"):
        raise UnsupportedParameterError(
            "tool_choice",
            PROTOCOL,
            "Anthropic cannot force tool use while thinking; use 'auto' or thinking_level 'none'",
        )
    if parallel is False and choice["type"] != "none":
        choice["disable_parallel_tool_use"] = True
    body["tool_choice"] = choice


def _check_tool_choice(body: dict[str, Any], settings: dict[str, Any]) -> None:
    """The config's tool_choice against the tools of the final body, so server tools given in
    extra_body count as tools to choose from (`tool_choice_applies` has the rule)."""
    offered = {tool.get("name") for tool in body.get("tools") or () if isinstance(tool, dict)}
    choice = checked_tool_choice(settings, PROTOCOL) or "auto"  # parallel_tool_calls alone
    if not tool_choice_applies(choice, offered, PROTOCOL):
        del body["tool_choice"]


def _response_format(body: dict[str, Any], settings: dict[str, Any]) -> None:
    response_format = settings.get("response_format")
    if not response_format:
        return
    spec = response_format_spec(response_format, PROTOCOL)
    if spec is None:
        return
    if spec["type"] == "json_object":
        raise UnsupportedParameterError(
            "response_format",
            PROTOCOL,
            "Anthropic has no JSON mode without a schema; give a JSON schema",
        )
    body.setdefault("output_config", {})["format"] = {
        "type": "json_schema",
        # closed objects, no bounds: what its structured output takes (the bounds are checked
        # when the answer is read)
        "schema": closed_schema(spec["schema"], UNBOUNDED),
    }


# --- messages ---------------------------------------------------------------------------------


def _messages(history: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in history:
        if message["role"] == "user":
            content = _user_content(message)
        else:
            content = _assistant_content(message)
        if content:  # a turn left with nothing (foreign thinking only) is left out
            out.append({"role": message["role"], "content": content})
    return out


def _user_content(message: Message) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []  # Anthropic wants tool results first in their turn
    rest: list[dict[str, Any]] = []
    for item in items_of(message):
        kind = item["type"]
        if kind == "tool_result.done":
            results.append(_tool_result(item))
        elif kind == "text.done":
            if item["text"]:  # Anthropic rejects empty text blocks
                rest.append({"type": "text", "text": item["text"]})
        elif kind == "image_url.done":
            rest.append(_media_block(item["image_url"]))
        elif kind == "inline_data.done":
            data = base64.b64encode(item["data"]).decode()
            rest.append(_base64_block(item["mime_type"], data))
        else:
            raise InvalidMessageError(f"Anthropic cannot take {kind} in a user message")
    return results + rest


def _tool_result(item: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": normalize_tool_call_id(
            item["tool_call_id"], allowed=_TOOL_ID_ALLOWED, max_length=_TOOL_ID_MAX
        ),
    }
    images = item.get("images") or []
    if images:
        content: list[dict[str, Any]] = []
        if item["text"]:
            content.append({"type": "text", "text": item["text"]})
        content.extend(_media_block(url) for url in images)
        block["content"] = content
    elif item["text"]:
        block["content"] = item["text"]
    if item["text"] == MISSING_RESULT_TEXT:  # the synthetic result of an unanswered call
        block["is_error"] = True
    return block


def _assistant_content(message: Message) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for item in items_of(message):
        kind = item["type"]
        fidelity = own_fidelity(item.get("fidelity"), _FIDELITY_KEYS)
        if kind == "text.done":
            if item["text"]:
                content.append({"type": "text", "text": item["text"]})
        elif kind == "thinking.done":
            if fidelity and "redacted_thinking" in fidelity:
                content.append({"type": "redacted_thinking", "data": fidelity["redacted_thinking"]})
            elif fidelity and "signature" in fidelity:
                content.append(
                    {
                        "type": "thinking",
                        "thinking": item["thinking"],
                        "signature": fidelity["signature"],
                    }
                )
            # else: thinking Anthropic did not sign is not accepted as thinking: dropped
        elif kind == "tool_call.done":
            content.append(
                {
                    "type": "tool_use",
                    "id": normalize_tool_call_id(
                        item["tool_call_id"], allowed=_TOOL_ID_ALLOWED, max_length=_TOOL_ID_MAX
                    ),
                    "name": item["name"],
                    "input": copy.deepcopy(item["arguments"]),
                }
            )
        elif kind in ("inline_data.done", "inline_thinking.done"):
            continue  # another provider's generated media: no assistant block can hold it
        else:
            raise InvalidMessageError(f"Anthropic cannot take {kind} in an assistant message")
    return content


def _ephemeral() -> dict[str, str]:
    return {"type": "ephemeral"}  # a fresh object each time: the body is the caller's to edit


def _cache_last_block(messages: list[dict[str, Any]]) -> None:
    """The last message's last cacheable block marks the end of the cached prefix."""
    for block in reversed(messages[-1]["content"]):
        if block["type"] not in ("thinking", "redacted_thinking"):
            block["cache_control"] = _ephemeral()
            return


# --- media ------------------------------------------------------------------------------------


def _media_block(url: str) -> dict[str, Any]:
    if url_kind(url) == "data":
        media_type, data = parse_data_url(url)
        return _base64_block(media_type, data)
    kind = "document" if guess_media_type(url) in _DOCUMENT_TYPES else "image"
    return {"type": kind, "source": {"type": "url", "url": url}}


def _base64_block(media_type: str, data: str) -> dict[str, Any]:
    if media_type.startswith(_IMAGE_TYPES):
        kind = "image"
    elif media_type in _DOCUMENT_TYPES:
        kind = "document"
    else:
        raise InvalidMessageError(
            f"Anthropic takes images and PDFs, not {media_type or 'data without a media type'}"
        )
    return {"type": kind, "source": {"type": "base64", "media_type": media_type, "data": data}}
