"""Image and file URLs in messages: which kinds are sent, and what a `data:` URL holds.

Encoders pass URLs through and never download or read anything: an http(s) URL goes to the
provider as a URL, a `data:` URL as its bytes, and any other URL (a file path, `file:`, `ftp:`)
is refused before sending.
"""

from __future__ import annotations

import base64
import mimetypes
import urllib.parse
from typing import Any, Literal

from ...errors import InvalidMessageError

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
