"""What the package's own web pages (the trace viewer, the playground) share: their assets read
once from the package, with the files every page uses (`static/` here: the Markdown renderer and
its styles), and the headers every response carries so that a page loads nothing from
elsewhere, cannot be framed, sniffed or cached. Each page writes its own
Content-Security-Policy (what it may load differs)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import PurePosixPath

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}
HTML = MEDIA_TYPES[".html"]
SHARED = __name__.rpartition(".")[0]  # this package: its static/ holds what every page loads


def page_assets(package: str) -> dict[str, bytes]:
    """The files of `package`'s `static` folder and the shared ones, by name (a page's own file
    of the same name wins). Only the kinds a page serves (`MEDIA_TYPES`) are read."""
    return {**_static_files(SHARED), **_static_files(package)}


def media_type(name: str) -> str:
    """The `Content-Type` of an asset `page_assets` read."""
    return MEDIA_TYPES[PurePosixPath(name).suffix]


def _static_files(package: str) -> dict[str, bytes]:
    folder = files(package) / "static"
    return {
        item.name: item.read_bytes()
        for item in folder.iterdir()
        if item.is_file() and PurePosixPath(item.name).suffix in MEDIA_TYPES
    }


def with_page_headers(app: ASGIApp, content_security_policy: bytes) -> ASGIApp:
    """`app`, its every response carrying the policy and the headers every page has."""
    headers = [
        (b"content-security-policy", content_security_policy),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"cache-control", b"no-store"),
    ]

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], *headers]}
            await send(message)

        await app(scope, receive, send_with_headers)

    return wrapped
