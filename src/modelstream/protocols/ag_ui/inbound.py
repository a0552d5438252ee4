"""An AG-UI run request (`RunAgentInput`, as `@ag-ui/client`'s `HttpAgent` posts it) as the SPEC
request.

    {"threadId", "runId", "messages": [Message, ...], "tools": [Tool, ...], "context": [...],
     "state", "forwardedProps": {"model": "<served model>", "config": {...}}, ...}

`forwardedProps` is where an AG-UI front-end passes its own values to the agent
(`agent.runAgent({forwardedProps: {model: "claude"}})`): `forwardedProps.model` names the
served model (required), `forwardedProps.config` is the SPEC config, checked as `/v1/stream`
checks it. Its other keys are the application's own: ignored and logged. `threadId` and
`runId` go to the writer (`options`), which echoes them in `RUN_STARTED` / `RUN_FINISHED`.

    system, developer   `content` joins the system prompt, in order, before
                        `config.system_prompt`
    context             after them, one `<description>: <value>` line per entry, under
                        "Context from the application:"
    user                a string, or parts: `text`; `image` by `url` source, or `data` source
                        (base64, made a `data:` URL)
    tool                consecutive `tool` messages are the `tool_result.done` items of one user
                        message (a user message right after them joins it); text parts are the
                        result's text, image parts its images; an `error` is appended as
                        `Error: <error>`
    assistant,          a run of them (no user or tool message between) is one assistant turn:
    reasoning           `reasoning` content is a thinking item, assistant `content` a text item,
                        `toolCalls` tool calls (arguments: a JSON object, as a string)
    activity            front-end widgets the model never saw: ignored
    tools               `config.tools` (name, description, parameters JSON schema)

Fidelity comes back in `encryptedValue` (the writer's sealed token, `fidelity_seal`): on a
reasoning message (its thinking item's), an assistant message (its text's) or a tool call (the
call's); an edited or foreign value is a 400. `state` is the front-end's own (nothing here reads
it): ignored and logged when not empty. `resume` answers interrupts this server never raises:
refused when not empty. Any other unknown field is refused, naming it.
"""

from __future__ import annotations

from typing import Any, NoReturn

from ...shapes import ShapeError, check_config
from ...tool_arguments import parse_strict
from ...types import Config, DoneItem, Message, ToolSchema
from ..common.fidelity_seal import FidelityForgedError, FidelitySeal
from ..common.gateway import InboundCall, InboundRequest, InboundRequestError

_INPUT_FIELDS = frozenset(
    {
        "threadId",
        "runId",
        "messages",
        "tools",
        "context",
        "state",
        "forwardedProps",
        "protocolVersion",  # the client's protocol version: every 1.x reads this stream
        "parentRunId",  # a run this one branches from: nothing here depends on it
        "resume",
    }
)
# per role, the message fields read (or, `name`, `metadata`, `subagentRunId`, harmlessly not)
_COMMON = frozenset({"id", "role", "name", "metadata", "subagentRunId"})
_MESSAGE_FIELDS = {
    "system": _COMMON | {"content"},
    "developer": _COMMON | {"content"},
    "user": _COMMON | {"content"},
    "assistant": _COMMON | {"content", "toolCalls", "encryptedValue"},
    "reasoning": _COMMON | {"content", "encryptedValue"},
    "tool": _COMMON | {"content", "toolCallId", "error"},
}
CONTEXT_HEADING = "Context from the application:"


def decode_request(body: Any, call: InboundCall, seal: FidelitySeal) -> InboundRequest:
    """A `RunAgentInput` body as the SPEC request (module docstring); the model is
    `forwardedProps.model`, the config `forwardedProps.config`."""
    del call  # the route says nothing the body does not
    if not isinstance(body, dict):
        raise InboundRequestError("the request body must be a JSON object (a RunAgentInput)")
    for key, value in body.items():
        if key not in _INPUT_FIELDS and value is not None:
            _refuse(key, "is not a RunAgentInput field the server serves")
    thread_id = _string(body.get("threadId"), "threadId")
    run_id = _string(body.get("runId"), "runId")
    for key in ("protocolVersion", "parentRunId"):
        if body.get(key) is not None and not isinstance(body[key], str):
            _refuse(key, "must be a string")
    if body.get("resume"):
        _refuse("resume", "answers interrupts, and this server never interrupts a run")
    ignored: list[str] = []
    if body.get("state") not in (None, {}, []):
        ignored.append("state")
    model, config, props_ignored = _forwarded_props(body.get("forwardedProps"))
    ignored += props_ignored
    tools = _tools(body.get("tools"))
    if tools:
        if "tools" in config:
            _refuse(
                "forwardedProps.config.tools",
                "is given as well as the run's tools: send the tools once, in tools",
            )
        config["tools"] = list(tools)
    history = _History(seal, ignored)
    messages = history.read(body.get("messages"))
    system = [*history.system]
    if config.get("system_prompt"):
        system.append(config["system_prompt"])
    context = _context(body.get("context"))
    if context:
        system.append(context)
    if system:
        config["system_prompt"] = "\n\n".join(system)
    return InboundRequest(
        model=model,
        messages=messages,
        config=config,
        stream=True,  # AG-UI only streams
        options={"thread_id": thread_id, "run_id": run_id},
        ignored=tuple(dict.fromkeys(ignored)),
    )


