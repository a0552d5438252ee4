"""What every request encoder produces, and the rules all of them share.

An encoder turns messages + config into one HTTP request for its protocol. It is sans-IO and
knows nothing of credentials or base URLs: the transport adds those. It never mutates the
caller's messages or config, and raises `UnsupportedParameterError` / `InvalidMessageError`
before anything is sent.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...errors import InvalidMessageError
from ...items import kind_of
from ...openai_messages import MESSAGE_SHAPES
from ...types import Config, Message, ThinkingLevel

THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("none", "low", "medium", "high", "xhigh", "max")

# Text of the tool result put in for a tool call whose result is missing from the history:
# every provider rejects a call that is not answered, so the model is told it failed.
MISSING_RESULT_TEXT = "error: this tool call has no recorded result (it was not executed)"


@dataclass(frozen=True)
class ProviderRequest:
    """One HTTP request, minus credentials and base URL."""

    method: str
    path: str  # appended to the base URL, e.g. "/chat/completions" or "/v1/messages"
    json: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)  # protocol headers, never secrets


class RequestEncoder(Protocol):
    protocol: str  # the client type, e.g. "openai-chat"

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        """The request for this turn; raises before anything is sent if it cannot be made."""
        ...


_ROLES = ("user", "assistant")


def items_of(message: Message) -> list[dict[str, Any]]:
    """A message's items as plain dicts: encoders tell the kinds apart by `type` at run time."""
    items: list[dict[str, Any]] = message["content_items"]  # type: ignore[assignment]
    return items


def own_fidelity(fidelity: Any, keys: frozenset[str]) -> dict[str, Any] | None:
    """The fidelity when every key is one this protocol's decoder writes; None for another
    provider's, which never goes out (SPEC §2 rule 6)."""
    if isinstance(fidelity, dict) and fidelity and keys.issuperset(fidelity):
        return fidelity
    return None


# The id the item assembler gives a tool call its provider left without one
# (src/modelstream/assembler.py, rule E: `call_<n>`, the call's ordinal in the turn). It was
# never the provider's, so an encoder that can send a call without an id leaves it out.
_SYNTHESIZED_TOOL_CALL_ID = re.compile(r"call_\d+")


def is_synthesized_tool_call_id(call_id: str) -> bool:
    """Whether the id was made up by the assembler (rule E) rather than sent by the provider."""
    return _SYNTHESIZED_TOOL_CALL_ID.fullmatch(call_id) is not None


def check_messages(messages: list[Message]) -> None:
    """Reject malformed input with a message that says what to fix."""
    if not isinstance(messages, list):
        raise InvalidMessageError(f"messages must be a list, got {type(messages).__name__}")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise InvalidMessageError(
                f"message {index} must be a dict, got {type(message).__name__}; {MESSAGE_SHAPES}"
            )
        role = message.get("role")
        if role not in _ROLES:
            raise InvalidMessageError(
                f"message {index} has role {role!r}; use 'user' or 'assistant' "
                f"(the system prompt goes in config['system_prompt']); {MESSAGE_SHAPES}"
            )
        items = message.get("content_items")
        if not isinstance(items, list):
            raise InvalidMessageError(
                f"message {index} needs a content_items list; {MESSAGE_SHAPES}"
            )
        for position, item in enumerate(items):
            kind = item.get("type") if isinstance(item, dict) else None
            if not isinstance(kind, str) or not kind.endswith(".done"):
                raise InvalidMessageError(
                    f"message {index} item {position} must be a done item "
                    f"(e.g. text.done), got {kind!r}"
                )
            item_kind = kind_of(kind)
            if item_kind is not None and role not in item_kind.roles:  # the table of kinds
                if role == "user":
                    raise InvalidMessageError(f"message {index}: a user message cannot hold {kind}")
                raise InvalidMessageError(
                    f"message {index}: {kind} belongs in a user message, not an assistant one"
                )


def complete_tool_results(messages: list[Message]) -> list[Message]:
    """A copy of the history where every assistant tool call has a result.

    A call without one gets a synthetic error result in the next user message (created if
    needed), so no provider rejects the history. The caller's objects are not modified.
    """
    out: list[Message] = []
    pending: list[str] = []
    for message in messages:
        if pending:
            answered = {
                item["tool_call_id"]
                for item in message["content_items"]
                if item["type"] == "tool_result.done"
            }
            missing = [call_id for call_id in pending if call_id not in answered]
            if message["role"] == "user":
                if missing:
                    message = {
                        **message,
                        "content_items": [
                            *_synthetic_results(missing),
                            *message["content_items"],
                        ],
                    }
            else:
                out.append({"role": "user", "content_items": _synthetic_results(pending)})
            pending = []
        if message["role"] == "assistant":
            pending = [
                item["tool_call_id"]
                for item in message["content_items"]
                if item["type"] == "tool_call.done"
            ]
        out.append(message)
    if pending:
        out.append({"role": "user", "content_items": _synthetic_results(pending)})
    return out


def _synthetic_results(call_ids: list[str]) -> list[Any]:
    return [
        {"type": "tool_result.done", "tool_call_id": call_id, "text": MISSING_RESULT_TEXT}
        for call_id in call_ids
    ]


def normalize_tool_call_id(
    call_id: str, *, allowed: str = r"[A-Za-z0-9_-]", max_length: int = 64
) -> str:
    """A tool-call id the target accepts: disallowed characters become `_`; an id too long is
    shortened with a hash suffix, so two ids never collapse into one."""
    clean = re.sub(rf"(?!{allowed}).", "_", call_id) or "call"
    if len(clean) <= max_length:
        return clean
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:12]
    return clean[: max_length - 13] + "_" + digest
