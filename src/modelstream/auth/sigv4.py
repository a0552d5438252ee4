"""AWS Signature Version 4 for Bedrock, written by hand over hashlib and hmac.

Why by hand: signing is small (a canonical request, a string to sign, an HMAC chain), pure (no
IO, no clock: the time is an argument) and testable byte for byte against AWS's reference
signer, whereas botocore's signer needs a botocore request object and reads the clock itself.
Credentials are another matter: the AWS chain (environment, profiles, SSO, instance metadata)
is big and changes, so it comes from botocore (`aws.py`), behind `AwsCredentialsProvider`.

Bedrock signs its JSON bodies with the body's SHA-256 in the canonical request and needs no
`x-amz-content-sha256` header (only S3 does). Path segments are URI-encoded a second time in
the canonical URI (every service but S3): the model id `…-v1:0` goes on the wire as `…-v1%3A0`
and is signed as `…-v1%253A0`.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol
from urllib.parse import quote, unquote, urlsplit

from .secret import Secret, mask_secret
from .signing import SignableRequest

ALGORITHM = "AWS4-HMAC-SHA256"
KEPT_CREDENTIALS = 4  # the sets of credentials a signer remembers to mask (refreshes, rotations)
# hop-by-hop and tracing headers that proxies may change: never signed (as AWS's SDKs do)
UNSIGNED_HEADERS = frozenset(
    {
        "authorization",
        "baggage",
        "connection",
        "expect",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "traceparent",
        "tracestate",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "user-agent",
        "x-amzn-trace-id",
    }
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class AwsCredentials:
    """One set of AWS credentials; the secret key and session token never show in a repr."""

    access_key_id: str = field(repr=False)
    secret_access_key: Secret
    session_token: Secret | None = None

    def __repr__(self) -> str:
        session = ", session_token=***" if self.session_token else ""
        return f"AwsCredentials(access_key_id=***, secret_access_key=***{session})"


class AwsCredentialsProvider(Protocol):
    """Hands out current credentials; a refreshing provider (SSO, instance metadata) does IO."""

    def credentials(self) -> AwsCredentials: ...


class StaticAwsCredentials:
    """Credentials given outright (and never refreshed)."""

    def __init__(
        self, access_key_id: str, secret_access_key: str, session_token: str | None = None
    ) -> None:
        self._credentials = AwsCredentials(
            access_key_id,
            Secret(secret_access_key),
            Secret(session_token) if session_token else None,
        )

    def credentials(self) -> AwsCredentials:
        return self._credentials

    def __repr__(self) -> str:
        return f"StaticAwsCredentials({self._credentials!r})"


def _values(credentials: AwsCredentials) -> tuple[str, str, str | None]:
    """What tells two sets of credentials apart (a provider may hand out new objects holding
    the same values at every call)."""
    token = credentials.session_token
    return (
        credentials.access_key_id,
        credentials.secret_access_key.reveal(),
        token.reveal() if token is not None else None,
    )


# --- the signature, step by step --------------------------------------------------------------


def amz_date(now: datetime) -> str:
    if now.tzinfo is None:  # a naive time would be read as local time: a wrong signature
        raise ValueError("SigV4 needs an aware datetime, e.g. datetime.now(UTC)")
    return now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def canonical_uri(path: str) -> str:
    """The path without dot segments or empty segments, each byte outside the unreserved set
    encoded again (so `%3A` becomes `%253A`)."""
    segments: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if segments:
                segments.pop()
        elif segment and segment != ".":
            segments.append(segment)
    normalized = "/" + "/".join(segments)
    if path.endswith("/") and segments:
        normalized += "/"
    return quote(normalized, safe="/~")


def canonical_query(query: str) -> str:
    """Each name and value encoded the AWS way (only `-_.~` and alphanumerics left as they
    are), the pairs sorted."""
    if not query:
        return ""
    pairs = []
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        pairs.append((quote(unquote(name), safe="-_.~"), quote(unquote(value), safe="-_.~")))
    return "&".join(f"{name}={value}" for name, value in sorted(pairs))


def host_header(url: str) -> str:
    """The Host the HTTP client will send: lower-case host, the port unless it is the default."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    if parts.port is not None and parts.port != _DEFAULT_PORTS.get(parts.scheme):
        host = f"{host}:{parts.port}"
    return host


