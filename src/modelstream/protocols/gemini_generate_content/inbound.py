"""Gemini generateContent requests as the SPEC request (the gateway's inbound decoder).

The inverse of `encoder.py`. Field names are read in camelCase and in snake_case (protobuf JSON
takes both, and google-genai sends a mix: `inlineData` beside `mime_type`); free-form values
(`args`, `response`, `parametersJsonSchema`) are kept as they are. A field this module does not
know is a 400 naming it; the full table is in docs/gateway.md.

  contents                    messages: role `user` (or `function`) → user, `model` → assistant;
                              consecutive contents of one role are one message (google-genai's
                              chat history holds one model content per streamed chunk)
  systemInstruction           system_prompt (its text parts joined by newlines)
  tools[].functionDeclarations  tools: name, description, parametersJsonSchema as is, or
                              `parameters` (Gemini's OpenAPI schema) as JSON Schema
  tools[]: googleSearch, googleSearchRetrieval, urlContext, codeExecution
                              native: the request's `tools` go as sent to a Gemini upstream only
  toolConfig.functionCallingConfig  tool_choice: AUTO → auto, ANY → required (with
                              allowedFunctionNames → the names), NONE → none, VALIDATED → auto
                              with every tool strict (and the config native)
  generationConfig            max_tokens, temperature, top_p, stop, seed, response_format,
                              thinking_level / thinking_summary, image_output, speech_output;
                              topK native; candidateCount 1 only
  safetySettings, labels, model   ignored;  cachedContent: refused

Model turns are read back much as `decoder.py` reads a stream: consecutive parts of one kind
join one item, and a `thoughtSignature` rides on the item (a sealed one is opened into the
item's whole fidelity, a native one becomes `{"thought_signature": ...}` in the standard base64
alphabet, which google-genai turns URL-safe). Item boundaries follow the writer: a signature on
a non-empty part begins an item (Gemini signs an answer's first part; the writer signs the one
part of an item that follows one of its kind), a signature on an empty part ends the open item
(Gemini 3 and the writer send it after the text). A functionCall without an id gets
`call_<n>` (numbered through the request, a name the encoders know as made up); a
functionResponse without one answers the first unanswered call of its name in the model turn
before it.
"""

from __future__ import annotations

import base64
import copy
import math
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

import orjson

from ...types import Config, Message, ThinkingLevel, ToolChoice, ToolSchema
from ..common.fidelity_seal import FidelityForgedError, FidelitySeal, is_sealed
from ..common.gateway import InboundCall, InboundRequest, InboundRequestError
from ..common.inline_media import decode_base64

VERSIONS = ("v1", "v1beta")
# a stream asked for without `alt=sse`: one JSON array, written element by element
JSON_ARRAY_CONTENT_TYPE = "application/json; charset=utf-8"

_REQUEST_FIELDS = (
    "contents",
    "systemInstruction",
    "tools",
    "toolConfig",
    "generationConfig",
    "safetySettings",
    "cachedContent",
    "labels",
    "model",
)
_GENERATION_FIELDS = (
    "maxOutputTokens",
    "temperature",
    "topP",
    "topK",
    "stopSequences",
    "seed",
    "candidateCount",
    "responseMimeType",
    "responseSchema",
    "responseJsonSchema",
    "thinkingConfig",
    "responseModalities",
    "imageConfig",
    "speechConfig",
)
_PART_FIELDS = (
    "text",
    "thought",
    "thoughtSignature",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
)
# Built-in tools a Gemini upstream runs itself (their side output, groundingMetadata and code
# parts, is not relayed); other built-ins are refused.
_NATIVE_TOOLS = ("googleSearch", "googleSearchRetrieval", "urlContext", "codeExecution")
_REFUSED_TOOLS = (
    "fileSearch",
    "googleMaps",
    "computerUse",
    "retrieval",
    "enterpriseWebSearch",
    "mcpServers",
)
_SCHEMA_FIELDS = (
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
)
_SCHEMA_COUNTS = frozenset(
    {"maxItems", "minItems", "minProperties", "maxProperties", "minLength", "maxLength"}
)
_THINKING_LEVELS: dict[str, ThinkingLevel] = {
    "minimal": "none",
    "low": "low",
    "medium": "medium",
    "high": "high",
}
# A thinkingBudget goes to the level whose Gemini 2.5 budget is nearest (on a log scale): the
# inverse of the encoder's tables (0 is "none"; -1, dynamic, leaves the level unset).
_BUDGET_LEVELS: tuple[tuple[int, ThinkingLevel], ...] = (
    (1024, "low"),
    (8192, "medium"),
    (24576, "high"),
    (32768, "xhigh"),
)


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", r"_\1", name).lower()


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _error(path: str, message: str) -> InboundRequestError:
    return InboundRequestError(f"{path}: {message}" if path else message, param=path or None)


