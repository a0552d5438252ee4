"""Image and speech output: `image_output` / `speech_output` mapped per protocol (or refused
with `UnsupportedParameterError` where a protocol cannot), and generated images and audio
played by the emulator arriving as `inline_data` items through the real HTTP path."""

from __future__ import annotations

from typing import Any

import pytest

from modelstream import Client, UnsupportedParameterError
from modelstream.protocols import encode_request
from modelstream.testing import Emulator, Media, Reply, Text, Turn, render
from modelstream.types import Config, Message

HELLO: list[Message] = [{"role": "user", "content_items": [{"type": "text.done", "text": "hi"}]}]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
PCM = bytes(range(256)) * 20  # 5,120 bytes: several streamed chunks


def body(protocol: str, model: str, config: Config) -> dict[str, Any]:
    return encode_request(protocol, model, HELLO, config).json


def refusal(protocol: str, model: str, config: Config) -> str:
    with pytest.raises(UnsupportedParameterError) as caught:
        encode_request(protocol, model, HELLO, config)
    return str(caught.value)


# --- encoders ---------------------------------------------------------------------------------


def test_gemini_asks_for_images_with_their_aspect_ratio_and_size() -> None:
    config: Config = {"image_output": {"aspect_ratio": "16:9", "size": "2K"}}
    generation = body("gemini-generate-content", "gemini-3-pro-image-preview", config)

    assert generation["generationConfig"] == {
        "responseModalities": ["TEXT", "IMAGE"],
        "imageConfig": {"aspectRatio": "16:9", "imageSize": "2K"},
    }
    plain = body("gemini-generate-content", "gemini-2.5-flash-image", {"image_output": True})
    assert plain["generationConfig"] == {"responseModalities": ["TEXT", "IMAGE"]}


def test_gemini_speaks_with_one_voice_or_a_voice_per_speaker() -> None:
    one = body(
        "gemini-generate-content",
        "gemini-2.5-flash-preview-tts",
        {"speech_output": {"voice": "Kore", "language": "de-DE"}},
    )
    two = body(
        "gemini-generate-content",
        "gemini-2.5-flash-preview-tts",
        {"speech_output": {"speakers": {"Joe": "Kore", "Jane": "Puck"}}},
    )

    assert one["generationConfig"] == {
        "responseModalities": ["AUDIO"],
        "speechConfig": {
            "voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Kore"}},
            "languageCode": "de-DE",
        },
    }
    assert two["generationConfig"]["speechConfig"] == {
        "multiSpeakerVoiceConfig": {
            "speakerVoiceConfigs": [
                {"speaker": "Joe", "voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Kore"}}},
                {"speaker": "Jane", "voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Puck"}}},
            ]
        }
    }


def test_chat_speaks_pcm16_with_the_voice_asked_for() -> None:
    request = body("openai-chat", "gpt-4o-audio-preview", {"speech_output": {"voice": "alloy"}})

    assert request["modalities"] == ["text", "audio"]
    assert request["audio"] == {"voice": "alloy", "format": "pcm16"}


def test_responses_generates_images_through_the_image_generation_tool() -> None:
    tool = {"name": "lookup", "description": "d", "parameters": {"type": "object"}}
    request = body(
        "openai-responses", "gpt-5", {"image_output": {"aspect_ratio": "3:2"}, "tools": [tool]}
    )

    assert [t["type"] for t in request["tools"]] == ["function", "image_generation"]
    assert request["tools"][1] == {"type": "image_generation", "size": "1536x1024"}
    plain = body("openai-responses", "gpt-5", {"image_output": True})
    assert plain["tools"] == [{"type": "image_generation"}]


def test_modelstream_forwards_both_keys_to_the_server_unchanged() -> None:
    config: Config = {"speech_output": {"voice": "Kore"}, "image_output": False}
    request = body("modelstream", "served-model", config)

    assert request["config"] == {"speech_output": {"voice": "Kore"}, "image_output": False}


