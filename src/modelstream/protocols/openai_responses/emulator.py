"""The emulator's OpenAI Responses: the turn written by the gateway's Responses writer
(`writer.py`), as an openai-responses upstream's events. A `reasoning` item with one summary
part, whose signature is its `encrypted_content`; each text is a `message` item; an image an
`image_generation_call` item."""

from __future__ import annotations

from typing import Any

from ...testing.emulation import (
    EmulatedStream,
    EventStyle,
    GatewayWrite,
    StreamEmulator,
    joined_text,
    last_text,
)
from .writer import openai_error_body, writer

STYLE = EventStyle(signature="encrypted_content", thinking={"part": "summary_text"})


def _options(stream: EmulatedStream) -> dict[str, Any]:
    # item ids as OpenAI's own (`rs_<response>_<n>`), not the gateway's `_gw_` ones, which a
    # gateway in front of the emulator would take for its own and drop from the fidelity
    return {"provider_item_ids": True}


def _responses_text(item: dict[str, Any]) -> str | None:
    if item.get("type") == "function_call_output":
        output = item.get("output")
        return output if isinstance(output, str) else joined_text(output, "input_text")
    if item.get("role") != "user":
        return None
    return joined_text(item.get("content"), "input_text")


def _last_user_text(body: dict[str, Any]) -> str:
    given = body.get("input")
    return given if isinstance(given, str) else last_text(given, _responses_text)


EMULATOR = StreamEmulator(
    write=GatewayWrite("openai-responses", writer, STYLE, _options),
    error_body=openai_error_body,
    last_user_text=_last_user_text,
    response_id_prefix="resp_emu",
    media=frozenset({"image"}),
)
