"""Stateful conversations over a client, and the tool loop.

A turn joins the history only when its stream ended with `stop`: a failed or cancelled turn
leaves the history as it was, and its partial stays readable as `last_result`. One turn at a
time: a second send while one is running raises `ConversationBusyError` instead of interleaving
two turns into one history. `run` is the tool loop; `run_stream` is the same loop yielding
its events (run_events.py says what it yields besides the SPEC events).

`AsyncConversation` (async_conversation.py) is the source of `Conversation`
(sync_conversation.py), which `python scripts/generate_sync.py` generates from it
(client/async_client.py says why); what both share is in history.py.
"""

from .async_conversation import AsyncConversation
from .history import ToolErrors, UserContent, tool_calls_of, user_message
from .run_events import FinalMessageEvent, RunEvent, ToolResultEvent
from .sync_conversation import Conversation

__all__ = [
    "AsyncConversation",
    "Conversation",
    "FinalMessageEvent",
    "RunEvent",
    "ToolErrors",
    "ToolResultEvent",
    "UserContent",
    "tool_calls_of",
    "user_message",
]
