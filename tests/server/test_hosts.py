"""DNS rebinding: a web page elsewhere can point its own name at 127.0.0.1, and the browser then
sends that page's requests to a server on this machine, with the page's name in `Host`. A server
whose routes need no key (an open `serve`, `playground --open`), and the playground's cookie
session on any server, answer only a `Host` that names the address they listen on, a loopback
name, or a name of `allowed_hosts`; anything else is a 421 with a JSON error body. Checked on
real `modelstream serve` / `modelstream playground` processes in front of the emulator."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from modelstream.server import ServerConfigError, settings_from_mapping
from modelstream.testing import Emulator
from modelstream.web.hosts import HostPolicy
from support.server import (
    AUTH,
    CLIENT_KEY,
    CLIENT_KEY_ENV,
    UPSTREAM_KEY,
    UPSTREAM_KEY_ENV,
    read_sse,
    stream_body,
)
from support.server_process import write_config

OPEN_CONFIG = """
{allowed_hosts}

[[models]]
server_model_id = "anthropic"
model = "claude-sonnet-4-5"
base_url = "{base_url}"
api_key = "${upstream}"
"""
KEYED_CONFIG = 'keys = ["${client}"]\n' + OPEN_CONFIG
CHAT_BODY = {"model": "anthropic", "messages": [{"role": "user", "content": "hi"}], "stream": True}


@contextlib.contextmanager
def running(folder: Path, *argv: str) -> Iterator[str]:
    """`python -m modelstream ARGV --port 0` until the block ends: the URL it listens on."""
    log = folder / "server.log"
    env = {**os.environ, UPSTREAM_KEY_ENV: UPSTREAM_KEY, CLIENT_KEY_ENV: CLIENT_KEY}
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "modelstream", *argv, "--port", "0"],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            env=env,
        )
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"listening on (http://\S+)", log.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield found.group(1)
    finally:
        process.terminate()
        process.wait(timeout=20)


def config(folder: Path, emu: Emulator, template: str, allowed_hosts: str = "") -> Path:
    return write_config(folder, emu, template.replace("{allowed_hosts}", allowed_hosts))


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def assert_misdirected(response: httpx.Response) -> None:
    assert response.status_code == 421, response.text
    error = response.json()["error"]
    assert error["type"] == "MisdirectedRequestError"
    assert "allowed_hosts" in error["message"]


# --- which names a listener answers ---------------------------------------------------------


def test_a_loopback_listener_answers_the_loopback_names_on_any_port() -> None:
    hosts = HostPolicy.for_listener("127.0.0.1")
    for host in ("127.0.0.1:8000", "localhost:8000", "LocalHost", "[::1]:8000", "localhost."):
        assert hosts.allows(host), host


def test_a_foreign_name_and_a_missing_or_malformed_host_are_refused() -> None:
    hosts = HostPolicy.for_listener("127.0.0.1")
    refused = [
        "evil.example:8000",
        "127.0.0.1.nip.io",  # a name that resolves to loopback is still a name
        "localhost.evil.example",
        "192.0.2.7:8000",  # an address the server does not listen on
        "",
        None,
        "::1",  # an IPv6 address without brackets is not a Host
        "[::1",
        "localhost:80:80",
    ]
    for host in refused:
        assert not hosts.allows(host), host


def test_a_listener_on_one_address_answers_that_address_too() -> None:
    hosts = HostPolicy.for_listener("192.0.2.7")
    assert hosts.allows("192.0.2.7:8000") and hosts.allows("localhost:8000")
    assert not hosts.allows("198.51.100.1:8000") and not hosts.allows("box.example")
    assert HostPolicy.for_listener("2001:db8::7").allows("[2001:DB8::7]:8000")


def test_a_listener_on_every_address_answers_any_ip_address_but_no_other_name() -> None:
    for wildcard in ("0.0.0.0", "::"):
        hosts = HostPolicy.for_listener(wildcard)
        assert hosts.allows("192.0.2.7:8000") and hosts.allows("[2001:db8::7]:8000")
        assert hosts.allows("localhost:8000")
        assert not hosts.allows("box.example:8000")


def test_allowed_hosts_add_names_and_a_star_allows_any() -> None:
    hosts = HostPolicy.for_listener("127.0.0.1", ["proxy.example", "Other.Example"])
    assert hosts.allows("proxy.example:443") and hosts.allows("other.example")
    assert not hosts.allows("evil.example")
    assert HostPolicy.for_listener("127.0.0.1", ["*"]).allows("anything.example")


def test_allowed_hosts_in_the_config_must_be_host_names() -> None:
    model = {"server_model_id": "m", "model": "claude-sonnet-4-5", "api_key": "$K"}
    env = {"K": "upstream-key"}
    settings = settings_from_mapping({"models": [model], "allowed_hosts": ["Proxy.Example"]}, env)
    assert settings.allowed_hosts == ("proxy.example",)
    assert settings_from_mapping({"models": [model]}, env).allowed_hosts == ()
    for wrong in ("proxy.example", ["http://proxy.example"], ["proxy.example:8000"], [""], [3]):
        with pytest.raises(ServerConfigError, match="allowed_hosts"):
            settings_from_mapping({"models": [model], "allowed_hosts": wrong}, env)


# --- real servers ---------------------------------------------------------------------------


def test_an_open_playground_refuses_a_foreign_host_on_every_route(
    tmp_path: Path, emu: Emulator
) -> None:
    path = config(tmp_path, emu, OPEN_CONFIG)
    with running(tmp_path, "playground", "--config", str(path), "--open") as url:
        evil = {"host": f"evil.example:{port_of(url)}"}
        with httpx.Client(base_url=url, headers=evil, timeout=10) as http:
            assert_misdirected(http.post("/v1/stream", json=stream_body()))
            assert_misdirected(http.post("/v1/chat/completions", json=CHAT_BODY))
            assert_misdirected(http.get("/v1/models"))
            assert_misdirected(http.get("/playground/"))
            assert_misdirected(http.post("/playground/api/v1/stream", json=stream_body()))
            assert http.get("/healthz").status_code == 200  # no key, nothing to guard
        assert emu.requests == []  # nothing reached the upstream
        for name in ("127.0.0.1", "localhost"):
            own = {"host": f"{name}:{port_of(url)}"}
            with httpx.Client(base_url=url, headers=own, timeout=10) as http:
                with http.stream("POST", "/v1/stream", json=stream_body()) as response:
                    assert response.status_code == 200
                    assert read_sse(response).done
                chat = http.post("/v1/chat/completions", json=CHAT_BODY)
                assert chat.status_code == 200 and "data: [DONE]" in chat.text
                assert http.get("/playground/").status_code == 200


def test_an_open_server_answers_a_name_listed_in_allowed_hosts(
    tmp_path: Path, emu: Emulator
) -> None:
    path = config(tmp_path, emu, OPEN_CONFIG, 'allowed_hosts = ["proxy.example"]')
    with running(tmp_path, "serve", "--config", str(path), "--log-level", "warning") as url:
        port = port_of(url)
        with httpx.Client(base_url=url, timeout=10) as http:
            proxied = {"host": f"proxy.example:{port}"}
            with http.stream("POST", "/v1/stream", json=stream_body(), headers=proxied) as answer:
                assert answer.status_code == 200 and read_sse(answer).done
            assert http.get("/v1/models", headers={"host": "proxy.example"}).status_code == 200
            assert_misdirected(http.get("/v1/models", headers={"host": f"evil.example:{port}"}))


def test_a_keyed_server_takes_the_key_under_any_host_but_its_playground_only_its_own(
    tmp_path: Path, emu: Emulator
) -> None:
    path = config(tmp_path, emu, KEYED_CONFIG)
    with running(tmp_path, "serve", "--config", str(path), "--log-level", "warning") as url:
        evil = {"host": f"evil.example:{port_of(url)}"}
        with httpx.Client(base_url=url, headers=evil, timeout=10) as http:
            # a rebinding page cannot know the key: the API needs no Host check
            assert http.get("/v1/models", headers=AUTH).status_code == 200
            assert http.get("/v1/models").status_code == 401
            # the playground signs browsers in with a cookie, which such a page would ride on
            assert_misdirected(http.get("/playground/"))
            assert_misdirected(http.post("/playground/login", data={"key": CLIENT_KEY}))
            assert_misdirected(http.get("/playground/api/v1/models", headers=AUTH))


def test_a_server_on_every_address_answers_its_ip_addresses_but_not_a_name(
    tmp_path: Path, emu: Emulator
) -> None:
    path = config(tmp_path, emu, KEYED_CONFIG)
    argv = ("serve", "--config", str(path), "--host", "0.0.0.0", "--log-level", "warning")
    with running(tmp_path, *argv) as announced:
        url = f"http://127.0.0.1:{port_of(announced)}"
        with httpx.Client(base_url=url, timeout=10) as http:
            by_address = http.get("/playground/", headers={"host": "192.0.2.7:8000"})
            assert by_address.status_code == 401 and 'name="key"' in by_address.text
            assert_misdirected(http.get("/playground/", headers={"host": "box.example:8000"}))


def test_the_refusal_is_json_naming_the_host_and_the_setting(tmp_path: Path, emu: Emulator) -> None:
    path = config(tmp_path, emu, OPEN_CONFIG)
    with running(tmp_path, "serve", "--config", str(path), "--log-level", "warning") as url:
        refused = httpx.post(
            url + "/v1/stream", json=stream_body(), headers={"host": "evil.example"}, timeout=10
        )
    assert_misdirected(refused)
    assert refused.headers["content-type"] == "application/json"
    message = orjson.loads(refused.content)["error"]["message"]
    assert "'evil.example'" in message and "127.0.0.1" in message
