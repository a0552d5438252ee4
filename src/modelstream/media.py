"""Image and file URLs in messages: which kinds are sent, what a `data:` URL holds, and what a
local media file holds.

Encoders pass URLs through and never download or read anything: an http(s) URL goes to the
provider as a URL, a `data:` URL as its bytes, and any other URL (a file path, `file:`, `ftp:`)
is refused before sending. A file path is read earlier, by the message helpers
(`user(images=[path])`), through `read_media_file`: only a regular file (never a link, a FIFO or
a device), no larger than the limit, whose media type is read from its first bytes and must
agree with its name (docs/media.md, "Sending files").
"""

from __future__ import annotations

import base64
import mimetypes
import os
import stat
import urllib.parse
from typing import Any, Literal

from .errors import ConfigurationError, InvalidMessageError

UrlKind = Literal["data", "http"]


def url_kind(url: Any, *, message_index: int | None = None) -> UrlKind:
    """ "data" or "http" (schemes compared case-insensitively); any other URL is refused, since
    encoders never read files."""
    if isinstance(url, str):
        lowered = url[:8].lower()
        if lowered.startswith("data:"):
            return "data"
        if lowered.startswith(("http://", "https://")):
            return "http"
    where = f"message {message_index}: " if message_index is not None else ""
    raise InvalidMessageError(
        f"{where}an image URL must be http(s) or data:, got {str(url)[:40]!r} "
        "(files are never read)"
    )


def parse_data_url(url: str) -> tuple[str, str]:
    """(media type, base64 data) of a `data:` URL; percent-encoded data is base64-encoded."""
    header, comma, payload = url[len("data:") :].partition(",")
    if not comma:
        raise InvalidMessageError("a data: URL needs a comma before its data")
    params = header.split(";")
    media_type = params[0].strip().lower()
    if "base64" in (p.strip().lower() for p in params[1:]):
        data = "".join(payload.split())
    else:
        data = base64.b64encode(urllib.parse.unquote_to_bytes(payload)).decode()
    return media_type, data


def guess_media_type(url: str) -> str | None:
    """The media type an http(s) URL's extension suggests (the file is never fetched)."""
    guessed, _ = mimetypes.guess_type(urllib.parse.urlsplit(url).path)
    return guessed


# --- local files: what `user(images=[path])` reads ------------------------------------------

ENV_MAX_MEDIA_BYTES = "MODELSTREAM_MAX_MEDIA_BYTES"
MAX_MEDIA_BYTES = 20 * 1024 * 1024  # the default limit of a local media file: 20 MiB

# What a file's name says it holds. Our own table, not `mimetypes`, whose answers depend on the
# machine (/etc/mime.types): the same file is read the same way everywhere.
_BY_EXTENSION = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".jpe": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".heic": "image/heic",
    ".heif": "image/heif",
    ".avif": "image/avif",
    ".pdf": "application/pdf",
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".oga": "audio/ogg",
    ".opus": "audio/ogg",
    ".flac": "audio/flac",
    ".aac": "audio/aac",
    ".m4a": "audio/mp4",
    ".mp4": "video/mp4",
    ".m4v": "video/mp4",
    ".mov": "video/quicktime",
    ".webm": "video/webm",
    ".mkv": "video/x-matroska",
}
# One container under several names: an ISO media file's brand does not always say audio or
# video, and a HEIF's brand is not always `heic`. The extension picks among them.
_SAME_CONTAINER = {
    "audio/mp4": "video/mp4",
    "video/quicktime": "video/mp4",
    "image/heif": "image/heic",
    "image/avif": "image/heic",
    "video/x-matroska": "video/webm",
}
# the first extension listed for each type: .jpg for image/jpeg
_EXTENSION_OF = {mime: ext for ext, mime in reversed(_BY_EXTENSION.items())}
_PREFIXES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"ID3", "audio/mpeg"),  # an MP3 with ID3v2 tags
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
)
_RIFF = {b"WEBP": "image/webp", b"WAVE": "audio/wav"}
_ISO_BRANDS = {  # the major brand of an `ftyp` box
    b"heic": "image/heic", b"heix": "image/heic", b"hevc": "image/heic", b"heim": "image/heic",
    b"heis": "image/heic", b"mif1": "image/heif", b"msf1": "image/heif", b"avif": "image/avif",
    b"M4A ": "audio/mp4", b"M4B ": "audio/mp4", b"qt  ": "video/quicktime",
}  # fmt: skip
_KNOWN = "PNG, JPEG, GIF, WebP, HEIC, AVIF, PDF, WAV, MP3, Ogg, FLAC, AAC, MP4, QuickTime or WebM"
_NOT_REGULAR = (
    (stat.S_ISLNK, "a symbolic link", "pass the path of the file it points to"),
    (stat.S_ISDIR, "a directory", "pass a file in it"),
    (stat.S_ISFIFO, "a FIFO", "save the media to a file and pass that"),
    (stat.S_ISSOCK, "a socket", "save the media to a file and pass that"),
    (stat.S_ISCHR, "a character device", "save the media to a file and pass that"),
    (stat.S_ISBLK, "a block device", "save the media to a file and pass that"),
)


