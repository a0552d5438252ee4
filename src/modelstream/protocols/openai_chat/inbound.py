"""A Chat Completions request, as a client sends it to the gateway, as the SPEC request.

The inverse of `encoder.py` (docs/gateway.md, "OpenAI Chat Completions", has the full table):

  system      every `system` / `developer` message, wherever it stands, joins `system_prompt`
              (texts joined with a blank line, in order): Config has one system prompt, so a
              system message's position in the history is not kept.
  user        text and `image_url` parts (http(s) or `data:` URLs, kept as they are).
  tool        consecutive `tool` messages are the `tool_result.done` items of one user message;
              a `user` message right after them joins it, and in it the encoder's image labels
              (`Images returned by tool call <id>:` + images) give the results their images.
  assistant   `reasoning_details` (OpenRouter's convention, which this gateway's writer also
              streams) give one thinking item per detail `index`; without them
              `reasoning_content` / `reasoning` is one thinking item; Mistral `thinking` content
              chunks are thinking too. Then `content` text, `refusal` text (fidelity
              `{"refusal": true}`) and `tool_calls` (arguments parsed: a JSON object).
  fidelity    a sealed token (`fidelity_seal`) in a detail's `signature` is that thinking item's
              whole fidelity; a tool call id `<id>-<token>` is the call `<id>` with fidelity
              `<token>` (a tool message's `tool_call_id` loses its token the same way). Anything
              else is this protocol's own fidelity, under the keys `decoder.py` writes.

Each field is mapped to Config, kept in `options` (`include_usage`), passed in `native_fields`
to an openai-chat upstream only, ignored as documented (`ignored`), or refused: any other
field, and a value the gateway cannot serve (`n` > 1, `logprobs`, audio output), is an
`InboundRequestError` naming it. A field set to null asks for nothing, whatever its name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NoReturn

from ...tool_arguments import parse_strict
from ...types import Config, DoneItem, Message, ThinkingLevel, ToolSchema
from ..common.fidelity_seal import FidelityForgedError, FidelitySeal, is_sealed
from ..common.gateway import InboundCall, InboundRequest, InboundRequestError
from .decoder import thinking_part_text
from .writer import TOOL_ID_SEPARATOR

# reasoning_effort → thinking_level: the encoder sends every level as it is; `minimal` has no
# level of its own and takes the nearest one.
THINKING_LEVEL: dict[str, ThinkingLevel] = {
    "none": "none",
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}

# Fields an OpenAI upstream can use and no Config key expresses: sent as they are to an
# openai-chat upstream, dropped (logged by the server) for any other. A null value, or a zero
# penalty, asks for nothing and is ignored.
NATIVE_FIELDS = frozenset(
    {
        "user",
        "safety_identifier",
        "metadata",
        "store",
        "service_tier",
        "prompt_cache_key",
        "prompt_cache_retention",
        "verbosity",
        "logit_bias",
        "frequency_penalty",
        "presence_penalty",
        "prediction",
    }
)

# Fields refused whatever their value (but null), with what to do instead.
_REFUSED = {
    "functions": "is the deprecated functions API, not served: send tools",
    "function_call": "is the deprecated functions API, not served: send tool_choice",
    "audio": "asks for audio output, which the gateway does not serve",
    "web_search_options": "asks for built-in web search, which the gateway does not serve",
    "top_logprobs": "asks for log probabilities, which the gateway does not return",
}

_TOOL_IMAGE_LABEL = re.compile(r"Images returned by tool call (.+):")

_TEXT_ROLE_KEYS = frozenset({"role", "content", "name"})
_MESSAGE_KEYS = {
    "system": _TEXT_ROLE_KEYS,
    "developer": _TEXT_ROLE_KEYS,
    "user": _TEXT_ROLE_KEYS,
    "tool": frozenset({"role", "content", "tool_call_id", "name"}),
    "assistant": frozenset(
        {
            *_TEXT_ROLE_KEYS,
            "refusal",
            "tool_calls",
            "reasoning_content",
            "reasoning",
            "reasoning_details",
            "annotations",  # citations: the grammar has no item for them (ignored)
            "audio",
            "function_call",
            "parsed",  # the openai SDK's parsed copy of `content`, sent back with it
        }
    ),
}


def decode_request(body: Any, call: InboundCall, seal: FidelitySeal) -> InboundRequest:
    """A `POST /v1/chat/completions` body as the SPEC request (module docstring)."""
    del call  # the route says nothing the body does not
    if not isinstance(body, dict):
        raise InboundRequestError("the request body must be a JSON object")
    return _Request(body, seal).read()


class _Request:
    """One request body being read; `ignored` and `native` collect as fields are seen."""

    def __init__(self, body: dict[str, Any], seal: FidelitySeal) -> None:
        self.body = body
        self.seal = seal
        self.ignored: list[str] = []
        self.native: dict[str, Any] = {}
        self.config: Config = {}

    def read(self) -> InboundRequest:
        body = self.body
        fields: dict[str, Callable[[Any], None]] = {
            "model": _nothing,  # the required ones are read below
            "messages": _nothing,
            "stream": _nothing,
            "stream_options": _nothing,
            "tool_choice": _nothing,  # after the tools
            "max_tokens": lambda v: self._max_tokens("max_tokens", v),
            "max_completion_tokens": lambda v: self._max_tokens("max_completion_tokens", v),
            "temperature": lambda v: self._number("temperature", v),
            "top_p": lambda v: self._number("top_p", v),
            "seed": self._seed,
            "stop": self._stop,
            "tools": self._tools,
            "parallel_tool_calls": self._parallel_tool_calls,
            "response_format": self._response_format,
            "reasoning_effort": self._reasoning_effort,
            "n": self._n,
            "logprobs": self._logprobs,
            "modalities": self._modalities,
        }
        for key, value in body.items():
            if key in fields:
                if value is not None:
                    fields[key](value)
            elif key in NATIVE_FIELDS:
                self._native(key, value)
            elif key in _REFUSED:
                if value is not None:
                    _refuse(key, _REFUSED[key])
            elif value is None:
                self.ignored.append(key)  # null asks for nothing
            else:
                _refuse(key, "is not a Chat Completions field the gateway serves")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            _refuse("model", "is required: the name of the model to answer")
        stream = body.get("stream")
        if stream is not None and not isinstance(stream, bool):
            _refuse("stream", "must be true or false")
        options = self._stream_options(body.get("stream_options"))
        if body.get("tool_choice") is not None:
            self._tool_choice(body["tool_choice"])
        history = _History(self.seal, self.ignored)
        messages = history.read(body.get("messages"))
        system = "\n\n".join(text for text in history.system if text)
        if system:
            self.config = {"system_prompt": system, **self.config}
        return InboundRequest(
            model=model,
            messages=messages,
            config=self.config,
            stream=bool(stream),
            options=options,
            native_fields=self.native,
            ignored=tuple(dict.fromkeys(self.ignored)),
        )

    # --- fields --------------------------------------------------------------------------

    def _stream_options(self, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            _refuse("stream_options", "must be an object")
        options: dict[str, Any] = {}
        for key, setting in value.items():
            if key == "include_usage":
                options["include_usage"] = _bool(setting, "stream_options.include_usage") is True
            elif key == "include_obfuscation":
                self.ignored.append("stream_options.include_obfuscation")  # never obfuscated
            else:
                _refuse(f"stream_options.{key}", "is not a stream option")
        return options

    def _max_tokens(self, key: str, value: Any) -> None:
        if not _is_int(value) or value < 1:
            _refuse(key, "must be a positive integer")
        if self.config.get("max_tokens", value) != value:
            _refuse(key, "differs from max_tokens: send one of the two")
        self.config["max_tokens"] = value

    def _number(self, key: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            _refuse(key, "must be a number")
        if key == "temperature":
            self.config["temperature"] = float(value)
        else:
            self.config["top_p"] = float(value)

    def _seed(self, value: Any) -> None:
        if not _is_int(value):
            _refuse("seed", "must be an integer")
        self.config["seed"] = value

    def _stop(self, value: Any) -> None:
        if isinstance(value, str):
            self.config["stop"] = [value]
        elif isinstance(value, list) and all(isinstance(s, str) for s in value):
            if value:
                self.config["stop"] = list(value)
        else:
            _refuse("stop", "must be a string or a list of strings")

    def _tools(self, value: Any) -> None:
        if not isinstance(value, list):
            _refuse("tools", "must be a list")
        tools: list[ToolSchema] = []
        for index, tool in enumerate(value):
            at = f"tools[{index}]"
            if not isinstance(tool, dict):
                _refuse(at, "must be an object")
            if tool.get("type") != "function":
                _refuse(f"{at}.type", f"must be 'function', not {tool.get('type')!r}")
            _only_keys(tool, {"type", "function"}, at)
            function = tool.get("function")
            if not isinstance(function, dict):
                _refuse(f"{at}.function", "must be an object")
            at += ".function"
            _only_keys(function, {"name", "description", "parameters", "strict"}, at)
            schema: ToolSchema = {"name": _name(function.get("name"), f"{at}.name")}
            description = function.get("description")
            if description is not None:
                if not isinstance(description, str):
                    _refuse(f"{at}.description", "must be a string")
                if description:
                    schema["description"] = description
            parameters = function.get("parameters")
            if parameters is not None:
                if not isinstance(parameters, dict):
                    _refuse(f"{at}.parameters", "must be a JSON schema object")
                schema["parameters"] = parameters
            strict = _bool(function.get("strict"), f"{at}.strict")
            if strict is not None:
                schema["strict"] = strict
            tools.append(schema)
        if tools:
            self.config["tools"] = list(tools)

    def _tool_choice(self, value: Any) -> None:
        if value in ("auto", "none", "required"):
            self.config["tool_choice"] = value
            return
        kind = value.get("type") if isinstance(value, dict) else None
        if kind == "function":
            names = _function_names([value])
            if names:
                self.config["tool_choice"] = names
                return
        if kind == "allowed_tools" and isinstance(value.get("allowed_tools"), dict):
            allowed = value["allowed_tools"]
            names = _function_names(allowed.get("tools"))
            if allowed.get("mode") == "required" and names:
                self.config["tool_choice"] = names
                return
            if allowed.get("mode") == "auto":
                _refuse(
                    "tool_choice.allowed_tools.mode",
                    "'auto' is not served (Config's tool lists require a call): use 'required',"
                    " or tool_choice 'auto' over all the tools",
                )
        _refuse(
            "tool_choice",
            "must be 'auto', 'none', 'required', {type: function, function: {name}} or "
            "{type: allowed_tools, allowed_tools: {mode: required, tools}}",
        )

    def _parallel_tool_calls(self, value: Any) -> None:
        self.config["parallel_tool_calls"] = bool(_bool(value, "parallel_tool_calls"))

    def _response_format(self, value: Any) -> None:
        kind = value.get("type") if isinstance(value, dict) else None
        if kind == "text":
            return  # plain text: what no response_format asks for
        if kind == "json_object":
            self.config["response_format"] = {"type": "json_object"}
        elif kind == "json_schema":
            wrapper = value.get("json_schema")
            if not (isinstance(wrapper, dict) and isinstance(wrapper.get("schema"), dict)):
                _refuse("response_format.json_schema", "needs its schema (json_schema.schema)")
            self.config["response_format"] = {"type": "json_schema", "json_schema": wrapper}
        else:
            _refuse("response_format", "type must be 'text', 'json_object' or 'json_schema'")

    def _reasoning_effort(self, value: Any) -> None:
        level = THINKING_LEVEL.get(value) if isinstance(value, str) else None
        if level is None:
            _refuse("reasoning_effort", f"must be one of {', '.join(THINKING_LEVEL)}")
        self.config["thinking_level"] = level

    def _n(self, value: Any) -> None:
        if value != 1 or isinstance(value, bool):
            _refuse("n", "must be 1: the gateway answers with one choice")

    def _logprobs(self, value: Any) -> None:
        if value is not False:
            _refuse("logprobs", "asks for log probabilities, which the gateway does not return")

    def _modalities(self, value: Any) -> None:
        if value != ["text"]:
            _refuse("modalities", "must be ['text']: audio output is not served")

    def _native(self, key: str, value: Any) -> None:
        if value is None or (key.endswith("_penalty") and value == 0):
            self.ignored.append(key)
        else:
            self.native[key] = value


class _History:
    """The `messages` list read into SPEC messages (module docstring)."""

    def __init__(self, seal: FidelitySeal, ignored: list[str]) -> None:
        self.seal = seal
        self.ignored = ignored
        self.out: list[Message] = []
        self.system: list[str] = []  # the texts of the system and developer messages
        self.results: list[dict[str, Any]] = []  # the open run of tool messages' results
        self.result_ids: list[str] = []  # their ids as the client sent them

    def read(self, messages: Any) -> list[Message]:
        if not isinstance(messages, list) or not messages:
            _refuse("messages", "must be a non-empty list of messages")
        for index, message in enumerate(messages):
            at = f"messages[{index}]"
            if not isinstance(message, dict):
                _refuse(at, "must be an object")
            role = message.get("role")
            keys = _MESSAGE_KEYS.get(role) if isinstance(role, str) else None
            if keys is None:
                _refuse(
                    f"{at}.role",
                    f"must be system, developer, user, assistant or tool, not {role!r}",
                )
            _only_keys(message, keys, at)
            if message.get("name") is not None:
                self.ignored.append("messages[].name")
            if role in ("system", "developer"):
                self.system.append(_text_of(message.get("content"), f"{at}.content"))
            elif role == "tool":
                self._tool(message, at)
            elif role == "user":
                self._user(message, at)
            else:
                self._assistant(message, at)
        self._flush_results()
        return self.out

    # --- user and tool messages ----------------------------------------------------------

    def _tool(self, message: dict[str, Any], at: str) -> None:
        raw = message.get("tool_call_id")
        if not isinstance(raw, str) or not raw:
            _refuse(f"{at}.tool_call_id", "is required")
        call_id, _ = _split_call_id(raw, self.seal, f"{at}.tool_call_id")
        text = _text_of(message.get("content"), f"{at}.content")
        self.results.append({"type": "tool_result.done", "tool_call_id": call_id, "text": text})
        self.result_ids.append(raw)

    def _user(self, message: dict[str, Any], at: str) -> None:
        content = message.get("content")
        if isinstance(content, str):
            items: list[Any] = [{"type": "text.done", "text": content}]
        elif isinstance(content, list):
            parts = self._tool_images(list(enumerate(content)), at)
            items = [_user_part(part, f"{at}.content[{n}]", self.ignored) for n, part in parts]
        else:
            _refuse(f"{at}.content", "must be a string or a list of parts")
        self.out.append({"role": "user", "content_items": [*self._take_results(), *items]})

    def _tool_images(self, parts: list[tuple[int, Any]], at: str) -> list[tuple[int, Any]]:
        """The encoder's tool-result images (`Images returned by tool call <id>:` then the
        images) given back to their results; the parts after them are the user's own."""
        results = dict(zip(self.result_ids, self.results, strict=True))
        while parts and _is_text(parts[0][1]):
            label = _TOOL_IMAGE_LABEL.fullmatch(parts[0][1]["text"])
            if label is None or label.group(1) not in results:
                break
            images: list[str] = results[label.group(1)].setdefault("images", [])
            parts = parts[1:]
            while (
                parts and isinstance(parts[0][1], dict) and parts[0][1].get("type") == "image_url"
            ):
                (n, image), parts = parts[0], parts[1:]
                images.append(_image_url(image, f"{at}.content[{n}]", self.ignored))
        return parts

    def _take_results(self) -> list[Any]:
        results, self.results, self.result_ids = self.results, [], []
        return results

    def _flush_results(self) -> None:
        if self.results:
            self.out.append({"role": "user", "content_items": self._take_results()})

    # --- assistant messages --------------------------------------------------------------

    def _assistant(self, message: dict[str, Any], at: str) -> None:
        self._flush_results()
        for key in ("audio", "function_call"):
            if message.get(key) is not None:
                _refuse(
                    f"{at}.{key}",
                    "cannot be replayed: audio answers and legacy function calls are not served",
                )
        if message.get("annotations"):
            self.ignored.append("messages[].annotations")
        texts: list[str] = []
        refusals: list[str] = []
        chunks: list[str] = []  # Mistral thinking chunks inside `content`
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for n, part in enumerate(content):
                _assistant_part(part, f"{at}.content[{n}]", texts, refusals, chunks)
        elif content is not None:
            _refuse(f"{at}.content", "must be a string, a list of parts or null")
        refusal = message.get("refusal")
        if refusal is not None:
            if not isinstance(refusal, str):
                _refuse(f"{at}.refusal", "must be a string")
            refusals.append(refusal)
        items: list[DoneItem] = self._thinking(message, at)
        for chunk in chunks:
            fidelity = {"reasoning_field": "content.thinking"}
            items.append({"type": "thinking.done", "thinking": chunk, "fidelity": fidelity})
        if "".join(texts):
            items.append({"type": "text.done", "text": "".join(texts)})
        if "".join(refusals):
            items.append(
                {"type": "text.done", "text": "".join(refusals), "fidelity": {"refusal": True}}
            )
        items.extend(self._tool_calls(message.get("tool_calls"), at))
        if items:  # an assistant message with nothing in it has nothing to replay
            self.out.append({"role": "assistant", "content_items": items})

    def _thinking(self, message: dict[str, Any], at: str) -> list[DoneItem]:
        """The thinking items of an assistant message (module docstring, `assistant`)."""
        field, text = "reasoning_details", ""
        for name in ("reasoning_content", "reasoning"):
            value = message.get(name)
            if value is not None and not isinstance(value, str):
                _refuse(f"{at}.{name}", "must be a string")
            if value and not text:
                field, text = name, value
        details = message.get("reasoning_details")
        if not details:
            if not text:
                return []
            return [
                {"type": "thinking.done", "thinking": text, "fidelity": {"reasoning_field": field}}
            ]
        if not isinstance(details, list):
            _refuse(f"{at}.reasoning_details", "must be a list")
        groups = _detail_groups(details, f"{at}.reasoning_details")
        texts_given = any(group.text for group in groups)
        items: list[DoneItem] = []
        for number, group in enumerate(groups):
            # details without their texts: the message's reasoning text is the first item's
            thinking = group.text if texts_given or number else text
            if group.sealed is not None:
                fidelity = _open(self.seal, group.sealed, group.sealed_at)
            elif thinking:
                fidelity = {**group.facts, "reasoning_field": field}
            else:
                fidelity = dict(group.facts)
            if thinking or fidelity:  # an empty detail has nothing to replay
                item: dict[str, Any] = {"type": "thinking.done", "thinking": thinking}
                if fidelity:
                    item["fidelity"] = fidelity
                items.append(item)  # type: ignore[arg-type]
        return items

    def _tool_calls(self, calls: Any, at: str) -> list[DoneItem]:
        if calls is None:
            return []
        if not isinstance(calls, list):
            _refuse(f"{at}.tool_calls", "must be a list")
        items: list[DoneItem] = []
        for n, call in enumerate(calls):
            where = f"{at}.tool_calls[{n}]"
            if not isinstance(call, dict) or call.get("type", "function") != "function":
                _refuse(f"{where}.type", "must be 'function': only function calls are served")
            _only_keys(call, {"id", "type", "function", "index"}, where)
            raw = call.get("id")
            if not isinstance(raw, str) or not raw:
                _refuse(f"{where}.id", "is required")
            function = call.get("function")
            if not isinstance(function, dict):
                _refuse(f"{where}.function", "must be an object")
            _only_keys(function, {"name", "arguments", "parsed_arguments"}, f"{where}.function")
            name = _name(function.get("name"), f"{where}.function.name")
            text = function.get("arguments")
            arguments, why = (
                parse_strict(text or "") if isinstance(text, str | None) else (None, "")
            )
            if arguments is None:
                why = f": {why}" if why else ""
                _refuse(f"{where}.function.arguments", f"must be a JSON object, as a string{why}")
            call_id, fidelity = _split_call_id(raw, self.seal, f"{where}.id")
            item: dict[str, Any] = {"type": "tool_call.done", "tool_call_id": call_id, "name": name}
            item["arguments"] = arguments
            if fidelity is not None:
                item["fidelity"] = fidelity
            items.append(item)  # type: ignore[arg-type]
        return items


