"""A stream belongs to the key that started it: a resume with another of the server's keys is
the same 404 as an unknown stream, on one instance or on another that shares the Redis; the
store keeps a hash of the key, never the key; and no log line carries a whole response id, the
handle that reads a stream."""

from __future__ import annotations

import logging
import re

import httpx
import pytest
import redis

from modelstream.server.stores.redis import RedisStore
from modelstream.testing import Emulator, Reply, Turn
from support.server import AUTH, CLIENT_KEY, Serve, post_stream, read_sse, stream_body
from support.server_process import ServeProcess

OTHER_KEY = "msk-other-tenant-9d41c07e2b"
OTHER_KEY_ENV = "MODELSTREAM_TEST_OTHER_KEY"
OTHER = {"authorization": f"Bearer {OTHER_KEY}"}
TWO_KEYS = ["$MODELSTREAM_TEST_CLIENT_KEY", "$" + OTHER_KEY_ENV]


def test_a_stream_resumed_with_another_key_is_not_found_like_an_unknown_one(
    serve: Serve, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OTHER_KEY_ENV, OTHER_KEY)
    emu.queue(Reply.turn(Turn.text("for the first tenant only"), fragment_size=5))
    server = serve(keys=TWO_KEYS)
    with httpx.Client(base_url=server.url) as http:
        mine = post_stream(http, stream_body())
        stolen = http.get(f"/v1/streams/{mine.response_id}", headers=OTHER)
        stolen_after = http.get(
            f"/v1/streams/{mine.response_id}",
            headers={**OTHER, "last-event-id": f"{mine.response_id}:1"},
        )
        unknown_id = "resp_" + "0" * 32
        unknown = http.get(f"/v1/streams/{unknown_id}", headers=OTHER)
        again = read_sse(http.get(f"/v1/streams/{mine.response_id}", headers=AUTH))

    assert mine.done and not mine.errors
    for refused in (stolen, stolen_after):
        assert refused.status_code == unknown.status_code == 404
        # the same answer as for an id that never existed, but for the id it names
        assert refused.text == unknown.text.replace(unknown_id, str(mine.response_id))
        assert "for the first tenant" not in refused.text
    assert again.data == mine.data  # the key that started it still reads it


def test_the_binding_holds_across_instances_that_share_a_redis(
    serve: Serve,
    emu: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    redis_url: str,
    prefix: str,
) -> None:
    monkeypatch.setenv(OTHER_KEY_ENV, OTHER_KEY)
    emu.queue(Reply.turn(Turn.text("started on A"), fragment_size=4))
    a = serve(store=RedisStore.from_url(redis_url, prefix=prefix), keys=TWO_KEYS)
    b = serve(store=RedisStore.from_url(redis_url, prefix=prefix), keys=TWO_KEYS)
    with httpx.Client(base_url=a.url) as http_a, httpx.Client(base_url=b.url) as http_b:
        mine = post_stream(http_a, stream_body())
        on_b_other = http_b.get(f"/v1/streams/{mine.response_id}", headers=OTHER)
        on_b_mine = read_sse(http_b.get(f"/v1/streams/{mine.response_id}", headers=AUTH))

    assert on_b_other.status_code == 404
    assert on_b_other.json()["error"]["type"] == "NotFoundError"
    assert on_b_mine.data == mine.data
    stored = _everything_under(redis_url, prefix)
    assert stored and CLIENT_KEY.encode() not in stored  # a hash of it, never the key
    assert OTHER_KEY.encode() not in stored


def test_an_open_server_lets_every_caller_resume(serve: Serve, emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("open to all")))
    server = serve(keys=[])
    with httpx.Client(base_url=server.url) as http:
        whole = post_stream(http, stream_body(), headers={})
        again = read_sse(http.get(f"/v1/streams/{whole.response_id}"))

    assert again.data == whole.data


def test_no_log_line_carries_a_whole_response_id(
    serve: Serve, emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    emu.queue(
        Reply.turn(Turn.text("logged by reference")),
        Reply.turn(Turn.text("cut " * 200), fragment_size=4, disconnect_after_bytes=2000),
    )
    server = serve()
    response_ids: list[str] = []
    with httpx.Client(base_url=server.url) as http:
        for _ in range(2):
            stream = post_stream(http, stream_body())
            assert stream.response_id is not None
            response_ids.append(stream.response_id)
            read_sse(http.get(f"/v1/streams/{stream.response_id}?after=1", headers=AUTH))

    # the server's records: this test's own httpx client logs the URLs it requests
    server_records = [r for r in caplog.records if r.name.startswith(("modelstream", "uvicorn"))]
    logged = "\n".join(record.getMessage() for record in server_records)
    for response_id in response_ids:
        assert response_id not in logged
        # ...but each is named by its first 8 hex digits, in the stream line and the access log
        assert f"stream {response_id[:13]}... model=anthropic" in logged
        assert re.search(rf"GET /v1/streams/{response_id[:13]}\.\.\.\?after=1 ", logged)


def _everything_under(url: str, prefix: str) -> bytes:
    """Every key name and value under `prefix`, as one blob to search."""
    out: list[bytes] = []
    with redis.Redis.from_url(url) as client:
        for key in client.scan_iter(match=prefix + "*"):
            out.append(key)
            kind = client.type(key)
            if kind == b"hash":
                for field, value in client.hgetall(key).items():
                    out += [field, value]
            elif kind == b"stream":
                for _id, fields in client.xrange(key):
                    for field, value in fields.items():
                        out += [field, value]
            elif kind == b"zset":
                out += [member for member, _ in client.zrange(key, 0, -1, withscores=True)]
            elif kind == b"string":
                out.append(client.get(key) or b"")
    return b"\n".join(out)


def test_modelstream_serve_logs_no_whole_response_id(
    running: tuple[ServeProcess, str],
    emu: Emulator,
) -> None:
    server, url = running
    emu.queue(Reply.turn(Turn.text("served by a process")))
    with httpx.Client(base_url=url) as http:
        stream = post_stream(http, stream_body("claude"))
        resumed = read_sse(http.get(f"/v1/streams/{stream.response_id}?after=1", headers=AUTH))
    assert server.stop() == 0
    output = "".join(server.output)

    assert stream.response_id is not None and resumed.done
    assert stream.response_id not in output
    assert f"stream {stream.response_id[:13]}... model=claude outcome=stop" in output
    assert f'"GET /v1/streams/{stream.response_id[:13]}...?after=1 HTTP/1.1" 200' in output