def _fields(value: Any, path: str, names: Iterable[str]) -> dict[str, Any]:
    """A protobuf JSON object's fields by camelCase name (either spelling accepted); a null is
    an unset field; a field not in `names` is a 400 naming it."""
    if not isinstance(value, dict):
        raise _error(path, "must be a JSON object")
    known = {}
    for name in names:
        known[name] = name
        known[_snake(name)] = name
    out: dict[str, Any] = {}
    for key, field in value.items():
        found = known.get(key)
        if found is None:
            where = path or "the request"
            raise InboundRequestError(
                f'Unknown name "{key}" at {where}: this gateway does not accept it',
                param=_join(path, key),
            )
        name = found
        if name in out:
            raise _error(_join(path, name), f"given twice (as {name} and {_snake(name)})")
        if field is not None:
            out[name] = field
    return out


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _error(path, "must be a list")
    return value


def _string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _error(path, "must be a string")
    return value


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _error(path, "must be a number")
    return value


def _integer(value: Any, path: str) -> int:
    """An int (protobuf JSON also writes int64 as a string, and floats like 3.0 occur)."""
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        return int(value)
    number = _number(value, path)
    if number != int(number):
        raise _error(path, "must be an integer")
    return int(number)


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _error(path, "must be true or false")
    return value


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _error(path, "must be a JSON object")
    return value


def _enum(value: Any, path: str) -> str:
    return _string(value, path).upper()


def json_schema(schema: Any, path: str) -> dict[str, Any]:
    """Gemini's OpenAPI `Schema` as JSON Schema: types in lower case, `nullable` as a null
    type, `example` as `examples`; other keywords kept."""
    fields = _fields(schema, path, _SCHEMA_FIELDS)
    out: dict[str, Any] = {}
    for name, value in fields.items():
        where = _join(path, name)
        if name == "type":
            kind = _string(value, where).lower()
            if kind != "type_unspecified":
                out["type"] = kind
        elif name == "properties":
            properties = _object(value, where)
            out["properties"] = {
                key: json_schema(sub, f"{where}.{key}") for key, sub in properties.items()
            }
        elif name == "items":
            out["items"] = json_schema(value, where)
        elif name == "anyOf":
            out["anyOf"] = [
                json_schema(sub, f"{where}[{i}]") for i, sub in enumerate(_list(value, where))
            ]
        elif name == "example":
            out["examples"] = [copy.deepcopy(value)]
        elif name in _SCHEMA_COUNTS:
            out[name] = _integer(value, where)
        elif name != "nullable":
            out[name] = copy.deepcopy(value)
    if fields.get("nullable") is True:
        declared = out.get("type")
        if isinstance(declared, str):
            out["type"] = [declared, "null"]
        elif "anyOf" in out:
            out["anyOf"].append({"type": "null"})
    return out


def _standard_base64(text: str) -> str:
    """google-genai writes bytes back URL-safe: Gemini's signatures came in the standard
    alphabet, and go back exactly as they came."""
    if "-" in text or "_" in text:
        return text.replace("-", "+").replace("_", "/")
    return text


class _Turn:
    """The items of one message being read, with the run of parts still open."""

    def __init__(self, role: str) -> None:
        self.role = role
        self.items: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None  # the open text/thinking/audio item
        self.signed = False  # the open item carries a signature
        self.calls: list[list[Any]] = []  # [id, name, answered] of the turn's calls

    def close(self) -> None:
        self.open = None
        self.signed = False

    def add(self, item: dict[str, Any], *, keep_open: bool = False, signed: bool = False) -> None:
        self.items.append(item)
        self.open = item if keep_open else None
        self.signed = signed and keep_open


