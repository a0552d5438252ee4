"""The official SDKs as the gateway's judges: one driver per inbound wire.

Each driver speaks its wire only through its vendor's SDK (stream helpers and accumulators
included), and reads what the SDK saw into a `Seen` that the matrix tests compare with the
scripted turn. A driver also knows how its SDK's users send a turn back: the SDK's own
response objects, dumped as its users do, appended to the history (so fidelity travels exactly
as it would in a real agent loop).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

import anthropic
import openai
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def text_block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


@dataclass
class Seen:
    """What a client saw of one turn, in the wire-neutral words of the tests."""

    text: str = ""
    thinking: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # id, name, args
    finish: str = ""  # stop / length / tool_call
    input_tokens: int | None = None
    output_tokens: int | None = None


class Driver:
    """One inbound wire, driven by its SDK (see the module docstring)."""

    wire: ClassVar[str]
    rate_limited: ClassVar[tuple[type[BaseException], ...]]
    failed: ClassVar[tuple[type[BaseException], ...]]  # what a stream that broke raises

    def __init__(self, base_url: str, key: str) -> None:
        self.base_url = base_url
        self.key = key

    def user(self, text: str) -> Any:
        raise NotImplementedError

    def user_with_image(self, text: str, png: bytes) -> Any:
        """A user message holding `text` and a PNG image, inline (base64), as the SDK sends it."""
        raise NotImplementedError

    def run(self, model: str, history: list[Any], *, tools: bool, stream: bool) -> Seen:
        """One turn; appends the assistant turn to `history` as the SDK's users do."""
        raise NotImplementedError

    def tool_results(self, calls: list[tuple[str, str, dict[str, Any]]], text: str) -> list[Any]:
        raise NotImplementedError

    def retry_after(self, error: BaseException) -> str | None:
        response = getattr(error, "response", None)
        return None if response is None else response.headers.get("retry-after")


class AnthropicDriver(Driver):
    wire = "anthropic-messages"
    rate_limited = (anthropic.RateLimitError,)
    failed = (anthropic.APIError,)

    def __init__(self, base_url: str, key: str) -> None:
        super().__init__(base_url, key)
        self.client = anthropic.Anthropic(base_url=base_url, api_key=key, max_retries=0)

    def user(self, text: str) -> Any:
        return {"role": "user", "content": text}

    def user_with_image(self, text: str, png: bytes) -> Any:
        source = {"type": "base64", "media_type": "image/png", "data": b64(png)}
        return {"role": "user", "content": [{"type": "image", "source": source}, text_block(text)]}

    def run(self, model: str, history: list[Any], *, tools: bool, stream: bool) -> Seen:
        kwargs: dict[str, Any] = {"model": model, "max_tokens": 1024, "messages": history}
        if tools:
            tool = {**WEATHER_TOOL, "input_schema": WEATHER_TOOL["parameters"]}
            del tool["parameters"]
            kwargs["tools"] = [tool]
        if stream:
            with self.client.messages.stream(**kwargs) as events:
                streamed = "".join(events.text_stream)
                message = events.get_final_message()
        else:
            message = self.client.messages.create(**kwargs)
            streamed = None
        seen = Seen(
            text="".join(b.text for b in message.content if b.type == "text"),
            thinking="".join(b.thinking for b in message.content if b.type == "thinking"),
            calls=[(b.id, b.name, dict(b.input)) for b in message.content if b.type == "tool_use"],  # type: ignore[arg-type]
            finish={"end_turn": "stop", "tool_use": "tool_call", "max_tokens": "length"}.get(
                str(message.stop_reason), str(message.stop_reason)
            ),
            input_tokens=message.usage.input_tokens + (message.usage.cache_read_input_tokens or 0),
            output_tokens=message.usage.output_tokens,
        )
        assert streamed is None or streamed == seen.text
        content = [block.model_dump(exclude_none=True) for block in message.content]
        history.append({"role": "assistant", "content": content})
        return seen

    def tool_results(self, calls: list[tuple[str, str, dict[str, Any]]], text: str) -> list[Any]:
        results = [
            {"type": "tool_result", "tool_use_id": id_, "content": text} for id_, *_ in calls
        ]
        return [{"role": "user", "content": results}]


class OpenAIDriver(Driver):
    """What the two OpenAI wires' drivers share: one `openai.OpenAI` client, its errors, a
    user message as a string."""

    rate_limited = (openai.RateLimitError,)
    failed = (openai.APIError,)

    def __init__(self, base_url: str, key: str) -> None:
        super().__init__(base_url, key)
        self.client = openai.OpenAI(base_url=base_url + "/v1", api_key=key, max_retries=0)

    def user(self, text: str) -> Any:
        return {"role": "user", "content": text}


class ChatDriver(OpenAIDriver):
    wire = "openai-chat"

    def user_with_image(self, text: str, png: bytes) -> Any:
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(png)}}
        return {"role": "user", "content": [text_block(text), image]}

    def run(self, model: str, history: list[Any], *, tools: bool, stream: bool) -> Seen:
        kwargs: dict[str, Any] = {"model": model, "messages": history}
        if tools:
            kwargs["tools"] = [{"type": "function", "function": WEATHER_TOOL}]
        thinking = ""
        if stream:
            with self.client.chat.completions.stream(
                **kwargs, stream_options={"include_usage": True}
            ) as events:
                for event in events:
                    if event.type == "chunk" and event.chunk.choices:
                        extra = event.chunk.choices[0].delta.model_extra or {}
                        thinking += extra.get("reasoning_content") or ""
                completion = events.get_final_completion()
        else:
            completion = self.client.chat.completions.create(**kwargs)
            extra = completion.choices[0].message.model_extra or {}
            thinking = extra.get("reasoning_content") or ""
        choice = completion.choices[0]
        message = choice.message
        calls = [
            (c.id, c.function.name, json.loads(c.function.arguments))
            for c in message.tool_calls or []
            if c.type == "function"
        ]
        usage = completion.usage
        seen = Seen(
            text=message.content or "",
            thinking=thinking,
            calls=calls,
            finish={"tool_calls": "tool_call"}.get(choice.finish_reason, choice.finish_reason),
            input_tokens=usage.prompt_tokens if usage else None,
            output_tokens=usage.completion_tokens if usage else None,
        )
        turn: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            turn["tool_calls"] = [c.model_dump(exclude_none=True) for c in message.tool_calls]
        history.append(turn)
        return seen

    def tool_results(self, calls: list[tuple[str, str, dict[str, Any]]], text: str) -> list[Any]:
        return [{"role": "tool", "tool_call_id": id_, "content": text} for id_, *_ in calls]


