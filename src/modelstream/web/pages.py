"""What the package's own web pages (the trace viewer, the playground) share: their three
assets read once from the package, and the headers every response carries so that a page loads
nothing from elsewhere, cannot be framed, sniffed or cached. Each page writes its own
Content-Security-Policy (what it may load differs)."""

from __future__ import annotations

from importlib.resources import files

from starlette.types import ASGIApp, Message, Receive, Scope, Send

ASSET_TYPES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}


def page_assets(package: str) -> dict[str, bytes]:
    """The page's assets (`ASSET_TYPES`), from the `static` folder of `package`."""
    folder = files(package) / "static"
    return {name: folder.joinpath(name).read_bytes() for name in ASSET_TYPES}


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
