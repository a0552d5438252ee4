"""`modelstream chat` and `modelstream demo`, run as real subprocesses.

`chat` talks to a loopback emulator started by the test, over real HTTP; expected values come
from the turn the test scripts and from what the emulator records, never from our output.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
import wave
from typing import Any

import pytest

from modelstream import GrammarChecker
from modelstream.cli import demo as demo_module
from modelstream.client import RetryPolicy
from modelstream.jsonwire import loads_event
from modelstream.protocols import PROTOCOLS
from modelstream.testing import Emulator, Media, Reply, Text, Thinking, ToolCall, Turn
from support.cli import KEY, KEY_VAR, MODELS, chat_args, command, environment


def run_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args), capture_output=True, text=True, timeout=60, env=environment(**env)
    )


def summary_row(output: str, label: str) -> str:
    """The value of a `label  value` row of the pretty summary."""
    rows = [line[len(label) :].strip() for line in output.splitlines() if line.startswith(label)]
    assert len(rows) == 1, (label, output)
    return rows[0]


def json_lines(stdout: str) -> list[Any]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


# --- demo ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_output() -> str:
    result = run_cli("demo", "--fast")
    assert result.returncode == 0, result.stderr
    return result.stdout


def sections(output: str) -> dict[str, str]:
    """The demo's output per protocol, from its header line to the next one, in order."""
    protocols = [client_type for client_type, _ in demo_module.PROTOCOL_MODELS]
    lines = output.splitlines()
    starts = [
        next(i for i, line in enumerate(lines) if line.startswith(f"{p}  ")) for p in protocols
    ]
    assert starts == sorted(starts), "the protocols are shown in order"
    ends = [*starts[1:], len(lines)]
    return {p: "\n".join(lines[a:b]) for p, a, b in zip(protocols, starts, ends, strict=True)}


def test_demo_streams_one_turn_of_each_of_the_six_streaming_protocols_and_exits_0(demo_output):
    shown = sections(demo_output)
    assert list(shown) == [client_type for client_type, _ in demo_module.PROTOCOL_MODELS]
    assert list(shown) == [
        "openai-chat",
        "openai-responses",
        "anthropic-messages",
        "gemini-generate-content",
        "gemini-interactions",  # reached only by client_type=, never by a model name
        "bedrock-converse-stream",
    ]
    assert set(shown) == set(PROTOCOLS)
    for client_type, model in demo_module.PROTOCOL_MODELS:
        assert shown[client_type].splitlines()[0].split() == [client_type, model]


def test_demo_shows_the_scripted_text_and_tool_call_in_every_protocol(demo_output):
    (text,) = [i for i in demo_module.ANSWER.items if isinstance(i, Text)]
    (call,) = [i for i in demo_module.ANSWER.items if isinstance(i, ToolCall)]
    for client_type, section in sections(demo_output).items():
        lines = section.splitlines()
        assert text.text in lines, client_type
        label = next(i for i, line in enumerate(lines) if line.startswith("▍tool call "))
        assert lines[label].split()[2] == call.name, client_type
        assert json.loads(lines[label + 1]) == dict(call.arguments), client_type


def test_demo_notes_the_thinking_signature_each_protocol_carries_as_fidelity(demo_output):
    (thinking,) = [i for i in demo_module.ANSWER.items if isinstance(i, Thinking)]
    assert thinking.signature is not None
    signature_key = {
        "openai-chat": "signature",
        "openai-responses": "encrypted_content",
        "anthropic-messages": "signature",
        "gemini-generate-content": "thought_signature",
        "gemini-interactions": "thought_signature",
        "bedrock-converse-stream": "signature",
    }
    for client_type, section in sections(demo_output).items():
        lines = section.splitlines()
        assert thinking.thinking in lines, client_type
        note = lines[lines.index(thinking.thinking) + 1]
        key = signature_key[client_type]
        assert note.startswith("fidelity: "), client_type
        assert f"{key} ({len(thinking.signature)} chars)" in note, client_type
        (summary,) = [line for line in lines if line.startswith("→ finish ")]
        assert "fidelity carried: thinking " in summary and key in summary, client_type


def test_demo_ends_each_turn_with_a_one_line_summary_of_finish_reason_and_usage(demo_output):
    for client_type, section in sections(demo_output).items():
        (summary,) = [line for line in section.splitlines() if line.startswith("→ ")]
        assert summary.startswith("→ finish tool_call (provider: "), client_type
        assert " · usage cached " in summary, client_type


def test_demo_output_to_a_pipe_has_no_terminal_escape_codes(demo_output):
    assert "get_weather" in demo_output
    assert "\x1b" not in demo_output


