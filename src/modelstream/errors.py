"""One error hierarchy (SPEC §4); every stream error carries the partial received so far."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import PartialResponse
    from .types import FinishReason, Usage


class ModelstreamError(Exception):
    """Base of every error this library raises."""

    def fields(self) -> dict[str, Any]:
        """The error's facts as JSON-ready values (used for `{"error": {...}}` lines)."""
        return {}

    def redact(self, mask: Callable[[str], str]) -> None:
        """Mask a secret (the API key a provider echoed) in the message and in every text fact
        the error carries, in place, before anyone can print it."""
        self.args = tuple(mask(arg) if isinstance(arg, str) else arg for arg in self.args)
        for name, value in vars(self).items():
            if isinstance(value, str):
                setattr(self, name, mask(value))


class StreamError(ModelstreamError):
    """An error that ends a stream; `partial` holds everything received before it."""

    partial: PartialResponse | None = None


class ToolCallArgumentParseError(StreamError):
    """A tool call's joined arguments are not a JSON object (strict mode), raised in place of
    its `tool_call.done`: the call must not be executed."""

    def __init__(
        self, *, name: str, tool_call_id: str, raw: str, reason: str, cut_off: bool = False
    ) -> None:
        self.name = name
        self.tool_call_id = tool_call_id
        self.raw_length = len(raw)
        self.preview = raw if len(raw) <= 200 else raw[:100] + " … " + raw[-80:]
        self.reason = reason
        # the turn ended with finish reason `length` inside the arguments: what was received is
        # a prefix, so recovering it would run the call with arguments the model never finished
        self.cut_off = cut_off
        call = f"tool call {name!r} ({tool_call_id or 'no id'})"
        if cut_off:
            message = (
                f"{call} was cut off: the output limit (max_tokens) was reached inside the tool "
                f"call's arguments ({self.raw_length} chars received). The call was not "
                "executed; raise max_tokens."
            )
        else:
            message = (
                f"{call} has arguments that are not a JSON object ({reason}; {self.raw_length} "
                f"chars: {self.preview!r}). The call was not executed; pass "
                "lenient_tool_arguments=True to recover what can be recovered."
            )
        super().__init__(message)

    def fields(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "tool_call_id": self.tool_call_id,
            "raw_length": self.raw_length,
            "preview": self.preview,
            "cut_off": self.cut_off,
        }


class EmptyResponseError(StreamError):
    """The turn finished holding nothing, or thinking only, raised in place of `stop`."""

    def __init__(self, *, finish_reason: FinishReason, usage: Usage, thinking_only: bool) -> None:
        self.finish_reason = finish_reason
        self.usage = usage
        self.thinking_only = thinking_only
        what = "only thinking" if thinking_only else "no content"
        super().__init__(
            f"the model finished (finish reason {finish_reason!r}) with {what}; "
            "retry, or raise max_tokens if the turn was cut off"
        )

    def fields(self) -> dict[str, Any]:
        return {"finish_reason": self.finish_reason, "usage": dict(self.usage)}


class IncompleteStreamError(StreamError):
    """The provider stream ended without its end-of-turn signal, or the connection broke."""

    def __init__(self, missing: str, detail: str = "") -> None:
        self.missing = missing
        self.detail = detail
        msg = f"the stream ended before it was finished: no {missing} was received"
        super().__init__(msg + (f" ({detail})" if detail else ""))

    def fields(self) -> dict[str, Any]:
        return {"missing": self.missing}


class FrameTooLargeError(IncompleteStreamError):
    """An SSE frame grew past the configured limit; decoding stopped instead of buffering on."""

    def __init__(self, limit: int, size: int) -> None:
        self.limit = limit
        self.size = size
        super().__init__(
            "complete frame",
            f"a frame reached {size} bytes, over the limit of {limit}; "
            "raise max_frame_bytes if this provider legitimately sends larger frames",
        )

    def fields(self) -> dict[str, Any]:
        return {"missing": self.missing, "limit": self.limit, "size": self.size}


class LostContentError(IncompleteStreamError):
    """The provider sent a stream with a piece of its content lost, so the turn cannot be
    final. `lost` counts the frames or events that went missing."""

    def __init__(self, missing: str, message: str, lost: int = 1) -> None:
        self.missing = missing
        self.detail = message
        self.lost = lost
        StreamError.__init__(
            self,
            f"{message}; pass lenient_frames=True to skip what was lost (the result then "
            "counts it in metadata.lost_frames)",
        )


