"""An AWS event-stream writer independent of the library's (`encode_message`): messages built
by hand from the format's description with `struct` and `zlib` (prelude, typed headers, both
CRCs), so an error in the decoder cannot hide in a helper the decoder shares."""

from __future__ import annotations

import struct
import zlib


def header(name: str, type_byte: int, value: bytes) -> bytes:
    raw = name.encode()
    return bytes([len(raw)]) + raw + bytes([type_byte]) + value


def string(name: str, value: str) -> bytes:
    raw = value.encode()
    return header(name, 7, struct.pack(">H", len(raw)) + raw)


def message(headers: bytes, payload: bytes) -> bytes:
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(event_type: str, payload: str) -> bytes:
    headers = (
        string(":event-type", event_type)
        + string(":content-type", "application/json")
        + string(":message-type", "event")
    )
    return message(headers, payload.encode())


def exception(exception_type: str, payload: str) -> bytes:
    headers = (
        string(":exception-type", exception_type)
        + string(":content-type", "application/json")
        + string(":message-type", "exception")
    )
    return message(headers, payload.encode())