@pytest.mark.parametrize(
    ("protocol", "model", "config", "expected"),
    [
        ("anthropic-messages", "claude-sonnet-4-5", {"image_output": True}, "text only"),
        ("anthropic-messages", "claude-sonnet-4-5", {"speech_output": True}, "text only"),
        ("bedrock-converse-stream", "amazon.nova-pro-v1:0", {"image_output": True}, "text only"),
        ("gemini-interactions", "gemini-3-flash", {"speech_output": True}, "not mapped"),
        ("openai-chat", "gpt-4o", {"image_output": True}, "use openai-responses"),
        ("openai-chat", "gpt-4o-audio-preview", {"speech_output": True}, "needs a voice"),
        (
            "openai-chat",
            "gpt-4o-audio-preview",
            {"speech_output": {"voice": "alloy", "format": "wav"}},
            "pcm16 only, not 'wav'",
        ),
        ("openai-responses", "gpt-5", {"speech_output": {"voice": "alloy"}}, "use openai-chat"),
        ("openai-responses", "gpt-5", {"image_output": {"size": "2K"}}, "size '2K' is not"),
        ("openai-responses", "gpt-5", {"image_output": {"aspect_ratio": "16:9"}}, "not one of"),
        (
            "openai-responses",
            "gpt-5",
            {"image_output": {"aspect_ratio": "1:1", "size": "1536x1024"}},
            "does not have the aspect ratio 1:1",
        ),
        (
            "gemini-generate-content",
            "gemini-2.5-flash",
            {"image_output": True, "speech_output": True},
            "images or with speech, not both",
        ),
        (
            "gemini-generate-content",
            "gemini-2.5-flash-preview-tts",
            {"speech_output": {"voice": "Kore", "format": "mp3"}},
            "leave format out",
        ),
        (
            "gemini-generate-content",
            "gemini-2.5-flash",
            {"image_output": {"ratio": "1:1"}},
            "unknown setting(s) ratio; known: aspect_ratio, size",
        ),
        ("gemini-generate-content", "gemini-2.5-flash", {"image_output": "yes"}, "True or a dict"),
        (
            "gemini-generate-content",
            "gemini-2.5-flash-preview-tts",
            {"speech_output": {"speakers": {"Joe": 1}}},
            "map each speaker's name to a voice",
        ),
    ],
)
def test_what_a_protocol_cannot_do_is_refused_by_name(
    protocol: str, model: str, config: Config, expected: str
) -> None:
    message = refusal(protocol, model, config)

    assert expected in message
    assert ("image_output" in message) or ("speech_output" in message)


# --- the emulator plays images and audio --------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "model", "media", "config"),
    [
        (
            "gemini-generate-content",
            "gemini-2.5-flash-image",
            Media(PNG, "image/png"),
            {"image_output": {"aspect_ratio": "1:1"}},
        ),
        (
            "gemini-generate-content",
            "gemini-2.5-flash-preview-tts",
            Media(PCM, "audio/L16;codec=pcm;rate=24000"),
            {"speech_output": {"voice": "Kore"}},
        ),
        (
            "openai-chat",
            "gpt-4o-audio-preview",
            Media(PCM, "audio/pcm;rate=24000"),
            {"speech_output": {"voice": "alloy"}},
        ),
        ("openai-responses", "gpt-5", Media(PNG, "image/png"), {"image_output": True}),
    ],
)
def test_generated_media_arrive_as_one_inline_data_item_each(
    protocol: str, model: str, media: Media, config: Config
) -> None:
    with Emulator() as emu:
        emu.queue(Reply.turn(Turn(items=[Text("Here it is."), media])))
        client = Client(
            model, client_type=protocol, base_url=emu.base_url(protocol), api_key="k", traces=False
        )
        with client, client.stream(HELLO, config) as stream:
            events = list(stream)
        result = stream.result
        request = emu.requests[0].json

    assert result is not None and events[-1]["event_type"] == "stop"
    items = result.message["content_items"]
    assert [item["type"] for item in items] == ["text.done", "inline_data.done"]
    assert items[1]["data"] == media.data  # the whole clip or image, every chunk joined
    assert items[1]["mime_type"] == media.mime_type
    # the request the emulator received asked for the media
    assert request == {**request, **encode_request(protocol, model, HELLO, config).json}


def test_an_audio_clip_streams_in_several_deltas() -> None:
    frames = render("gemini-generate-content", Turn(items=[Media(PCM, "audio/L16;rate=24000")]))

    assert len(frames) > 3  # one part per chunk, as Gemini TTS streams


@pytest.mark.parametrize(
    ("protocol", "media", "expected"),
    [
        ("anthropic-messages", Media(PNG, "image/png"), "cannot send image (it sends no media)"),
        ("openai-chat", Media(PNG, "image/png"), "cannot send image (it sends audio)"),
        ("openai-responses", Media(PCM, "audio/pcm"), "cannot send audio (it sends image)"),
    ],
)
def test_the_emulator_refuses_media_its_protocol_cannot_send(
    protocol: str, media: Media, expected: str
) -> None:
    with pytest.raises(ValueError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        render(protocol, Turn(items=[media]))