def test_the_paced_demo_prints_what_the_fast_one_does_within_a_few_seconds(demo_output):
    started = time.monotonic()
    paced = run_cli("demo")
    elapsed = time.monotonic() - started
    assert paced.returncode == 0, paced.stderr
    assert paced.stdout == demo_output
    assert elapsed < 20  # about 2.5 s of pacing; a busy machine may triple it


def test_demo_needs_no_key_and_ignores_the_keys_in_the_environment():
    result = run_cli("demo", "--fast", ANTHROPIC_API_KEY="sk-ant-should-not-be-used")
    assert result.returncode == 0, result.stderr
    assert "sk-ant-should-not-be-used" not in result.stdout + result.stderr
    assert result.stdout.count("→ finish tool_call") == len(demo_module.PROTOCOL_MODELS)


# --- chat ----------------------------------------------------------------------------------


@pytest.mark.parametrize("client_type", list(MODELS))
def test_chat_streams_the_text_then_usage_finish_reason_and_timings(emu, client_type):
    answer = "Hello! Streaming from the emulator."
    emu.queue(Reply.turn(Turn.text(answer)))
    result = run_cli(*chat_args(emu, client_type), **{KEY_VAR: KEY})
    assert result.returncode == 0, result.stderr
    assert answer in result.stdout.splitlines()
    assert summary_row(result.stdout, "finish reason").split()[0] == "stop"
    usage = summary_row(result.stdout, "usage")
    assert usage.startswith("cached ") and " · response " in usage
    timings = summary_row(result.stdout, "timings")
    assert [part.split()[0] for part in timings.split(" · ")] == ["ttfb", "ttfe", "total"]


def test_chat_names_the_model_protocol_and_the_server_given_by_base_url_first(emu):
    emu.queue(Reply.turn(Turn.text("ok")))
    result = run_cli(*chat_args(emu, "gemini-generate-content"), **{KEY_VAR: KEY})
    assert result.returncode == 0, result.stderr
    server = emu.url.removeprefix("http://")
    assert result.stdout.splitlines()[0] == (
        f"{MODELS['gemini-generate-content']}  gemini-generate-content · {server}"
    )


def test_chat_shows_the_usage_the_provider_reported(emu):
    emu.queue(
        Reply.turn(
            Turn.text(
                "Counted.",
                usage={
                    "cached_tokens": 4,
                    "prompt_tokens": 31,
                    "thoughts_tokens": None,
                    "response_tokens": 9,
                },
            )
        )
    )
    result = run_cli(*chat_args(emu, "anthropic-messages"), **{KEY_VAR: KEY})
    assert result.returncode == 0, result.stderr
    assert summary_row(result.stdout, "usage") == (
        "cached 4 · prompt 31 · thoughts unknown · response 9"
    )


def test_chat_shows_what_the_turn_cost_by_the_catalogue_and_unknown_when_it_has_no_price(emu):
    emu.queue(
        Reply.turn(
            Turn.text(
                "Priced.",
                usage={
                    "cached_tokens": 1000,
                    "prompt_tokens": 2000,
                    "thoughts_tokens": None,
                    "response_tokens": 500,
                },
            )
        )
    )
    result = run_cli(*chat_args(emu, "anthropic-messages"), **{KEY_VAR: KEY})
    assert result.returncode == 0, result.stderr
    # claude-sonnet-4-5: input $3, cache reads $0.30, output $15 per million tokens
    # 2000 * 3 + 1000 * 0.30 + 500 * 15 = 13,800 / 1e6 = $0.0138
    assert summary_row(result.stdout, "cost") == "$0.0138 (claude-sonnet-4-5 list price)"

    emu.queue(Reply.turn(Turn.text("Not priced.")))
    args = chat_args(emu, "openai-responses")
    args[args.index("-m") + 1] = "house-model"  # a model the catalogue does not know
    unpriced = run_cli(*args, **{KEY_VAR: KEY})
    assert unpriced.returncode == 0, unpriced.stderr
    assert summary_row(unpriced.stdout, "cost") == "unknown (no catalogue price for house-model)"


def test_chat_sends_the_prompt_system_prompt_and_limits_with_the_key_from_api_key_env(emu):
    emu.queue(Reply.turn(Turn.text("ok")))
    args = chat_args(
        emu,
        "anthropic-messages",
        "--system",
        "Answer briefly.",
        "--max-tokens",
        "3000",
        "--thinking",
        "low",
        prompt="What is 2 + 2?",
    )
    result = run_cli(*args, **{KEY_VAR: KEY})
    assert result.returncode == 0, result.stderr
    (request,) = emu.requests
    assert request.headers["x-api-key"] == KEY
    assert request.json["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is 2 + 2?"}]}
    ]
    assert "Answer briefly." in json.dumps(request.json["system"])
    assert request.json["max_tokens"] == 3000
    assert request.json["thinking"]["type"] == "enabled"


