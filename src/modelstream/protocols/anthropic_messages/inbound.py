"""Anthropic Messages inbound: a `POST /v1/messages` body as the SPEC request (SPEC §8).

The inverse of `encoder.py` (docs/gateway.md, "Anthropic Messages", has the full table):

  model, messages      the request; `messages` must hold at least one message
  max_tokens           `max_tokens`; required, as Anthropic requires it (not on count_tokens)
  stream               `InboundRequest.stream` (absent: false)
  system               `system_prompt` (text blocks joined by a blank line)
  temperature, top_p   `temperature`, `top_p`
  stop_sequences       `stop`
  tools                custom tools → `tools` (`input_schema` → `parameters` as given, `strict`;
                       `defer_loading`, `input_examples`, `allowed_callers`,
                       `eager_input_streaming` ignored); with a server tool (`web_search_…`,
                       `bash_…`, any `type` but custom) the whole list goes as it is to
                       `native_fields` instead and the server tools are named in
                       `native_required`: no other upstream can run them
  tool_choice          auto/any/none/tool{name} → "auto"/"required"/"none"/[name];
                       `disable_parallel_tool_use: true` → `parallel_tool_calls: false`
  thinking             enabled{budget_tokens} → the level whose budget is nearest
                       (`encoder.THINKING_BUDGETS`); adaptive → `output_config.effort`'s level,
                       else "high" (Anthropic's default effort); disabled → "none";
                       `display` omitted/summarized → `thinking_summary` false/true
  output_config        `format` {json_schema} → `response_format`; `effort` with adaptive
                       thinking → `thinking_level`, otherwise `native_fields`
  output_format        (the structured-outputs beta) → `response_format`
  cache_control        anywhere (top level, system, blocks, tools) → `prompt_caching: true`;
                       where the breakpoints stood is not kept
  top_k, context_management, container, inference_geo, speed, mcp_servers
                       `native_fields` (an Anthropic upstream only; `mcp_servers` required)
  metadata, service_tier, assistant text `citations`, tool_use `caller`
                       ignored (listed in `ignored`)
  anthropic-beta       (header) `upstream_headers`, and `native_fields["betas"]`: the encoder's
                       `extra_body["betas"]` becomes that header
  anything else        InboundRequestError naming the field

A null value counts as absent, as the SDKs' `model_dump()` writes nulls for unset fields.

History: user text, images (base64 → a data: URL, or the http(s) URL), PDF documents (the same,
as `image_url.done`), tool results (text blocks joined by a newline, images to `images`;
`is_error: true` prefixes the text with "error: " unless it already starts so); assistant text,
thinking (`signature` → fidelity `{"signature"}`), redacted thinking (`{"redacted_thinking"}`)
and tool_use. Sealed values (`fidelity_seal`) in a signature, a redacted block's data or a tool
id's suffix (`writer.TOOL_ID_SEPARATOR`) are opened into the item's whole fidelity.
"""

from __future__ import annotations

import copy
from typing import Any

from ...types import (
    Config,
    DoneItem,
    Message,
    ThinkingDone,
    ThinkingLevel,
    ToolCallDone,
    ToolResultDone,
    ToolSchema,
)
from ..common.fidelity_seal import FidelityForgedError, FidelitySeal, is_sealed
from ..common.gateway import InboundCall, InboundRequest, InboundRequestError
from .encoder import MIN_THINKING_BUDGET, THINKING_BUDGETS
from .writer import TOOL_ID_SEPARATOR

# fields that go, as they are, to an Anthropic upstream only
_NATIVE_FIELDS = ("top_k", "context_management", "container", "inference_geo", "speed")
# native fields whose loss would change the answer: another upstream must refuse the request
_NATIVE_REQUIRED_FIELDS = ("mcp_servers",)
_IGNORED_FIELDS = ("metadata", "service_tier")
_EFFORTS: tuple[ThinkingLevel, ...] = ("low", "medium", "high", "xhigh", "max")
_ADAPTIVE_DEFAULT: ThinkingLevel = "high"  # Anthropic's default effort
_CUSTOM_TOOL_KEYS = frozenset({"type", "name", "description", "input_schema", "cache_control"})
# custom-tool keys only Anthropic acts on (tool search, programmatic calls, hints): ignored,
# unless a server tool sends the whole list to an Anthropic upstream
_NATIVE_TOOL_KEYS = frozenset(
    {"defer_loading", "input_examples", "allowed_callers", "eager_input_streaming"}
)
_ERROR_PREFIX = "error: "


