"""docs/adding-a-protocol.md, followed once: "toy-lines", a made-up wire protocol, is defined
whole in this file and described by its own `Protocol` descriptor. It is never added to the
package's registry: a caller passes the descriptor itself as `client_type=`, so adding it changes
no file outside this one.

The wire: `POST /toy/v1/lines` with `{"model", "lines": [...], "stream": true}`; the answer is
an SSE stream of `token` events (`{"text"}`), then one `end` event (`{"reason", "in", "out"}`),
or an `oops` event (`{"kind", "message"}`) for an error in the stream. Its provider names a
busy server `toy_busy`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from modelstream import AsyncClient, Client, FinalResponse, GrammarChecker, StreamDecoder
from modelstream.auth import BearerSigner
from modelstream.error_bodies import ErrorWords, provider_error
from modelstream.errors import OverloadedError
from modelstream.framing import SSE
from modelstream.protocols import ERROR_WORDS, REGISTRY, error_words_of
from modelstream.protocols.common.decoding import load_json
from modelstream.protocols.common.encoding import ProviderRequest, check_messages, items_of
from modelstream.protocols.descriptor import Protocol, Provider
from modelstream.testing import Emulator, Reply
from modelstream.types import Config, Message

KEY = "toy-secret-1234"
PATH = "/toy/v1/lines"


# --- errors.py: how the toy provider names its errors ----------------------------------------

TOY_ERROR_WORDS = ErrorWords(retryable=frozenset({"toy_busy"}), overloaded=frozenset({"toy_busy"}))


# --- decoder.py: frames -> the ItemAssembler -------------------------------------------------


class ToyLinesDecoder:
    protocol = "toy-lines"
    default_provider = "toyco"

    def __init__(self, sink: Any, error_words: ErrorWords) -> None:
        self.sink = sink
        self.error_words = error_words

    def on_frame(self, event: str, data: str) -> None:
        if event == "token":
            self.sink.text(0, load_json(self.sink, data)["text"])
        elif event == "end":
            end = load_json(self.sink, data)
            self.sink.usage_update(
                {
                    "cached_tokens": 0,
                    "prompt_tokens": end["in"],
                    "thoughts_tokens": None,
                    "response_tokens": end["out"],
                }
            )
            self.sink.finish("stop" if end["reason"] == "done" else "unknown", end["reason"])
            self.sink.terminal()
        elif event == "oops":
            oops = load_json(self.sink, data)
            self.sink.provider_error(
                provider_error(
                    oops["message"],
                    error_type=oops["kind"],
                    retryable=oops["kind"] in self.error_words.retryable,
                    provider=self.default_provider,
                    words=self.error_words,
                )
            )
        else:
            self.sink.skip(event)

    def on_end(self) -> None:
        pass


# --- encoder.py: messages + config -> one HTTP request ---------------------------------------


class ToyLinesEncoder:
    protocol = "toy-lines"

    def encode(self, model: str, messages: list[Message], config: Config) -> ProviderRequest:
        check_messages(messages)
        lines = [
            item["text"]
            for message in messages
            for item in items_of(message)
            if item["type"] == "text.done"
        ]
        return ProviderRequest("POST", PATH, {"model": model, "lines": lines, "stream": True})


# --- __init__.py: the descriptor -------------------------------------------------------------

TOYCO = Provider("toyco", "https://api.toy.invalid", ("TOYCO_API_KEY",), "TOYCO_BASE_URL")
TOY_LINES = Protocol(
    name="toy-lines",
    decoder=ToyLinesDecoder,
    encoder=ToyLinesEncoder,
    framing=SSE,
    error_words=TOY_ERROR_WORDS,
    auth=BearerSigner,
    provider=TOYCO,
)


# --- the tests -------------------------------------------------------------------------------


def body(*tokens: str, reason: str = "done") -> bytes:
    frames = [f'event: token\ndata: {{"text": "{token}"}}\n\n' for token in tokens]
    frames.append(f'event: end\ndata: {{"reason": "{reason}", "in": 7, "out": 3}}\n\n')
    return "".join(frames).encode()


def test_the_toy_protocol_is_not_in_the_packages_registry() -> None:
    assert "toy-lines" not in REGISTRY
    assert "toy_busy" not in ERROR_WORDS.retryable
    assert "toy_busy" in error_words_of(TOY_LINES).retryable  # its own words, given with it
    assert error_words_of(REGISTRY["openai-chat"]) is ERROR_WORDS


def test_its_decoder_gives_the_grammar_under_any_chunking() -> None:
    whole = body("Hel", "lo", " toy")
    for size in (1, 3, 17, len(whole)):
        decoder = StreamDecoder(TOY_LINES)
        checker = GrammarChecker()
        events = []
        for start in range(0, len(whole), size):
            events += decoder.feed(whole[start : start + size])
        events += decoder.end()
        for event in events:
            checker.feed(event)
        checker.end()
        result = decoder.result
        assert isinstance(result, FinalResponse)
        assert result.text == "Hello toy"
        assert result.metadata.protocol == "toy-lines"
        assert result.metadata.provider == "toyco"
        assert result.usage == {
            "cached_tokens": 0,
            "prompt_tokens": 7,
            "thoughts_tokens": None,
            "response_tokens": 3,
        }


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_client_streams_it_over_http_with_the_descriptor_as_client_type(kind: str) -> None:
    with Emulator() as emu:
        emu.queue(
            Reply.body(body("Hi", " there"), content_type="text/event-stream", chunk_size=5),
            path=PATH,
        )
        options: dict[str, Any] = {
            "client_type": TOY_LINES,
            "base_url": emu.url,
            "api_key": KEY,
        }
        if kind == "sync":
            with Client("toy-1", **options) as client, client.stream("Hello") as stream:
                texts = [
                    item["text"]
                    for event in stream
                    for item in event["content_items"]
                    if item["type"] == "text.delta"
                ]
                result = stream.result
        else:

            async def go() -> tuple[list[str], Any]:
                async with AsyncClient("toy-1", **options) as client:
                    stream = client.stream("Hello")
                    found = [
                        item["text"]
                        async for event in stream
                        for item in event["content_items"]
                        if item["type"] == "text.delta"
                    ]
                    return found, stream.result

            texts, result = asyncio.run(go())
        request = emu.requests[0]

    assert "".join(texts) == "Hi there"
    assert isinstance(result, FinalResponse) and result.text == "Hi there"
    assert (result.metadata.protocol, result.metadata.provider) == ("toy-lines", "toyco")
    assert request.path == PATH
    assert request.json == {"model": "toy-1", "lines": ["Hello"], "stream": True}
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["accept"] == "text/event-stream"


def test_its_own_error_words_name_an_error_in_its_stream() -> None:
    oops = b'event: oops\ndata: {"kind": "toy_busy", "message": "the toy is busy"}\n\n'
    with Emulator() as emu:
        emu.queue(
            Reply.body(
                b'event: token\ndata: {"text": "partial"}\n\n' + oops,
                content_type="text/event-stream",
            ),
            path=PATH,
        )
        with (
            Client("toy-1", client_type=TOY_LINES, base_url=emu.url, api_key=KEY) as client,
            pytest.raises(OverloadedError) as caught,
        ):
            client.complete("Hello", max_retries=0)
    assert caught.value.retryable
    assert "the toy is busy" in str(caught.value)


def test_a_refused_request_names_the_cause_by_its_words() -> None:
    refusal = b'{"error": {"type": "toy_busy", "message": "come back later"}}'
    with Emulator() as emu:
        emu.queue(Reply.status(503, body=refusal), path=PATH)
        with (
            Client("toy-1", client_type=TOY_LINES, base_url=emu.url, api_key=KEY) as client,
            pytest.raises(OverloadedError, match="come back later"),
        ):
            client.complete("Hello", max_retries=0)


def test_a_client_repr_names_the_protocol() -> None:
    with Client("toy-1", client_type=TOY_LINES, base_url="http://127.0.0.1:9", api_key=KEY) as c:
        assert "client_type='toy-lines'" in repr(c)
