"""What the client tests share (the `drive` fixture is loaded for every folder by
tests/conftest.py): a model per client type, and `drive`, which runs one test body through
`Client` and again through `AsyncClient`.

`drive.stream(...)` returns what a caller observes (events, result, error) and records every
backoff the client asked for; the sleep is skipped unless `real_sleep=True`, so retry tests are
fast and their delays exact.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from modelstream import FinalResponse, PartialResponse, StreamError
from modelstream.client import AsyncClient, Client, route_for_model
from modelstream.protocols import REGISTRY
from modelstream.testing import Emulator
from modelstream.testing.render import ALL_PROTOCOLS, STREAM_PROTOCOLS
from modelstream.types import Config, Event, Message

API_KEY = "sk-test-0123456789"

# A model for each client type the emulator serves: one whose name routes there, where the
# protocol has one (tests of a protocol pass `client_type=` too, so any name serves).
MODELS = {name: REGISTRY[name].example_model or "emulated-model" for name in ALL_PROTOCOLS}
STREAMING = STREAM_PROTOCOLS


def user(text: str) -> Message:
    return {"role": "user", "content_items": [{"type": "text.done", "text": text}]}


HELLO = [user("hello")]


@dataclass
class Outcome:
    """What the caller of `stream()` saw."""

    events: list[Event]
    result: FinalResponse | PartialResponse | None
    error: StreamError | None
    sleeps: list[float] = field(default_factory=list)

    @property
    def deltas(self) -> list[dict[str, Any]]:
        return [dict(e["content_items"][0]) for e in self.events if e["event_type"] == "delta"]

    @property
    def streamed_text(self) -> str:
        return "".join(d.get("text", "") for d in self.deltas if d["type"] == "text.delta")

    @property
    def done_items(self) -> list[dict[str, Any]]:
        return [item for item in self.deltas if item["type"].endswith(".done")]


class Drive:
    """Runs a call through `Client` (mode "sync") or `AsyncClient` (mode "async")."""

    def __init__(self, mode: str, emu: Emulator) -> None:
        self.mode = mode
        self.emu = emu

    def __repr__(self) -> str:
        return self.mode

    def client_kwargs(self, model: str, options: dict[str, Any]) -> dict[str, Any]:
        """Point the client at the emulator with an explicit key, unless the test says else."""
        client_type = options.get("client_type")
        if client_type is None:
            route = route_for_model(model)
            client_type = route.client_type if route else "openai-chat"
        options.setdefault("base_url", self.emu.base_url(client_type))
        options.setdefault("api_key", API_KEY)
        return {"model": model, **options}

    def stream(
        self,
        model: str,
        messages: list[Message] = HELLO,
        config: Config | None = None,
        *,
        take: int | None = None,
        real_sleep: bool = False,
        **options: Any,
    ) -> Outcome:
        """Stream one turn; with `take`, stop reading after that many events and leave the
        `with` block (which cancels the stream)."""
        kwargs = self.client_kwargs(model, options)
        if self.mode == "sync":
            return _stream_sync(kwargs, messages, config, take, real_sleep)
        return asyncio.run(_stream_async(kwargs, messages, config, take, real_sleep))

    def stream_on(
        self,
        protocol: str,
        messages: list[Message] = HELLO,
        config: Config | None = None,
        **options: Any,
    ) -> Outcome:
        """`stream` on `protocol` (its model, `client_type=protocol`): what the tests that run
        on every protocol the emulator serves use."""
        return self.stream(MODELS[protocol], messages, config, client_type=protocol, **options)

    def complete(
        self,
        model: str,
        messages: list[Message] = HELLO,
        config: Config | None = None,
        **options: Any,
    ) -> Message:
        kwargs = self.client_kwargs(model, options)
        if self.mode == "sync":
            with Client(**kwargs) as client:
                return client.complete(messages, config)

        async def run() -> Message:
            async with AsyncClient(**kwargs) as client:
                return await client.complete(messages, config)

        return asyncio.run(run())

    def make_client(self, model: str, **options: Any) -> Client | AsyncClient:
        """A client built the way `stream` builds it (for construction-time errors)."""
        kwargs = self.client_kwargs(model, options)
        return Client(**kwargs) if self.mode == "sync" else AsyncClient(**kwargs)


def _stream_sync(
    kwargs: dict[str, Any],
    messages: list[Message],
    config: Config | None,
    take: int | None,
    real_sleep: bool,
) -> Outcome:
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if real_sleep:
            time.sleep(seconds)

    events: list[Event] = []
    error: StreamError | None = None
    with Client(**kwargs, sleep=sleep) as client, client.stream(messages, config) as stream:
        try:
            for event in stream:
                events.append(event)
                if take is not None and len(events) >= take:
                    break
        except StreamError as exc:
            error = exc
    return Outcome(events, stream.result, error, sleeps)


async def _stream_async(
    kwargs: dict[str, Any],
    messages: list[Message],
    config: Config | None,
    take: int | None,
    real_sleep: bool,
) -> Outcome:
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if real_sleep:
            await asyncio.sleep(seconds)

    events: list[Event] = []
    error: StreamError | None = None
    async with (
        AsyncClient(**kwargs, sleep=sleep) as client,
        client.stream(messages, config) as stream,
    ):
        try:
            async for event in stream:
                events.append(event)
                if take is not None and len(events) >= take:
                    break
        except StreamError as exc:
            error = exc
    return Outcome(events, stream.result, error, sleeps)


@pytest.fixture(params=["sync", "async"])
def drive(request: pytest.FixtureRequest, emu: Emulator) -> Drive:
    """Each test that takes `drive` runs twice: through `Client`, then through `AsyncClient`."""
    return Drive(request.param, emu)


__all__ = ["API_KEY", "HELLO", "MODELS", "STREAMING", "Drive", "Outcome", "user"]
