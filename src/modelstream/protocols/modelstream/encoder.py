"""modelstream server request encoder (`POST /v1/stream`, docs/server.md).

The body is `{"model", "messages", "config"}` (SPEC §7): the messages as they are, with the bytes
of inline items as base64, and the config's keys that have a value. `model` is the server's
`server_model_id`; the server routes it to its upstream and encodes the turn for that protocol,
so the only checks made here are the ones every protocol shares (message shapes, Config keys).
A stream is resumed with `GET /v1/streams/{response_id}` (`resume_path`).
"""

from __future__ import annotations

import base64
from typing import Any

from ...items import BINARY_TYPES
from ...types import Config, Message
from ..common.encoding import ProviderRequest, check_messages, items_of
from ..common.options import read_config

PROTOCOL = "modelstream"
STREAM_PATH = "/v1/stream"


class ModelstreamEncoder:
    protocol = PROTOCOL

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        check_messages(messages)
        options = read_config(config, self.protocol)
        body: dict[str, Any] = {
            "model": model,
            "messages": [wire_message(message) for message in messages],
            "config": options,
        }
        return ProviderRequest("POST", STREAM_PATH, body)


def resume_path(response_id: str) -> str:
    """Where the rest of a stream is read from (with `Last-Event-ID: <response_id>:<seq>`)."""
    return f"/v1/streams/{response_id}"


def wire_message(message: Message) -> dict[str, Any]:
    """A copy of `message` that JSON can carry: inline data as base64 (the caller's message is
    not modified; a message without binary items is only copied at the top)."""
    items = items_of(message)
    if not any(_is_binary(item) for item in items):
        return dict(message)
    return {**message, "content_items": [_wire_item(item) for item in items]}


def _is_binary(item: dict[str, Any]) -> bool:
    return item.get("type") in BINARY_TYPES and isinstance(item.get("data"), bytes | bytearray)


def _wire_item(item: dict[str, Any]) -> dict[str, Any]:
    if not _is_binary(item):
        return item
    return {**item, "data": base64.b64encode(bytes(item["data"])).decode("ascii")}
