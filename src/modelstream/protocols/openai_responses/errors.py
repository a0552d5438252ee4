"""How OpenAI names a Responses error: OpenAI's words (`openai_chat/errors.py`) and the
Responses API's own message for a prompt that does not fit."""

from __future__ import annotations

from ...error_bodies import ErrorWords
from ..openai_chat.errors import ERROR_WORDS as OPENAI_ERROR_WORDS

ERROR_WORDS = OPENAI_ERROR_WORDS | ErrorWords(
    # "Your input exceeds the context window of this model"
    context_window_messages=frozenset({"exceeds the context window"}),
)
