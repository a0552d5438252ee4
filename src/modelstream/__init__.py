"""modelstream: one strict streaming grammar for every LLM provider."""

from .accumulator import Accumulator
from .assembler import ItemAssembler
from .client import AsyncClient, Client, RetryPolicy, Timeouts
from .conversation import AsyncConversation, Conversation
from .errors import (
    ConfigurationError,
    ConversationBusyError,
    CorruptedMessageError,
    EmptyResponseError,
    FrameTooLargeError,
    GrammarViolation,
    IncompleteStreamError,
    InvalidMessageError,
    LostContentError,
    MalformedFrameError,
    ModelstreamError,
    PoolExhaustedError,
    ProviderError,
    SequenceGapError,
    StreamError,
    StreamProtocolError,
    StreamTimeoutError,
    ToolCallArgumentParseError,
    ToolLoopLimitError,
    UnsupportedParameterError,
)
from .framing.sse import SSEDecoder, SSEFrame
from .grammar import GrammarChecker, check_events
from .messages import Prompt, as_messages, assistant, tool_result, user
from .protocols import PROTOCOLS
from .results import AssistantMessage, FinalResponse, PartialResponse, StreamMetadata, ToolCall
from .stream import StreamDecoder, decode_body
from .tools import FunctionTool, ToolArgumentsError, ToolDefinitionError, tool
from .types import Config, Event, FinishReason, Message, Usage

__version__ = "0.1.0"

__all__ = [
    "PROTOCOLS",
    "Accumulator",
    "AssistantMessage",
    "AsyncClient",
    "AsyncConversation",
    "Client",
    "Config",
    "ConfigurationError",
    "Conversation",
    "ConversationBusyError",
    "CorruptedMessageError",
    "EmptyResponseError",
    "Event",
    "FinalResponse",
    "FinishReason",
    "FrameTooLargeError",
    "FunctionTool",
    "GrammarChecker",
    "GrammarViolation",
    "IncompleteStreamError",
    "InvalidMessageError",
    "ItemAssembler",
    "LostContentError",
    "MalformedFrameError",
    "Message",
    "ModelstreamError",
    "PartialResponse",
    "PoolExhaustedError",
    "Prompt",
    "ProviderError",
    "RetryPolicy",
    "SSEDecoder",
    "SSEFrame",
    "SequenceGapError",
    "StreamDecoder",
    "StreamError",
    "StreamMetadata",
    "StreamProtocolError",
    "StreamTimeoutError",
    "Timeouts",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallArgumentParseError",
    "ToolDefinitionError",
    "ToolLoopLimitError",
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
