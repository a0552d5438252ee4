"""Everything `import modelstream` offers, imported on first use by `modelstream/__init__.py`.

New public names go here and into the package's `__all__`: the package imports nothing until a
name is asked for, so `modelstream --version` and `replay` start without the client and httpx.
"""

# ruff: noqa: F401  (re-exported by the package, whose `__all__` lists them)

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
from .protocols import PROTOCOLS
from .results import FinalResponse, PartialResponse, StreamMetadata
from .stream import StreamDecoder, decode_body
from .types import Config, Event, FinishReason, Message, Usage