class _RequestReader:
    """Reads one GenerateContentRequest (module docstring); `ignored` and `native` collect the
    fields the answer does not map."""

    def __init__(self, seal: FidelitySeal) -> None:
        self.seal = seal
        self.config: Config = {}
        self.ignored: list[str] = []
        self.native: dict[str, Any] = {}
        self.messages: list[Message] = []
        self._calls_made = 0

    # --- the request ---------------------------------------------------------------------------

    def read(self, body: Any, path: str = "") -> None:
        if not isinstance(body, dict):
            raise InboundRequestError("the request body must be a JSON object")
        fields = _fields(body, path, _REQUEST_FIELDS)
        if "contents" not in fields:
            raise _error(_join(path, "contents"), "is required: the conversation to continue")
        for name in ("safetySettings", "labels", "model"):
            if name in fields:
                self.ignored.append(_join(path, name))
        if "cachedContent" in fields:
            raise _error(
                _join(path, "cachedContent"),
                "cached contents live in one Gemini project; this gateway cannot use them: "
                "send the contents themselves",
            )
        if "systemInstruction" in fields:
            self._system(fields["systemInstruction"], _join(path, "systemInstruction"))
        self._contents(fields["contents"], _join(path, "contents"))
        if "tools" in fields:
            self._tools(fields["tools"], _join(path, "tools"))
        if "toolConfig" in fields:
            self._tool_config(fields["toolConfig"], _join(path, "toolConfig"))
        if "generationConfig" in fields:
            self._generation(fields["generationConfig"], _join(path, "generationConfig"))

    def _system(self, value: Any, path: str) -> None:
        fields = _fields(value, path, ("role", "parts"))
        texts = []
        for i, part in enumerate(_list(fields.get("parts", []), _join(path, "parts"))):
            where = f"{path}.parts[{i}]"
            text = _fields(part, where, ("text",)).get("text")
            if text is None:
                raise _error(where, "a system instruction takes text parts only")
            texts.append(_string(text, _join(where, "text")))
        if texts:
            self.config["system_prompt"] = "\n".join(texts)

    # --- contents -----------------------------------------------------------------------------

    def _contents(self, value: Any, path: str) -> None:
        contents = _list(value, path)
        if not contents:
            raise _error(path, "must hold at least one Content")
        turns: list[_Turn] = []
        previous_calls: list[list[Any]] = []
        for i, content in enumerate(contents):
            where = f"{path}[{i}]"
            fields = _fields(content, where, ("role", "parts"))
            role = fields.get("role") or "user"
            if role not in ("user", "model", "function"):
                raise _error(_join(where, "role"), f"must be 'user' or 'model', got {role!r}")
            role = "assistant" if role == "model" else "user"
            if not turns or turns[-1].role != role:
                if turns and turns[-1].role == "assistant":
                    previous_calls = turns[-1].calls
                turns.append(_Turn(role))
            turn = turns[-1]
            for j, part in enumerate(_list(fields.get("parts", []), _join(where, "parts"))):
                part_path = f"{where}.parts[{j}]"
                if role == "assistant":
                    self._model_part(turn, part, part_path)
                else:
                    self._user_part(turn, part, part_path, previous_calls)
        for turn in turns:
            if not turn.items:
                continue  # google-genai records an empty model turn for an empty answer
            if self.messages and self.messages[-1]["role"] == turn.role:
                self.messages[-1]["content_items"].extend(turn.items)  # type: ignore[arg-type]
                continue
            message: Message = {"role": turn.role, "content_items": turn.items}  # type: ignore[typeddict-item]
            self.messages.append(message)
        if not self.messages:
            raise _error(path, "holds no part with content")

    def _signature(self, value: Any, path: str) -> dict[str, Any] | None:
        """The fidelity a thoughtSignature stands for (module docstring)."""
        signature = _string(value, path)
        if not signature:
            return None
        if is_sealed(signature):
            try:
                fidelity = self.seal.open(signature)
            except FidelityForgedError as exc:
                raise InboundRequestError(f"{path} was altered: {exc}", param=path) from None
            return fidelity or None
        return {"thought_signature": _standard_base64(signature)}

    def _model_part(self, turn: _Turn, part: Any, path: str) -> None:
        fields = _fields(part, path, _PART_FIELDS)
        signed = bool(fields.get("thoughtSignature"))
        fidelity = (
            self._signature(fields["thoughtSignature"], _join(path, "thoughtSignature"))
            if signed
            else None
        )
        thought = _bool(fields.get("thought", False), _join(path, "thought"))
        data = [name for name in fields if name not in ("thought", "thoughtSignature")]
        if len(data) > 1:
            raise _error(path, f"a part holds one of its data fields, got {', '.join(data)}")
        kind = data[0] if data else "text"  # a part that is only a signature: an empty text
        if kind == "text":
            name = "thinking" if thought else "text"
            text = _string(fields.get("text", ""), _join(path, "text"))
            self._model_text(turn, name, text, fidelity, signed)
        elif kind == "functionCall":
            self._function_call(turn, fields["functionCall"], fidelity, _join(path, kind))
        elif kind == "inlineData":
            self._model_blob(turn, fields["inlineData"], thought, fidelity, signed, path)
        else:
            raise _error(_join(path, kind), "a model turn cannot hold it")

    def _model_text(
        self,
        turn: _Turn,
        kind: str,
        text: str,
        fidelity: dict[str, Any] | None,
        signed: bool,
    ) -> None:
        open_item = turn.open
        same = open_item is not None and open_item["type"] == f"{kind}.done"
        if not text:
            if not signed:
                return  # an empty part opens nothing and ends nothing
            if open_item is not None and same and not turn.signed:
                _set_fidelity(open_item, fidelity)  # the signature after the text (Gemini 3)
                turn.close()
                return
            turn.add(_set_fidelity({"type": f"{kind}.done", kind: ""}, fidelity))
            return
        if open_item is not None and same and not signed:
            open_item[kind] += text
            return
        turn.add(
            _set_fidelity({"type": f"{kind}.done", kind: text}, fidelity),
            keep_open=True,
            signed=signed,
        )

    def _function_call(
        self, turn: _Turn, value: Any, fidelity: dict[str, Any] | None, path: str
    ) -> None:
        fields = _fields(value, path, ("name", "args", "id"))
        name = _string(fields.get("name"), _join(path, "name"))
        if not name:
            raise _error(_join(path, "name"), "must name the function")
        args = _object(fields.get("args", {}), _join(path, "args"))
        call_id = _string(fields.get("id", ""), _join(path, "id"))
        if not call_id:
            self._calls_made += 1
            call_id = f"call_{self._calls_made}"
        item: dict[str, Any] = {
            "type": "tool_call.done",
            "tool_call_id": call_id,
            "name": name,
            "arguments": copy.deepcopy(args),
        }
        turn.add(_set_fidelity(item, fidelity))
        turn.calls.append([call_id, name, False])

    def _model_blob(
        self,
        turn: _Turn,
        value: Any,
        thought: bool,
        fidelity: dict[str, Any] | None,
        signed: bool,
        path: str,
    ) -> None:
        mime, data = self._blob(value, _join(path, "inlineData"))
        if thought:
            item = {"type": "inline_thinking.done", "data": data, "mime_type": mime}
            turn.add(_set_fidelity(item, fidelity))
            return
        open_item = turn.open
        audio = mime.startswith("audio/")
        joins = (
            audio
            and open_item is not None
            and open_item["type"] == "inline_data.done"
            and open_item["mime_type"] == mime
            and not (signed and turn.signed)
        )
        if joins and open_item is not None:  # audio chunks of one clip join (decoder.py)
            open_item["data"] += data
            if fidelity:
                _set_fidelity(open_item, fidelity)
            turn.signed = turn.signed or signed
            return
        item = {"type": "inline_data.done", "data": data, "mime_type": mime}
        turn.add(_set_fidelity(item, fidelity), keep_open=audio, signed=signed)

    def _blob(self, value: Any, path: str) -> tuple[str, bytes]:
        fields = _fields(value, path, ("mimeType", "data"))
        mime = _string(fields.get("mimeType"), _join(path, "mimeType"))
        encoded = _string(fields.get("data", ""), _join(path, "data"))
        data = decode_base64(encoded)
        if data is None or not mime:
            raise _error(path, "needs a mimeType and base64 data")
        return mime, data

    def _user_part(
        self, turn: _Turn, part: Any, path: str, previous_calls: list[list[Any]]
    ) -> None:
        fields = _fields(part, path, _PART_FIELDS)
        for name in ("thought", "thoughtSignature"):
            if name in fields:
                raise _error(_join(path, name), "only a model turn's parts carry it")
        data = list(fields)
        if len(data) > 1:
            raise _error(path, f"a part holds one of its data fields, got {', '.join(data)}")
        if not data:
            return
        kind = data[0]
        where = _join(path, kind)
        if kind == "text":
            text = _string(fields["text"], where)
            if text:
                turn.add({"type": "text.done", "text": text})
        elif kind == "inlineData":
            mime, payload = self._blob(fields["inlineData"], where)
            turn.add(_media_item(mime, payload))
        elif kind == "fileData":
            turn.add({"type": "image_url.done", "image_url": _file_url(fields["fileData"], where)})
        elif kind == "functionResponse":
            turn.add(self._function_response(fields["functionResponse"], where, previous_calls))
        else:
            raise _error(where, "a user turn cannot hold it")

    def _function_response(
        self, value: Any, path: str, previous_calls: list[list[Any]]
    ) -> dict[str, Any]:
        fields = _fields(value, path, ("name", "response", "id", "parts"))
        name = _string(fields.get("name", ""), _join(path, "name"))
        response = _object(fields.get("response", {}), _join(path, "response"))
        call_id = _string(fields.get("id", ""), _join(path, "id"))
        if call_id:
            for call in previous_calls:
                if call[0] == call_id:
                    call[2] = True
                    break
        else:
            answered = next((c for c in previous_calls if c[1] == name and not c[2]), None)
            if answered is None:
                raise _error(
                    path,
                    f"answers no functionCall named {name!r} in the model turn before it; "
                    "give the call's id",
                )
            answered[2] = True
            call_id = answered[0]
        if set(response) == {"result"}:
            result = response["result"]
            text = result if isinstance(result, str) else orjson.dumps(result).decode()
        else:
            text = orjson.dumps(response).decode()
        item: dict[str, Any] = {"type": "tool_result.done", "tool_call_id": call_id, "text": text}
        images = []
        parts_path = _join(path, "parts")
        for i, part in enumerate(_list(fields.get("parts", []), parts_path)):
            where = f"{parts_path}[{i}]"
            part_fields = _fields(part, where, ("inlineData", "fileData"))
            if "inlineData" in part_fields:
                mime, payload = self._blob(part_fields["inlineData"], _join(where, "inlineData"))
                images.append(_data_url(mime, payload))
            elif "fileData" in part_fields:
                images.append(_file_url(part_fields["fileData"], _join(where, "fileData")))
        if images:
            item["images"] = images
        return item

    # --- tools ---------------------------------------------------------------------------------

    def _tools(self, value: Any, path: str) -> None:
        tools: list[ToolSchema] = []
        native = False
        for i, tool in enumerate(_list(value, path)):
            where = f"{path}[{i}]"
            fields = _fields(tool, where, ("functionDeclarations", *_NATIVE_TOOLS, *_REFUSED_TOOLS))
            for name in fields:
                if name in _REFUSED_TOOLS:
                    raise _error(
                        _join(where, name),
                        "this gateway cannot serve Gemini's built-in tool "
                        f"{name}; declare functions instead",
                    )
                if name in _NATIVE_TOOLS:
                    native = True
            declarations = fields.get("functionDeclarations", [])
            decl_path = _join(where, "functionDeclarations")
            for j, declaration in enumerate(_list(declarations, decl_path)):
                tools.append(self._declaration(declaration, f"{decl_path}[{j}]"))
        if tools:
            self.config["tools"] = list(tools)
        if native:  # a Gemini upstream takes the tools as sent: built-ins and functions
            self.native["tools"] = copy.deepcopy(value)

    def _declaration(self, value: Any, path: str) -> ToolSchema:
        fields = _fields(
            value,
            path,
            (
                "name",
                "description",
                "parameters",
                "parametersJsonSchema",
                "response",
                "responseJsonSchema",
            ),
        )
        name = _string(fields.get("name"), _join(path, "name"))
        tool: ToolSchema = {"name": name}
        if fields.get("description"):
            tool["description"] = _string(fields["description"], _join(path, "description"))
        if "parameters" in fields and "parametersJsonSchema" in fields:
            raise _error(path, "give parameters or parametersJsonSchema, not both")
        if "parametersJsonSchema" in fields:
            schema = _object(fields["parametersJsonSchema"], _join(path, "parametersJsonSchema"))
            tool["parameters"] = copy.deepcopy(schema)
        elif "parameters" in fields:
            tool["parameters"] = json_schema(fields["parameters"], _join(path, "parameters"))
        for name in ("response", "responseJsonSchema"):
            if name in fields:  # what the function returns: no config key says it
                self.ignored.append(_join(path, name))
        return tool

    def _tool_config(self, value: Any, path: str) -> None:
        fields = _fields(value, path, ("functionCallingConfig",))
        if "functionCallingConfig" not in fields:
            return
        where = _join(path, "functionCallingConfig")
        config = _fields(fields["functionCallingConfig"], where, ("mode", "allowedFunctionNames"))
        mode = _enum(config.get("mode", "MODE_UNSPECIFIED"), _join(where, "mode"))
        names_path = _join(where, "allowedFunctionNames")
        names = [
            _string(name, f"{names_path}[{i}]")
            for i, name in enumerate(_list(config.get("allowedFunctionNames", []), names_path))
        ]
        if names and mode != "ANY":
            raise _error(names_path, "is taken with mode ANY only")
        choice: ToolChoice
        if mode in ("MODE_UNSPECIFIED", "AUTO"):
            if mode == "MODE_UNSPECIFIED":
                return
            choice = "auto"
        elif mode == "ANY":
            choice = list(dict.fromkeys(names)) if names else "required"
        elif mode == "NONE":
            choice = "none"
        elif mode == "VALIDATED":
            # calls or text, with calls held to their schemas: auto with strict tools
            choice = "auto"
            for tool in self.config.get("tools", []):
                if isinstance(tool, dict):
                    tool["strict"] = True
            self.native["toolConfig"] = copy.deepcopy(value)
        else:
            raise _error(_join(where, "mode"), f"{mode!r} is not AUTO, ANY, NONE or VALIDATED")
        self.config["tool_choice"] = choice

    # --- generationConfig ----------------------------------------------------------------------

    def _generation(self, value: Any, path: str) -> None:
        fields = _fields(value, path, _GENERATION_FIELDS)
        config = self.config

        def at(name: str) -> str:
            return _join(path, name)

        if "maxOutputTokens" in fields:
            config["max_tokens"] = _integer(fields["maxOutputTokens"], at("maxOutputTokens"))
        if "temperature" in fields:
            config["temperature"] = _number(fields["temperature"], at("temperature"))
        if "topP" in fields:
            config["top_p"] = _number(fields["topP"], at("topP"))
        if "topK" in fields:  # no config key: a Gemini upstream takes it as sent
            top_k = _number(fields["topK"], at("topK"))
            self.native.setdefault("generationConfig", {})["topK"] = top_k
        if "seed" in fields:
            config["seed"] = _integer(fields["seed"], at("seed"))
        if "stopSequences" in fields:
            stops = _list(fields["stopSequences"], at("stopSequences"))
            config["stop"] = [
                _string(s, f"{at('stopSequences')}[{i}]") for i, s in enumerate(stops)
            ]
        count = fields.get("candidateCount", 1)
        if _integer(count, at("candidateCount")) != 1:
            raise _error(at("candidateCount"), "this gateway answers with one candidate only")
        self._response_format(fields, path)
        if "thinkingConfig" in fields:
            self._thinking(fields["thinkingConfig"], at("thinkingConfig"))
        self._modalities(fields, path)

    def _response_format(self, fields: dict[str, Any], path: str) -> None:
        mime = fields.get("responseMimeType")
        if mime is not None:
            mime = _string(mime, _join(path, "responseMimeType")).lower()
        schema: dict[str, Any] | None = None
        if "responseSchema" in fields and "responseJsonSchema" in fields:
            raise _error(path, "give responseSchema or responseJsonSchema, not both")
        if "responseJsonSchema" in fields:
            where = _join(path, "responseJsonSchema")
            schema = copy.deepcopy(_object(fields["responseJsonSchema"], where))
        elif "responseSchema" in fields:
            schema = json_schema(fields["responseSchema"], _join(path, "responseSchema"))
        if mime in (None, "", "text/plain"):
            if schema is not None:
                raise _error(
                    _join(path, "responseMimeType"),
                    "a response schema needs responseMimeType application/json",
                )
            return
        if mime != "application/json":
            raise _error(
                _join(path, "responseMimeType"),
                f"{mime!r} cannot be served here: use text/plain or application/json",
            )
        if schema is None:
            self.config["response_format"] = {"type": "json_object"}
        else:
            self.config["response_format"] = {
                "type": "json_schema",
                "name": "response",
                "schema": schema,
            }

    def _thinking(self, value: Any, path: str) -> None:
        fields = _fields(value, path, ("thinkingBudget", "thinkingLevel", "includeThoughts"))
        if "includeThoughts" in fields:
            where = _join(path, "includeThoughts")
            self.config["thinking_summary"] = _bool(fields["includeThoughts"], where)
        if "thinkingBudget" in fields and "thinkingLevel" in fields:
            raise _error(path, "give thinkingBudget or thinkingLevel, not both")
        if "thinkingLevel" in fields:
            where = _join(path, "thinkingLevel")
            level = _string(fields["thinkingLevel"], where).lower()
            if level == "thinking_level_unspecified":
                return
            if level not in _THINKING_LEVELS:
                raise _error(where, f"{level!r} is not MINIMAL, LOW, MEDIUM or HIGH")
            self.config["thinking_level"] = _THINKING_LEVELS[level]
        elif "thinkingBudget" in fields:
            budget = _integer(fields["thinkingBudget"], _join(path, "thinkingBudget"))
            if budget < -1:
                raise _error(_join(path, "thinkingBudget"), "must be -1 (dynamic), 0 or more")
            if budget == 0:
                self.config["thinking_level"] = "none"
            elif budget > 0:
                self.config["thinking_level"] = min(
                    _BUDGET_LEVELS, key=lambda entry: abs(math.log(budget / entry[0]))
                )[1]

    def _modalities(self, fields: dict[str, Any], path: str) -> None:
        where = _join(path, "responseModalities")
        modalities = {
            _enum(m, f"{where}[{i}]")
            for i, m in enumerate(_list(fields.get("responseModalities", []), where))
        }
        modalities.discard("MODALITY_UNSPECIFIED")
        unknown = modalities - {"TEXT", "IMAGE", "AUDIO"}
        if unknown:
            raise _error(where, f"{', '.join(sorted(unknown))} cannot be served here")
        image = "IMAGE" in modalities or "imageConfig" in fields
        speech = "AUDIO" in modalities or "speechConfig" in fields
        if image and speech:
            raise _error(where, "a turn answers with images or with speech, not both")
        if image:
            self.config["image_output"] = True
            if "imageConfig" in fields:
                config_path = _join(path, "imageConfig")
                image_config = _fields(
                    fields["imageConfig"], config_path, ("aspectRatio", "imageSize")
                )
                settings: dict[str, str] = {}
                for name, key in (("aspectRatio", "aspect_ratio"), ("imageSize", "size")):
                    if name in image_config:
                        settings[key] = _string(image_config[name], _join(config_path, name))
                if settings:
                    self.config["image_output"] = settings  # type: ignore[typeddict-item]
        if speech:
            self.config["speech_output"] = True
            if "speechConfig" in fields:
                speech_settings = _speech(fields["speechConfig"], _join(path, "speechConfig"))
                if speech_settings:
                    self.config["speech_output"] = speech_settings  # type: ignore[typeddict-item]