def headers_to_sign(request: SignableRequest, added: dict[str, str]) -> dict[str, str]:
    """Lower-case name → value (whitespace runs folded, repeated names joined by commas)."""
    signed: dict[str, list[str]] = {}
    for name, value in [*request.headers.items(), *added.items()]:
        lowered = name.lower().strip()
        if lowered in UNSIGNED_HEADERS:
            continue
        signed.setdefault(lowered, []).append(" ".join(value.split()))
    signed.setdefault("host", [host_header(request.url)])
    return {name: ",".join(values) for name, values in sorted(signed.items())}


def canonical_request(request: SignableRequest, signed: dict[str, str]) -> str:
    parts = urlsplit(request.url)
    return "\n".join(
        [
            request.method.upper(),
            canonical_uri(parts.path),
            canonical_query(parts.query),
            "".join(f"{name}:{value}\n" for name, value in signed.items()),
            ";".join(signed),
            hashlib.sha256(request.body).hexdigest(),
        ]
    )


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


def signing_key(secret_access_key: Secret, day: str, region: str, service: str) -> bytes:
    key = _hmac(f"AWS4{secret_access_key.reveal()}".encode(), day)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    return key


def sigv4_headers(
    request: SignableRequest,
    credentials: AwsCredentials,
    *,
    region: str,
    service: str,
    now: datetime,
) -> dict[str, str]:
    """The headers that sign `request` at `now`: `X-Amz-Date`, `X-Amz-Security-Token` (session
    credentials only) and `Authorization`. Any of them already in the request is replaced."""
    stamp = amz_date(now)
    scope = f"{stamp[:8]}/{region}/{service}/aws4_request"
    added = {"X-Amz-Date": stamp}
    if credentials.session_token is not None:
        added["X-Amz-Security-Token"] = credentials.session_token.reveal()
    replaced = {name.lower() for name in added}
    kept = {k: v for k, v in request.headers.items() if k.lower() not in replaced}
    unsigned = SignableRequest(request.method, request.url, kept, request.body)
    signed = headers_to_sign(unsigned, added)
    string_to_sign = "\n".join(
        [
            ALGORITHM,
            stamp,
            scope,
            hashlib.sha256(canonical_request(unsigned, signed).encode()).hexdigest(),
        ]
    )
    key = signing_key(credentials.secret_access_key, stamp[:8], region, service)
    signature = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    added["Authorization"] = (
        f"{ALGORITHM} Credential={credentials.access_key_id}/{scope}, "
        f"SignedHeaders={';'.join(signed)}, Signature={signature}"
    )
    return added


class SigV4Signer:
    """Signs every request with SigV4 for one service and region (Bedrock: `bedrock`).

    `sign` asks the provider for credentials each time, so rotated or refreshed credentials are
    used as soon as the provider has them; `may_block` because a refresh is IO. Every set of
    credentials it signs with is kept (the last few), so `redact` masks them all."""

    may_block = True

    def __init__(
        self, credentials: AwsCredentialsProvider, *, region: str, service: str = "bedrock"
    ) -> None:
        self.provider = credentials
        self.region = region
        self.service = service
        self._used: list[AwsCredentials] = []
        self._lock = threading.Lock()

    def sign(self, request: SignableRequest, now: datetime) -> dict[str, str]:
        credentials = self.provider.credentials()
        with self._lock:
            if all(_values(used) != _values(credentials) for used in self._used):
                # a stream signed before a refresh may still echo the previous ones
                self._used = [*self._used[-(KEPT_CREDENTIALS - 1) :], credentials]
        return sigv4_headers(
            request, credentials, region=self.region, service=self.service, now=now
        )

    def redact(self, text: str) -> str:
        """`text` with the access key id, secret access key and session token of every set of
        credentials this signer used masked: the token travels, and a tool or a model may
        repeat any of them."""
        with self._lock:
            used = list(self._used)
        for credentials in used:
            text = mask_secret(text, credentials.access_key_id)
            for secret in (credentials.secret_access_key, credentials.session_token):
                text = secret.redact(text) if secret is not None else text
        return text

    def __repr__(self) -> str:
        return (
            f"SigV4Signer(service={self.service!r}, region={self.region!r}, "
            f"credentials={self.provider!r})"
        )
