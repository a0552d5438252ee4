"""Everything `import modelstream` offers, imported on first use by `modelstream/__init__.py`.

New public names go here and into the package's `__all__`: the package imports nothing until a
name is asked for, so `modelstream --version` and `replay` start without the client and httpx.
"""

# ruff: noqa: F401  (re-exported by the package, whose `__all__` lists them)

from .accumulator import Accumulator
from .assembler import ItemAssembler
from .client import AsyncClient, Client, RetryPolicy, Timeouts
from .client.model_list import ListedModel
from .client.retry import RetryNotice
from .conversation import (
    AsyncConversation,
    Conversation,
    FinalMessageEvent,
    RunEvent,
    ToolResultEvent,
)
from .errors import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ContextWindowExceededError,
    ConversationBusyError,
    CorruptedMessageError,
    EmptyResponseError,
    FrameTooLargeError,
    GrammarViolation,
    IncompleteStreamError,
    InvalidConfigError,
    InvalidMessageError,
    LostContentError,
    MalformedFrameError,
    ModelstreamError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    PoolExhaustedError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    SequenceGapError,
    ServerError,
    StreamError,
    StreamProtocolError,
    StreamTimeoutError,
    StructuredOutputCutOffError,
    StructuredOutputError,
    StructuredOutputRefusedError,
    StructuredOutputStoppedError,
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
