"""A user's catalogue file (MODELSTREAM_MODELS, `--file`, `load_catalogue(paths)`) is read
defensively: a price that is not a finite number, a file nested past the shared limit, or a file
that is not UTF-8 text is refused with one line naming the file (and the model and the field),
through the library and through `modelstream models`; and a file of 20,000 models merges in
linear time."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from modelstream.bounded_json import MAX_DEPTH
from modelstream.catalogue import CatalogueError, load_catalogue
from support import REPO
from support.cli import run_models

MODEL = """[models."x"]
provider = "p"
protocols = ["openai-chat"]
input = ["text"]
output = ["text"]
thinks = false
"""
PRICE = """[models."x".price]
currency = "USD"
input = {input}
output = 1
as_of = 2026-11-30
source = "https://example.com/prices"
"""


def priced(**fields: str) -> str:
    """A one-model file whose price has these fields (TOML values as written)."""
    text = MODEL + PRICE.format(input=fields.pop("input", "1"))
    for name, value in fields.items():
        text += f"{name} = {value}\n"
    return text


def refusal(path: Path) -> str:
    with pytest.raises(CatalogueError) as caught:
        load_catalogue([path], builtin=False)
    message = str(caught.value)
    assert message.startswith(str(path)) and "\n" not in message
    return message


# --- prices are finite numbers ----------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "+nan", "-nan", "inf", "+inf"])
def test_a_price_that_is_not_a_finite_number_is_refused_naming_the_model_and_field(
    tmp_path: Path, value: str
) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(priced(input=value))

    message = refusal(mine)

    assert '[models."x"].price.input must be a finite number' in message


def test_a_negative_infinite_price_is_refused_as_well(tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(priced(input="-inf"))

    assert '[models."x"].price.input must be a finite number' in refusal(mine)


def test_a_long_prompt_rate_and_a_peak_multiplier_must_be_finite_too(tmp_path: Path) -> None:
    tier = tmp_path / "tier.toml"
    tier.write_text(priced() + "long_prompt = { threshold = 200_000, output = inf }\n")
    peak = tmp_path / "peak.toml"
    peak.write_text(priced() + "peak = { hours_utc = [[1, 4]], multiplier = nan }\n")

    assert '[models."x"].price.long_prompt.output must be a finite number' in refusal(tier)
    assert '[models."x"].price.peak.multiplier must be a finite number' in refusal(peak)


# --- what a file may hold: text, nested no deeper than the limit -----------------------------


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 2_000])
def test_a_file_nested_past_the_limit_is_refused_in_one_line(tmp_path: Path, depth: int) -> None:
    mine = tmp_path / "deep.toml"
    mine.write_text(MODEL + "deep = " + "[" * depth + "]" * depth + "\n")

    message = refusal(mine)

    assert f"more than {MAX_DEPTH} levels deep" in message


def test_a_file_of_dotted_tables_nested_past_the_limit_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "deep.toml"
    mine.write_text('[models."x".' + ".".join(["a"] * (MAX_DEPTH + 5)) + "]\nb = 1\n")

    assert f"more than {MAX_DEPTH} levels deep" in refusal(mine)


def test_a_binary_file_is_refused_as_not_utf8_text(tmp_path: Path) -> None:
    mine = tmp_path / "prices.toml"
    mine.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")

    assert refusal(mine) == f"{mine} is not a UTF-8 text file: a model file is TOML text"


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (priced(input="nan").encode(), '[models."x"].price.input must be a finite number'),
        ((MODEL + "deep = " + "[" * 5_000 + "]" * 5_000).encode(), "levels deep"),
        (b"\xff\xfe\x00binary", "is not a UTF-8 text file"),
    ],
    ids=["nan", "deep", "binary"],
)
def test_the_models_command_refuses_a_bad_file_in_one_line_with_status_2(
    tmp_path: Path, content: bytes, says: str
) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_bytes(content)

    for result in (run_models("--file", str(mine)), run_models(MODELSTREAM_MODELS=str(mine))):
        assert result.returncode == 2
        assert result.stdout == ""
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert result.stderr.startswith(f"modelstream models: error: {mine}")
        assert says in result.stderr


# --- merging --------------------------------------------------------------------------------


def test_a_file_overrides_our_entry_whatever_the_case_of_its_id(tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text('[models."GPT-5-NANO"]\ncontext_window = 123_456\n')

    catalogue = load_catalogue([mine])

    nano = catalogue.lookup("gpt-5-nano")
    assert nano is not None and nano.id == "gpt-5-nano" and nano.context_window == 123_456
    assert len(catalogue) == len(load_catalogue())


def many_models(path: Path, count: int) -> Path:
    path.write_text(
        "".join(
            f'[models."m-{n}"]\nprovider = "p"\nprotocols = ["openai-chat"]\n'
            'input = ["text"]\noutput = ["text"]\nthinks = false\n'
            for n in range(count)
        )
    )
    return path


def seconds_to_load(path: Path) -> float:
    started = time.perf_counter()
    load_catalogue([path])
    return time.perf_counter() - started


def test_a_file_of_20000_models_merges_in_linear_time(tmp_path: Path) -> None:
    # 16 times the models take about 16 times as long, not 256 times: the merge looks each id up
    # once instead of scanning every entry merged so far (20,000 models took 32 s that way on a
    # 2-core machine, now 3 s, most of it reading the TOML). Bounds leave room for a busy runner.
    small = many_models(tmp_path / "small.toml", 1_250)
    large = many_models(tmp_path / "large.toml", 20_000)
    load_catalogue()  # the protocol registry is imported once, outside the timings

    small_time = min(seconds_to_load(small) for _ in range(3))
    large_time = seconds_to_load(large)

    catalogue = load_catalogue([large])
    assert len(catalogue) == len(load_catalogue()) + 20_000
    assert catalogue.lookup("M-19999") is not None
    assert large_time < 64 * small_time, f"{small_time:.2f} s, then {large_time:.2f} s"


def test_the_refusal_docs_models_md_shows_is_the_one_given(tmp_path: Path) -> None:
    guide = (REPO / "docs" / "models.md").read_text()
    command, shown = guide.split("```console\n$ modelstream models --file", 1)[1].split("\n")[:2]
    (tmp_path / "mine.toml").write_text(
        priced(input="nan").replace('models."x"', 'models."llama3.2"')
    )

    result = subprocess.run(
        [sys.executable, "-m", "modelstream", "models", "--file", command.strip()],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "MODELSTREAM_MODELS"},
        timeout=60,
    )

    assert result.returncode == 2
    assert result.stderr == shown + "\n"
