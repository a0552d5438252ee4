"""The emulator's Bedrock ConverseStream endpoint (a binary AWS event stream): its error shapes,
and the faults only it has (a corrupted CRC, an exception message, a message cut in half), seen
from the wire and through `Client` and `AsyncClient` (the `drive` fixture)."""

from __future__ import annotations

import httpx
import orjson
import pytest

from modelstream import (
    CorruptedMessageError,
    IncompleteStreamError,
    MalformedFrameError,
    ProviderError,
    StreamDecoder,
)
from modelstream.client import RetryPolicy
from modelstream.framing.eventstream import EventStreamDecoder, HeaderValue
from modelstream.protocols.bedrock_converse_stream.error_body import read_bedrock_error_body
from modelstream.testing import (
    Emulator,
    Reply,
    StreamError,
    Text,
    Thinking,
    ToolCall,
    Turn,
    render,
    render_frames,
)
from support import require_corpus
from support.client import Drive

BEDROCK = "bedrock-converse-stream"
BEDROCK_PATH = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
ASK = {"messages": [{"role": "user", "content": [{"text": "Capital of France?"}]}]}
TEXT = "The capital of France is Paris, a city on the Seine."


def messages(body: bytes) -> list[tuple[dict[str, HeaderValue], bytes]]:
    decoder = EventStreamDecoder()
    decoder.feed(body)
    out = []
    while (message := decoder.next_message()) is not None:
        out.append((message.headers, message.payload))
    decoder.end()
    return out


# --- on the wire ------------------------------------------------------------------------------


def test_bedrock_streams_event_stream_messages_at_the_converse_stream_path(emu: Emulator) -> None:
    response = httpx.post(emu.url + BEDROCK_PATH, json=ASK)

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
    read = messages(response.content)
    assert [headers[":event-type"] for headers, _ in read] == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    ]
    assert all(
        list(headers) == [":event-type", ":content-type", ":message-type"] for headers, _ in read
    )
    text = "".join(
        orjson.loads(payload)["delta"]["text"]
        for headers, payload in read
        if headers[":event-type"] == "contentBlockDelta"
    )
    assert text == "echo: Capital of France?"
    (record,) = emu.requests
    assert record.protocol == BEDROCK


def test_bedrock_renders_reasoning_with_its_signature_and_tool_input_in_fragments() -> None:
    turn = Turn(
        items=[
            Thinking("Weather first.", signature="c2lnbmF0dXJl"),
            ToolCall("get_weather", {"city": "Paris"}, id="tooluse_1"),
        ]
    )

    payloads = [
        orjson.loads(payload) for _, payload in messages(render(BEDROCK, turn, fragment_size=6))
    ]

    assert payloads[1]["delta"] == {"reasoningContent": {"text": "Weathe"}}
    assert {"reasoningContent": {"signature": "c2lnbmF0dXJl"}} in [p.get("delta") for p in payloads]
    start = next(p for p in payloads if "start" in p)
    assert start["start"] == {"toolUse": {"name": "get_weather", "toolUseId": "tooluse_1"}}
    fragments = [
        p["delta"]["toolUse"]["input"] for p in payloads if "toolUse" in p.get("delta", {})
    ]
    assert len(fragments) > 1 and orjson.loads("".join(fragments)) == {"city": "Paris"}
    assert payloads[-2]["stopReason"] == "tool_use"
    assert all("p" in payload for payload in payloads)  # AWS's padding field


def test_a_bedrock_http_error_is_a_message_body_with_its_type_in_a_header(emu: Emulator) -> None:
    emu.queue(Reply.status(429, retry_after=2))

    response = httpx.post(emu.url + BEDROCK_PATH, json=ASK)

    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.headers["x-amzn-errortype"].startswith("ThrottlingException:")
    assert response.json() == {"message": "emulated error: HTTP 429"}
    read = read_bedrock_error_body(response.content, response.headers)
    assert (read.error_type, read.message) == ("ThrottlingException", "emulated error: HTTP 429")


