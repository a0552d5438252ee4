"""The OpenAI Responses wire, inbound: a `POST /v1/responses` body → the SPEC request.

The inverse of this protocol's encoder (docs/requests-openai.md), plus what clients such as the
openai SDK and Codex send (docs/gateway.md has the table):

  config     instructions, system and developer messages → `system_prompt` (joined in order);
             max_output_tokens, temperature, top_p, tools (function tools; a `namespace`'s
             functions flattened, `image_generation` → `image_output`, hosted tools dropped),
             tool_choice, parallel_tool_calls, reasoning.effort → `thinking_level`
             (`minimal` → `low`), reasoning.summary → `thinking_summary`, text.format →
             `response_format`.
  options    what the writer answers with: `store`, `include_encrypted_content`,
             `previous_response_id` (the server prepends the stored turn), `tool_namespaces`
             (flat tool name → [namespace, name]) and `response` (the request fields a response
             object echoes).
  native     fields only a Responses upstream can use (merged into its body): `store`, `include`
             (reasoning.encrypted_content), `prompt_cache_key`, `metadata`, `user`,
             `safety_identifier`, `service_tier`, `truncation`, `text.verbosity`, and the
             reasoning values Config has no level for (`minimal`, `concise`, `detailed`).
  ignored    `client_metadata`, `stream_options`, hosted tools and their history items, the
             ids, status and `end_turn` of input messages, an image's `detail`, a namespace's
             description, `include` values other than reasoning.encrypted_content, the
             image_generation tool's options other than `size`.
  refused    anything else: a 400 naming the field.

History items: user messages (input_text, input_image) and `function_call_output`s make user
messages; assistant messages, `reasoning`, `function_call` and `image_generation_call` items make
assistant messages. Their fidelity is read back from where the writer put it (writer.py): a
sealed token (reasoning `encrypted_content`, a call_id's `.<token>` suffix, a `msg_<token>` or
`ig_<token>` id) is opened and becomes the item's whole fidelity; otherwise an item's own id and
parts are this wire's native fidelity, under the keys the stream decoder writes, except the ids
the writer generated (`<prefix>_gw_…`), which no upstream knows.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from typing import Any

from ...errors import InvalidMessageError
from ...media import url_kind
from ...types import Config, DoneItem, Message, ToolSchema
from ..common.fidelity_seal import FidelityForgedError, FidelitySeal, is_sealed
from ..common.gateway import InboundCall, InboundRequest, InboundRequestError
from ..common.inline_media import decode_base64
from ..openai_chat.inbound import THINKING_LEVEL
from .writer import CALL_ID_SEPARATOR, is_generated_id

# reasoning.effort → thinking_level, as Chat's reasoning_effort (the same values); `minimal`'s
# value itself also goes natively to a Responses upstream
_EFFORTS = THINKING_LEVEL
_SUMMARIES = ("auto", "concise", "detailed")
_VERBOSITIES = ("low", "medium", "high")
# Tools the provider runs itself: no upstream of the gateway runs them (dropped, listed)
_HOSTED_TOOLS = frozenset(
    {
        "web_search",
        "web_search_preview",
        "web_search_2025_08_26",
        "web_search_preview_2025_03_11",
        "file_search",
        "code_interpreter",
        "mcp",
        "computer_use_preview",
        "computer_use",
        "tool_search",
    }
)
# History items of those tools: their results already shaped the answers that follow
_HOSTED_ITEMS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "tool_search_call",
        "tool_search_output",
    }
)
_INCLUDES = frozenset(
    {
        "reasoning.encrypted_content",
        "message.output_text.logprobs",
        "message.input_image.image_url",
        "web_search_call.results",
        "web_search_call.action.sources",
        "file_search_call.results",
        "code_interpreter_call.outputs",
        "computer_call_output.output.image_url",
    }
)
# Top-level fields a Responses upstream takes as they are; dropped (logged) for any other
_NATIVE = (
    "prompt_cache_key",
    "metadata",
    "user",
    "safety_identifier",
    "service_tier",
    "truncation",
)
_IGNORED = ("client_metadata", "stream_options")
# Fields accepted only with their "off" value
_OFF: Mapping[str, tuple[Any, ...]] = {
    "background": (False,),
    "max_tool_calls": (),
    "top_logprobs": (0,),
    "prompt": (),
    "conversation": (),
    "context_management": (),
}
_HANDLED = frozenset(
    {
        "model",
        "input",
        "stream",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning",
        "include",
        "store",
        "previous_response_id",
        "text",
        "max_output_tokens",
        "temperature",
        "top_p",
        *_NATIVE,
        *_IGNORED,
        *_OFF,
    }
)
_NAMESPACE_JOIN = "__"  # a namespaced tool whose name is not unique: `<namespace>__<name>`


def _bad(message: str, param: str | None) -> InboundRequestError:
    return InboundRequestError(message, param=param)


def _keys(value: Any, allowed: frozenset[str] | set[str], param: str) -> dict[str, Any]:
    """`value` as an object whose keys are all `allowed` (a null value counts as absent)."""
    if not isinstance(value, dict):
        raise _bad(f"{param} must be an object", param)
    for key in value:
        if key not in allowed:
            where = f"{param}.{key}"
            raise _bad(f"unknown or unsupported field {where}", where)
    return {k: v for k, v in value.items() if v is not None}


def _string(value: Any, param: str) -> str:
    if not isinstance(value, str):
        raise _bad(f"{param} must be a string", param)
    return value


def _list(value: Any, param: str) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(f"{param} must be an array", param)
    return value


def _number(value: Any, param: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(f"{param} must be a number", param)
    return value


def split_call_id(call_id: str) -> tuple[str, str | None]:
    """(the original call id, the sealed token) of a call_id the writer suffixed (writer.py)."""
    head, separator, token = call_id.rpartition(CALL_ID_SEPARATOR)
    if separator and head and is_sealed(token):
        return head, token
    return call_id, None


def _sealed_id(item_id: Any, prefix: str) -> str | None:
    """The token of an id the writer made of sealed fidelity (`msg_<token>`, `ig_<token>`)."""
    if (
        isinstance(item_id, str)
        and item_id.startswith(prefix)
        and is_sealed(item_id[len(prefix) :])
    ):
        return item_id[len(prefix) :]
    return None


def _native_id(item_id: Any) -> str | None:
    """An item id an upstream gave (not one the writer generated or sealed)."""
    if not isinstance(item_id, str) or not item_id or is_generated_id(item_id):
        return None
    return item_id


def _image_mime(data: bytes) -> str:
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    return "image/png"


class _Decoder:
    """One request body's decoding (module docstring)."""

    def __init__(self, body: dict[str, Any], seal: FidelitySeal) -> None:
        self.body = body
        self.seal = seal
        self.config: Config = {}
        self.options: dict[str, Any] = {}
        self.native: dict[str, Any] = {}
        self.ignored: list[str] = []
        self.echo: dict[str, Any] = {}
        self.system: list[str] = []
        self.messages: list[Message] = []
        self.namespaces: dict[str, list[str]] = {}  # flat name -> [namespace, name]
        self.flat: dict[tuple[str | None, str], str] = {}  # (namespace, name) -> flat name

    def ignore(self, name: str) -> None:
        if name not in self.ignored:
            self.ignored.append(name)

    def opened(self, token: str, param: str) -> dict[str, Any]:
        try:
            return self.seal.open(token)
        except FidelityForgedError as exc:
            raise _bad(f"{param}: {exc}", param) from None

    # --- the body -----------------------------------------------------------------------------

    def decode(self) -> InboundRequest:
        body = self.body
        for key, value in body.items():
            if key not in _HANDLED:
                raise _bad(f"unknown or unsupported field {key!r}", key)
            if key in _OFF and value is not None and value not in _OFF[key]:
                raise _bad(f"{key}={value!r} is not supported by this gateway", key)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise _bad("model is required: the id of a model this server serves", "model")
        stream = body.get("stream") or False
        if not isinstance(stream, bool):
            raise _bad("stream must be true or false", "stream")
        instructions = body.get("instructions")
        if instructions is not None:
            self.system.append(_string(instructions, "instructions"))
            self.echo["instructions"] = instructions
        self._scalars()
        self._tools()
        self._tool_choice()
        self._reasoning()
        self._include()
        self._text()
        self._native_fields()
        previous = body.get("previous_response_id")
        if previous is not None:
            self.options["previous_response_id"] = _string(previous, "previous_response_id")
            self.echo["previous_response_id"] = previous
        self._input(body.get("input"), has_previous=previous is not None)
        if self.system:
            self.config["system_prompt"] = "\n\n".join(self.system)
        for key in _IGNORED:
            if key in body:
                self.ignore(key)
        self.options["response"] = self.echo
        if self.namespaces:
            self.options["tool_namespaces"] = self.namespaces
        return InboundRequest(
            model=model,
            messages=self.messages,
            config=self.config,
            stream=stream,
            options=self.options,
            native_fields=self.native,
            ignored=tuple(self.ignored),
            continues=self.options.get("previous_response_id"),
            keep=self.options.get("store") is not False,  # the API's default is to store
        )

    def _scalars(self) -> None:
        body = self.body
        tokens = body.get("max_output_tokens")
        if tokens is not None:
            if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
                raise _bad("max_output_tokens must be a positive integer", "max_output_tokens")
            self.config["max_tokens"] = self.echo["max_output_tokens"] = tokens
        for key in ("temperature", "top_p"):
            if body.get(key) is not None:
                self.config[key] = self.echo[key] = _number(body[key], key)
        parallel = body.get("parallel_tool_calls")
        if parallel is not None:
            if not isinstance(parallel, bool):
                raise _bad("parallel_tool_calls must be true or false", "parallel_tool_calls")
            self.config["parallel_tool_calls"] = self.echo["parallel_tool_calls"] = parallel
        store = body.get("store")
        if store is not None:
            if not isinstance(store, bool):
                raise _bad("store must be true or false", "store")
            self.options["store"] = self.native["store"] = self.echo["store"] = store

    def _native_fields(self) -> None:
        for key in _NATIVE:
            value = self.body.get(key)
            if value is None:
                continue
            if key == "metadata":
                if not isinstance(value, dict):
                    raise _bad("metadata must be an object of strings", key)
            else:
                _string(value, key)
            self.native[key] = self.echo[key] = value

    # --- tools --------------------------------------------------------------------------------

    def _tools(self) -> None:
        given = self.body.get("tools")
        if given is None:
            return
        functions: list[tuple[str | None, dict[str, Any], str]] = []
        for index, tool in enumerate(_list(given, "tools")):
            param = f"tools[{index}]"
            kind = tool.get("type") if isinstance(tool, dict) else None
            if kind == "function":
                functions.append((None, tool, param))
            elif kind == "namespace":
                spec = _keys(tool, {"type", "name", "description", "tools"}, param)
                group = _string(spec.get("name"), f"{param}.name")
                if "description" in spec:
                    self.ignore(f"{param}.description")
                for position, inner in enumerate(_list(spec.get("tools"), f"{param}.tools")):
                    where = f"{param}.tools[{position}]"
                    if not isinstance(inner, dict) or inner.get("type") != "function":
                        raise _bad(f"{where}: only function tools can be expressed", where)
                    functions.append((group, inner, where))
            elif kind == "image_generation":
                self._image_tool(tool, param)
            elif kind in _HOSTED_TOOLS:
                self.ignore(f"{param} ({kind})")
            else:
                raise _bad(
                    f"{param}: a tool of type {kind!r} cannot be served through this gateway "
                    "(function tools, namespaces of them, and image_generation can)",
                    param,
                )
        schemas = [
            (namespace, self._function(tool, param), param) for namespace, tool, param in functions
        ]
        counts: dict[str, int] = {}
        for entry in schemas:
            counts[entry[1]["name"]] = counts.get(entry[1]["name"], 0) + 1
        for namespace, schema, param in schemas:
            name = schema["name"]
            if (namespace, name) in self.flat:
                raise _bad(f"{param}.name: two tools are named {name!r}", f"{param}.name")
            if namespace is not None:  # flattened; its own name unless another tool has it
                flat = name if counts[name] == 1 else f"{namespace}{_NAMESPACE_JOIN}{name}"
                self.namespaces[flat] = [namespace, name]
                schema["name"] = flat
            self.flat[(namespace, name)] = schema["name"]
        if schemas:
            self.config["tools"] = [entry[1] for entry in schemas]
        self.echo["tools"] = copy.deepcopy(given)

    def _function(self, tool: Any, param: str) -> ToolSchema:
        spec = _keys(tool, {"type", "name", "description", "parameters", "strict"}, param)
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            raise _bad(f"{param}.name is required", f"{param}.name")
        schema: ToolSchema = {"name": name}
        if "description" in spec:
            schema["description"] = _string(spec["description"], f"{param}.description")
        if "parameters" in spec:
            if not isinstance(spec["parameters"], dict):
                raise _bad(
                    f"{param}.parameters must be a JSON schema object", f"{param}.parameters"
                )
            schema["parameters"] = copy.deepcopy(spec["parameters"])
        if "strict" in spec:
            if not isinstance(spec["strict"], bool):
                raise _bad(f"{param}.strict must be true or false", f"{param}.strict")
            schema["strict"] = spec["strict"]
        return schema

    def _image_tool(self, tool: dict[str, Any], param: str) -> None:
        size = tool.get("size")
        for key, value in tool.items():
            if key not in ("type", "size") and value is not None:
                self.ignore(f"{param}.{key}")
        if size is None or size == "auto":
            self.config["image_output"] = True
        else:
            self.config["image_output"] = {"size": _string(size, f"{param}.size")}

    def _flat_name(self, name: str, namespace: str | None) -> str:
        """The flat tool name of a (namespace, name) the caller's request declared."""
        flat = self.flat.get((namespace, name))
        if flat is not None:
            return flat
        if namespace is None:  # a choice naming a namespaced tool by its own name
            matches = [f for (ns, n), f in self.flat.items() if n == name]
            if len(matches) == 1:
                return matches[0]
        return name

    def _tool_choice(self) -> None:
        choice = self.body.get("tool_choice")
        if choice is None:
            return
        self.echo["tool_choice"] = copy.deepcopy(choice)
        if choice in ("auto", "required", "none"):
            self.config["tool_choice"] = choice
            return
        param = "tool_choice"
        kind = choice.get("type") if isinstance(choice, dict) else None
        if kind == "function":
            spec = _keys(choice, {"type", "name", "namespace"}, param)
            name = _string(spec.get("name"), f"{param}.name")
            self.config["tool_choice"] = [self._flat_name(name, spec.get("namespace"))]
        elif kind == "allowed_tools":
            spec = _keys(choice, {"type", "mode", "tools"}, param)
            if spec.get("mode") != "required":
                raise _bad(
                    "tool_choice allowed_tools with mode 'auto' cannot be expressed (mode "
                    "'required' can)",
                    f"{param}.mode",
                )
            names = []
            for index, tool in enumerate(_list(spec.get("tools"), f"{param}.tools")):
                where = f"{param}.tools[{index}]"
                entry = _keys(tool, {"type", "name", "namespace"}, where)
                if entry.get("type") != "function":
                    raise _bad(f"{where}: only function tools can be required", where)
                name = _string(entry.get("name"), f"{where}.name")
                names.append(self._flat_name(name, entry.get("namespace")))
            self.config["tool_choice"] = names
        else:
            raise _bad(
                "tool_choice must be auto, required, none, a function or allowed_tools "
                "(hosted tools are not served)",
                param,
            )

    # --- reasoning, include, text -------------------------------------------------------------

    def _reasoning(self) -> None:
        given = self.body.get("reasoning")
        if given is None:
            return
        spec = _keys(given, {"effort", "summary", "generate_summary"}, "reasoning")
        echo: dict[str, Any] = {"effort": None, "summary": None}
        native: dict[str, Any] = {}
        effort = spec.get("effort")
        if effort is not None:
            if effort not in _EFFORTS:
                raise _bad(
                    f"reasoning.effort must be one of {', '.join(_EFFORTS)}", "reasoning.effort"
                )
            self.config["thinking_level"] = _EFFORTS[effort]
            echo["effort"] = effort
            if effort == "minimal":
                native["effort"] = effort
        summary = spec.get("summary", spec.get("generate_summary"))
        if summary is not None:
            if summary not in _SUMMARIES:
                raise _bad(
                    f"reasoning.summary must be one of {', '.join(_SUMMARIES)}", "reasoning.summary"
                )
            self.config["thinking_summary"] = True
            echo["summary"] = summary
            if summary != "auto":
                native["summary"] = summary
        if native:
            self.native["reasoning"] = native
        self.echo["reasoning"] = echo

    def _include(self) -> None:
        given = self.body.get("include")
        if given is None:
            return
        for index, value in enumerate(_list(given, "include")):
            if value not in _INCLUDES:
                raise _bad(f"include[{index}]: unknown value {value!r}", f"include[{index}]")
            if value == "reasoning.encrypted_content":
                self.options["include_encrypted_content"] = True
                self.native["include"] = [value]
            else:
                self.ignore(f"include {value}")

    def _text(self) -> None:
        given = self.body.get("text")
        if given is None:
            return
        spec = _keys(given, {"format", "verbosity"}, "text")
        self.echo["text"] = {"format": {"type": "text"}, "verbosity": "medium", **spec}
        verbosity = spec.get("verbosity")
        if verbosity is not None:
            if verbosity not in _VERBOSITIES:
                raise _bad(
                    f"text.verbosity must be one of {', '.join(_VERBOSITIES)}", "text.verbosity"
                )
            self.native["text"] = {"verbosity": verbosity}
        form = spec.get("format")
        if form is None:
            return
        kind = form.get("type") if isinstance(form, dict) else None
        if kind == "text":
            _keys(form, {"type"}, "text.format")
        elif kind == "json_object":
            _keys(form, {"type"}, "text.format")
            self.config["response_format"] = {"type": "json_object"}
        elif kind == "json_schema":
            spec = _keys(form, {"type", "name", "schema", "strict", "description"}, "text.format")
            if not isinstance(spec.get("schema"), dict):
                raise _bad("text.format.schema must be a JSON schema object", "text.format.schema")
            _string(spec.get("name"), "text.format.name")
            self.config["response_format"] = copy.deepcopy(spec)
        else:
            raise _bad("text.format.type must be text, json_object or json_schema", "text.format")

    # --- input --------------------------------------------------------------------------------

    def _input(self, given: Any, *, has_previous: bool) -> None:
        if given is None:
            if not has_previous:
                raise _bad("input is required: a string or a list of items", "input")
            return
        if isinstance(given, str):
            self._add("user", {"type": "text.done", "text": given})
            return
        for index, item in enumerate(_list(given, "input")):
            param = f"input[{index}]"
            if not isinstance(item, dict):
                raise _bad(f"{param} must be an object", param)
            kind = item.get("type", "message" if "role" in item else None)
            if kind == "message":
                self._message(item, param)
            elif kind == "function_call":
                self._function_call(item, param)
            elif kind == "function_call_output":
                self._function_call_output(item, param)
            elif kind == "reasoning":
                self._reasoning_item(item, param)
            elif kind == "image_generation_call":
                self._image_call(item, param)
            elif kind in _HOSTED_ITEMS:
                self.ignore(f"input items of type {kind}")
            else:
                raise _bad(f"{param}: an input item of type {kind!r} cannot be served", param)

    def _add(self, role: str, item: Any) -> None:
        if not self.messages or self.messages[-1]["role"] != role:
            self.messages.append({"role": role, "content_items": []})  # type: ignore[typeddict-item]
        self.messages[-1]["content_items"].append(item)

    def _message(self, item: dict[str, Any], param: str) -> None:
        spec = _keys(item, {"type", "role", "content", "id", "status", "phase", "end_turn"}, param)
        if "end_turn" in spec:  # Codex's mark of a turn's last message: nothing to serve
            self.ignore("the end_turn of input messages")
        role = spec.get("role")
        content = spec.get("content")
        if not isinstance(content, str | list):
            raise _bad(f"{param}.content must be a string or an array of parts", f"{param}.content")
        if role in ("system", "developer"):
            self.system.append(self._system_text(content, param))
        elif role == "user":
            if "id" in spec or "status" in spec:
                self.ignore("the id and status of input messages")
            for part in self._user_parts(content, param):
                self._add("user", part)
        elif role == "assistant":
            self._assistant(spec, content, param)
        else:
            raise _bad(
                f"{param}.role must be user, assistant, system or developer", f"{param}.role"
            )

    def _system_text(self, content: str | list[Any], param: str) -> str:
        if isinstance(content, str):
            return content
        texts = []
        for index, part in enumerate(content):
            where = f"{param}.content[{index}]"
            spec = _keys(part, {"type", "text"}, where)
            if spec.get("type") != "input_text":
                raise _bad(f"{where}: a system or developer message holds text only", where)
            texts.append(_string(spec.get("text"), f"{where}.text"))
        return "\n".join(texts)

    def _user_parts(self, content: str | list[Any], param: str) -> Iterator[DoneItem]:
        if isinstance(content, str):
            yield {"type": "text.done", "text": content}
            return
        for index, part in enumerate(content):
            where = f"{param}.content[{index}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "input_text":
                spec = _keys(part, {"type", "text"}, where)
                yield {"type": "text.done", "text": _string(spec.get("text"), f"{where}.text")}
            elif kind == "input_image":
                yield {"type": "image_url.done", "image_url": self._image_url(part, where)}
            else:
                raise _bad(
                    f"{where}: a part of type {kind!r} cannot be served (input_text and "
                    "input_image can)",
                    where,
                )

    def _image_url(self, part: Any, param: str) -> str:
        spec = _keys(part, {"type", "image_url", "detail", "file_id"}, param)
        if "file_id" in spec:
            raise _bad(f"{param}.file_id: uploaded files are not served; send image_url", param)
        url = spec.get("image_url")
        try:
            url_kind(url)
        except InvalidMessageError as exc:
            raise _bad(f"{param}.image_url: {exc}", f"{param}.image_url") from None
        if spec.get("detail") not in (None, "auto"):
            self.ignore("the detail of input images")
        return str(url)

    # --- assistant items ---

    def _assistant(self, spec: dict[str, Any], content: str | list[Any], param: str) -> None:
        item_id = spec.get("id")
        sealed = _sealed_id(item_id, "msg_")
        base: dict[str, Any] | None = None
        if sealed is not None:
            base = self.opened(sealed, f"{param}.id")
        elif (native := _native_id(item_id)) is not None:
            base = {"id": native}
            if isinstance(spec.get("phase"), str):
                base["phase"] = spec["phase"]
        parts: list[tuple[str, bool]] = []
        if isinstance(content, str):
            parts.append((content, False))
        for index, part in enumerate(content if isinstance(content, list) else []):
            where = f"{param}.content[{index}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind in ("output_text", "input_text"):
                text = _keys(part, {"type", "text", "annotations", "logprobs"}, where).get("text")
                parts.append((_string(text, f"{where}.text"), False))
            elif kind == "refusal":
                text = _keys(part, {"type", "refusal"}, where).get("refusal")
                parts.append((_string(text, f"{where}.refusal"), True))
            else:
                raise _bad(f"{where}: an assistant part of type {kind!r} cannot be served", where)
        for text, refusal in parts:
            item: dict[str, Any] = {"type": "text.done", "text": text}
            fidelity = dict(base) if base is not None else {}
            if refusal and sealed is None:
                fidelity["refusal"] = True
            if fidelity:
                item["fidelity"] = fidelity
            self._add("assistant", item)

    def _reasoning_item(self, item: dict[str, Any], param: str) -> None:
        spec = _keys(
            item, {"type", "id", "summary", "content", "encrypted_content", "status"}, param
        )
        parts: list[tuple[str, str]] = []
        for index, part in enumerate(_list(spec.get("summary", []), f"{param}.summary")):
            where = f"{param}.summary[{index}]"
            entry = _keys(part, {"type", "text"}, where)
            if entry.get("type") != "summary_text":
                raise _bad(f"{where}: a summary part is summary_text", where)
            parts.append(("summary_text", _string(entry.get("text"), f"{where}.text")))
        for index, part in enumerate(_list(spec.get("content", []), f"{param}.content")):
            where = f"{param}.content[{index}]"
            entry = _keys(part, {"type", "text"}, where)
            if entry.get("type") not in ("reasoning_text", "text"):
                raise _bad(f"{where}: a reasoning content part is reasoning_text", where)
            parts.append(("reasoning_text", _string(entry.get("text"), f"{where}.text")))
        given = spec.get("encrypted_content")
        encrypted = None if given is None else _string(given, f"{param}.encrypted_content")
        if encrypted is not None and is_sealed(encrypted):  # the writer's: its whole fidelity
            fidelity = self.opened(encrypted, f"{param}.encrypted_content")
            thinking = "".join(text for _, text in parts)
            self._add(
                "assistant", {"type": "thinking.done", "thinking": thinking, "fidelity": fidelity}
            )
            return
        native = _native_id(spec.get("id"))
        base: dict[str, Any] = {"id": native} if native is not None else {}
        if not parts:  # encrypted only (or nothing): one empty thinking item
            fidelity = dict(base)
            if encrypted:
                fidelity["encrypted_content"] = encrypted
            self._thinking("", fidelity)
            return
        for position, (kind, text) in enumerate(parts):
            fidelity = {**base, "part": kind} if base or encrypted else {}
            if encrypted and position == len(parts) - 1:  # rides on the last part (decoder.py)
                fidelity["encrypted_content"] = encrypted
            self._thinking(text, fidelity)

    def _thinking(self, text: str, fidelity: dict[str, Any]) -> None:
        item: dict[str, Any] = {"type": "thinking.done", "thinking": text}
        if fidelity:
            item["fidelity"] = fidelity
        self._add("assistant", item)

    def _call_id(self, value: Any, param: str) -> tuple[str, dict[str, Any] | None]:
        call_id = _string(value, param)
        original, token = split_call_id(call_id)
        if token is None:
            return call_id, None
        return original, self.opened(token, param)

    def _function_call(self, item: dict[str, Any], param: str) -> None:
        spec = _keys(
            item, {"type", "id", "call_id", "name", "arguments", "status", "namespace"}, param
        )
        call_id, fidelity = self._call_id(spec.get("call_id"), f"{param}.call_id")
        if fidelity is None:
            native = _native_id(spec.get("id"))
            fidelity = {"id": native} if native is not None else None
        name = _string(spec.get("name"), f"{param}.name")
        namespace = spec.get("namespace")
        if namespace is not None:
            name = self._flat_name(name, _string(namespace, f"{param}.namespace"))
        raw = spec.get("arguments", "")
        _string(raw, f"{param}.arguments")
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            raise _bad(f"{param}.arguments must be a JSON object in a string", f"{param}.arguments")
        call: dict[str, Any] = {
            "type": "tool_call.done",
            "tool_call_id": call_id,
            "name": name,
            "arguments": arguments,
        }
        if fidelity:
            call["fidelity"] = fidelity
        self._add("assistant", call)

    def _function_call_output(self, item: dict[str, Any], param: str) -> None:
        spec = _keys(item, {"type", "id", "call_id", "output", "status"}, param)
        call_id, _ = self._call_id(spec.get("call_id"), f"{param}.call_id")
        output = spec.get("output")
        result: dict[str, Any] = {"type": "tool_result.done", "tool_call_id": call_id, "text": ""}
        if isinstance(output, str):
            result["text"] = output
        else:
            texts: list[str] = []
            images: list[str] = []
            for index, part in enumerate(_list(output, f"{param}.output")):
                where = f"{param}.output[{index}]"
                kind = part.get("type") if isinstance(part, dict) else None
                if kind in ("input_text", "output_text"):
                    text = _keys(part, {"type", "text", "annotations"}, where).get("text")
                    texts.append(_string(text, f"{where}.text"))
                elif kind == "input_image":
                    images.append(self._image_url(part, where))
                else:
                    raise _bad(
                        f"{where}: a tool output part of type {kind!r} cannot be served", where
                    )
            result["text"] = "\n".join(texts)
            if images:
                result["images"] = images
        self._add("user", result)

    def _image_call(self, item: dict[str, Any], param: str) -> None:
        spec = _keys(item, {"type", "id", "status", "result", "output_format"}, param)
        result = spec.get("result")
        data = decode_base64(result) if isinstance(result, str) else None
        if not data:
            raise _bad(f"{param}.result must hold the image as base64", f"{param}.result")
        output_format = spec.get("output_format")
        mime_type = (
            f"image/{output_format}" if isinstance(output_format, str) else _image_mime(data)
        )
        image: dict[str, Any] = {"type": "inline_data.done", "data": data, "mime_type": mime_type}
        item_id = spec.get("id")
        sealed = _sealed_id(item_id, "ig_")
        if sealed is not None:
            image["fidelity"] = self.opened(sealed, f"{param}.id")
        elif (native := _native_id(item_id)) is not None:
            image["fidelity"] = {"id": native}
        self._add("assistant", image)


def decode_request(body: Any, call: InboundCall, seal: FidelitySeal) -> InboundRequest:
    """A Responses request body → the SPEC request (module docstring)."""
    if not isinstance(body, dict):
        raise _bad("the request body must be a JSON object", None)
    request = _Decoder(body, seal).decode()
    if call.route.stream is not None and call.route.stream != request.stream:
        return InboundRequest(
            model=request.model,
            messages=request.messages,
            config=request.config,
            stream=call.route.stream,
            options=request.options,
            native_fields=request.native_fields,
            ignored=request.ignored,
        )
    return request


__all__ = ["decode_request", "split_call_id"]