def _forwarded_props(props: Any) -> tuple[str, Config, list[str]]:
    """The model, the config and the ignored keys of `forwardedProps`."""
    if props is None:
        props = {}
    if not isinstance(props, dict):
        _refuse("forwardedProps", "must be an object: {model: '<served model>', config?: {...}}")
    model = props.get("model")
    if not isinstance(model, str) or not model:
        _refuse(
            "forwardedProps.model",
            "must name a served model: agent.runAgent({forwardedProps: {model: '...'}})",
        )
    config = props.get("config")
    if config is None:
        config = {}
    try:
        check_config(config, path="forwardedProps.config")
    except ShapeError as exc:
        raise InboundRequestError(str(exc), param=exc.path) from None
    ignored = [f"forwardedProps.{key}" for key in props if key not in ("model", "config")]
    return model, dict(config), ignored  # type: ignore[return-value]


def _tools(value: Any) -> list[ToolSchema]:
    if value is None:
        return []
    if not isinstance(value, list):
        _refuse("tools", "must be a list of tools {name, description, parameters}")
    tools: list[ToolSchema] = []
    for index, tool in enumerate(value):
        at = f"tools[{index}]"
        if not isinstance(tool, dict):
            _refuse(at, "must be an object {name, description, parameters}")
        _only_keys(tool, {"name", "description", "parameters", "metadata"}, at)
        schema: ToolSchema = {"name": _string(tool.get("name"), f"{at}.name")}
        description = tool.get("description")
        if description is not None and not isinstance(description, str):
            _refuse(f"{at}.description", "must be a string")
        if description:
            schema["description"] = description
        parameters = tool.get("parameters")
        if parameters is not None:
            if not isinstance(parameters, dict):
                _refuse(f"{at}.parameters", "must be a JSON schema object")
            schema["parameters"] = parameters
        tools.append(schema)
    return tools


def _context(value: Any) -> str:
    """The context entries as one system prompt block; "" when there are none."""
    if value is None:
        return ""
    if not isinstance(value, list):
        _refuse("context", "must be a list of {description, value}")
    lines: list[str] = []
    for index, entry in enumerate(value):
        at = f"context[{index}]"
        if not isinstance(entry, dict):
            _refuse(at, "must be an object {description, value}")
        _only_keys(entry, {"description", "value"}, at)
        description = _text(entry.get("description"), f"{at}.description")
        lines.append(f"{description}: {_text(entry.get('value'), f'{at}.value')}")
    return "\n".join([CONTEXT_HEADING, *lines]) if lines else ""