def test_chat_reads_the_prompt_from_stdin_when_it_is_a_dash(emu):
    emu.queue(Reply.turn(Turn.text("ok")))
    result = subprocess.run(
        command(*chat_args(emu, "openai-chat", prompt="-")),
        input="a prompt from a pipe",
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(**{KEY_VAR: KEY}),
    )
    assert result.returncode == 0, result.stderr
    (request,) = emu.requests
    assert request.json["messages"][-1]["content"] == "a prompt from a pipe"


def test_chat_shows_thinking_and_a_tool_call_with_its_arguments(emu):
    turn = Turn(
        items=[
            Thinking("Which city?", signature="c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZw=="),
            Text("Checking."),
            ToolCall("get_weather", {"city": "Porto"}, id="call_porto"),
        ]
    )
    emu.queue(Reply.turn(turn))
    result = run_cli(*chat_args(emu, "anthropic-messages"), **{KEY_VAR: KEY})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[lines.index("▍thinking") + 1] == "Which city?"
    label = lines.index("▍tool call get_weather  id call_porto")
    assert json.loads(lines[label + 1]) == {"city": "Porto"}
    assert summary_row(result.stdout, "finish reason").split()[0] == "tool_call"


def test_chat_json_prints_grammar_valid_events_that_carry_the_streamed_text(emu):
    answer = "One, two, three."
    emu.queue(Reply.turn(Turn.text(answer)))
    result = run_cli(*chat_args(emu, "openai-responses", "--json"), **{KEY_VAR: KEY})
    assert result.returncode == 0, result.stderr
    checker = GrammarChecker()
    events = [loads_event(line) for line in result.stdout.splitlines()]
    for event in events:
        checker.feed(event)
    checker.end()
    assert checker.stopped
    streamed = "".join(
        item["text"]
        for event in events
        for item in event["content_items"]
        if item["type"] == "text.delta"
    )
    assert streamed == answer
    assert events[-1]["finish_reason"] == "stop"


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gpt-5-mini", "OPENAI_API_KEY"),
        ("gemini-2.5-flash", "GEMINI_API_KEY"),
    ],
)
def test_chat_without_a_key_exits_2_naming_the_variable_to_set(model, variable):
    result = run_cli("chat", "-m", model, "Hello?")
    assert result.returncode == 2
    assert result.stdout == ""
    assert variable in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_chat_with_an_unset_api_key_env_exits_2_naming_it_and_sends_nothing(emu):
    result = run_cli(*chat_args(emu, "openai-chat"))
    assert result.returncode == 2
    assert KEY_VAR in result.stderr
    assert emu.requests == []


def test_chat_never_sends_a_provider_key_to_another_base_url(emu):
    result = run_cli(
        "chat",
        "-m",
        "claude-sonnet-4-5",
        "Hello?",
        "--base-url",
        emu.base_url("anthropic-messages"),
        ANTHROPIC_API_KEY="sk-ant-not-for-this-url",
    )
    assert result.returncode == 2
    assert "--api-key-env" in result.stderr
    assert "sk-ant-not-for-this-url" not in result.stderr
    assert emu.requests == []


def test_chat_with_an_unknown_model_and_no_client_type_exits_2_saying_what_to_pass():
    result = run_cli("chat", "-m", "llama-3.3-70b", "Hello?")
    assert result.returncode == 2
    assert "--client-type" in result.stderr


def test_chat_exits_2_on_an_option_the_protocol_cannot_express_and_sends_nothing(emu):
    # Anthropic's smallest thinking budget is 1024 tokens, so thinking needs a larger limit.
    args = chat_args(emu, "anthropic-messages", "--thinking", "low", "--max-tokens", "1024")
    result = run_cli(*args, **{KEY_VAR: KEY})
    assert result.returncode == 2
    assert result.stdout == ""
    assert "thinking_level" in result.stderr
    assert emu.requests == []


def test_chat_exits_1_with_the_error_after_retrying_a_500(emu):
    attempts = RetryPolicy().max_attempts
    emu.queue(*[Reply.status(500, retry_after=0.01) for _ in range(attempts)])
    result = run_cli(*chat_args(emu, "anthropic-messages"), **{KEY_VAR: KEY})
    assert result.returncode == 1
    assert summary_row(result.stdout, "error").startswith("ServerError: ")
    assert "HTTP 500" in summary_row(result.stdout, "error")
    assert [r.status for r in emu.requests] == [500] * attempts


def test_chat_json_ends_with_an_error_line_after_retrying_a_500(emu):
    attempts = RetryPolicy().max_attempts
    emu.queue(*[Reply.status(500, retry_after=0.01) for _ in range(attempts)])
    result = run_cli(*chat_args(emu, "openai-chat", "--json"), **{KEY_VAR: KEY})
    assert result.returncode == 1
    (line,) = json_lines(result.stdout)
    assert line["error"]["type"] == "ServerError"
    assert line["error"]["status"] == 500
    assert line["error"]["partial_status"] == "failed"
    assert KEY not in result.stdout
    assert len(emu.requests) == attempts


