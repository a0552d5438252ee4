"""The server's wire (SPEC §7, MMSP-compatible): the request body of `POST /v1/stream`, the SSE
frames of a stream, and the `Last-Event-ID` of a resume.

A stream is `id: <response_id>:<seq>` + `data: <event JSON>` per event, `seq` counting from 1,
then `data: [DONE]`. An error after the stream began is one more frame, with its own id,
`data: {"error": {...}}`, before `[DONE]`. `: keep-alive` comments fill idle time.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import InvalidMessageError
from ..jsonwire import loads_messages
from ..openai_messages import from_openai_style
from ..shapes import ShapeError, check_config, check_messages
from ..types import Config, Message
from ..web.bodies import json_object
from ..web.refusals import Refusal, invalid_request

if TYPE_CHECKING:
    from .callers import Caller

DONE = b"data: [DONE]\n\n"
KEEPALIVE = b": keep-alive\n\n"
EVENT_STREAM = "text/event-stream; charset=utf-8"
RESPONSE_ID_HEADER = "x-response-id"
# the deployment that answered a gateway turn (its name in the config; never its key)
DEPLOYMENT_HEADER = "x-modelstream-deployment"
_RESPONSE_ID = re.compile(r"resp_[0-9a-f]{32}")
_STREAM_FIELDS = frozenset({"model", "messages", "config"})  # SPEC §7
_SEQ = re.compile(r"[0-9]{1,18}")


def new_response_id() -> str:
    """A random, unguessable response id: the handle a client resumes with."""
    return "resp_" + secrets.token_hex(16)


def is_response_id(value: str) -> bool:
    return _RESPONSE_ID.fullmatch(value) is not None


def frames(response_id: str, batch: list[tuple[int, bytes]]) -> bytes:
    """SSE frames for stored entries (each entry's data is one line of JSON)."""
    prefix = b"id: " + response_id.encode("ascii") + b":"
    return b"".join(b"%s%d\ndata: %s\n\n" % (prefix, seq, data) for seq, data in batch)


def error_frame(error: dict[str, Any]) -> bytes:
    """An error line without an id: for failures of the reading side, not of the stream."""
    return b"data: " + orjson.dumps(error) + b"\n\n"


@dataclass(frozen=True)
class StreamRequest:
    model: str
    messages: list[Message]
    config: Config
    caller: str | None = None  # `web.keys.key_hash` of the caller's key; None on an open server
    # what a reader needs to write the stream again, stored beside its owner (a gateway stream:
    # the caller's wire and its writer's context, server/routes/gateway.py); "" for none
    meta: str = ""
    # the config for an upstream that speaks the named protocol, when it differs by protocol (a
    # gateway request's native fields go only to its own protocol); None: `config` for all. A
    # fallback whose protocol cannot take the request raises a `Refusal` and is passed over
    config_for: Callable[[str], Config] | None = field(default=None, compare=False, repr=False)
    # the caller, when it came with a virtual key: its turns are admitted and charged to it
    key: Caller | None = field(default=None, compare=False, repr=False)

    def config_of(self, protocol: str) -> Config:
        return self.config if self.config_for is None else self.config_for(protocol)


def parse_stream_request(body: bytes) -> StreamRequest:
    """The `{"model", "messages", "config"}` of a POST /v1/stream body; raises `Refusal` (400)
    naming the first field whose shape is not the SPEC's (`modelstream.shapes`)."""
    data = json_object(body, '{"model", "messages", ...}')
    unknown = sorted(key for key in data if key not in _STREAM_FIELDS)
    if unknown:
        raise invalid_request(
            f"{unknown[0]!r} is not a field of a stream request: send model, messages and "
            "config (provider fields go in config.extra_body)",
            path=unknown[0],
        )
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise invalid_request("'model' must be a non-empty string; GET /v1/models lists them")
    raw_messages = data.get("messages")
    if not isinstance(raw_messages, list):
        raise invalid_request("'messages' must be a list of messages")
    config = data.get("config")
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise invalid_request("'config' must be an object (or null)")
    try:
        raw_messages = from_openai_style(raw_messages)  # OpenAI-style ones become SPEC messages
        check_messages(raw_messages, binary="base64")
    except InvalidMessageError as exc:
        raise Refusal(400, "InvalidMessageError", str(exc), outcome="invalid_request") from None
    except ShapeError as exc:
        raise Refusal(
            400,
            "InvalidMessageError",
            str(exc),
            outcome="invalid_request",
            fields={"path": exc.path},
        ) from None
    try:
        check_config(config)
    except ShapeError as exc:
        raise bad_config(exc.path.removeprefix("config."), str(exc)) from None
    messages = loads_messages(orjson.dumps(raw_messages))  # base64 `data` back to bytes
    return StreamRequest(model, messages, config)  # type: ignore[arg-type]


def bad_config(parameter: str, message: str) -> Refusal:
    """A 400 for a config value the server will not send, typed as the library's own
    `UnsupportedParameterError` (a modelstream client raises it as such)."""
    return Refusal(
        400,
        "UnsupportedParameterError",
        message,
        outcome="invalid_request",
        fields={"parameter": parameter, "protocol": "modelstream", "path": f"config.{parameter}"},
    )


def parse_resume_point(response_id: str, last_event_id: str | None, after: str | None) -> int:
    """The seq a resume starts after: from `Last-Event-ID: <response_id>:<seq>` (preferred, as
    browsers send it) or `?after=<seq>`; 0 (the whole stream) when neither is given."""
    if last_event_id is not None and last_event_id.strip():
        stream_id, colon, seq = last_event_id.strip().rpartition(":")
        if not colon or stream_id != response_id or not _SEQ.fullmatch(seq):
            raise _bad_resume(f"Last-Event-ID must be '{response_id}:<seq>'")
        return int(seq)
    if after is not None:
        if not _SEQ.fullmatch(after):
            raise _bad_resume("?after= must be a sequence number (0 for the whole stream)")
        return int(after)
    return 0


def _bad_resume(message: str) -> Refusal:
    return invalid_request(message + ", as in the 'id:' of the last event received")