class _History:
    """The `messages` being read into SPEC messages (module docstring)."""

    def __init__(self, seal: FidelitySeal, ignored: list[str]) -> None:
        self.seal = seal
        self.ignored = ignored
        self.system: list[str] = []
        self.out: list[Message] = []
        self.results: list[DoneItem] = []  # tool results waiting for their user message
        self.turn: list[DoneItem] | None = None  # the open assistant turn's items

    def read(self, messages: Any) -> list[Message]:
        if not isinstance(messages, list):
            _refuse("messages", "must be a list of messages")
        for index, message in enumerate(messages):
            at = f"messages[{index}]"
            if not isinstance(message, dict):
                _refuse(at, "must be a message object {id, role, content}")
            role = message.get("role")
            if role == "activity":
                self.ignored.append("messages[].activity")
                continue
            if role not in _MESSAGE_FIELDS:
                _refuse(
                    f"{at}.role",
                    f"{role!r} is not a role: system, developer, user, assistant, reasoning, "
                    "tool or activity",
                )
            _only_keys(message, _MESSAGE_FIELDS[role], at)
            if message.get("id") is not None and not isinstance(message["id"], str):
                _refuse(f"{at}.id", "must be a string")
            if role in ("system", "developer"):
                self.system.append(_text(message.get("content"), f"{at}.content"))
            elif role == "user":
                self._user(message, at)
            elif role == "tool":
                self._tool(message, at)
            elif role == "reasoning":
                self._reasoning(message, at)
            else:
                self._assistant(message, at)
        self._end_turn()
        self._flush_results()
        return self.out

    # --- the caller's side ---------------------------------------------------------------

    def _user(self, message: dict[str, Any], at: str) -> None:
        self._end_turn()
        content = message.get("content")
        items: list[DoneItem] = []
        if isinstance(content, str):
            items.append({"type": "text.done", "text": content})
        elif isinstance(content, list):
            for n, part in enumerate(content):
                where = f"{at}.content[{n}]"
                kind = _part_kind(part, where)
                if kind == "text":
                    items.append({"type": "text.done", "text": _part_text(part, where)})
                elif kind == "image":
                    items.append({"type": "image_url.done", "image_url": _image_url(part, where)})
                else:
                    _refuse(f"{where}.type", f"{kind!r} parts are not served: send text or images")
        else:
            _refuse(f"{at}.content", "must be a string or a list of parts")
        results, self.results = self.results, []
        self.out.append({"role": "user", "content_items": [*results, *items]})

    def _tool(self, message: dict[str, Any], at: str) -> None:
        self._end_turn()
        call_id = _string(message.get("toolCallId"), f"{at}.toolCallId")
        content = message.get("content")
        texts: list[str] = []
        images: list[str] = []
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for n, part in enumerate(content):
                where = f"{at}.content[{n}]"
                kind = _part_kind(part, where)
                if kind == "text":
                    texts.append(_part_text(part, where))
                elif kind == "image":
                    images.append(_image_url(part, where))
                else:
                    _refuse(f"{where}.type", f"{kind!r} parts are not served: send text or images")
        else:
            _refuse(f"{at}.content", "must be a string or a list of parts")
        error = message.get("error")
        if error is not None:
            error = _text(error, f"{at}.error")
            if error:
                texts.append(f"\n\nError: {error}" if "".join(texts) else f"Error: {error}")
        result: dict[str, Any] = {
            "type": "tool_result.done",
            "tool_call_id": call_id,
            "text": "".join(texts),
        }
        if images:
            result["images"] = images
        self.results.append(result)  # type: ignore[arg-type]

    def _flush_results(self) -> None:
        if self.results:
            self.out.append({"role": "user", "content_items": self.results})
            self.results = []

    # --- the model's side ----------------------------------------------------------------

    def _open_turn(self) -> list[DoneItem]:
        if self.turn is None:
            self._flush_results()
            self.turn = []
        return self.turn

    def _end_turn(self) -> None:
        if self.turn:  # a turn with nothing in it has nothing to replay
            self.out.append({"role": "assistant", "content_items": self.turn})
        self.turn = None

    def _reasoning(self, message: dict[str, Any], at: str) -> None:
        item: dict[str, Any] = {
            "type": "thinking.done",
            "thinking": _text(message.get("content"), f"{at}.content"),
        }
        fidelity = self._fidelity(message.get("encryptedValue"), f"{at}.encryptedValue")
        if fidelity is not None:
            item["fidelity"] = fidelity
        if item["thinking"] or fidelity is not None:
            self._open_turn().append(item)  # type: ignore[arg-type]

    def _assistant(self, message: dict[str, Any], at: str) -> None:
        turn = self._open_turn()
        content = message.get("content")
        text = "" if content is None else _text(content, f"{at}.content")
        fidelity = self._fidelity(message.get("encryptedValue"), f"{at}.encryptedValue")
        if text or fidelity is not None:
            item: dict[str, Any] = {"type": "text.done", "text": text}
            if fidelity is not None:
                item["fidelity"] = fidelity
            turn.append(item)  # type: ignore[arg-type]
        calls = message.get("toolCalls")
        if calls is None:
            return
        if not isinstance(calls, list):
            _refuse(f"{at}.toolCalls", "must be a list of tool calls")
        for n, call in enumerate(calls):
            turn.append(self._tool_call(call, f"{at}.toolCalls[{n}]"))

    def _tool_call(self, call: Any, at: str) -> DoneItem:
        if not isinstance(call, dict):
            _refuse(at, "must be a tool call {id, type: function, function: {name, arguments}}")
        _only_keys(call, {"id", "type", "function", "encryptedValue", "metadata"}, at)
        if call.get("type", "function") != "function":
            _refuse(f"{at}.type", "must be 'function'")
        function = call.get("function")
        if not isinstance(function, dict):
            _refuse(f"{at}.function", "must be an object {name, arguments}")
        _only_keys(function, {"name", "arguments"}, f"{at}.function")
        raw = function.get("arguments")
        if not isinstance(raw, str | None):
            _refuse(f"{at}.function.arguments", "must be a JSON object, as a string")
        arguments, why = parse_strict(raw or "")
        if arguments is None:
            _refuse(f"{at}.function.arguments", f"must be a JSON object, as a string: {why}")
        item: dict[str, Any] = {
            "type": "tool_call.done",
            "tool_call_id": _string(call.get("id"), f"{at}.id"),
            "name": _string(function.get("name"), f"{at}.function.name"),
            "arguments": arguments,
        }
        fidelity = self._fidelity(call.get("encryptedValue"), f"{at}.encryptedValue")
        if fidelity is not None:
            item["fidelity"] = fidelity
        return item  # type: ignore[return-value]

    def _fidelity(self, value: Any, at: str) -> dict[str, Any] | None:
        """The fidelity the writer sealed into an `encryptedValue`; None when there is none."""
        if value is None:
            return None
        if not isinstance(value, str):
            _refuse(at, "must be a string")
        try:
            return self.seal.open(value)
        except FidelityForgedError as exc:
            raise InboundRequestError(f"{at}: {exc}", param=at) from None