def _speech(value: Any, path: str) -> dict[str, Any]:
    fields = _fields(value, path, ("voiceConfig", "multiSpeakerVoiceConfig", "languageCode"))
    out: dict[str, Any] = {}
    if "voiceConfig" in fields:
        out["voice"] = _voice(fields["voiceConfig"], _join(path, "voiceConfig"))
    if "multiSpeakerVoiceConfig" in fields:
        where = _join(path, "multiSpeakerVoiceConfig")
        multi = _fields(fields["multiSpeakerVoiceConfig"], where, ("speakerVoiceConfigs",))
        speakers: dict[str, str] = {}
        configs_path = _join(where, "speakerVoiceConfigs")
        for i, entry in enumerate(_list(multi.get("speakerVoiceConfigs", []), configs_path)):
            entry_path = f"{configs_path}[{i}]"
            speaker = _fields(entry, entry_path, ("speaker", "voiceConfig"))
            name = _string(speaker.get("speaker"), _join(entry_path, "speaker"))
            voice_path = _join(entry_path, "voiceConfig")
            speakers[name] = _voice(speaker.get("voiceConfig"), voice_path)
        if speakers:
            out["speakers"] = speakers
    if "languageCode" in fields:
        out["language"] = _string(fields["languageCode"], _join(path, "languageCode"))
    return out