def decode_request(body: Any, call: InboundCall, seal: FidelitySeal) -> InboundRequest:
    """The SPEC request of a Messages (or count_tokens) body; InboundRequestError otherwise."""
    return _Reader(seal, counting=call.route.kind == "count_tokens").read(body, call)


def _present(obj: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in obj.items() if value is not None}


def _fail(param: str, message: str) -> InboundRequestError:
    return InboundRequestError(f"{param}: {message}", param=param)


def _object(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(param, f"must be an object, got {_json_type(value)}")
    return _present(value)


def _string(value: Any, param: str, *, empty: bool = True) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise _fail(param, f"must be a{'' if empty else ' non-empty'} string")
    return value


def _number(value: Any, param: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(param, "must be a number")
    if not low <= value <= high:
        raise _fail(param, f"must be between {low:g} and {high:g}, got {value}")
    return value


def _integer(value: Any, param: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(param, "must be an integer")
    if value < low:
        raise _fail(param, f"must be at least {low}, got {value}")
    return value


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")


def _unknown(obj: dict[str, Any], known: frozenset[str] | set[str], where: str) -> None:
    for key in obj:
        if key not in known:
            prefix = f"{where}." if where else ""
            raise _fail(f"{prefix}{key}", "is not a field this gateway understands")


def nearest_level(budget: int) -> ThinkingLevel:
    """The level whose budget (`encoder.THINKING_BUDGETS`) is nearest; a tie goes to the lower."""
    levels = list(THINKING_BUDGETS)
    return min(
        levels, key=lambda level: (abs(THINKING_BUDGETS[level] - budget), levels.index(level))
    )


def split_tool_id(value: str, seal: FidelitySeal, param: str) -> tuple[str, dict[str, Any] | None]:
    """A tool id as the writer wrote it → (the upstream's id, the fidelity sealed on it)."""
    head, separator, token = value.rpartition(TOOL_ID_SEPARATOR)
    if not separator or not is_sealed(token):
        return value, None
    return head, _open(seal, token, param)


def _open(seal: FidelitySeal, token: str, param: str) -> dict[str, Any]:
    try:
        return seal.open(token)
    except FidelityForgedError as exc:
        raise _fail(param, f"{exc}; send the value back exactly as it was received") from None


class _Reader:
    """One request's decoding: the config, native fields and notes it collects."""

    def __init__(self, seal: FidelitySeal, *, counting: bool) -> None:
        self.seal = seal
        self.counting = counting
        self.config: Config = {}
        self.native: dict[str, Any] = {}
        self.native_required: list[str] = []
        self.ignored: list[str] = []
        self.caching = False

    def read(self, body: Any, call: InboundCall) -> InboundRequest:
        if not isinstance(body, dict):
            raise InboundRequestError(
                f"the request body must be a JSON object, got {_json_type(body)}"
            )
        body = _present(body)
        model = _string(body.pop("model", None), "model", empty=False)
        if "messages" not in body:
            raise _fail("messages", "Field required")
        messages = self._messages(body.pop("messages"))
        stream = False
        if not self.counting:
            if "max_tokens" not in body:
                raise _fail("max_tokens", "Field required (the most tokens to generate, e.g. 1024)")
            self.config["max_tokens"] = _integer(body.pop("max_tokens"), "max_tokens", 1)
            if "stream" in body:
                stream = body.pop("stream")
                if not isinstance(stream, bool):
                    raise _fail("stream", "must be true or false")
        self._fields(body)
        if self.caching:
            self.config["prompt_caching"] = True
        options: dict[str, Any] = {}
        beta = call.headers.get("anthropic-beta")
        if beta:  # the encoder sends extra_body["betas"] as this header to an Anthropic upstream
            self.native["betas"] = [name.strip() for name in beta.split(",") if name.strip()]
        return InboundRequest(
            model=model,
            messages=messages,
            config=self.config,
            stream=stream,
            options=options,
            native_fields=self.native,
            upstream_headers={"anthropic-beta": beta} if beta else {},
            native_required=tuple(self.native_required),
            ignored=tuple(dict.fromkeys(self.ignored)),
        )

    # --- top-level fields -------------------------------------------------------------------

    def _fields(self, body: dict[str, Any]) -> None:
        config = self.config
        thinking = body.pop("thinking", None)
        output_config = body.pop("output_config", None)
        for key, value in body.items():
            if key == "system":
                self._system(value)
            elif key == "temperature":
                config["temperature"] = _number(value, key, 0, 1)
            elif key == "top_p":
                config["top_p"] = _number(value, key, 0, 1)
            elif key == "stop_sequences":
                if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
                    raise _fail(key, "must be an array of strings")
                if value:
                    config["stop"] = list(value)
            elif key == "tools":
                self._tools(value)
            elif key == "tool_choice":
                self._tool_choice(_object(value, key))
            elif key == "output_format":
                config["response_format"] = self._format(value, key)
            elif key == "cache_control":
                self._cache_control(value, key)
            elif key in _NATIVE_FIELDS or key in _NATIVE_REQUIRED_FIELDS:
                if key == "top_k":
                    _integer(value, key, 0)
                self.native[key] = copy.deepcopy(value)
                if key in _NATIVE_REQUIRED_FIELDS:
                    self.native_required.append(key)
            elif key in _IGNORED_FIELDS:
                if key == "metadata":
                    _object(value, key)
                self.ignored.append(key)
            elif key in ("max_tokens", "stream"):  # count_tokens takes neither
                raise _fail(key, "is not a count_tokens field")
            else:
                raise _fail(key, "is not a field this gateway understands")
        self._thinking(thinking, output_config)

    def _system(self, value: Any) -> None:
        if isinstance(value, str):
            text = value
        elif isinstance(value, list):
            texts = []
            for index, block in enumerate(value):
                where = f"system.{index}"
                block = _object(block, where)
                if block.get("type") != "text":
                    raise _fail(f"{where}.type", "a system block must be a text block")
                _unknown(block, {"type", "text", "cache_control", "citations"}, where)
                self._cache_control(block.get("cache_control"), f"{where}.cache_control")
                texts.append(_string(block.get("text"), f"{where}.text"))
            text = "\n\n".join(t for t in texts if t)
        else:
            raise _fail("system", "must be a string or an array of text blocks")
        if text:
            self.config["system_prompt"] = text

    def _cache_control(self, value: Any, param: str) -> None:
        if value is None:
            return
        cache = _object(value, param)
        if cache.get("type") != "ephemeral":
            raise _fail(f"{param}.type", "must be 'ephemeral'")
        self.caching = True

    def _tools(self, value: Any) -> None:
        if not isinstance(value, list):
            raise _fail("tools", "must be an array of tools")
        tools: list[ToolSchema] = []
        servers: list[str] = []
        for index, raw in enumerate(value):
            where = f"tools.{index}"
            tool = _object(raw, where)
            self._cache_control(tool.get("cache_control"), f"{where}.cache_control")
            kind = tool.get("type", "custom")
            if kind != "custom":  # a server tool, run by Anthropic
                servers.append(f"{where} ({_string(kind, f'{where}.type')})")
                continue
            _unknown(tool, _CUSTOM_TOOL_KEYS | _NATIVE_TOOL_KEYS | {"strict"}, where)
            self.ignored += sorted(_NATIVE_TOOL_KEYS.intersection(tool))
            schema: ToolSchema = {"name": _string(tool.get("name"), f"{where}.name", empty=False)}
            if "description" in tool:
                description = _string(tool["description"], f"{where}.description")
                if description:
                    schema["description"] = description
            if "input_schema" not in tool:
                raise _fail(f"{where}.input_schema", "Field required")
            _object(tool["input_schema"], f"{where}.input_schema")
            schema["parameters"] = copy.deepcopy(tool["input_schema"])  # as given: `$schema` too
            if "strict" in tool:
                if not isinstance(tool["strict"], bool):
                    raise _fail(f"{where}.strict", "must be true or false")
                schema["strict"] = tool["strict"]
            tools.append(schema)
        if servers:
            # The list goes whole to an Anthropic upstream (extra_body may add the `tools` the
            # encoder does not write, never replace them), and no other upstream can run it.
            self.native["tools"] = copy.deepcopy(value)
            self.native_required += servers
        elif tools:
            self.config["tools"] = list(tools)

    def _tool_choice(self, choice: dict[str, Any]) -> None:
        kind = choice.get("type")
        known = {"type", "disable_parallel_tool_use"}
        if kind == "auto":
            self.config["tool_choice"] = "auto"
        elif kind == "any":
            self.config["tool_choice"] = "required"
        elif kind == "none":
            self.config["tool_choice"] = "none"
        elif kind == "tool":
            known.add("name")
            self.config["tool_choice"] = [
                _string(choice.get("name"), "tool_choice.name", empty=False)
            ]
        else:
            raise _fail("tool_choice.type", "must be 'auto', 'any', 'tool' or 'none'")
        _unknown(choice, known, "tool_choice")
        disable = choice.get("disable_parallel_tool_use", False)
        if not isinstance(disable, bool):
            raise _fail("tool_choice.disable_parallel_tool_use", "must be true or false")
        if disable:
            self.config["parallel_tool_calls"] = False

    def _format(self, value: Any, param: str) -> dict[str, Any]:
        spec = _object(value, param)
        _unknown(spec, {"type", "schema"}, param)
        if spec.get("type") != "json_schema":
            raise _fail(f"{param}.type", "must be 'json_schema'")
        schema = spec.get("schema")
        if not isinstance(schema, dict):
            raise _fail(f"{param}.schema", "must be a JSON schema object")
        return {"type": "json_schema", "name": "response", "schema": copy.deepcopy(schema)}

    def _thinking(self, thinking: Any, output_config: Any) -> None:
        effort: ThinkingLevel | None = None
        if output_config is not None:
            output = _object(output_config, "output_config")
            _unknown(output, {"effort", "format"}, "output_config")
            if "format" in output:
                if "response_format" in self.config:
                    raise _fail(
                        "output_format", "give output_config.format or output_format, not both"
                    )
                self.config["response_format"] = self._format(
                    output["format"], "output_config.format"
                )
            if "effort" in output:
                if output["effort"] not in _EFFORTS:
                    raise _fail("output_config.effort", f"must be one of {', '.join(_EFFORTS)}")
                effort = output["effort"]
        kind = None
        if thinking is not None:
            settings = _object(thinking, "thinking")
            kind = settings.get("type")
            if kind == "enabled":
                _unknown(settings, {"type", "budget_tokens", "display"}, "thinking")
                if "budget_tokens" not in settings:
                    raise _fail("thinking.budget_tokens", "Field required")
                budget = _integer(
                    settings["budget_tokens"], "thinking.budget_tokens", MIN_THINKING_BUDGET
                )
                self.config["thinking_level"] = nearest_level(budget)
            elif kind == "adaptive":
                _unknown(settings, {"type", "display"}, "thinking")
                self.config["thinking_level"] = effort or _ADAPTIVE_DEFAULT
            elif kind == "disabled":
                _unknown(settings, {"type"}, "thinking")
                self.config["thinking_level"] = "none"
            else:
                raise _fail("thinking.type", "must be 'enabled', 'adaptive' or 'disabled'")
            display = settings.get("display")
            if display is not None:
                if display not in ("summarized", "omitted"):
                    raise _fail("thinking.display", "must be 'summarized' or 'omitted'")
                self.config["thinking_summary"] = display == "summarized"
        if effort is not None and kind != "adaptive":
            self.native["output_config"] = {"effort": effort}

    # --- messages ---------------------------------------------------------------------------

    def _messages(self, value: Any) -> list[Message]:
        if not isinstance(value, list):
            raise _fail("messages", "must be an array of messages")
        if not value:
            raise _fail("messages", "at least one message is required")
        out: list[Message] = []
        for index, raw in enumerate(value):
            where = f"messages.{index}"
            message = _object(raw, where)
            _unknown(message, {"role", "content"}, where)
            role = message.get("role")
            if role not in ("user", "assistant"):
                raise _fail(
                    f"{where}.role",
                    "must be 'user' or 'assistant' (the system prompt goes in `system`)",
                )
            content = message.get("content")
            if isinstance(content, str):
                items: list[DoneItem] = [{"type": "text.done", "text": content}] if content else []
            elif isinstance(content, list):
                read = self._user_block if role == "user" else self._assistant_block
                items = []
                for j, raw_block in enumerate(content):
                    block_where = f"{where}.content.{j}"
                    item = read(_object(raw_block, block_where), block_where)
                    if item is not None:
                        items.append(item)
            else:
                raise _fail(f"{where}.content", "must be a string or an array of content blocks")
            out.append({"role": role, "content_items": items})
        return out

    def _user_block(self, block: dict[str, Any], where: str) -> DoneItem | None:
        kind = block.get("type")
        if kind == "text":
            return self._text(block, where, citations_ignored=False)
        if kind in ("image", "document"):
            _unknown(block, {"type", "source", "cache_control"}, where)
            self._cache_control(block.get("cache_control"), f"{where}.cache_control")
            url = self._source(block.get("source"), f"{where}.source", document=kind == "document")
            return {"type": "image_url.done", "image_url": url}
        if kind == "tool_result":
            return self._tool_result(block, where)
        if kind in ("thinking", "redacted_thinking", "tool_use"):
            raise _fail(f"{where}.type", f"a {kind} block belongs in an assistant message")
        raise _fail(f"{where}.type", f"{kind!r} blocks are not supported by this gateway")

    def _text(
        self, block: dict[str, Any], where: str, *, citations_ignored: bool
    ) -> DoneItem | None:
        _unknown(block, {"type", "text", "cache_control", "citations"}, where)
        self._cache_control(block.get("cache_control"), f"{where}.cache_control")
        if block.get("citations"):
            if not citations_ignored:
                raise _fail(f"{where}.citations", "citations are not supported by this gateway")
            self.ignored.append("citations")
        text = _string(block.get("text"), f"{where}.text")
        return {"type": "text.done", "text": text} if text else None

    def _source(self, value: Any, where: str, *, document: bool) -> str:
        source = _object(value, where)
        kind = source.get("type")
        if kind == "base64":
            _unknown(source, {"type", "media_type", "data"}, where)
            media_type = _string(source.get("media_type"), f"{where}.media_type", empty=False)
            data = _string(source.get("data"), f"{where}.data", empty=False)
            if document and media_type != "application/pdf":
                raise _fail(f"{where}.media_type", "a base64 document must be application/pdf")
            if not document and not media_type.startswith("image/"):
                raise _fail(f"{where}.media_type", "an image must have an image/ media type")
            return f"data:{media_type};base64,{data}"
        if kind == "url":
            _unknown(source, {"type", "url"}, where)
            url = _string(source.get("url"), f"{where}.url", empty=False)
            if not url.lower().startswith(("http://", "https://")):
                raise _fail(f"{where}.url", "must be an http(s) URL")
            return url
        raise _fail(
            f"{where}.type",
            f"{kind!r} sources are not supported by this gateway (use base64 or url)",
        )

    def _tool_result(self, block: dict[str, Any], where: str) -> DoneItem:
        _unknown(block, {"type", "tool_use_id", "content", "is_error", "cache_control"}, where)
        self._cache_control(block.get("cache_control"), f"{where}.cache_control")
        call_id, _ = split_tool_id(
            _string(block.get("tool_use_id"), f"{where}.tool_use_id", empty=False),
            self.seal,
            f"{where}.tool_use_id",
        )
        content = block.get("content", "")
        texts: list[str] = []
        images: list[str] = []
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for j, raw in enumerate(content):
                part_where = f"{where}.content.{j}"
                part = _object(raw, part_where)
                kind = part.get("type")
                if kind == "text":
                    _unknown(part, {"type", "text", "cache_control", "citations"}, part_where)
                    if part.get("citations"):
                        raise _fail(
                            f"{part_where}.citations", "citations are not supported by this gateway"
                        )
                    self._cache_control(part.get("cache_control"), f"{part_where}.cache_control")
                    texts.append(_string(part.get("text"), f"{part_where}.text"))
                elif kind == "image":
                    _unknown(part, {"type", "source", "cache_control"}, part_where)
                    self._cache_control(part.get("cache_control"), f"{part_where}.cache_control")
                    images.append(
                        self._source(part.get("source"), f"{part_where}.source", document=False)
                    )
                else:
                    raise _fail(
                        f"{part_where}.type",
                        f"a tool result holds text and image blocks here, not {kind!r}",
                    )
        else:
            raise _fail(f"{where}.content", "must be a string or an array of text and image blocks")
        text = "\n".join(t for t in texts if t)
        is_error = block.get("is_error", False)
        if not isinstance(is_error, bool):
            raise _fail(f"{where}.is_error", "must be true or false")
        if is_error and not text.lower().startswith(_ERROR_PREFIX.strip()):
            text = _ERROR_PREFIX + text if text else _ERROR_PREFIX.strip()
        item: ToolResultDone = {"type": "tool_result.done", "tool_call_id": call_id, "text": text}
        if images:
            item["images"] = images
        return item

    def _assistant_block(self, block: dict[str, Any], where: str) -> DoneItem | None:
        kind = block.get("type")
        if kind == "text":
            return self._text(block, where, citations_ignored=True)
        if kind == "thinking":
            _unknown(block, {"type", "thinking", "signature"}, where)
            text = _string(block.get("thinking"), f"{where}.thinking")
            signature = block.get("signature", "")
            signature = _string(signature, f"{where}.signature")
            item: ThinkingDone = {"type": "thinking.done", "thinking": text}
            if is_sealed(signature):
                item["fidelity"] = _open(self.seal, signature, f"{where}.signature")
            elif signature:
                item["fidelity"] = {"signature": signature}
            return item
        if kind == "redacted_thinking":
            _unknown(block, {"type", "data"}, where)
            data = _string(block.get("data"), f"{where}.data", empty=False)
            redacted: dict[str, Any] = (
                _open(self.seal, data, f"{where}.data")
                if is_sealed(data)
                else {"redacted_thinking": data}
            )
            return {"type": "thinking.done", "thinking": "", "fidelity": redacted}
        if kind == "tool_use":
            _unknown(block, {"type", "id", "name", "input", "cache_control", "caller"}, where)
            self._cache_control(block.get("cache_control"), f"{where}.cache_control")
            if block.get("caller"):  # programmatic tool calling: Anthropic's own bookkeeping
                self.ignored.append("caller")
            call_id, fidelity = split_tool_id(
                _string(block.get("id"), f"{where}.id", empty=False), self.seal, f"{where}.id"
            )
            arguments = block.get("input")
            if not isinstance(arguments, dict):
                raise _fail(f"{where}.input", "must be an object")
            call: ToolCallDone = {
                "type": "tool_call.done",
                "tool_call_id": call_id,
                "name": _string(block.get("name"), f"{where}.name", empty=False),
                "arguments": copy.deepcopy(arguments),
            }
            if fidelity:
                call["fidelity"] = fidelity
            return call
        if kind in ("image", "document", "tool_result"):
            raise _fail(f"{where}.type", f"a {kind} block belongs in a user message")
        raise _fail(f"{where}.type", f"{kind!r} blocks are not supported by this gateway")


__all__ = ["decode_request", "nearest_level", "split_tool_id"]
