"""The states of one streaming call (`StreamCall`, client/streams.py), driven as the shells
drive it but without sockets: the table in the module docstring is the one the code enforces,
and a call out of order raises `CallStateError` naming the state and the event."""

from __future__ import annotations

import re

import httpx
import pytest

from modelstream import FinalResponse, ProviderConnectionError
from modelstream.client import RetryPolicy, Timeouts, streams
from modelstream.client.failures import classify
from modelstream.client.streams import CallState, CallStateError, StreamCall
from modelstream.testing import Turn, render


def new_call(attempts: int = 3) -> StreamCall:
    return StreamCall(
        protocol="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        url="http://127.0.0.1:9/v1/messages",
        signer=None,
        retry=RetryPolicy(max_attempts=attempts),
        timeouts=Timeouts(),
        lenient_tool_arguments=False,
        random=lambda: 0.5,
    )


def state(call: StreamCall) -> CallState:
    """The call's state, read afresh (each event moves it)."""
    return call.state


def test_the_table_in_the_docstring_is_the_table_the_code_enforces() -> None:
    documented: set[tuple[str, str, str]] = set()
    for line in (streams.__doc__ or "").splitlines():
        row = re.match(r"    ([A-Z*]+)\s+([a-z_]+)\s+([A-Z]+)\s", line + " ")
        if row:
            documented.add((row[1], row[2], row[3]))
    enforced = {
        (state.name, event, target.name)
        for (state, event), targets in streams._TRANSITIONS.items()
        for target in targets
    }
    everywhere = {(s, e, t) for s, e, t in documented if s == "*"}
    expanded = {(s.name, e, t) for _, e, t in everywhere for s in CallState if s.name != "STOPPED"}
    assert (documented - everywhere) | expanded == enforced


def test_a_whole_body_moves_the_call_to_stopped_with_a_final_result() -> None:
    call = new_call()
    assert state(call) is CallState.IDLE
    call.begin_attempt()
    assert state(call) is CallState.SENDING
    assert call.accepts(200, {})
    assert state(call) is CallState.STREAMING
    events = call.feed(render("anthropic-messages", Turn.text("hello there")))
    events += call.end()
    assert events[-1]["event_type"] == "stop"
    assert state(call) is CallState.STOPPED
    assert isinstance(call.result, FinalResponse)
    # a break after `stop` changes nothing
    assert call.fail(classify(httpx.ReadError("late"))) is None
    call.interrupted(classify(GeneratorExit()))
    assert state(call) is CallState.STOPPED and isinstance(call.result, FinalResponse)


def test_a_failure_before_any_event_is_retried_as_a_new_attempt() -> None:
    call = new_call()
    call.begin_attempt()
    error = call.fail(classify(httpx.ConnectError("refused")))
    assert isinstance(error, ProviderConnectionError)  # nothing was sent: retried
    assert state(call) is CallState.FAILED
    assert call.retry_delay(error) is not None
    assert state(call) is CallState.RETRYING
    call.begin_attempt()
    assert state(call) is CallState.SENDING and call.attempt == 2


def test_the_last_failure_ends_the_call_and_nothing_may_follow() -> None:
    call = new_call(attempts=1)
    call.begin_attempt()
    error = call.fail(classify(httpx.ConnectError("refused")))
    assert error is not None and call.retry_delay(error) is None
    assert state(call) is CallState.ENDED
    assert call.result is not None and call.result.status == "failed"
    with pytest.raises(CallStateError, match=r"state ENDED cannot take the event 'begin'"):
        call.begin_attempt()
    call.interrupted(classify(error))  # the shell's catch-all after raising: the partial stays
    assert call.result is not None and call.result.status == "failed"


def test_a_call_out_of_order_names_the_state_and_the_event() -> None:
    call = new_call()
    with pytest.raises(CallStateError) as feeding:
        call.feed(b"data: {}\n\n")
    assert (feeding.value.state, feeding.value.event) == (CallState.IDLE, "feed")
    call.begin_attempt()
    with pytest.raises(CallStateError, match="state SENDING cannot take the event 'http_error'"):
        call.http_error(500, {}, b"")
    with pytest.raises(CallStateError, match="state SENDING cannot take the event 'begin'"):
        call.begin_attempt()
    assert not call.accepts(503, {})
    with pytest.raises(CallStateError, match="state REFUSED cannot take the event 'feed'"):
        call.end()


def test_closing_a_stream_before_it_started_leaves_a_cancelled_partial() -> None:
    call = new_call()
    call.interrupted(classify(GeneratorExit()))
    assert state(call) is CallState.ENDED
    assert call.result is not None and call.result.status == "cancelled"