def _voice(value: Any, path: str) -> str:
    fields = _fields(value, path, ("prebuiltVoiceConfig",))
    where = _join(path, "prebuiltVoiceConfig")
    prebuilt = _fields(fields.get("prebuiltVoiceConfig"), where, ("voiceName",))
    return _string(prebuilt.get("voiceName"), _join(where, "voiceName"))


def _set_fidelity(item: dict[str, Any], fidelity: dict[str, Any] | None) -> dict[str, Any]:
    if fidelity:
        item["fidelity"] = fidelity
    return item


def _data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def _media_item(mime: str, data: bytes) -> dict[str, Any]:
    """A user's inline image as an image URL (a data: URL); other media as inline data."""
    if mime.lower().startswith("image/"):
        return {"type": "image_url.done", "image_url": _data_url(mime, data)}
    return {"type": "inline_data.done", "data": data, "mime_type": mime}


def _file_url(value: Any, path: str) -> str:
    fields = _fields(value, path, ("fileUri", "mimeType"))
    uri = _string(fields.get("fileUri"), _join(path, "fileUri"))
    if not uri.lower().startswith(("http://", "https://")):
        raise _error(
            _join(path, "fileUri"),
            "this gateway takes http(s) URLs only (it never reads files or buckets)",
        )
    return uri


