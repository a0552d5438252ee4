"""The emulated endpoints, and what the emulator reads from a request to answer it by default."""

from __future__ import annotations

import json
import re
from typing import Any

# Exact paths of the OpenAI family and Anthropic; Gemini's carry the model in the path.
_PATHS = {
    "/v1/chat/completions": "openai-chat",
    "/v1/responses": "openai-responses",
    "/v1/embeddings": "openai-embedding",
    "/v1/messages": "anthropic-messages",
}
_GEMINI = re.compile(r"^/v1beta/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_GEMINI_METHODS = {
    "streamGenerateContent": "gemini-generate-content",
    "embedContent": "gemini-embedding",
    "batchEmbedContents": "gemini-embedding",
}

# What each client type's base URL adds before the paths above.
BASE_PATHS = {
    "openai-chat": "/v1",
    "openai-responses": "/v1",
    "openai-embedding": "/v1",
    "anthropic-messages": "",
    "gemini-generate-content": "",
    "gemini-embedding": "",
}


def protocol_for(path: str) -> str | None:
    """The protocol served at `path` (no query string), or None when nothing is there."""
    protocol = _PATHS.get(path)
    if protocol is not None:
        return protocol
    match = _GEMINI.match(path)
    return _GEMINI_METHODS.get(match["method"]) if match else None


def model_for(path: str, body: Any) -> str | None:
    """The model the request names: in the path for Gemini, in the body elsewhere."""
    match = _GEMINI.match(path)
    if match:
        return match["model"]
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        return str(body["model"])
    return None


def wants_usage(protocol: str, body: Any) -> bool:
    """Chat Completions reports usage only when the request asks for it."""
    if protocol != "openai-chat":
        return True
    options = body.get("stream_options") if isinstance(body, dict) else None
    return isinstance(options, dict) and options.get("include_usage") is True


def last_user_text(protocol: str, body: Any) -> str:
    """The text of the last user message (or tool result) of a request, "" when none."""
    if not isinstance(body, dict):
        return ""
    if protocol == "openai-chat":
        return _last(body.get("messages"), _chat_text)
    if protocol == "openai-responses":
        given = body.get("input")
        return given if isinstance(given, str) else _last(given, _responses_text)
    if protocol == "anthropic-messages":
        return _last(body.get("messages"), _anthropic_text)
    if protocol == "gemini-generate-content":
        return _last(body.get("contents"), _gemini_text)
    return ""


def embedding_inputs(protocol: str, path: str, body: Any) -> list[str]:
    """The texts to embed, one per vector to answer with."""
    if not isinstance(body, dict):
        return []
    if protocol == "openai-embedding":
        given = body.get("input")
        if isinstance(given, str):
            return [given]
        if isinstance(given, list):
            if given and all(isinstance(token, int) for token in given):
                return [json.dumps(given)]  # one input given as token ids
            return [entry if isinstance(entry, str) else json.dumps(entry) for entry in given]
        return []
    if path.endswith(":batchEmbedContents"):
        requests = body.get("requests")
        if not isinstance(requests, list):
            return []
        return [_parts_text(r.get("content")) for r in requests if isinstance(r, dict)]
    return [_parts_text(body.get("content"))]


def embedding_dimensions(protocol: str, path: str, body: Any, default: int = 8) -> int:
    """The vector size asked for (`dimensions`, `outputDimensionality`), else `default`."""
    if not isinstance(body, dict):
        return default
    if protocol == "openai-embedding":
        value = body.get("dimensions")
    elif path.endswith(":batchEmbedContents"):
        requests = body.get("requests")
        first = requests[0] if isinstance(requests, list) and requests else {}
        value = first.get("outputDimensionality") if isinstance(first, dict) else None
    else:
        value = body.get("outputDimensionality")
    return value if isinstance(value, int) and 0 < value <= 4096 else default


# --- per-protocol message readers: the text of one user message, or None ----------------------


def _last(messages: Any, read: Any) -> str:
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict):
            text = read(message)
            if text is not None:
                return str(text)
    return ""


def _chat_text(message: dict[str, Any]) -> str | None:
    if message.get("role") not in ("user", "tool"):
        return None
    return _joined(message.get("content"), "text")


def _responses_text(item: dict[str, Any]) -> str | None:
    if item.get("type") == "function_call_output":
        output = item.get("output")
        return output if isinstance(output, str) else _joined(output, "input_text")
    if item.get("role") != "user":
        return None
    return _joined(item.get("content"), "input_text")


def _anthropic_text(message: dict[str, Any]) -> str | None:
    if message.get("role") != "user":
        return None
    content = message.get("content")
    if isinstance(content, list):
        texts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                texts.append(_joined(block.get("content"), "text"))
        return " ".join(text for text in texts if text)
    return _joined(content, "text")


def _gemini_text(content: dict[str, Any]) -> str | None:
    if content.get("role", "user") != "user":
        return None
    return _parts_text(content)


def _parts_text(content: Any) -> str:
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        return ""
    texts = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part.get("functionResponse"), dict):
            response = part["functionResponse"].get("response")
            texts.append(json.dumps(response, ensure_ascii=False))
    return " ".join(text for text in texts if text)


def _joined(content: Any, text_type: str) -> str:
    """A content that is a string, or a list of typed parts whose text parts are joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        str(part.get("text", ""))
        for part in content
        if isinstance(part, dict) and part.get("type") in (text_type, "text")
    ]
    return " ".join(text for text in texts if text)