# --- Ctrl-C --------------------------------------------------------------------------------


def interrupt_mid_stream(emu: Emulator, *extra: str) -> tuple[int, str]:
    """Run `chat` on a slow answer, send SIGINT once text is on screen; status and output."""
    emu.queue(Reply.turn(Turn.text("word " * 400), delay=0.02))
    process = subprocess.Popen(
        command(*chat_args(emu, "anthropic-messages", *extra)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(**{KEY_VAR: KEY}),
    )
    assert process.stdout is not None
    received = b""
    deadline = time.monotonic() + 30
    while b"word" not in received:
        assert time.monotonic() < deadline, received
        if select.select([process.stdout], [], [], 0.1)[0]:
            received += os.read(process.stdout.fileno(), 65536)
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=30)
    return process.returncode, (received + rest).decode()


def test_ctrl_c_closes_the_response_and_shows_the_partial_as_cancelled(emu):
    status, output = interrupt_mid_stream(emu)
    assert status == 130
    assert summary_row(output, "partial").startswith("cancelled")
    assert summary_row(output, "received").startswith("0 done items; open text")
    (request,) = emu.wait_for_requests(1, finished=True)
    assert request.client_closed_early


def test_ctrl_c_with_json_ends_the_events_with_a_cancelled_error_line(emu):
    status, output = interrupt_mid_stream(emu, "--json")
    assert status == 130
    *events, last = output.splitlines()
    checker = GrammarChecker()
    for event in events:
        checker.feed(loads_event(event))
    assert not checker.stopped
    assert json.loads(last) == {
        "error": {
            "type": "CancelledError",
            "message": "cancelled by the caller",
            "partial_status": "cancelled",
        }
    }


def test_chat_asks_for_images_and_saves_them_with_their_extension(emu, tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
    emu.queue(Reply.turn(Turn(items=[Text("A cat."), Media(png, "image/png")])))
    result = run_cli(
        *chat_args(
            emu, "gemini-generate-content", "--images", "--save-media", str(tmp_path / "out")
        ),
        **{KEY_VAR: KEY},
    )

    assert result.returncode == 0, result.stderr
    assert emu.requests[0].json["generationConfig"]["responseModalities"] == ["TEXT", "IMAGE"]
    (saved,) = (tmp_path / "out").iterdir()
    assert saved.suffix == ".png" and saved.read_bytes() == png
    assert f"saved {saved} ({len(png):,} bytes)" in result.stderr


def test_chat_speaks_with_a_voice_and_saves_raw_pcm_as_a_playable_wav(emu, tmp_path):
    pcm = bytes(range(256)) * 30  # 7,680 bytes: 3,840 samples of 16-bit audio
    emu.queue(Reply.turn(Turn(items=[Media(pcm, "audio/L16;codec=pcm;rate=24000")])))
    result = run_cli(
        *chat_args(
            emu, "gemini-generate-content", "--voice", "Kore", "--save-media", str(tmp_path)
        ),
        **{KEY_VAR: KEY},
    )

    assert result.returncode == 0, result.stderr
    speech = emu.requests[0].json["generationConfig"]["speechConfig"]
    assert speech == {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Kore"}}}
    (saved,) = tmp_path.iterdir()
    assert saved.suffix == ".wav"
    with wave.open(str(saved)) as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 24000)
        assert wav.readframes(wav.getnframes()) == pcm


def test_chat_says_when_an_answer_had_no_media_to_save(emu, tmp_path):
    emu.queue(Reply.turn(Turn.text("Only words.")))
    result = run_cli(
        *chat_args(emu, "anthropic-messages", "--save-media", str(tmp_path)), **{KEY_VAR: KEY}
    )

    assert result.returncode == 0, result.stderr
    assert "no images or audio in the answer: nothing saved to" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_chat_reaches_a_model_on_a_platform_with_the_platforms_own_credentials(emu):
    emu.queue(Reply.turn(Turn.text("Hello from Azure.")))
    result = run_cli(
        "chat",
        "-m",
        "my-gpt-deployment",
        "--platform",
        "azure",
        "--client-type",
        "openai-chat",
        "Hello?",
        AZURE_OPENAI_ENDPOINT=emu.url,
        AZURE_OPENAI_API_KEY=KEY,
    )

    assert result.returncode == 0, result.stderr
    assert "Hello from Azure." in result.stdout.splitlines()
    request = emu.requests[0]
    assert request.path == "/openai/v1/chat/completions"
    assert request.headers["api-key"] == KEY
