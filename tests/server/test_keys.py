"""Bearer keys with several configured: each one is accepted, anything else refused, and every
request is compared with every key in constant time (`hmac.compare_digest`), the right key or
not, first or last, so the time an answer takes says nothing about which key matched."""

from __future__ import annotations

import hmac
from collections.abc import Callable

import httpx
import pytest

from support.server import CLIENT_KEY, CLIENT_KEY_ENV, Serve

KEYS = {
    CLIENT_KEY_ENV: CLIENT_KEY,
    "MODELSTREAM_TEST_SECOND_KEY": "msk-second-0e8b27d4c913",
    "MODELSTREAM_TEST_THIRD_KEY": "msk-third-6fa1c3e85b07d2",
}


def test_every_request_is_compared_with_every_configured_key_in_constant_time(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    server = serve(keys=[f"${name}" for name in KEYS])
    compared: list[tuple[bytes, bytes]] = []
    real: Callable[[bytes, bytes], bool] = hmac.compare_digest

    def recording(a: bytes, b: bytes) -> bool:  # the stdlib's own comparison, watched
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", recording)
    first, second, third = KEYS.values()
    attempts = {
        f"Bearer {first}": 200,
        f"Bearer {third}": 200,
        f"bearer {second}": 200,  # the scheme is case-insensitive
        f"Bearer {third[:-1]}X": 401,  # same length, last byte wrong
        f"Bearer {third}X": 401,
        f"Bearer {first[:8]}": 401,
        f"Basic {first}": 401,  # the right bytes under another scheme
        "Bearer": 401,
        None: 401,
    }
    per_request: dict[str | None, list[tuple[bytes, bytes]]] = {}
    with httpx.Client(base_url=server.url) as http:
        for header, expected in attempts.items():
            compared.clear()
            headers = {} if header is None else {"authorization": header}
            answer = http.get("/v1/models", headers=headers)
            assert answer.status_code == expected, header
            per_request[header] = list(compared)

    configured = sorted(key.encode() for key in KEYS.values())
    for header, comparisons in per_request.items():
        # one comparison per configured key, whichever matched and whether any did
        assert sorted(expected for _, expected in comparisons) == configured, header
        assert len({given for given, _ in comparisons}) == 1, header