def test_a_refused_bedrock_call_carries_the_error_type_of_its_header(
    drive: Drive, emu: Emulator
) -> None:
    emu.queue(Reply.status(400))

    outcome = drive.stream_on(BEDROCK)

    assert isinstance(outcome.error, ProviderError)
    assert (outcome.error.status, outcome.error.error_type) == (400, "ValidationException")
    assert outcome.error.provider_message == "emulated error: HTTP 400"


def test_the_bedrock_error_reader_takes_the_type_from_the_body_when_no_header_says_it() -> None:
    body = b'{"__type":"com.amazon.bedrock#ValidationException","message":"bad model"}'

    read = read_bedrock_error_body(body)

    assert (read.error_type, read.message, read.is_document) == (
        "ValidationException",
        "bad model",
        True,
    )
    assert read_bedrock_error_body(b"<html>gateway</html>").message == "<html>gateway</html>"


def test_a_recorded_bedrock_body_is_replayed_byte_for_byte_one_message_per_chunk(
    emu: Emulator,
) -> None:
    recorded = (require_corpus() / BEDROCK / "pydanticai-bedrock-nova-text.bin").read_bytes()
    emu.queue(Reply.body(recorded))

    with httpx.stream("POST", emu.url + BEDROCK_PATH, json=ASK) as response:
        chunks = list(response.iter_raw())

    assert b"".join(chunks) == recorded
    # messageStart, 29 text deltas, contentBlockStop, messageStop, metadata
    assert len(chunks) == len(messages(recorded)) == 33


def test_a_malformed_bedrock_frame_is_a_message_whose_payload_is_not_json(emu: Emulator) -> None:
    emu.queue(Reply.turn(Turn.text(TEXT), malformed_frame_at=2))

    body = httpx.post(emu.url + BEDROCK_PATH, json=ASK).content

    assert messages(body)[2][1] == b"{not json"
    decoder = StreamDecoder(BEDROCK)
    with pytest.raises(MalformedFrameError):
        decoder.feed(body)
        decoder.end()


@pytest.mark.parametrize("part", ["prelude", "message"])
def test_a_corrupted_crc_reaches_the_decoder_as_a_corrupted_message(part: str) -> None:
    frames = render_frames(BEDROCK, Turn.text(TEXT))
    emu_reply = Reply.turn(Turn.text(TEXT), corrupt_crc_at=(3, part))  # type: ignore[arg-type]

    with Emulator() as emu:
        emu.queue(emu_reply)
        body = httpx.post(emu.url + BEDROCK_PATH, json=ASK).content

    assert len(body) == len(b"".join(frames)) and body != b"".join(frames)
    decoder = StreamDecoder(BEDROCK)
    with pytest.raises(CorruptedMessageError) as raised:
        decoder.feed(body)
        decoder.end()
    assert (raised.value.message_index, raised.value.crc) == (3, part)


def test_a_corrupted_crc_on_an_sse_protocol_is_refused_with_a_500_that_says_why(
    emu: Emulator,
) -> None:
    emu.queue(Reply.turn(Turn.text("x"), corrupt_crc_at=(0, "message")))

    response = httpx.post(emu.url + "/v1/messages", json={})

    assert response.status_code == 500
    assert "event-stream" in response.json()["error"]["message"]


# --- through the client -----------------------------------------------------------------------


@pytest.mark.parametrize("part", ["prelude", "message"])
def test_the_client_ends_a_stream_with_a_corrupted_crc_as_a_corrupted_message_with_the_partial(
    drive: Drive, emu: Emulator, part: str
) -> None:
    emu.queue(Reply.turn(Turn.text(TEXT), fragment_size=8, corrupt_crc_at=(4, part)))  # type: ignore[arg-type]

    outcome = drive.stream_on(BEDROCK)

    assert isinstance(outcome.error, CorruptedMessageError)
    assert outcome.error.crc == part
    assert outcome.streamed_text == TEXT[:24]  # messages 1-3: the first three deltas
    assert outcome.result is not None and outcome.result.status != "final"
    assert len(emu.requests) == 1


