"""Which `Host` a local server answers: the defence against DNS rebinding, shared by the server,
its playground and the trace viewer.

A web page elsewhere can point its own name at 127.0.0.1 once the browser has loaded it; the
browser then sends that page's requests to a server on this machine and lets the page read the
answers, since to the browser it is still the page's own origin. What gives it away is `Host`:
the browser always sends the page's name there. So a server that answers without a key (an open
server, a cookie session, the viewer) answers only a `Host` that names where it listens:

- a loopback name (`localhost`, `127.0.0.1`, `[::1]`): no other site can make a browser send
  those for its own page;
- the address it is bound to, when bound to one; when bound to every address (`0.0.0.0`,
  `::`), any IP address: a page's origin that is an IP address cannot be rebound, since no
  name is looked up;
- the names the operator allows (`allowed_hosts`; `"*"` allows any).

The port is not compared: a rebinding page can only choose the name, and a port forward
(`ssh -L 9000:127.0.0.1:8000`) or a local proxy legitimately sends another port.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:  # the server extra: the config reads `allowed_name` without it
    from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
ANY = "*"  # in the allowed names: every Host is answered
_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_])?")  # letters, digits, - . _


@dataclass(frozen=True)
class HostPolicy:
    """The `Host` names a server answers (lowercase, IPv6 without brackets), and whether it
    answers any IP address."""

    names: frozenset[str]
    any_ip_address: bool = False

    @classmethod
    def of(cls, names: Iterable[str], *, any_ip_address: bool = False) -> HostPolicy:
        """The policy answering exactly `names` (each as a host name or address, or `"*"`)."""
        return cls(frozenset(_normal(name) for name in names), any_ip_address)

    @classmethod
    def for_listener(cls, bound_host: str | None, allowed: Iterable[str] = ()) -> HostPolicy:
        """What a server bound to `bound_host` answers (None: not known, taken as loopback):
        the loopback names, its address or, bound to every address, any IP address, and the
        `allowed` names."""
        names = [*LOOPBACK_NAMES, *allowed]
        wildcard = bound_host is not None and _is_unspecified(bound_host)
        if bound_host is not None and not wildcard:
            names.append(bound_host)
        return cls.of(names, any_ip_address=wildcard)

    def allows(self, host: str | None) -> bool:
        """Whether a request whose `Host` header is `host` is for this server."""
        if ANY in self.names:
            return True
        name = host_name(host)
        if name is None:
            return False
        return name in self.names or (self.any_ip_address and _is_ip_address(name))

    def describe(self) -> str:
        """The names answered, for a refusal's message."""
        shown = [f"[{name}]" if ":" in name else name for name in sorted(self.names)]
        if self.any_ip_address:
            shown.append("any IP address")
        return ", ".join(shown)


def host_name(host: str | None) -> str | None:
    """The name in a `Host` header, without its port (lowercase; an IPv6 address without its
    brackets); None when there is none or the header is not a host and an optional port."""
    host = (host or "").strip().lower()
    if host.startswith("["):  # [IPv6]:port
        address, bracket, port = host[1:].partition("]")
        if not bracket or (port and not (port.startswith(":") and _is_port(port[1:]))):
            return None
        return address if _is_ip_address(address) else None
    name, colon, port = host.partition(":")
    if colon and not _is_port(port):  # also "::1" unbracketed, and a second ':'
        return None
    name = _normal(name)
    return name if _NAME.fullmatch(name) else None


def allowed_name(text: str) -> str | None:
    """`text` as an entry of `allowed_hosts` (normalized): a host name or an IP address,
    without a scheme or a port, or `"*"`; None when it is not one."""
    if text.strip() == ANY:
        return ANY
    name = _normal(text)
    if _is_ip_address(name) or (_NAME.fullmatch(name) and host_name(name) == name):
        return name
    return None


def host_checked(
    app: ASGIApp,
    *,
    hosts: HostPolicy,
    status: int = 421,
    error_type: str = "MisdirectedRequestError",
    exempt: Collection[str] = (),
) -> ASGIApp:
    """`app`, refusing a request for a `Host` that `hosts` does not allow with `status` and a
    JSON error body (`{"error": {"type", "message"}}`, as the server's other refusals), except
    on the paths in `exempt`. 421 (Misdirected Request): the request was not meant for this
    server."""

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in exempt:
            await app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if hosts.allows(host):
            await app(scope, receive, send)
            return
        message = (
            f"this server answers requests addressed to {hosts.describe()}, not to "
            f"{(host or '')[:100]!r}: a page elsewhere may have pointed its name here (DNS "
            "rebinding). If this server is meant to be reached by that name, add it to "
            "allowed_hosts in the server's config"
        )
        body = orjson.dumps({"error": {"type": error_type, "message": message}})
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return checked


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _normal(name: str) -> str:
    """A host name as compared: lowercase, without IPv6 brackets or a trailing dot."""
    name = name.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    return name.removesuffix(".")


def _is_port(text: str) -> bool:
    return text == "" or (text.isascii() and text.isdigit() and len(text) <= 5)


def _is_ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(_normal(host)).is_unspecified
    except ValueError:
        return False


__all__ = ["ANY", "LOOPBACK_NAMES", "HostPolicy", "allowed_name", "host_checked", "host_name"]
