"""An emulator script (`modelstream emulate --script FILE`, `load_script`) that nests deeper
than the shared limit, or times a reply with a number that is not finite, is refused with the
script's one-line `ScriptError`, never a `RecursionError` or a crash while serving; and
`modelstream emulate` reports it in one line with exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelstream.bounded_json import MAX_DEPTH
from modelstream.testing.script import ScriptError, load_script
from support.cli import emulate_script


def json_arguments(depth: int) -> str:
    """A script whose one tool call's arguments nest `depth` levels below the script itself."""
    nested = '{"a": ' * (depth - 5) + "1" + "}" * (depth - 5)
    return '{"replies": [{"items": [{"tool_call": "f", "arguments": ' + nested + "}]}]}"


def toml_arguments(depth: int) -> str:
    return 'items = [{ tool_call = "f", arguments = ' + "{ a = " * depth + "1" + " }" * depth


def refusal(path: Path) -> str:
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_json_script_at_the_nesting_limit_loads(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json_arguments(MAX_DEPTH))

    (scripted,) = load_script(script)

    assert scripted.path is None


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_a_json_script_nested_past_the_limit_is_a_script_error(tmp_path: Path, depth: int) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json_arguments(depth))

    message = refusal(script)

    assert message.startswith(f"the script {script} nests")
    assert f"more than {MAX_DEPTH} levels deep" in message


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5_000])
def test_a_toml_script_nested_past_the_limit_is_a_script_error(tmp_path: Path, depth: int) -> None:
    script = tmp_path / "replies.toml"
    script.write_text("[[replies]]\n" + toml_arguments(depth) + "}]\n")

    assert f"more than {MAX_DEPTH} levels deep" in refusal(script)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("replies.toml", "[[replies]]\ntext = 'hi'\ndelay = nan\n"),
        ("replies.toml", "[[replies]]\nstatus = 429\nretry_after = inf\n"),
        ("replies.json", '{"replies": [{"text": "hi", "delay": NaN}]}'),
        ("replies.json", '{"replies": [{"text": "hi", "delay_first_byte": Infinity}]}'),
    ],
)
def test_a_timing_that_is_not_a_finite_number_is_refused_before_serving(
    tmp_path: Path, name: str, content: str
) -> None:
    # json.loads took NaN and Infinity, and the emulator then failed inside its handler thread
    # (time.sleep(nan)); JSON has no such numbers, and a TOML `nan` is refused by its key.
    script = tmp_path / name
    script.write_text(content)

    message = refusal(script)

    assert "finite" in message or "not valid JSON" in message


def test_a_toml_nan_names_the_reply_and_the_key(tmp_path: Path) -> None:
    script = tmp_path / "replies.toml"
    script.write_text("[[replies]]\ntext = 'hi'\n\n[[replies]]\ntext = 'x'\ndelay = -nan\n")

    assert refusal(script) == "reply 2: delay must be a finite number, got nan"


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("deep.json", json_arguments(100_000), "levels deep"),
        ("deep.toml", "[[replies]]\n" + toml_arguments(5_000) + "}]\n", "levels deep"),
        ("nan.toml", "[[replies]]\ntext = 'hi'\ndelay = nan\n", "delay must be a finite number"),
        ("binary.json", "\udcff", "is not valid JSON"),
    ],
)
def test_the_emulate_command_refuses_such_a_script_in_one_line_with_status_2(
    tmp_path: Path, name: str, content: str, says: str
) -> None:
    script = tmp_path / name
    script.write_bytes(content.encode("utf-8", "surrogateescape"))

    result = emulate_script(script)

    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("modelstream emulate: error:") and says in result.stderr
