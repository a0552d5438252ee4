"""Each protocol package declares its providers' error words (`Protocol.error_words`); the
registry merges them into one value (`modelstream.protocols.ERROR_WORDS`) that the core's readers
(`error_bodies`) are given. The merged words are exactly the sets `error_bodies` held before they
moved into the packages (issue 19 item 2), so no error is classified otherwise than before."""

from __future__ import annotations

import ast

import pytest

from modelstream.error_bodies import ErrorWords, is_retryable_kind, provider_error
from modelstream.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    OverloadedError,
    ProviderError,
    RateLimitError,
)
from modelstream.protocols import ERROR_WORDS, REGISTRY
from support import REPO

SRC = REPO / "src" / "modelstream"

# The literal sets of src/modelstream/error_bodies.py before the move, copied as they were.
RETRYABLE_KINDS = frozenset(
    {
        "server_error",
        "rate_limit_exceeded",
        "rate_limit_error",
        "overloaded_error",
        "server_is_overloaded",
        "service_unavailable",
        "slow_down",
        "timeout",
        "timeout_error",
        "api_error",
        "UNAVAILABLE",
        "RESOURCE_EXHAUSTED",
        "INTERNAL",
        "DEADLINE_EXCEEDED",
    }
)
BAD_KEY = frozenset(
    {
        "authentication_error",
        "invalid_api_key",
        "UNAUTHENTICATED",
        "API_KEY_INVALID",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "InvalidClientTokenId",
        "ExpiredTokenException",
    }
)
PERMISSION_DENIED = frozenset({"permission_error", "PERMISSION_DENIED", "AccessDeniedException"})
NOT_FOUND = frozenset(
    {"not_found_error", "model_not_found", "NOT_FOUND", "ResourceNotFoundException"}
)
RATE_LIMITED = frozenset(
    {
        "rate_limit_error",
        "rate_limit_exceeded",
        "insufficient_quota",
        "RESOURCE_EXHAUSTED",
        "ThrottlingException",
        "throttlingException",
        "ServiceQuotaExceededException",
    }
)
OVERLOADED = frozenset(
    {
        "overloaded_error",
        "server_is_overloaded",
        "UNAVAILABLE",
        "ServiceUnavailableException",
        "serviceUnavailableException",
    }
)
SERVER_ERROR = frozenset(
    {
        "api_error",
        "server_error",
        "INTERNAL",
        "InternalServerException",
        "internalServerException",
        "modelStreamErrorException",
    }
)
BAD_REQUEST = frozenset(
    {"invalid_request_error", "INVALID_ARGUMENT", "ValidationException", "validationException"}
)
QUOTA_EXHAUSTED = frozenset({"insufficient_quota"})
CONTEXT_WINDOW_CODES = frozenset({"context_length_exceeded"})
CONTEXT_WINDOW_MESSAGES = (
    "maximum context length",
    "exceeds the context window",
    "prompt is too long",
    "exceed context limit",
    "exceeds the maximum number of tokens allowed",
    "input is too long for requested model",
)


@pytest.mark.parametrize(
    ("field", "before"),
    [
        ("retryable", RETRYABLE_KINDS),
        ("bad_key", BAD_KEY),
        ("permission_denied", PERMISSION_DENIED),
        ("not_found", NOT_FOUND),
        ("rate_limited", RATE_LIMITED),
        ("overloaded", OVERLOADED),
        ("server_error", SERVER_ERROR),
        ("bad_request", BAD_REQUEST),
        ("quota_exhausted", QUOTA_EXHAUSTED),
        ("context_window_codes", CONTEXT_WINDOW_CODES),
        ("context_window_messages", frozenset(CONTEXT_WINDOW_MESSAGES)),
    ],
)
def test_the_merged_words_are_exactly_the_sets_the_core_held_before(
    field: str, before: frozenset[str]
) -> None:
    assert getattr(ERROR_WORDS, field) == before


def test_the_merged_words_are_the_union_of_every_protocols_words() -> None:
    union = ErrorWords()
    for protocol in REGISTRY.values():
        union = union | protocol.error_words
    assert union == ERROR_WORDS


def test_each_provider_family_declares_its_own_words() -> None:
    words = {name: protocol.error_words for name, protocol in REGISTRY.items()}
    assert "insufficient_quota" in words["openai-chat"].quota_exhausted
    assert "overloaded_error" in words["anthropic-messages"].overloaded
    assert "RESOURCE_EXHAUSTED" in words["gemini-generate-content"].rate_limited
    assert "ThrottlingException" in words["bedrock-converse-stream"].rate_limited
    assert words["modelstream"] == ErrorWords()  # a server's errors come as their own classes


def test_context_window_phrases_are_matched_in_lower_case() -> None:
    assert all(text == text.lower() for text in ERROR_WORDS.context_window_messages)


def test_the_reader_classifies_only_with_the_words_it_is_given() -> None:
    message = "prompt is too long: 210000 tokens > 200000 maximum"
    assert type(provider_error(message, words=ERROR_WORDS)) is ContextWindowExceededError
    assert type(provider_error(message, words=ErrorWords())) is ProviderError
    assert type(provider_error("no", error_type="throttlingException", words=ERROR_WORDS)) is (
        RateLimitError
    )
    assert type(provider_error("no", status=400, reason="API_KEY_INVALID", words=ERROR_WORDS)) is (
        AuthenticationError
    )
    assert type(provider_error("busy", error_type="UNAVAILABLE", words=ERROR_WORDS)) is (
        OverloadedError
    )
    assert is_retryable_kind("overloaded_error", None, ERROR_WORDS)
    assert not is_retryable_kind("overloaded_error", None, ErrorWords())
    assert is_retryable_kind(None, 503, ErrorWords())  # a status needs no words


def test_a_used_up_quota_is_never_retryable() -> None:
    error = provider_error(
        "You exceeded your current quota",
        status=429,
        code="insufficient_quota",
        retryable=True,
        words=ERROR_WORDS,
    )
    assert type(error) is RateLimitError
    assert not error.retryable


@pytest.mark.parametrize("module", ["error_bodies.py", "stream.py"])
def test_the_core_holds_no_provider_words(module: str) -> None:
    """The words live in the protocol packages: the core's modules spell none of them."""
    source = (SRC / module).read_text()
    strings = {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    every_word = {
        word
        for field in (
            RETRYABLE_KINDS,
            BAD_KEY,
            PERMISSION_DENIED,
            NOT_FOUND,
            RATE_LIMITED,
            OVERLOADED,
            SERVER_ERROR,
            BAD_REQUEST,
            QUOTA_EXHAUSTED,
            CONTEXT_WINDOW_CODES,
            frozenset(CONTEXT_WINDOW_MESSAGES),
        )
        for word in field
    }
    assert not strings & every_word


@pytest.mark.parametrize("module", ["error_bodies.py", "errors.py"])
def test_the_readers_do_not_import_the_registry(module: str) -> None:
    tree = ast.parse((SRC / module).read_text())
    imported = {
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert not {name for name in imported if name.lstrip(".").startswith("protocols")}
