"""Recording one turn as a trace: `TurnRecorder` watches the events as they flow and turns the
stream's result into a `TraceTurn`, a plain value any sink (SQLite, OpenTelemetry) can store.

    events ─► TurnRecorder.observe (item start/end times) ─► finish(result) ─► TraceTurn ─► sinks

Secrets never reach a trace: the config keeps no key that looks like a credential (an
`extra_body` entry named `api_key`, `authorization`, `*token*`, `*secret*`, …), and every string
in the turn has each credential of the client masked (its key, or what its signer holds: AWS
keys and session tokens, Google access tokens), through the client's `redact` when it is given.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict

from ..auth.secret import mask_secret
from ..results import FinalResponse, PartialResponse
from ..types import Config, DoneItem, Event, EventItem, FinishReason, Message, Usage

TraceSource = Literal["client", "server"]
TurnStatus = Literal["final", "cancelled", "failed", "incomplete"]

REDACTED = "***"
_log = logging.getLogger("modelstream.traces")


class ItemTiming(TypedDict):
    """When one item streamed, in ms since the turn started; `end_ms` None: never finished."""

    type: str  # the item kind: text, thinking, tool_call, ...
    start_ms: float
    end_ms: float | None


@dataclass(frozen=True)
class TraceTurn:
    """One recorded turn: what was asked, what came back, how it ended and how long it took."""

    trace_id: str
    source: TraceSource
    model: str  # the model asked for
    client_type: str
    provider: str | None
    config: dict[str, Any]  # without trace_id and without secrets
    messages: list[Message]  # the request
    items: list[DoneItem]  # the done items, in order
    open_item: EventItem | None  # a partial's unfinished item
    usage: Usage | None
    finish_reason: FinishReason | None
    raw_finish_reason: str | None
    status: TurnStatus
    reason: str | None  # why a partial ended; None when final
    response_id: str | None
    response_model: str | None
    timings: dict[str, float]  # ttfb_ms, ttfe_ms, total_ms (from the turn's start)
    item_timings: list[ItemTiming]  # one per item, then the open item
    created_at: int  # Unix ms when the turn started
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    turn: int | None = None  # 1-based position in its trace, set by the store
    # parts the store kept only as {"bytes", "sha256", "head"} (TraceLimits.max_turn_bytes)
    truncated: dict[str, Any] = field(default_factory=dict)
    # what the turn cost by the model catalogue (TurnCost.as_json: exact decimal strings, None
    # for an unknown part); None when the catalogue has no price for the model
    cost: dict[str, Any] | None = None
    # the name of the server's virtual key the turn was served for; None for a static key, an
    # open server and the library's clients (and left out of the stored JSON then)
    key_name: str | None = None


class TraceSink(Protocol):
    """Where finished turns go: `TraceStore`, `OtelExporter`, or your own."""

    def append(self, turn: TraceTurn) -> object: ...


class TurnRecorder:
    """Builds the `TraceTurn` of one stream: `observe` each event (cheap: it notes only when
    items start and end), then `finish` with the final or partial response."""

    def __init__(
        self,
        *,
        trace_id: str,
        model: str,
        client_type: str,
        provider: str | None,
        config: Config | None,
        messages: Sequence[Message],
        source: TraceSource = "client",
        secrets: Iterable[str] = (),
        redact: Callable[[str], str] | None = None,
        started_at_ms: float | None = None,
        key_name: str | None = None,
    ) -> None:
        """`secrets` are masked in the finished turn, and so is whatever `redact` masks (a
        client's or a signer's `redact`, asked when the turn finishes: it knows every token
        the stream was signed with, refreshed ones included). `key_name`: the virtual key the
        turn is served for, if any."""
        self.trace_id = trace_id
        self.source: TraceSource = source
        self._model = model
        self._client_type = client_type
        self._provider = provider
        self._config = dict(config or {})
        self._messages = list(messages)  # the caller may append to its list after the call
        self._secrets = [s for s in secrets if s]
        self._redact = redact
        self._key_name = key_name
        self._started_ms = time.time() * 1000 if started_at_ms is None else started_at_ms
        self._timeline: list[ItemTiming] = []
        self._open = False
        self._notes: list[dict[str, Any]] = []

    def observe(self, event: Event) -> None:
        """Note the item an event carries: the first delta of a group starts it, `.done` ends it."""
        for item in event["content_items"]:
            kind, _, phase = item["type"].rpartition(".")
            if phase == "delta" and self._open:
                continue  # the common case: a group already started, nothing to note
            at = max(0.0, round(event["created_at"] - self._started_ms, 1))
            if phase == "delta" and not self._open:
                self._timeline.append({"type": kind, "start_ms": at, "end_ms": None})
                self._open = True
            elif phase == "done":
                if not self._open:  # a done with no delta (not produced by the grammar)
                    self._timeline.append({"type": kind, "start_ms": at, "end_ms": None})
                self._timeline[-1]["end_ms"] = at
                self._open = False

    def note(self, diagnostic: dict[str, Any]) -> None:
        """One more diagnostic for the turn, from outside its stream (a server's switch of
        deployment), listed after the stream's own."""
        self._notes.append(diagnostic)

    def finish(self, result: FinalResponse | PartialResponse) -> TraceTurn:
        """The turn, from the stream's result."""
        metadata = result.metadata
        if isinstance(result, FinalResponse):
            items = list(result.message["content_items"])
            open_item: EventItem | None = None
            usage = result.message.get("usage_metadata")
            status: TurnStatus = "final"
            reason = None
        else:
            items, open_item, usage = list(result.items), result.open_item, result.usage
            status, reason = result.status, result.reason
        turn = TraceTurn(
            trace_id=self.trace_id,
            source=self.source,
            model=self._model,
            client_type=self._client_type,
            provider=self._provider or metadata.provider,
            config=redact_config(self._config),
            messages=self._messages,
            items=items,
            open_item=open_item,
            usage=usage,
            finish_reason=metadata.finish_reason,
            raw_finish_reason=metadata.raw_finish_reason,
            status=status,
            reason=reason,
            response_id=metadata.response_id,
            response_model=metadata.model,
            timings=dict(metadata.timings),
            item_timings=[ItemTiming(**timing) for timing in self._timeline],
            created_at=int(self._started_ms),
            diagnostics=[*metadata.diagnostics, *self._notes],
            cost=_cost_json(result),
            key_name=self._key_name,
        )
        if not self._secrets and self._redact is None:
            return turn
        return mask_secrets(turn, self._secrets, self._redact)


