"""Incremental AWS event-stream decoder (bytes → messages), sans-IO.

The body of a streaming AWS call (`application/vnd.amazon.eventstream`, Bedrock
ConverseStream) is a sequence of binary messages:

    total length (4) | headers length (4) | prelude CRC-32 (4) | headers | payload | CRC-32 (4)

lengths big-endian; the prelude CRC covers the two lengths, the message CRC everything before it.
A header is a 1-byte name length, the name, a 1-byte value type and the value: 0 true, 1 false
(no value), 2 byte, 3 short, 4 int, 5 long (signed, big-endian), 6 byte array and 7 string
(2-byte length first), 8 timestamp (8-byte milliseconds since the epoch), 9 UUID (16 bytes).

Both CRCs are checked (`zlib.crc32`). A bad message CRC is a `CorruptedMessageError` that the
decoder can step over (the lengths were intact); a bad prelude CRC means no later message can be
found, so the decoder stays failed. A length over the frame limit is a `FrameTooLargeError`,
bytes left at the end of the body an `IncompleteStreamError`.

Written by hand: botocore's `EventStreamBuffer` parses the same format, but botocore is only an
optional extra here (for SigV4 credentials) while decoding is core, and the format is small.
It never copies the body byte by byte: a feed that completes messages is read in place, and the
start of a message still arriving is held as a list of pieces joined once when enough bytes are
there, so a message arriving in small pieces costs linear time.

`EventStreamDecoder` gives whole messages with their typed headers; `EventStreamFramer` turns
them into the pipeline's frames: `(event, payload text, None, None)`, where `event` is the
`:event-type` of an event message, `exception:<:exception-type>` of an exception message and
`error:<:error-code>` of an error message (whose frame data is its `:error-message`).
"""

from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Union

from ..errors import CorruptedMessageError, FrameTooLargeError, IncompleteStreamError
from .sse import DEFAULT_MAX_FRAME_BYTES, RawFrame

HeaderValue = Union[bool, int, bytes, str, datetime, uuid.UUID]  # noqa: UP007 (a runtime alias)

_PRELUDE = struct.Struct(">III")  # total length, headers length, prelude CRC
_CRC = struct.Struct(">I")
_PRELUDE_BYTES = 12
_MIN_MESSAGE = _PRELUDE_BYTES + 4  # no headers, no payload
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_INTEGERS = {2: struct.Struct(">b"), 3: struct.Struct(">h"), 4: struct.Struct(">i")}
_LONG = struct.Struct(">q")
_SHORT_LENGTH = struct.Struct(">H")


@dataclass(frozen=True, slots=True)
class EventStreamMessage:
    headers: dict[str, HeaderValue] = field(default_factory=dict)
    payload: bytes = b""


