"""What people type first, from the official SDKs (issue 20 item 1): `timeout=` and
`max_retries=` on the client as well as per call, and config keys as keyword arguments."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from modelstream import AsyncClient, Client, UnsupportedParameterError
from modelstream.client import RetryPolicy, Timeouts
from modelstream.errors import ServerError
from modelstream.testing import Emulator, Reply, Turn

MODEL = "gpt-5-mini"


def client(emu: Emulator, **options: Any) -> Client:
    return Client(
        MODEL,
        client_type="openai-chat",
        base_url=emu.base_url("openai-chat"),
        api_key="k",
        sleep=lambda _: None,
        **options,
    )


def test_timeout_and_max_retries_on_the_client_mean_what_they_mean_per_call() -> None:
    with Client(MODEL, api_key="k", timeout=30, max_retries=3) as sdk_style:
        pass
    with Client(MODEL, api_key="k", timeouts=30, retry=RetryPolicy(max_attempts=4)) as ours:
        pass
    assert sdk_style.timeouts == ours.timeouts
    assert sdk_style.retry == ours.retry
    assert sdk_style.retry.max_attempts == 4  # retries after the first attempt
    with Client(MODEL, api_key="k", timeout=False, max_retries=0) as none:
        assert none.timeouts.idle is None and none.retry.max_attempts == 1


def test_max_retries_keeps_the_rest_of_a_retry_policy() -> None:
    policy = RetryPolicy(max_attempts=9, base_delay=0.1)
    with Client(MODEL, api_key="k", retry=policy, max_retries=1) as c:
        assert c.retry == RetryPolicy(max_attempts=2, base_delay=0.1)


def test_one_setting_is_given_once() -> None:
    with pytest.raises(TypeError, match="pass timeout= or timeouts=, not both"):
        Client(MODEL, api_key="k", timeout=5, timeouts=Timeouts(connect=1))
    with pytest.raises(TypeError, match="max_retries must be an int"):
        Client(MODEL, api_key="k", max_retries="3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_retries must be 0 or more"):
        AsyncClient(MODEL, api_key="k", max_retries=-1)


def test_the_clients_max_retries_is_what_a_call_retries() -> None:
    with Emulator() as emu:
        emu.queue(Reply.status(503), Reply.status(503), Reply.turn(Turn.text("third time")))
        with client(emu, max_retries=2) as c:
            assert c.complete("Hi").text == "third time"
        emu.queue(Reply.status(503), Reply.turn(Turn.text("never")))
        with client(emu, max_retries=0) as c, pytest.raises(ServerError):
            c.complete("Hi")
        assert emu.pending == 1  # no second attempt


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_config_keys_as_keyword_arguments_send_what_the_dict_sends(kind: str) -> None:
    with Emulator() as emu:
        emu.queue(Reply.turn(Turn.text("one")), Reply.turn(Turn.text("two")))
        if kind == "sync":
            with client(emu) as c:
                c.complete("Hi", max_tokens=5, temperature=0)
                c.complete("Hi", {"max_tokens": 5, "temperature": 0})
        else:

            async def go() -> None:
                async with AsyncClient(
                    MODEL,
                    client_type="openai-chat",
                    base_url=emu.base_url("openai-chat"),
                    api_key="k",
                ) as c:
                    await c.complete("Hi", max_tokens=5, temperature=0)
                    await c.complete("Hi", {"max_tokens": 5, "temperature": 0})

            asyncio.run(go())
        by_keyword, by_dict = (request.json for request in emu.requests)
    assert by_keyword == by_dict
    assert by_keyword["temperature"] == 0
    assert 5 in (by_keyword.get("max_completion_tokens"), by_keyword.get("max_tokens"))


def test_keyword_config_joins_the_dict_and_a_key_given_twice_is_refused() -> None:
    with Emulator() as emu:
        emu.queue(Reply.turn(Turn.text("ok")))
        with client(emu) as c:
            with c.stream("Hi", {"system_prompt": "Be brief."}, temperature=0.5) as stream:
                for _ in stream:
                    pass
            sent = emu.requests[0].json
            assert sent["temperature"] == 0.5
            assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
            with pytest.raises(TypeError, match="'temperature' given both in config and as a"):
                c.stream("Hi", {"temperature": 0.1}, temperature=0.5)
            with pytest.raises(UnsupportedParameterError, match="max_tokenz"):
                c.complete("Hi", max_tokenz=5)  # type: ignore[call-arg]
        assert len(emu.requests) == 1  # neither mistake sent anything