def _cost_json(result: FinalResponse | PartialResponse) -> dict[str, Any] | None:
    cost = result.cost
    return None if cost is None else cost.as_json()


def record_turn(
    recorder: TurnRecorder, result: FinalResponse | PartialResponse, sinks: Iterable[TraceSink]
) -> None:
    """Finish the turn and publish it; recording never fails the stream it records."""
    try:
        turn = recorder.finish(result)
    except Exception:
        _log.exception("could not record a turn of trace %r", recorder.trace_id)
        return
    publish(turn, sinks)


def publish(turn: TraceTurn, sinks: Iterable[TraceSink]) -> None:
    """Give `turn` to every sink; a sink that fails is logged and never fails the stream."""
    for sink in sinks:
        try:
            sink.append(turn)
        except Exception as exc:
            _log.warning(
                "could not record turn of trace %r in %r: %s: %s",
                turn.trace_id,
                sink,
                type(exc).__name__,
                exc,
            )


# --- secrets -----------------------------------------------------------------------------

_SECRET_WORDS = frozenset(
    {
        "apikey",
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "credential",
        "credentials",
        "passwd",
        "password",
        "secret",
        "secrets",
        "token",
    }
)
_KEY_QUALIFIERS = frozenset({"api", "access", "private", "secret", "session", "auth", "x"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_SECRET_VALUE = re.compile(r"^\s*(bearer|basic)\s+\S", re.IGNORECASE)


def looks_like_credential(key: str) -> bool:
    """A config key that may hold a credential: its words include token, secret, password,
    authorization, ... (but not `tokens`, as in `max_tokens`), or it is an `api_key`-like key."""
    words = [word.lower() for word in _WORD.findall(key)]
    if any(word in _SECRET_WORDS for word in words):
        return True
    return "key" in words and (len(words) == 1 or any(w in _KEY_QUALIFIERS for w in words))


def redact_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config as recorded: no `trace_id` (it is the trace's key), and no entry anywhere in
    `extra_body` whose name looks like a credential or whose value is an auth header."""
    out = {key: value for key, value in config.items() if key != "trace_id"}
    if "extra_body" in out:
        out["extra_body"] = _without_credentials(out["extra_body"])
    return out


def _without_credentials(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _without_credentials(item)
            for key, item in value.items()
            if not (isinstance(key, str) and looks_like_credential(key))
            and not (isinstance(item, str) and _SECRET_VALUE.match(item))
        }
    if isinstance(value, list):
        return [_without_credentials(item) for item in value]
    return value


def mask_secrets(
    turn: TraceTurn, secrets: Sequence[str], redact: Callable[[str], str] | None = None
) -> TraceTurn:
    """`turn` with each secret, and what `redact` masks, masked as `***` in its config, items,
    reason and diagnostics (where it stands as a whole token and is long enough:
    `auth.secret.mask_secret`)."""
    fields = {name: _masked(getattr(turn, name), secrets, redact) for name in _TEXT_FIELDS}
    return TraceTurn(**{**turn.__dict__, **fields})


# Not the request messages: they are the caller's own content, and masking the whole history at
# every turn would make recording cost grow with the conversation.
_TEXT_FIELDS = ("config", "items", "open_item", "reason", "diagnostics")


def _masked(value: Any, secrets: Sequence[str], redact: Callable[[str], str] | None) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            value = mask_secret(value, secret, REDACTED)
        return redact(value) if redact is not None else value
    if isinstance(value, dict):
        return {key: _masked(item, secrets, redact) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item, secrets, redact) for item in value]
    return value


__all__ = [
    "ItemTiming",
    "TraceSink",
    "TraceSource",
    "TraceTurn",
    "TurnRecorder",
    "TurnStatus",
    "looks_like_credential",
    "publish",
    "record_turn",
    "redact_config",
]
