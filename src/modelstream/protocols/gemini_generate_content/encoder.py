"""Gemini generateContent request encoder (`/v1beta/models/{model}:streamGenerateContent?alt=sse`).

Config → body (the full tables are in docs/requests-anthropic-gemini.md):
  system_prompt        `systemInstruction.parts[0].text`
  max_tokens, temperature, top_p, stop, seed
                       `generationConfig`: maxOutputTokens, temperature, topP, stopSequences, seed
  tools                `tools[0].functionDeclarations[]` {name, description,
                       parametersJsonSchema}: the schema goes as plain JSON Schema, not
                       converted to the OpenAPI subset of `parameters`
  tool_choice          `toolConfig.functionCallingConfig`: AUTO / ANY / NONE; a list of names →
                       ANY + allowedFunctionNames; with no function declared, AUTO/NONE are
                       left out and the rest raise
  parallel_tool_calls  Gemini has no switch: true is its behaviour, false raises
  response_format      `generationConfig.responseMimeType: application/json` +
                       `responseJsonSchema` (JSON mode alone without a schema)
  thinking_level       `generationConfig.thinkingConfig`: `thinkingLevel` for Gemini 3 and later
                       (and names without a version), `thinkingBudget` for Gemini 2.5 (tables
                       below); Gemini 2.0 and 1.x cannot think: only "none" is accepted there
  thinking_summary     `thinkingConfig.includeThoughts`
  prompt_caching       accepted, nothing sent: Gemini caches repeated prefixes implicitly
  image_output         `generationConfig.responseModalities: [TEXT, IMAGE]` + `imageConfig`
                       {aspectRatio, imageSize} (Gemini image models)
  speech_output        `generationConfig.responseModalities: [AUDIO]` + `speechConfig`:
                       voice → prebuiltVoiceConfig, speakers → multiSpeakerVoiceConfig,
                       language → languageCode (Gemini TTS models); format is refused
  extra_body           merged last: objects key by key (e.g. generationConfig fields), None
                       removes a key, anything else replaces
  trace_id             not sent

Replay (SPEC §2 rule 6, §3): every item goes back as one part, so the `thoughtSignature` its
item came with (from whichever part of the item's run carried it) is on the item's first part:
thought text as `{text, thought: true}`, text, functionCall, inlineData.
Foreign fidelity (any key but `thought_signature`) is dropped, and thinking that carries it (from
another provider) is dropped with it; thinking with no fidelity at all is sent back as thought
text, as Gemini's own unsigned summaries came. A functionCall goes back with its `id` only when
Gemini gave one: an id the assembler made up (`call_<n>`, rule E) is not sent. Tool results are
`functionResponse` parts, named after their call (Gemini matches results by name), with the
result images as parts after them. On Gemini 3, whose validator rejects a function call of the
current turn without a signature, a model turn with function calls but no signature (history
from another provider, or built by hand) gets Google's documented placeholder signature on its
first call.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import re
from typing import Any, Literal
from urllib.parse import quote

from ...errors import InvalidMessageError, UnsupportedParameterError
from ...media import guess_media_type, parse_data_url, url_kind
from ...types import Config, Message, ThinkingLevel
from ..common.encoding import (
    ProviderRequest,
    check_messages,
    complete_tool_results,
    is_synthesized_tool_call_id,
    items_of,
    own_fidelity,
)
from ..common.options import (
    checked_tool_choice,
    image_output,
    merge_extra_body,
    read_config,
    response_format_spec,
    speech_output,
    stop_sequences,
    thinking_level,
    tool_choice_applies,
    tool_list,
)

PROTOCOL = "gemini-generate-content"

# Google's documented value for a function call Gemini did not sign (another model's history).
PLACEHOLDER_SIGNATURE = "skip_thought_signature_validator"

# thinking_level → thinkingLevel (Gemini 3 and later). Pro models cannot turn thinking off and
# have no "minimal"; Gemini 3 Pro (3.0) also has no "medium".
THINKING_LEVELS_GEMINI_3: dict[ThinkingLevel, str] = {
    "none": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
THINKING_LEVELS_GEMINI_3_PRO: dict[ThinkingLevel, str] = {
    **THINKING_LEVELS_GEMINI_3,
    "none": "low",
}
THINKING_LEVELS_GEMINI_3_0_PRO: dict[ThinkingLevel, str] = {
    **THINKING_LEVELS_GEMINI_3_PRO,
    "medium": "high",
}
# thinking_level → thinkingBudget (Gemini 2.5). Flash and Flash-Lite go to 24576 and can turn
# thinking off; Pro goes from 128 (it cannot turn thinking off) to 32768.
THINKING_BUDGETS_GEMINI_2_5: dict[ThinkingLevel, int] = {
    "none": 0,
    "low": 1024,
    "medium": 8192,
    "high": 24576,
    "xhigh": 24576,
    "max": 24576,
}
THINKING_BUDGETS_GEMINI_2_5_PRO: dict[ThinkingLevel, int] = {
    **THINKING_BUDGETS_GEMINI_2_5,
    "none": 128,
    "xhigh": 32768,
    "max": 32768,
}

_FIDELITY_KEYS = frozenset({"thought_signature"})
_GEMINI_VERSION = re.compile(r"gemini-(\d+)(?:\.(\d+))?")

ThinkingControl = Literal["level", "budget", "unsupported"]


class GeminiGenerateContentEncoder:
    protocol = PROTOCOL

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        check_messages(messages)
        if not messages:
            raise InvalidMessageError("a Gemini request needs at least one message")
        settings = read_config(config, PROTOCOL)
        history = complete_tool_results(messages)
        contents = _contents(history, placeholder=thinking_control(model) == "level")
        if not contents:
            raise InvalidMessageError("no message has content Gemini accepts")
        body: dict[str, Any] = {"contents": contents}

        system = settings.get("system_prompt")
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        generation = _generation_config(model, settings)
        if generation:
            body["generationConfig"] = generation
        _tools(body, settings)

        extra = settings.get("extra_body")
        body = merge_extra_body(body, extra, PROTOCOL)
        if "toolConfig" in body and "toolConfig" not in (extra or {}):
            _check_tool_config(body, settings)
        path = f"/v1beta/{model_resource(model)}:streamGenerateContent?alt=sse"
        return ProviderRequest("POST", path, body, {})


# --- config -----------------------------------------------------------------------------------


def vertex_request(
    request: ProviderRequest, model: str, *, project: str, location: str
) -> ProviderRequest:
    """The same request to Gemini on Vertex AI: a publisher model's path under the project and
    location (the body is the same)."""
    path = (
        f"/v1/projects/{quote(project, safe='')}/locations/{quote(location, safe='')}"
        f"/publishers/google/models/{quote(model, safe='@')}:streamGenerateContent?alt=sse"
    )
    return dataclasses.replace(request, path=path)


def model_resource(model: str) -> str:
    """`models/<id>` for a bare id; a full resource name (`tunedModels/x`) is kept."""
    return model if "/" in model else f"models/{model}"


def gemini_version(model: str) -> tuple[int, int] | None:
    match = _GEMINI_VERSION.search(model)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def thinking_control(model: str) -> ThinkingControl:
    """How a model's thinking is set: a level (Gemini 3+, or no version in the name), a token
    budget (Gemini 2.5), or not at all (Gemini 2.0 and 1.x do not think)."""
    version = gemini_version(model)
    if version is None or version[0] >= 3:
        return "level"
    return "budget" if version >= (2, 5) else "unsupported"


def thinking_config(model: str, level: ThinkingLevel) -> dict[str, Any] | None:
    """The thinkingConfig fields for a level on this model; None when nothing is to be sent."""
    control = thinking_control(model)
    pro = "-pro" in model.lower()
    if control == "level":
        if not pro:
            table = THINKING_LEVELS_GEMINI_3
        elif gemini_version(model) == (3, 0):
            table = THINKING_LEVELS_GEMINI_3_0_PRO
        else:
            table = THINKING_LEVELS_GEMINI_3_PRO
        return {"thinkingLevel": table[level]}
    if control == "budget":
        budgets = THINKING_BUDGETS_GEMINI_2_5_PRO if pro else THINKING_BUDGETS_GEMINI_2_5
        return {"thinkingBudget": budgets[level]}
    if level == "none":
        return None  # the model does not think: "none" is what it does anyway
    raise UnsupportedParameterError(
        "thinking_level", PROTOCOL, f"{model} does not think; use Gemini 2.5 or later"
    )


def _generation_config(model: str, settings: dict[str, Any]) -> dict[str, Any]:
    generation: dict[str, Any] = {}
    for key, field in (
        ("max_tokens", "maxOutputTokens"),
        ("temperature", "temperature"),
        ("top_p", "topP"),
        ("seed", "seed"),
    ):
        if key in settings:
            generation[field] = settings[key]
    if settings.get("stop"):
        generation["stopSequences"] = stop_sequences(settings["stop"], PROTOCOL)

    response_format = settings.get("response_format")
    spec = response_format_spec(response_format, PROTOCOL) if response_format else None
    if spec is not None:
        generation["responseMimeType"] = "application/json"
        if "schema" in spec:  # JSON mode without a schema: the mime type alone
            generation["responseJsonSchema"] = spec["schema"]

    thinking: dict[str, Any] = {}
    level = settings.get("thinking_level")
    if level is not None:
        thinking.update(thinking_config(model, thinking_level(level, PROTOCOL)) or {})
    if "thinking_summary" in settings:
        thinking["includeThoughts"] = bool(settings["thinking_summary"])
    if thinking:
        generation["thinkingConfig"] = thinking
    generation.update(media_generation_config(settings))
    return generation


def media_generation_config(settings: dict[str, Any]) -> dict[str, Any]:
    """`responseModalities` with `imageConfig` or `speechConfig` (one request asks for images or
    for speech: Gemini's image models and its speech models are different models)."""
    image = image_output(settings, PROTOCOL)
    speech = speech_output(settings, PROTOCOL)
    if image is not None and speech is not None:
        raise UnsupportedParameterError(
            "speech_output", PROTOCOL, "a Gemini turn answers with images or with speech, not both"
        )
    if image is not None:
        config: dict[str, Any] = {"responseModalities": ["TEXT", "IMAGE"]}
        fields = {"aspectRatio": image.get("aspect_ratio"), "imageSize": image.get("size")}
        image_config = {name: value for name, value in fields.items() if value}
        if image_config:
            config["imageConfig"] = image_config
        return config
    if speech is None:
        return {}
    if "format" in speech:
        raise UnsupportedParameterError(
            "speech_output", PROTOCOL, "Gemini speaks 24 kHz 16-bit PCM only: leave format out"
        )
    if "voice" in speech and "speakers" in speech:
        raise UnsupportedParameterError(
            "speech_output", PROTOCOL, "give one voice, or speakers with a voice each, not both"
        )
    speech_config: dict[str, Any] = {}
    if "voice" in speech:
        speech_config["voiceConfig"] = _prebuilt_voice(speech["voice"])
    if "speakers" in speech:
        speech_config["multiSpeakerVoiceConfig"] = {
            "speakerVoiceConfigs": [
                {"speaker": speaker, "voiceConfig": _prebuilt_voice(voice)}
                for speaker, voice in speech["speakers"].items()
            ]
        }
    if "language" in speech:
        speech_config["languageCode"] = speech["language"]
    config = {"responseModalities": ["AUDIO"]}
    if speech_config:
        config["speechConfig"] = speech_config
    return config


def _prebuilt_voice(name: str) -> dict[str, Any]:
    return {"prebuiltVoiceConfig": {"voiceName": name}}


def _tools(body: dict[str, Any], settings: dict[str, Any]) -> None:
    if settings.get("parallel_tool_calls") is False:
        raise UnsupportedParameterError(
            "parallel_tool_calls",
            PROTOCOL,
            "Gemini has no switch to turn parallel function calls off",
        )
    tools = tool_list(settings, PROTOCOL)
    if tools:
        declarations = []
        for tool in tools:
            declaration: dict[str, Any] = {"name": tool["name"]}
            if tool.get("description"):
                declaration["description"] = tool["description"]
            if tool.get("parameters"):
                declaration["parametersJsonSchema"] = copy.deepcopy(tool["parameters"])
            declarations.append(declaration)
        body["tools"] = [{"functionDeclarations": declarations}]

    choice = checked_tool_choice(settings, PROTOCOL)
    if choice is None:
        return
    config: dict[str, Any]
    if choice == "auto":
        config = {"mode": "AUTO"}
    elif choice == "required":
        config = {"mode": "ANY"}
    elif choice == "none":
        config = {"mode": "NONE"}
    else:
        config = {"mode": "ANY", "allowedFunctionNames": list(choice)}
    body["toolConfig"] = {"functionCallingConfig": config}


def _check_tool_config(body: dict[str, Any], settings: dict[str, Any]) -> None:
    """The config's tool_choice against the functions of the final body, so declarations given
    in extra_body count as functions to choose from (`tool_choice_applies` has the rule)."""
    offered = {
        declaration.get("name")
        for tool in body.get("tools") or ()
        if isinstance(tool, dict)
        for declaration in tool.get("functionDeclarations") or ()
        if isinstance(declaration, dict)
    }
    choice = checked_tool_choice(settings, PROTOCOL)
    if choice is not None and not tool_choice_applies(choice, offered, PROTOCOL):
        del body["toolConfig"]


# --- contents ---------------------------------------------------------------------------------


def _contents(history: list[Message], *, placeholder: bool) -> list[dict[str, Any]]:
    names: dict[str, str] = {}  # tool_call_id -> function name, for the results
    call_ids: set[str] = set()  # the calls Gemini gave an id
    contents: list[dict[str, Any]] = []
    for message in history:
        if message["role"] == "assistant":
            parts = _model_parts(message, names, call_ids)
            if placeholder:
                _sign_first_call(parts)
            role = "model"
        else:
            parts = _user_parts(message, names, call_ids)
            role = "user"
        if parts:  # a turn left with nothing (foreign thinking only) is left out
            contents.append({"role": role, "parts": parts})
    return contents


def _model_parts(message: Message, names: dict[str, str], call_ids: set[str]) -> list[Any]:
    parts: list[dict[str, Any]] = []
    for item in items_of(message):
        kind = item["type"]
        raw = item.get("fidelity")
        fidelity = own_fidelity(raw, _FIDELITY_KEYS)
        signature = fidelity.get("thought_signature") if fidelity else None
        part: dict[str, Any]
        if kind == "text.done":
            if not item["text"] and not signature:
                continue
            part = {"text": item["text"]}
        elif kind == "thinking.done":
            if raw and fidelity is None:
                continue  # another provider's thinking: Gemini cannot use it
            if not item["thinking"] and not signature:
                continue
            part = {"text": item["thinking"], "thought": True}
        elif kind == "tool_call.done":
            call_id = item["tool_call_id"]
            call: dict[str, Any] = {
                "name": item["name"],
                "args": copy.deepcopy(item["arguments"]),
            }
            if call_id and not is_synthesized_tool_call_id(call_id):
                call["id"] = call_id
                call_ids.add(call_id)
            names[call_id] = item["name"]
            part = {"functionCall": call}
        elif kind in ("inline_data.done", "inline_thinking.done"):
            if kind == "inline_thinking.done" and raw and fidelity is None:
                continue
            part = {"inlineData": _blob(item["mime_type"], item["data"])}
            if kind == "inline_thinking.done":
                part["thought"] = True
        else:
            raise InvalidMessageError(f"Gemini cannot take {kind} in an assistant message")
        if signature:
            part["thoughtSignature"] = signature
        parts.append(part)
    return parts


def _sign_first_call(parts: list[dict[str, Any]]) -> None:
    """A turn whose calls Gemini never signed gets the placeholder on its first call."""
    calls = [part for part in parts if "functionCall" in part]
    if calls and not any("thoughtSignature" in part for part in calls):
        calls[0]["thoughtSignature"] = PLACEHOLDER_SIGNATURE


def _user_parts(message: Message, names: dict[str, str], call_ids: set[str]) -> list[Any]:
    responses: list[dict[str, Any]] = []  # function responses first, in order
    result_media: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for item in items_of(message):
        kind = item["type"]
        if kind == "tool_result.done":
            call_id = item["tool_call_id"]
            if call_id not in names:
                raise InvalidMessageError(
                    f"the tool result for {call_id!r} answers no tool call in the history; "
                    "Gemini needs the call's function name"
                )
            response: dict[str, Any] = {
                "name": names[call_id],
                "response": {"result": item["text"]},
            }
            if call_id in call_ids:
                response["id"] = call_id
            responses.append({"functionResponse": response})
            result_media.extend(media_part(url) for url in item.get("images") or [])
        elif kind == "text.done":
            if item["text"]:
                rest.append({"text": item["text"]})
        elif kind == "image_url.done":
            rest.append(media_part(item["image_url"]))
        elif kind == "inline_data.done":
            rest.append({"inlineData": _blob(item["mime_type"], item["data"])})
        else:
            raise InvalidMessageError(f"Gemini cannot take {kind} in a user message")
    return responses + result_media + rest


def _blob(mime_type: str, data: bytes) -> dict[str, str]:
    return {"mimeType": mime_type, "data": base64.b64encode(data).decode()}


def media_part(url: str) -> dict[str, Any]:
    """`inlineData` for a data: URL, `fileData` for an http(s) URL (never downloaded). The mime
    type of an http(s) URL is guessed from its extension and left out when unknown."""
    if url_kind(url) == "data":
        mime_type, data = parse_data_url(url)
        if not mime_type:
            raise InvalidMessageError("a data: URL for Gemini needs a media type")
        return {"inlineData": {"mimeType": mime_type, "data": data}}
    file_data = {"fileUri": url}
    guessed = guess_media_type(url)
    if guessed:
        file_data["mimeType"] = guessed
    return {"fileData": file_data}
