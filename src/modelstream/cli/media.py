"""`chat --save-media DIR`: the images and audio of a turn (its `inline_data` items) as files.

Raw PCM (Gemini's `audio/L16`, Chat Completions' `audio/pcm`) has no container a player can
open, so it is written as WAV: 16-bit mono at the rate the mime type names (24 kHz when it
names none). Names are made here, never taken from the provider: `<stamp>-<n>.<ext>`.
"""

from __future__ import annotations

import io
import mimetypes
import os
import wave
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

_EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/webp": ".webp",
    "image/gif": ".gif",
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/mpeg": ".mp3",
    "audio/mp3": ".mp3",
    "audio/ogg": ".ogg",
    "audio/opus": ".opus",
    "audio/flac": ".flac",
    "audio/aac": ".aac",
}
_RAW_PCM = {"audio/pcm", "audio/l16"}
DEFAULT_PCM_RATE = 24_000


def save_media(items: Iterable[Mapping[str, Any]], directory: Path, stamp: str) -> list[Path]:
    """Write every `inline_data` item to `directory` (made if missing); the paths written."""
    media = [
        item for item in items if item.get("type") in ("inline_data.done", "inline_data.delta")
    ]
    if not media:
        return []
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for number, item in enumerate(media, start=1):
        data, extension = file_content(
            bytes(item.get("data") or b""), str(item.get("mime_type") or "")
        )
        path = directory / f"{stamp}-{number}{extension}"
        # never through a link planted at that name (OSError ELOOP): only a file of our own
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(path, flags, 0o644), "wb") as file:
            file.write(data)
        written.append(path)
    return written


def file_content(data: bytes, mime_type: str) -> tuple[bytes, str]:
    """(the file's bytes, its extension) for media of this mime type."""
    base, _, parameters = mime_type.partition(";")
    base = base.strip().lower()
    if base in _RAW_PCM:
        return _wav(data, _rate(parameters)), ".wav"
    extension = _EXTENSIONS.get(base) or mimetypes.guess_extension(base) or ".bin"
    return data, extension


def _rate(parameters: str) -> int:
    for parameter in parameters.split(";"):
        name, _, value = parameter.strip().partition("=")
        if name.strip().lower() == "rate" and value.strip().isdigit():
            return int(value.strip())
    return DEFAULT_PCM_RATE


def _wav(pcm: bytes, rate: int) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)  # 16-bit little-endian, as both providers stream it
        wav.setframerate(rate)
        wav.writeframes(pcm)
    return buffer.getvalue()