class MalformedFrameError(LostContentError):
    """A data frame was not valid JSON (the provider or a proxy corrupted it), so whatever it
    carried (a text fragment, a piece of tool arguments, the finish) is lost."""

    def __init__(self, data: str, frame: int | None = None) -> None:
        self.frame = frame
        self.preview = data if len(data) <= 120 else data[:120] + " …"
        where = f"frame {frame}" if frame is not None else "a frame"
        super().__init__(
            f"the content of {where}",
            f"{where} of the stream was not valid JSON ({self.preview!r}): the provider sent "
            "a corrupted event, so content is missing and the turn is not final",
        )

    def fields(self) -> dict[str, Any]:
        return {"missing": self.missing, "frame": self.frame, "preview": self.preview}


class CorruptedMessageError(LostContentError):
    """A binary event-stream message (AWS event stream) failed its CRC-32 check: the bytes were
    damaged on the way, so what the message carried is lost and the turn is not final.

    `crc` names the check: "message" (the whole message; its length was intact, so decoding can
    go on after it and `lenient_frames=True` skips it) or "prelude" (the length fields
    themselves; nothing after can be framed, so even a lenient decoder stops there).
    `message_index` is the 0-based index of the message in the body."""

    def __init__(self, message_index: int, crc: str, expected: int, actual: int) -> None:
        self.message_index = message_index
        self.crc = crc
        self.expected = expected
        self.actual = actual
        self.resumable = crc == "message"
        what = f"the {crc} CRC-32 of event-stream message {message_index}"
        detail = (
            f"{what} does not match (sent {expected:#010x}, computed {actual:#010x}): the "
            "body was corrupted on the way, so content is missing and the turn is not final"
        )
        if self.resumable:
            super().__init__(f"the content of message {message_index}", detail)
        else:  # no lenient hint: a damaged length cannot be skipped
            self.missing = f"the content from message {message_index} on"
            self.detail = detail
            self.lost = 1
            StreamError.__init__(self, detail)

    def fields(self) -> dict[str, Any]:
        return {
            "missing": self.missing,
            "message_index": self.message_index,
            "crc": self.crc,
            "expected": self.expected,
            "actual": self.actual,
        }


class SequenceGapError(LostContentError):
    """A protocol that numbers its events (OpenAI Responses `sequence_number`) skipped numbers:
    the events in between never arrived."""

    def __init__(self, previous: int, received: int) -> None:
        self.previous = previous
        self.received = received
        if received > previous + 1:
            first, last = previous + 1, received - 1
            lost = f"event {first}" if first == last else f"events {first}–{last}"
            what = f"{lost} never arrived"
        else:
            what = "an event arrived out of order"
        super().__init__(
            f"event {previous + 1}",
            f"sequence_number went from {previous} to {received}: {what}, so content may be "
            "missing and the turn is not final",
            lost=max(received - previous - 1, 1),
        )

    def fields(self) -> dict[str, Any]:
        return {"missing": self.missing, "previous": self.previous, "received": self.received}


class StreamTimeoutError(IncompleteStreamError):
    """A timeout ended the call: `timeout` is "connect", "attempt" or "idle"."""

    def __init__(self, timeout: str, seconds: float | None, missing: str) -> None:
        self.timeout = timeout
        self.seconds = seconds
        limit = f"{seconds:g} s" if seconds is not None else "no limit"
        what = {
            "connect": "connecting took longer than",
            "attempt": "the attempt took longer than",
            "idle": "no bytes arrived for",
        }.get(timeout, f"the {timeout} timeout expired after")
        super().__init__(missing, f"{timeout} timeout: {what} {limit}")

    def fields(self) -> dict[str, Any]:
        return {"missing": self.missing, "timeout": self.timeout, "seconds": self.seconds}