class ResponsesDriver(OpenAIDriver):
    wire = "openai-responses"

    def user_with_image(self, text: str, png: bytes) -> Any:
        image = {"type": "input_image", "image_url": "data:image/png;base64," + b64(png)}
        return {"role": "user", "content": [{"type": "input_text", "text": text}, image]}

    def run(self, model: str, history: list[Any], *, tools: bool, stream: bool) -> Seen:
        kwargs: dict[str, Any] = {
            "model": model,
            "input": history,
            "store": False,
            "include": ["reasoning.encrypted_content"],
        }
        if tools:
            kwargs["tools"] = [{"type": "function", "strict": False, **WEATHER_TOOL}]
        if stream:
            with self.client.responses.stream(**kwargs) as events:
                for _ in events:
                    pass
                response = events.get_final_response()
        else:
            response = self.client.responses.create(**kwargs)
        calls = [
            (o.call_id, o.name, json.loads(o.arguments))
            for o in response.output
            if o.type == "function_call"
        ]
        thinking = "".join(
            s.text for o in response.output if o.type == "reasoning" for s in o.summary
        )
        usage = response.usage
        finish = "stop"
        if response.status == "incomplete":
            finish = "length"
        elif calls:
            finish = "tool_call"
        seen = Seen(
            text=response.output_text,
            thinking=thinking,
            calls=calls,
            finish=finish,
            input_tokens=usage.input_tokens if usage else None,
            output_tokens=usage.output_tokens if usage else None,
        )
        history.extend(o.model_dump(exclude_none=True) for o in response.output)
        return seen

    def tool_results(self, calls: list[tuple[str, str, dict[str, Any]]], text: str) -> list[Any]:
        return [
            {"type": "function_call_output", "call_id": id_, "output": text} for id_, *_ in calls
        ]


class GeminiDriver(Driver):
    wire = "gemini-generate-content"
    rate_limited = (genai_errors.ClientError,)
    failed = (genai_errors.APIError,)

    def __init__(self, base_url: str, key: str) -> None:
        super().__init__(base_url, key)
        options = genai_types.HttpOptions(base_url=base_url, retry_options=None)
        self.client = genai.Client(api_key=key, http_options=options)

    def user(self, text: str) -> Any:
        return genai_types.Content(role="user", parts=[genai_types.Part(text=text)])

    def user_with_image(self, text: str, png: bytes) -> Any:
        image = genai_types.Part.from_bytes(data=png, mime_type="image/png")
        return genai_types.Content(role="user", parts=[genai_types.Part(text=text), image])

    def run(self, model: str, history: list[Any], *, tools: bool, stream: bool) -> Seen:
        config = genai_types.GenerateContentConfig(
            automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
        )
        if tools:
            declaration = genai_types.FunctionDeclaration(**WEATHER_TOOL)  # type: ignore[arg-type]
            config.tools = [genai_types.Tool(function_declarations=[declaration])]
        if stream:
            chunks = list(
                self.client.models.generate_content_stream(
                    model=model, contents=history, config=config
                )
            )
        else:
            chunks = [
                self.client.models.generate_content(model=model, contents=history, config=config)
            ]
        parts: list[genai_types.Part] = []
        finish = ""
        usage = None
        for chunk in chunks:
            for candidate in chunk.candidates or []:
                if candidate.content and candidate.content.parts:
                    parts += candidate.content.parts
                if candidate.finish_reason:
                    finish = str(candidate.finish_reason.value)
            usage = chunk.usage_metadata or usage
        calls = [
            (p.function_call.id or "", p.function_call.name or "", dict(p.function_call.args or {}))
            for p in parts
            if p.function_call
        ]
        if finish == "STOP":
            finish = "tool_call" if calls else "stop"
        elif finish == "MAX_TOKENS":
            finish = "length"
        seen = Seen(
            text="".join(p.text for p in parts if p.text and not p.thought),
            thinking="".join(p.text for p in parts if p.text and p.thought),
            calls=calls,
            finish=finish,
            input_tokens=usage.prompt_token_count if usage else None,
            output_tokens=(
                (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
                if usage
                else None
            ),
        )
        history.append(genai_types.Content(role="model", parts=parts))
        return seen

    def tool_results(self, calls: list[tuple[str, str, dict[str, Any]]], text: str) -> list[Any]:
        parts = [
            genai_types.Part(
                function_response=genai_types.FunctionResponse(
                    id=id_ or None, name=name, response={"result": text}
                )
            )
            for id_, name, _ in calls
        ]
        return [genai_types.Content(role="user", parts=parts)]

    def retry_after(self, error: BaseException) -> str | None:
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None)
        return None if headers is None else headers.get("retry-after")


DRIVERS: dict[str, type[Driver]] = {
    d.wire: d for d in (AnthropicDriver, ChatDriver, ResponsesDriver, GeminiDriver)
}