# --- the entry points ---------------------------------------------------------------------------


def _model(call: InboundCall) -> str:
    version = call.path_params.get("version")
    if version not in VERSIONS:
        raise InboundRequestError(
            f"API version {version!r} is not served: use v1beta or v1", status=404
        )
    model = unquote(call.path_params.get("model") or "")
    if model.startswith("models/"):
        model = model[len("models/") :]
    if not model:
        raise InboundRequestError("the path names no model", param="model")
    return model


def decode_request(body: Any, call: InboundCall, seal: FidelitySeal) -> InboundRequest:
    """A generateContent / streamGenerateContent / countTokens body as the SPEC request."""
    model = _model(call)
    reader = _RequestReader(seal)
    if call.route.kind == "count_tokens":
        fields = _fields(body, "", ("contents", "generateContentRequest"))
        if ("contents" in fields) == ("generateContentRequest" in fields):
            raise InboundRequestError(
                "countTokens takes contents or generateContentRequest, one of them",
                param="contents",
            )
        if "contents" in fields:
            reader.read({"contents": fields["contents"]})
        else:
            reader.read(fields["generateContentRequest"], "generateContentRequest")
        return InboundRequest(
            model=model,
            messages=reader.messages,
            config=reader.config,
            stream=False,
            native_fields=reader.native,
            ignored=tuple(reader.ignored),
        )
    reader.read(body)
    stream = bool(call.route.stream)
    options: dict[str, Any] = {}
    if stream:
        alt = call.query.get("alt", "json").lower()
        if alt not in ("sse", "json"):
            raise InboundRequestError(f"alt={alt} is not served: use alt=sse", param="alt")
        options["alt"] = alt
    return InboundRequest(
        model=model,
        messages=reader.messages,
        config=reader.config,
        stream=stream,
        options=options,
        native_fields=reader.native,
        ignored=tuple(reader.ignored),
        content_type=None
        if options.get("alt", "sse") == "sse"
        else "application/json; charset=utf-8",
    )


__all__ = ["JSON_ARRAY_CONTENT_TYPE", "VERSIONS", "decode_request", "json_schema"]