# --- parts and values -------------------------------------------------------------------------


def _part_kind(part: Any, at: str) -> str:
    kind = part.get("type") if isinstance(part, dict) else None
    if not isinstance(kind, str):
        _refuse(at, "must be a content part {type, ...}")
    return kind


def _part_text(part: dict[str, Any], at: str) -> str:
    _only_keys(part, {"type", "id", "text", "metadata"}, at)
    return _text(part.get("text"), f"{at}.text")


def _image_url(part: dict[str, Any], at: str) -> str:
    """An image part's source as the SPEC image item's URL."""
    _only_keys(part, {"type", "id", "source", "metadata"}, at)
    source = part.get("source")
    if not isinstance(source, dict):
        _refuse(f"{at}.source", "must be {type: url, value} or {type: data, value, mimeType}")
    kind, value, mime = source.get("type"), source.get("value"), source.get("mimeType")
    if kind == "url":
        url = value if isinstance(value, str) else ""
        if not url[:8].lower().startswith(("http://", "https://", "data:")):
            _refuse(f"{at}.source.value", "must be an http(s) or data: URL")
        return url
    if kind == "data":
        if not isinstance(mime, str) or not mime.startswith("image/"):
            _refuse(f"{at}.source.mimeType", "must be an image type (image/png, ...)")
        if not isinstance(value, str) or not value:
            _refuse(f"{at}.source.value", "must be the image's bytes, base64")
        return f"data:{mime};base64,{value}"
    if kind == "file":
        _refuse(
            f"{at}.source",
            "names a provider's file handle, which the server cannot resolve: send a url or data",
        )
    _refuse(f"{at}.source", "must be {type: url, value} or {type: data, value, mimeType}")


def _refuse(param: str, what: str) -> NoReturn:
    """A 400 naming the field: `<param> <what>` reads as one sentence."""
    raise InboundRequestError(f"{param} {what}", param=param)


def _only_keys(value: dict[str, Any], known: set[str] | frozenset[str], at: str) -> None:
    """Refuse a field not in `known`; a null one asks for nothing and passes."""
    for key, setting in value.items():
        if key not in known and setting is not None:
            _refuse(f"{at}.{key}", "is not a field the server serves here")


def _string(value: Any, at: str) -> str:
    if not isinstance(value, str) or not value:
        _refuse(at, "is required: a non-empty string")
    return value


def _text(value: Any, at: str) -> str:
    if not isinstance(value, str):
        _refuse(at, "must be a string")
    return value


__all__ = ["CONTEXT_HEADING", "decode_request"]