def test_a_throttling_exception_before_the_first_event_is_retried(
    drive: Drive, emu: Emulator
) -> None:
    emu.queue(
        Reply.echo(stream_error=StreamError("throttlingException", "Too many requests")),
        Reply.turn(Turn.text("ok")),
    )

    outcome = drive.stream_on(BEDROCK)

    assert outcome.error is None and outcome.streamed_text == "ok"
    assert len(emu.requests) == 2
    retry = outcome.result.metadata.diagnostics[0]  # type: ignore[union-attr]
    assert retry["type"] == "retry"


def test_a_validation_exception_is_raised_at_once(drive: Drive, emu: Emulator) -> None:
    emu.queue(Reply.echo(stream_error=StreamError("validationException", "Malformed input")))

    outcome = drive.stream_on(BEDROCK)

    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.error_type == "validationException"
    assert outcome.error.provider_message == "Malformed input"
    assert not outcome.error.retryable
    assert len(emu.requests) == 1


def test_an_exception_after_events_ends_the_stream_with_the_partial_and_no_retry(
    drive: Drive, emu: Emulator
) -> None:
    error = StreamError(
        "modelStreamErrorException", "Model Stream Error", after_frames=3, status=424
    )
    emu.queue(Reply.turn(Turn.text(TEXT), fragment_size=8, stream_error=error))

    outcome = drive.stream_on(BEDROCK)

    assert isinstance(outcome.error, ProviderError)
    assert (outcome.error.error_type, outcome.error.code) == ("modelStreamErrorException", 424)
    assert outcome.streamed_text == TEXT[:16]
    assert outcome.result is not None and outcome.result.status == "failed"
    assert len(emu.requests) == 1


def test_a_bedrock_503_is_a_retryable_provider_error_with_bedrocks_message(
    drive: Drive, emu: Emulator
) -> None:
    emu.queue(*[Reply.status(503, body={"message": "Service unavailable"})] * 2)

    outcome = drive.stream_on(BEDROCK, retry=RetryPolicy(max_attempts=2))

    assert isinstance(outcome.error, ProviderError)
    assert (outcome.error.status, outcome.error.retryable) == (503, True)
    assert outcome.error.provider_message == "Service unavailable"
    assert len(emu.requests) == 2


# --- redacted thinking ------------------------------------------------------------------------


def test_redacted_thinking_decodes_to_an_empty_thinking_item_with_its_data() -> None:
    turn = Turn(items=[Thinking("", redacted="RXRrRUNrZ0lC"), Text("Hello.")])

    decoder = StreamDecoder(BEDROCK)
    decoder.feed(render(BEDROCK, turn))
    decoder.end()

    thinking, text = decoder.result.message["content_items"]
    assert thinking == {
        "type": "thinking.done",
        "thinking": "",
        "fidelity": {"redacted_content": "RXRrRUNrZ0lC"},
    }
    assert text == {"type": "text.done", "text": "Hello."}


# --- a message cut in half --------------------------------------------------------------------


def test_a_disconnect_inside_a_message_is_an_incomplete_stream_with_the_partial(
    drive: Drive, emu: Emulator
) -> None:
    frames = render_frames(BEDROCK, Turn.text(TEXT), fragment_size=8)
    cut = len(b"".join(frames[:2])) + len(frames[2]) // 2  # halfway through the second delta
    emu.queue(Reply.turn(Turn.text(TEXT), fragment_size=8, disconnect_after_bytes=cut))

    outcome = drive.stream_on(BEDROCK)

    assert isinstance(outcome.error, IncompleteStreamError)
    assert outcome.streamed_text == TEXT[:8]
    assert outcome.result is not None and outcome.result.status == "incomplete"
    (request,) = emu.wait_for_requests(1, finished=True)
    assert request.bytes_sent == cut


def test_a_body_that_ends_inside_a_message_is_an_incomplete_stream(
    drive: Drive, emu: Emulator
) -> None:
    body = render(BEDROCK, Turn.text(TEXT), fragment_size=8)
    emu.queue(Reply.body(body[:-5]))  # the chunked body ends cleanly, the last message does not

    outcome = drive.stream_on(BEDROCK)

    assert isinstance(outcome.error, IncompleteStreamError)
    assert "inside message" in str(outcome.error)
    assert outcome.streamed_text == TEXT
    assert outcome.result is not None and outcome.result.status == "incomplete"