class EventStreamDecoder:
    """Feed bytes in any split with `feed`; pull whole messages with `next_message`.

    Errors come in order: the messages before a damaged one are all returned first, then
    `next_message` raises for it; after a `CorruptedMessageError` with `resumable` set, the
    next call goes on with the message after it."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.messages = 0  # messages read so far: the index of the next one
        self._buf = b""  # the bytes being read, from `_pos` on
        self._view = memoryview(self._buf)
        self._pos = 0
        self._pieces: list[bytes] = []  # later feeds, held until `_need` bytes are there
        self._held = 0
        self._need = _PRELUDE_BYTES  # bytes the next message needs before it can be read
        self._failed: Exception | None = None  # a damaged prelude: nothing can follow

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        if self._pos >= len(self._buf) and not self._pieces:
            self._set(chunk)  # the common case: nothing held over, read the chunk in place
            return
        self._pieces.append(chunk)
        self._held += len(chunk)
        if len(self._buf) - self._pos + self._held >= self._need:
            self._set(self._buf[self._pos :] + b"".join(self._pieces))
            self._pieces, self._held = [], 0

    def next_message(self) -> EventStreamMessage | None:
        """The next whole message, or None until more bytes arrive."""
        raw = self.next_raw()
        if raw is None:
            return None
        return EventStreamMessage(parse_headers(raw[0], self.messages - 1), raw[1])

    def next_raw(self) -> tuple[bytes, bytes] | None:
        """The next whole message as (headers bytes, payload), or None until more bytes."""
        if self._failed is not None:
            raise self._failed
        if self._pieces:
            return None  # still short of `_need`
        buf, pos = self._buf, self._pos
        available = len(buf) - pos
        if available < _PRELUDE_BYTES:
            self._need = _PRELUDE_BYTES
            return None
        total, headers_length, prelude_crc = _PRELUDE.unpack_from(buf, pos)
        actual = zlib.crc32(self._view[pos : pos + 8])
        if actual != prelude_crc:
            self._failed = CorruptedMessageError(self.messages, "prelude", prelude_crc, actual)
            raise self._failed
        if total > self.max_frame_bytes:
            self._failed = FrameTooLargeError(self.max_frame_bytes, total)
            raise self._failed
        if total < _MIN_MESSAGE or headers_length > total - _MIN_MESSAGE:
            self._failed = IncompleteStreamError(
                "well-formed event-stream message",
                f"message {self.messages} declares {total} bytes with {headers_length} bytes "
                "of headers, which cannot be",
            )
            raise self._failed
        if available < total:
            self._need = total
            return None
        end = pos + total
        self._pos = end
        self._need = _PRELUDE_BYTES
        index = self.messages
        self.messages += 1
        message_crc = int.from_bytes(buf[end - 4 : end], "big")
        actual = zlib.crc32(self._view[pos : end - 4])
        if actual != message_crc:
            raise CorruptedMessageError(index, "message", message_crc, actual)
        headers_end = pos + _PRELUDE_BYTES + headers_length
        return buf[pos + _PRELUDE_BYTES : headers_end], buf[headers_end : end - 4]

    def end(self) -> None:
        """The body is over: bytes of a message still held mean it was cut off."""
        if self._failed is not None:
            raise self._failed
        left = len(self._buf) - self._pos + self._held
        if not left:
            return
        if left < _PRELUDE_BYTES:
            where = f"inside the prelude of message {self.messages} ({left} of 12 bytes)"
        else:
            where = f"inside message {self.messages} ({left} of its {self._need} bytes)"
        raise IncompleteStreamError("complete event-stream message", f"the body ended {where}")

    def _set(self, data: bytes) -> None:
        self._buf, self._pos = data, 0
        self._view = memoryview(data)


def parse_headers(data: bytes, message: int = 0) -> dict[str, HeaderValue]:
    """A message's headers by name, each value typed as its type byte says."""
    headers: dict[str, HeaderValue] = {}
    pos, size = 0, len(data)
    try:
        while pos < size:
            name_length = data[pos]
            name = data[pos + 1 : pos + 1 + name_length].decode("utf-8")
            pos += 1 + name_length
            kind = data[pos]
            pos += 1
            value: HeaderValue
            if kind == 7 or kind == 6:
                (length,) = _SHORT_LENGTH.unpack_from(data, pos)
                raw = data[pos + 2 : pos + 2 + length]
                if len(raw) != length:
                    raise IndexError(pos)
                value = raw.decode("utf-8") if kind == 7 else raw
                pos += 2 + length
            elif kind in _INTEGERS:
                number = _INTEGERS[kind]
                (value,) = number.unpack_from(data, pos)
                pos += number.size
            elif kind == 0 or kind == 1:
                value = kind == 0
            elif kind == 5 or kind == 8:
                (count,) = _LONG.unpack_from(data, pos)
                value = count if kind == 5 else _EPOCH + timedelta(milliseconds=count)
                pos += 8
            elif kind == 9:
                raw = data[pos : pos + 16]
                if len(raw) != 16:
                    raise IndexError(pos)
                value = uuid.UUID(bytes=raw)
                pos += 16
            else:
                raise ValueError(f"header {name!r} has the unknown value type {kind}")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as exc:
        raise IncompleteStreamError(
            "well-formed event-stream message",
            f"the headers of message {message} cannot be read ({type(exc).__name__}: {exc})",
        ) from None
    return headers


def frame_event(headers: dict[str, HeaderValue]) -> str:
    """The frame's event name (module docstring): what the adapter dispatches on."""
    message_type = _text(headers.get(":message-type", "event"))
    if message_type == "event":
        return _text(headers.get(":event-type", ""))
    if message_type == "exception":
        return f"exception:{_text(headers.get(':exception-type', ''))}"
    if message_type == "error":
        return f"error:{_text(headers.get(':error-code', ''))}"
    return f"{message_type}:"


