"""Resumable streams (SPEC §6): a client cut off at any point reconnects with `Last-Event-ID`
and gets exactly the events after it, none twice, none lost; a stream nobody resumes is
cancelled upstream after the grace period; a finished stream stays resumable while retained."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelstream.testing import Emulator, Reply, Turn
from support.server import (
    AUTH,
    STORY,
    LiveServer,
    Serve,
    SSEStream,
    first_piece,
    last_event_id,
    paced_story,
    post_stream,
    read_sse,
    resume,
    stream_body,
    without_clock,
)


@pytest.fixture
def server(serve: Serve) -> LiveServer:
    """One server for all the examples of a hypothesis test (fixtures are not per example)."""
    return serve()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    cuts=st.lists(st.integers(1, 4000), max_size=4),
    pauses=st.lists(st.sampled_from([0.0, 0.01, 0.05]), min_size=4, max_size=4),
)
def test_a_stream_cut_at_random_points_and_resumed_equals_the_uninterrupted_one(
    server: LiveServer, emu: Emulator, cuts: list[int], pauses: list[float]
) -> None:
    with httpx.Client(base_url=server.url) as http:
        emu.queue(paced_story())
        reference = post_stream(http, stream_body())

        emu.queue(paced_story())
        pieces = [first_piece(http, cuts[0] if cuts else None)]
        response_id = pieces[0].response_id
        assert response_id is not None
        for index, cut in enumerate([*cuts[1:], None]):
            if pieces[-1].done:
                break
            time.sleep(pauses[index])
            last_id = last_event_id(pieces)
            pieces.append(resume(http, response_id, last_id, cut))
        if not pieces[-1].done:  # the last cut fell before [DONE]: read the rest
            last_id = last_event_id(pieces)
            pieces.append(resume(http, response_id, last_id))
        replay = resume(http, response_id, None)

    joined = SSEStream(response_id)
    for piece in pieces:
        pairs = [(i, d) for i, d in zip(piece.ids, piece.data, strict=True) if d != "[DONE]"]
        joined.ids += [i for i, _ in pairs]
        joined.data += [d for _, d in pairs]
    assert joined.seqs == list(range(1, len(joined.data) + 1))  # none twice, none lost
    assert joined.data == replay.data[:-1]  # byte for byte what the server stored
    assert without_clock(joined) == without_clock(reference)  # the same turn as uncut
    assert joined.events[-1]["event_type"] == "stop"


def test_a_client_that_comes_back_within_the_grace_period_gets_the_rest(
    serve: Serve, emu: Emulator
) -> None:
    emu.queue(Reply.turn(STORY, fragment_size=5, delay=0.01))
    server = serve(resume_grace_seconds=1.0)
    with httpx.Client(base_url=server.url) as http:
        with http.stream("POST", "/v1/stream", json=stream_body(), headers=AUTH) as response:
            response_id = response.headers["x-response-id"]
            first = read_sse(response, stop_after_bytes=300)
        time.sleep(0.3)
        rest = resume(http, response_id, first.ids[-1])

    assert first.seqs and rest.seqs[0] == first.seqs[-1] + 1
    assert rest.done and rest.events[-1]["event_type"] == "stop"
    (upstream,) = emu.wait_for_requests(1, finished=True)
    assert not upstream.client_closed_early


def test_a_stream_nobody_resumes_is_cancelled_upstream_after_the_grace_period(
    serve: Serve, emu: Emulator
) -> None:
    emu.queue(Reply.turn(STORY, fragment_size=2, delay=0.02))  # several seconds of stream
    server = serve(resume_grace_seconds=0.4)
    with httpx.Client(base_url=server.url) as http:
        with http.stream("POST", "/v1/stream", json=stream_body(), headers=AUTH) as response:
            response_id = response.headers["x-response-id"]
            read_sse(response, stop_after_bytes=200)
        dropped = time.monotonic()
        (upstream,) = emu.wait_for_requests(1, finished=True, timeout=10)
        waited = upstream.finished_at - dropped if upstream.finished_at else None
        replay = resume(http, response_id, None)
        metrics = http.get("/metrics").text

    assert upstream.client_closed_early
    assert waited is not None and 0.35 <= waited < 2.5
    (error,) = replay.errors
    assert error["type"] == "StreamCancelledError"
    assert error["reason"] == "abandoned" and error["partial_status"] == "cancelled"
    assert replay.events and replay.data[-1] == "[DONE]"
    assert replay.seqs == list(range(1, len(replay.events) + 2))
    assert 'modelstream_server_requests_total{route="stream",outcome="cancelled"} 1' in metrics


def test_a_finished_stream_resumes_while_retained_then_is_gone(serve: Serve, emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text("short and done"), fragment_size=3))
    server = serve(retain_seconds=0.5)
    with httpx.Client(base_url=server.url) as http:
        whole = post_stream(http, stream_body())
        response_id = whole.response_id
        assert response_id is not None
        by_header = resume(http, response_id, f"{response_id}:2")
        by_query = http.get(f"/v1/streams/{response_id}?after=2", headers=AUTH)
        at_end = resume(http, response_id, whole.ids[-2])
        time.sleep(0.8)
        gone = http.get(f"/v1/streams/{response_id}", headers=AUTH)

    assert by_header.data == whole.data[2:]
    assert read_sse(by_query).data == whole.data[2:]
    assert at_end.data == ["[DONE]"]
    assert gone.status_code == 404 and gone.json()["error"]["type"] == "NotFoundError"


def test_two_readers_of_one_live_stream_see_the_same_events(serve: Serve, emu: Emulator) -> None:
    emu.queue(Reply.turn(STORY, fragment_size=6, delay=0.005))
    server = serve()
    seen: dict[str, SSEStream] = {}
    with httpx.Client(base_url=server.url) as http:
        with http.stream("POST", "/v1/stream", json=stream_body(), headers=AUTH) as response:
            response_id = response.headers["x-response-id"]
            second = threading.Thread(
                target=lambda: seen.setdefault("second", resume(http, response_id, None))
            )
            second.start()
            first = read_sse(response)
        second.join(10)

    assert first.done and seen["second"].data == first.data