class ProviderError(StreamError):
    """The provider refused the request or reported an error in the stream.

    Raised as the subclass that names the cause (`AuthenticationError`, `RateLimitError`, ...,
    chosen by `modelstream.error_bodies.provider_error` from the status and the provider's error
    type, code and message); a cause none of them names stays a plain `ProviderError`."""

    cause = "provider error"  # how the message opens: what went wrong, in a few words

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        code: str | int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        provider: str | None = None,
        model: str | None = None,
    ) -> None:
        self.status = status
        self.error_type = error_type
        self.code = code
        self.provider_message = message
        self.retryable = retryable
        self.retry_after = retry_after
        self.provider = provider
        self.model = model
        super().__init__(self._summary())

    def name_model(self, model: str) -> None:
        """Name the model the call asked for in the message, when the error did not know it
        (a decoder knows the provider, the call knows the model)."""
        if self.model is None and model:
            self.model = model
            self.args = (self._summary(),)

    def _summary(self) -> str:
        parts = [self.provider, f"model {self.model}" if self.model else None]
        parts += [f"HTTP {self.status}" if self.status else None, self.error_type]
        if self.code is not None and str(self.code) != self.error_type:
            parts.append(f"code {self.code}")
        facts = ", ".join(p for p in parts if p) or "unspecified"
        return f"{self.cause} ({facts}): {one_line(self.provider_message)}"

    def fields(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "error_type": self.error_type,
            "code": self.code,
            "provider_message": self.provider_message,
            "retryable": self.retryable,
            "retry_after": self.retry_after,
            "provider": self.provider,
            "model": self.model,
        }


class AuthenticationError(ProviderError):
    """The provider did not accept the credentials: a missing, wrong, expired or revoked key
    (HTTP 401; a 403 or 400 whose type says the key is bad, as AWS and Gemini send)."""

    cause = "authentication failed"


class PermissionDeniedError(ProviderError):
    """The key is valid but may not use this model or resource (HTTP 403)."""

    cause = "permission denied"


class NotFoundError(ProviderError):
    """The model, deployment or endpoint does not exist, or is not visible to this key (404)."""

    cause = "not found"


class BadRequestError(ProviderError):
    """The provider rejected the request as malformed or invalid (HTTP 400, 413, 422)."""

    cause = "bad request"


class ContextWindowExceededError(BadRequestError):
    """The prompt (with `max_tokens`) does not fit the model's context window, as the provider
    said: shorten the conversation or lower `max_tokens`."""

    cause = "context window exceeded"


class RateLimitError(ProviderError):
    """Too many requests or tokens for the account's limits (HTTP 429), or its quota is used
    up; `retry_after` holds the wait the provider asked for, when it said."""

    cause = "rate limited"


class ServerError(ProviderError):
    """The provider failed on its side (HTTP 5xx): retried, as it may pass."""

    cause = "server error"


class OverloadedError(ServerError):
    """The provider is over capacity for now (Anthropic 529 `overloaded_error`, HTTP 503):
    retried, as it may pass."""

    cause = "overloaded"


class ProviderConnectionError(StreamError):
    """The request never reached the provider: the host name did not resolve, the connection
    was refused, or the TLS handshake failed (after the retries). Nothing was sent, so nothing
    was received: the partial is empty, and the request may be sent again as it is.

    `reason` is "dns", "refused", "tls" or "connect" (anything else); `host` is the origin
    (scheme, host and port), never the path or query."""

    def __init__(
        self,
        host: str,
        reason: str,
        detail: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        attempts: int = 1,
    ) -> None:
        self.host = host
        self.reason = reason
        self.detail = detail
        self.provider = provider
        self.model = model
        self.attempts = attempts
        what = {
            "dns": "the host name did not resolve",
            "refused": "the connection was refused",
            "tls": "the TLS handshake failed",
        }.get(reason, "the connection failed")
        facts = [provider, f"model {model}" if model else None]
        facts.append(f"{attempts} attempts" if attempts > 1 else None)
        named = ", ".join(f for f in facts if f)
        super().__init__(
            f"could not connect to {host}"
            + (f" ({named})" if named else "")
            + f": {what}"
            + (f" ({one_line(detail)})" if detail else "")
        )

    def fields(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "reason": self.reason,
            "attempts": self.attempts,
            "provider": self.provider,
            "model": self.model,
        }


def one_line(text: str) -> str:
    """`text` with its line breaks (and the indentation after them) folded into single spaces:
    an error message is one line, whatever the provider wrote."""
    if "\n" not in text and "\r" not in text:
        return text
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


class StreamProtocolError(StreamError):
    """An adapter produced output that breaks the grammar: a bug in modelstream, please report."""

    def __init__(self, rule: str, detail: str) -> None:
        self.rule = rule
        self.detail = detail
        super().__init__(f"grammar rule broken ({rule}): {detail}")

    def fields(self) -> dict[str, Any]:
        return {"rule": self.rule, "detail": self.detail}


class GrammarViolation(ModelstreamError):
    """An event stream checked with `GrammarChecker` breaks a SPEC rule (named in `rule`)."""

    def __init__(self, rule: str, detail: str, index: int) -> None:
        self.rule = rule
        self.detail = detail
        self.index = index
        super().__init__(f"event {index}: {rule}: {detail}")

    def fields(self) -> dict[str, Any]:
        return {"rule": self.rule, "detail": self.detail, "index": self.index}


