"""The floor of `bench_replay.py`: the least a replay to JSON lines must do, as a process.

    python bench/replay_floor.py FILE > /dev/null

Reads FILE in 64 KiB pieces (as `modelstream replay` reads it) and writes one line per event
payload: for an SSE body, each `data:` payload `orjson.loads`-ed and `orjson.dumps`-ed again
(frames split on the blank line, CRLF made LF first; `[DONE]` is not a payload); for Bedrock's
binary AWS event stream, each message split by its length prefix, its prelude CRC-32 and
message CRC-32 checked (what the format requires of every reader), its payload loaded and
dumped. One write per piece read. It imports nothing but `orjson` and the standard library's
smallest modules, so its start-up is what any Python program's is.
"""

from __future__ import annotations

import itertools
import struct
import sys
import zlib
from collections.abc import Callable, Iterator

import orjson

READ_BYTES = 64 * 1024  # what `replay` reads at a time
_PRELUDE = struct.Struct(">III")

Write = Callable[[bytes], object]


def floor_sse(pieces: Iterator[bytes], write: Write) -> int:
    """Each `data:` payload of an SSE body loaded and dumped again, one write per piece read.
    A frame cut by the end of a piece waits for the next one. Returns the lines written."""
    loads, dumps = orjson.loads, orjson.dumps
    held, count = b"", 0
    for piece in pieces:
        frames = (held + piece).replace(b"\r\n", b"\n").split(b"\n\n")
        held = frames.pop()
        out: list[bytes] = []
        for frame in frames:
            for line in frame.split(b"\n"):
                if line.startswith(b"data:") and line != b"data: [DONE]":
                    out.append(dumps(loads(line[5:])))
        if out:
            write(b"\n".join(out) + b"\n")
            count += len(out)
    for line in held.replace(b"\r\n", b"\n").split(b"\n"):  # a last frame with no blank line
        if line.startswith(b"data:") and line != b"data: [DONE]":
            write(dumps(loads(line[5:])) + b"\n")
            count += 1
    return count


def floor_eventstream(pieces: Iterator[bytes], write: Write) -> int:
    """Each message's payload of an AWS event stream loaded and dumped again, after checking
    its prelude CRC-32 and message CRC-32; one write per piece read. Returns the lines."""
    loads, dumps, prelude, crc32 = orjson.loads, orjson.dumps, _PRELUDE.unpack_from, zlib.crc32
    held, count = b"", 0
    for piece in pieces:
        body = held + piece
        view = memoryview(body)
        out: list[bytes] = []
        pos = 0
        while len(body) - pos >= 12:
            total, headers, prelude_crc = prelude(body, pos)
            end = pos + total
            if end > len(body):
                break  # the rest of this message is in the next piece
            if crc32(view[pos : pos + 8]) != prelude_crc:
                raise ValueError(f"bad prelude CRC in message {count + len(out)}")
            if crc32(view[pos : end - 4]) != int.from_bytes(body[end - 4 : end], "big"):
                raise ValueError(f"bad message CRC in message {count + len(out)}")
            out.append(dumps(loads(body[pos + 12 + headers : end - 4])))
            pos = end
        view.release()
        held = body[pos:]
        if out:
            write(b"\n".join(out) + b"\n")
            count += len(out)
    if held:
        raise ValueError(f"{len(held)} bytes after the last whole message")
    return count


def main(path: str) -> int:
    with open(path, "rb") as stream:
        first = stream.read(READ_BYTES)
        pieces = itertools.chain([first], iter(lambda: stream.read(READ_BYTES), b""))
        # an event-stream message starts with its length's top byte, never SSE text
        floor = floor_eventstream if first[:1] == b"\x00" else floor_sse
        floor(pieces, sys.stdout.buffer.write)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