# --- reasoning details and sealed tokens -------------------------------------------------------


class _DetailGroup:
    """The `reasoning_details` of one thinking item (one detail `index`)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.facts: dict[str, Any] = {}  # OpenRouter's facts, under the decoder's keys
        self.sealed: str | None = None
        self.sealed_at = ""

    @property
    def text(self) -> str:
        return "".join(self.texts)


def _detail_groups(details: list[Any], at: str) -> list[_DetailGroup]:
    """Details grouped by `index` (one without is its own item), read as the stream decoder
    reads them: text or summary, `format`, `signature`, `encrypted` data, `id`."""
    groups: dict[Any, _DetailGroup] = {}
    for n, detail in enumerate(details):
        where = f"{at}[{n}]"
        if not isinstance(detail, dict):
            _refuse(where, "must be an object")
        index = detail.get("index")
        group = groups.setdefault(index if index is not None else ("at", n), _DetailGroup())
        kind = detail.get("type")
        text: Any = None
        if kind == "reasoning.text":
            text = detail.get("text")
        elif kind == "reasoning.summary":
            text = detail.get("summary")
            group.facts["detail_type"] = kind
        elif kind == "reasoning.encrypted":
            if detail.get("data"):
                group.facts["encrypted"] = detail["data"]
            group.facts["detail_type"] = kind
        else:
            _refuse(f"{where}.type", f"{kind!r} is not a reasoning detail type")
        if text is not None and not isinstance(text, str):
            _refuse(where, "has a text that is not a string")
        if text:
            group.texts.append(text)
        signature = detail.get("signature")
        if is_sealed(signature):
            group.sealed, group.sealed_at = signature, f"{where}.signature"
        elif signature:
            group.facts["signature"] = signature
        for key, name in (("format", "format"), ("id", "reasoning_id")):
            if detail.get(key):
                group.facts[name] = detail[key]
    return list(groups.values())


def _split_call_id(raw: str, seal: FidelitySeal, param: str) -> tuple[str, dict[str, Any] | None]:
    """A tool call id as the writer wrote it: `<id>-<sealed fidelity>`, or the id alone."""
    call_id, separator, token = raw.rpartition(TOOL_ID_SEPARATOR)
    if not (separator and call_id and is_sealed(token)):
        return raw, None
    return call_id, _open(seal, token, param)


def _open(seal: FidelitySeal, token: str, param: str) -> dict[str, Any]:
    try:
        return seal.open(token)
    except FidelityForgedError as exc:
        raise InboundRequestError(f"{param}: {exc}", param=param) from None


# --- parts -------------------------------------------------------------------------------------


def _user_part(part: Any, at: str, ignored: list[str]) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        _only_keys(part, {"type", "text"}, at)
        if not isinstance(part.get("text"), str):
            _refuse(f"{at}.text", "must be a string")
        return {"type": "text.done", "text": part["text"]}
    if kind == "image_url":
        return {"type": "image_url.done", "image_url": _image_url(part, at, ignored)}
    _refuse(f"{at}.type", f"must be 'text' or 'image_url' in a user message, not {kind!r}")


def _image_url(part: dict[str, Any], at: str, ignored: list[str]) -> str:
    _only_keys(part, {"type", "image_url"}, at)
    image = part.get("image_url")
    url = image
    if isinstance(image, dict):
        _only_keys(image, {"url", "detail"}, f"{at}.image_url")
        if image.get("detail") not in (None, "auto"):
            ignored.append("image_url.detail")  # the SPEC image item has no detail
        url = image.get("url")
    if not isinstance(url, str) or not url[:8].lower().startswith(("http://", "https://", "data:")):
        _refuse(f"{at}.image_url.url", "must be an http(s) or data: URL")
    return url


def _assistant_part(
    part: Any, at: str, texts: list[str], refusals: list[str], thinking: list[str]
) -> None:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text" and isinstance(part.get("text"), str):
        texts.append(part["text"])
    elif kind == "refusal" and isinstance(part.get("refusal"), str):
        refusals.append(part["refusal"])
    elif kind == "thinking":  # Mistral: {type: thinking, thinking: [{type: text, text}]}
        text = thinking_part_text(part)
        if text:
            thinking.append(text)
    else:
        _refuse(at, "must be a text, refusal or thinking part in an assistant message")


def _text_of(content: Any, at: str) -> str:
    """The text of a system, developer or tool message: a string or a list of text parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        _refuse(at, "must be a string or a list of text parts")
    for n, part in enumerate(content):
        if not _is_text(part):
            _refuse(f"{at}[{n}]", "must be a text part: only text is served here")
    return "".join(part["text"] for part in content)


# --- values ----------------------------------------------------------------------------------


def _refuse(param: str, what: str) -> NoReturn:
    """A 400 naming the field: `<param> <what>` reads as one sentence."""
    raise InboundRequestError(f"{param} {what}", param=param)


def _only_keys(value: dict[str, Any], known: set[str] | frozenset[str], at: str) -> None:
    """Refuse a field not in `known`; a null one asks for nothing and passes."""
    for key, setting in value.items():
        if key not in known and setting is not None:
            _refuse(f"{at}.{key}", "is not a field the gateway serves here")


def _name(value: Any, at: str) -> str:
    if not isinstance(value, str) or not value:
        _refuse(at, "is required")
    return value


def _bool(value: Any, at: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        _refuse(at, "must be true or false")
    return value


def _function_names(tools: Any) -> list[str]:
    """The names of `[{type: function, function: {name}}]`; [] when one has none."""
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else ():
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            return []
        names.append(name)
    return names


def _is_text(part: Any) -> bool:
    return (
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _nothing(value: Any) -> None:
    del value


__all__ = ["NATIVE_FIELDS", "THINKING_LEVEL", "decode_request"]