class UnsupportedParameterError(ModelstreamError):
    """A config value the target protocol cannot express; raised before anything is sent."""

    def __init__(self, parameter: str, protocol: str, detail: str = "") -> None:
        self.parameter = parameter
        self.protocol = protocol
        super().__init__(
            f"{parameter!r} is not supported by {protocol}" + (f": {detail}" if detail else "")
        )

    def fields(self) -> dict[str, Any]:
        return {"parameter": self.parameter, "protocol": self.protocol}


class InvalidConfigError(UnsupportedParameterError):
    """A config key that does not exist, or a value no protocol takes (`temperature: "0.5"`,
    `max_tokens: -1`); raised before anything is sent. `path` names the value as JSON does
    (`config.tools[0].name`); `protocol` is empty when the check ran before one was chosen."""

    def __init__(self, parameter: str, message: str, *, path: str, protocol: str = "") -> None:
        self.parameter = parameter
        self.protocol = protocol
        self.path = path
        ModelstreamError.__init__(self, message)  # the sentence names no protocol

    def fields(self) -> dict[str, Any]:
        return {"parameter": self.parameter, "protocol": self.protocol, "path": self.path}


class InvalidMessageError(ModelstreamError):
    """A message given by the caller is malformed; raised before anything is sent."""


class ConfigurationError(ModelstreamError):
    """Missing key, unknown model, protocol or client type; raised before anything is sent."""


class ConversationBusyError(ModelstreamError):
    """A conversation was asked to send while one of its turns was still running."""

    def __init__(self) -> None:
        super().__init__(
            "this conversation is already running a turn; wait for it to finish (or cancel it) "
            "before sending again, or use one conversation per concurrent task"
        )


class ToolLoopLimitError(ModelstreamError):
    """The tool loop reached its round limit and the model still asked for tools."""

    def __init__(self, max_rounds: int) -> None:
        self.max_rounds = max_rounds
        super().__init__(
            f"the model still asked for tool calls after {max_rounds} rounds; raise max_rounds "
            "or check the tools' results (the history holds every round)"
        )


class PoolExhaustedError(StreamTimeoutError):
    """Every connection of the HTTP client's pool stayed busy for the pool timeout (`timeout`
    "pool"), so the request was never sent: too many streams share one pool."""

    def __init__(self, seconds: float | None, missing: str) -> None:
        self.timeout = "pool"
        self.seconds = seconds
        waited = f"{seconds:g} s" if seconds is not None else "ever"
        IncompleteStreamError.__init__(
            self,
            missing,
            f"pool exhausted: no connection of the HTTP client's pool came free within {waited}, "
            "so the request was never sent; run fewer streams at once on this client, or give "
            "it a larger pool (httpx.Limits(max_connections=...) on the http_client you pass)",
        )


class StructuredOutputError(ModelstreamError, ValueError):
    """A final answer asked for in a `response_format` is not one: its text is no JSON, or the
    JSON does not fit the type. `text` is the raw answer, `problems` each mismatch as "where:
    what" (empty for a text that is no JSON), `message` the final assistant message (its
    text, usage and cost are still the turn's)."""

    def __init__(
        self, what: str, text: str, problems: list[str] | None = None, message: Any = None
    ) -> None:
        self.text = text
        self.problems = list(problems or [])
        self.message = message
        detail = "; ".join(self.problems)
        super().__init__(what + (f": {detail}" if detail else ""))

    def fields(self) -> dict[str, Any]:
        return {"text": self.text, "problems": self.problems}


class StructuredOutputRefusedError(StructuredOutputError):
    """The model refused to answer in the requested format; `text` is its refusal."""


class StructuredOutputCutOffError(StructuredOutputError):
    """The answer stopped at the output limit (`finish_reason` "length") before its JSON was
    whole; never parsed as a result. Raise `max_tokens`."""


class StructuredOutputStoppedError(StructuredOutputError):
    """The provider stopped the answer for a reason of its own (`finish_reason` "unknown": a
    content filter, safety, recitation, a guardrail); never parsed as a result, since what it
    let through need not be the answer. `reason` is the provider's own word for it."""

    def __init__(
        self, what: str, text: str, reason: str | None = None, message: Any = None
    ) -> None:
        self.reason = reason
        super().__init__(what, text, message=message)
