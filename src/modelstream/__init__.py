"""modelstream: one strict streaming grammar for every LLM provider.

The public names (see `_exports.py`) are imported when first used (PEP 562), not with the
package: every submodule, the command line's included, imports this file first, and the client
with httpx costs more CPU than a `modelstream replay` of a small file.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from ._exports import *  # noqa: F403

# ruff: noqa: F405  (the names below are defined by `_exports`, on first use)
__all__ = [
    "PROTOCOLS",
    "Accumulator",
    "AssistantMessage",
    "AsyncClient",
    "AsyncConversation",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "Config",
    "ConfigurationError",
    "ContextWindowExceededError",
    "Conversation",
    "ConversationBusyError",
    "CorruptedMessageError",
    "EmptyResponseError",
    "Event",
    "FinalMessageEvent",
    "FinalResponse",
    "FinishReason",
    "FrameTooLargeError",
    "FunctionTool",
    "GrammarChecker",
    "GrammarViolation",
    "IncompleteStreamError",
    "InvalidConfigError",
    "InvalidMessageError",
    "ItemAssembler",
    "ListedModel",
    "LostContentError",
    "MalformedFrameError",
    "Message",
    "ModelstreamError",
    "NotFoundError",
    "OverloadedError",
    "PartialResponse",
    "PermissionDeniedError",
    "PoolExhaustedError",
    "Prompt",
    "ProviderConnectionError",
    "ProviderError",
    "RateLimitError",
    "RetryNotice",
    "RetryPolicy",
    "RunEvent",
    "SSEDecoder",
    "SSEFrame",
    "SequenceGapError",
    "ServerError",
    "StreamDecoder",
    "StreamError",
    "StreamMetadata",
    "StreamProtocolError",
    "StreamTimeoutError",
    "StructuredOutputCutOffError",
    "StructuredOutputError",
    "StructuredOutputRefusedError",
    "StructuredOutputStoppedError",
    "Timeouts",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallArgumentParseError",
    "ToolDefinitionError",
    "ToolLoopLimitError",
    "ToolResultEvent",
    "UnsupportedParameterError",
    "Usage",
    "as_messages",
    "assistant",
    "check_events",
    "decode_body",
    "tool",
    "tool_result",
    "user",
]


def __getattr__(name: str) -> Any:
    # Only a public name: `from . import submodule` asks here first, and must not import all.
    if name in __all__:
        value = getattr(import_module(f"{__name__}._exports"), name)
        globals()[name] = value  # the next lookup finds it without this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