class MediaFileError(InvalidMessageError, ValueError):
    """A local media file cannot be sent: not a regular file, too large, or not what its name
    says. The message names the file and says what to do."""


def sniff_media_type(data: bytes) -> str | None:
    """The media type the first bytes of `data` show, or None for a kind not known here."""
    for prefix, media_type in _PREFIXES:
        if data.startswith(prefix):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] in _RIFF:
        return _RIFF[data[8:12]]
    if data[4:8] == b"ftyp":  # ISO base media: MP4, M4A, QuickTime, HEIF
        return _ISO_BRANDS.get(data[8:12], "video/mp4")
    if data[:4] == b"\x1a\x45\xdf\xa3":  # EBML: WebM names its doctype in the header
        return "video/webm" if b"webm" in data[:64] else "video/x-matroska"
    if len(data) >= 2 and data[0] == 0xFF:  # MPEG audio frame sync: 11 bits set
        if data[1] & 0xF6 == 0xF0:  # layer 0: an AAC ADTS frame
            return "audio/aac"
        if data[1] & 0xE0 == 0xE0 and data[1] & 0x06 == 0x02:  # layer III
            return "audio/mpeg"
    return None


def media_size_limit() -> int:
    """The largest local media file read: MODELSTREAM_MAX_MEDIA_BYTES, else 20 MiB."""
    raw = os.environ.get(ENV_MAX_MEDIA_BYTES, "").strip()
    if not raw:
        return MAX_MEDIA_BYTES
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if limit <= 0:
        raise ConfigurationError(
            f"{ENV_MAX_MEDIA_BYTES} must be a positive whole number of bytes, got {raw!r}"
        )
    return limit


def read_media_file(
    path: str | os.PathLike[str], *, max_bytes: int | None = None
) -> tuple[bytes, str]:
    """(bytes, media type) of a regular file of at most `max_bytes` (default:
    `media_size_limit()`); the type is read from the content and must agree with the name."""
    name = os.fspath(path)
    limit = media_size_limit() if max_bytes is None else max_bytes
    if limit <= 0:
        raise ValueError(f"max_bytes must be a positive number of bytes, got {limit}")
    try:
        found = os.lstat(name)
    except FileNotFoundError:
        raise FileNotFoundError(f"{name}: no such file") from None
    except OSError as exc:
        raise MediaFileError(f"{name} cannot be read: {exc.strerror or exc}") from None
    _check_regular(name, found.st_mode)
    data = _read_at_most(name, found, limit)
    return data, _media_type(name, data)


def _check_regular(name: str, mode: int) -> None:
    for test, kind, advice in _NOT_REGULAR:
        if test(mode):
            raise MediaFileError(f"{name} is {kind}, not a regular file: {advice}")
    if not stat.S_ISREG(mode):
        raise MediaFileError(f"{name} is not a regular file: pass a file")


def _read_at_most(name: str, found: os.stat_result, limit: int) -> bytes:
    """The file's bytes, read through a descriptor that is the file `found` describes: opened
    without following a link and without blocking on a FIFO swapped in since the lstat."""
    if found.st_size > limit:
        raise _too_large(name, found.st_size, limit)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(name, flags | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise MediaFileError(f"{name} cannot be read: {exc.strerror or exc}") from None
    with open(descriptor, "rb") as file:
        opened = os.fstat(descriptor)
        if (opened.st_dev, opened.st_ino) != (found.st_dev, found.st_ino):
            raise MediaFileError(f"{name} was replaced while it was read: pass it again")
        _check_regular(name, opened.st_mode)
        data = file.read(limit + 1)
    if len(data) > limit:  # it grew since the lstat
        raise _too_large(name, None, limit)
    return data


def _too_large(name: str, size: int | None, limit: int) -> MediaFileError:
    size_text = "" if size is None else f"{size:,} bytes, "
    return MediaFileError(
        f"{name} is {size_text}over the {limit:,}-byte limit for a media file: send a smaller "
        f"file, or raise the limit ({ENV_MAX_MEDIA_BYTES}, or max_bytes=)"
    )


def _media_type(name: str, data: bytes) -> str:
    """The type the content shows, when the name says the same kind or no known kind."""
    sniffed = sniff_media_type(data)
    named = _BY_EXTENSION.get(os.path.splitext(name)[1].lower())
    if sniffed is None:
        if named is not None:
            raise MediaFileError(
                f"{name} is named as {named} but does not hold one (its first bytes are not "
                f"those of any {_KNOWN} file): pass the real file"
            )
        raise MediaFileError(
            f"cannot tell what kind of media {name} holds (not {_KNOWN}): convert it to one "
            "of them, or pass a data: URL that names its type"
        )
    if named is None or named == sniffed:
        return sniffed
    if _SAME_CONTAINER.get(named, named) == _SAME_CONTAINER.get(sniffed, sniffed):
        return named  # an .m4a of brand isom holds audio: the name says what the container does
    raise MediaFileError(
        f"{name} is named as {named} but holds {sniffed}: rename it to "
        f"{_EXTENSION_OF.get(sniffed, 'what it is')} and pass it again"
    )