def _text(value: HeaderValue) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class EventStreamFramer:
    """The `Framer` of the AWS event stream: whole messages as the pipeline's frames.

    Most messages of a stream repeat a few header blocks byte for byte (one per event type),
    so the event name is looked up by the raw header bytes, parsed once per distinct block."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.comments = 0  # the event stream has no keep-alive comments
        self.decoder = EventStreamDecoder(max_frame_bytes)
        self._names: dict[bytes, tuple[str, str | None]] = {}
        self._salvaged: list[RawFrame] = []

    def feed_fields(self, chunk: bytes) -> list[RawFrame]:
        self.decoder.feed(chunk)
        return self._frames()

    def end_fields(self) -> list[RawFrame]:
        frames = self._frames()
        self.decoder.end()
        return frames

    def take_salvaged(self) -> list[RawFrame]:
        """The frames read before a damaged message raised: they come before its error."""
        frames, self._salvaged = self._salvaged, []
        return frames

    def _frames(self) -> list[RawFrame]:
        frames: list[RawFrame] = []
        decoder, names = self.decoder, self._names
        try:
            self._run(frames)
            while (raw := decoder.next_raw()) is not None:  # what the run left: the checks
                header_bytes, payload = raw
                name, data = names.get(header_bytes) or self._name(header_bytes)
                frames.append(
                    (name, payload.decode("utf-8", "replace") if data is None else data, None, None)
                )
        except CorruptedMessageError:
            self._salvaged = frames
            raise
        return frames

    def _run(self, frames: list[RawFrame]) -> None:
        """The hot path: every whole, intact message of the buffer with a header block seen
        before, read in one loop with the state in locals. It stops at anything else (a cut-off
        message, a new header block, a failed check), which `next_raw` then reads or reports."""
        decoder = self.decoder
        if decoder._pieces or decoder._failed is not None:
            return
        buf, view, pos, names = decoder._buf, decoder._view, decoder._pos, self._names
        size, limit = len(buf), decoder.max_frame_bytes
        crc32, unpack, append = zlib.crc32, _PRELUDE.unpack_from, frames.append
        message_crc = _CRC.unpack_from
        read = 0
        while size - pos >= _PRELUDE_BYTES:
            total, headers_length, prelude_crc = unpack(buf, pos)
            end = pos + total
            if (
                end > size
                or total > limit
                or total < _MIN_MESSAGE + headers_length
                or crc32(buf[pos : pos + 8]) != prelude_crc
                or crc32(view[pos : end - 4]) != message_crc(buf, end - 4)[0]
            ):
                break
            headers_end = pos + _PRELUDE_BYTES + headers_length
            known = names.get(buf[pos + _PRELUDE_BYTES : headers_end])
            if known is None:
                break
            name, data = known
            if data is None:
                data = buf[headers_end : end - 4].decode("utf-8", "replace")
            append((name, data, None, None))
            pos = end
            read += 1
        decoder._pos = pos
        decoder.messages += read

    def _name(self, header_bytes: bytes) -> tuple[str, str | None]:
        """(event name, frame data when the headers carry it instead of the payload)."""
        headers = parse_headers(header_bytes, self.decoder.messages - 1)
        name = frame_event(headers)
        data = _text(headers.get(":error-message", "")) if name.startswith("error:") else None
        if len(self._names) < 64:  # streams repeat a handful of header blocks
            self._names[header_bytes] = (name, data)
        return name, data


def encode_message(headers: dict[str, HeaderValue], payload: bytes) -> bytes:
    """One message, bytes on the wire (the emulator's writer and the tests use it). Python
    types pick the value type: bool, int (as int32, or int64 beyond it), bytes, str, datetime
    and UUID; a `(type byte, value)` pair chooses byte, short or long explicitly."""
    encoded = b"".join(_header(name, value) for name, value in headers.items())
    total = _MIN_MESSAGE + len(encoded) + len(payload)
    prelude = struct.pack(">II", total, len(encoded))
    prelude += zlib.crc32(prelude).to_bytes(4, "big")
    body = prelude + encoded + payload
    return body + zlib.crc32(body).to_bytes(4, "big")


def _header(name: str, value: HeaderValue | tuple[int, int]) -> bytes:
    raw_name = name.encode("utf-8")
    head = bytes([len(raw_name)]) + raw_name
    if isinstance(value, tuple):
        kind, number = value
        packer = _LONG if kind == 5 else _INTEGERS[kind]
        return head + bytes([kind]) + packer.pack(number)
    if isinstance(value, bool):
        return head + bytes([0 if value else 1])
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return head + b"\x04" + _INTEGERS[4].pack(value)
        return head + b"\x05" + _LONG.pack(value)
    if isinstance(value, bytes | str):
        raw = value.encode("utf-8") if isinstance(value, str) else value
        kind = 7 if isinstance(value, str) else 6
        return head + bytes([kind]) + _SHORT_LENGTH.pack(len(raw)) + raw
    if isinstance(value, datetime):
        milliseconds = (value - _EPOCH) // timedelta(milliseconds=1)
        return head + b"\x08" + _LONG.pack(milliseconds)
    return head + b"\x09" + value.bytes


__all__ = [
    "EventStreamDecoder",
    "EventStreamFramer",
    "EventStreamMessage",
    "HeaderValue",
    "encode_message",
    "frame_event",
    "parse_headers",
]
