"""The model catalogue (src/modelstream/catalogue/models.toml): every entry has the right shape,
every routed model prefix has an entry, prices are non-negative with a date and a source, the
ids people send find their entry, and a user's file adds and overrides entries."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from modelstream.catalogue import CatalogueError, default_catalogue, load_catalogue
from modelstream.client.routing import ROUTES
from modelstream.platforms import REGISTRY as PLATFORMS
from modelstream.protocols import CLIENT_TYPES
from support.cli import run_models

CATALOGUE = default_catalogue()
MODALITIES = {"text", "image", "audio", "video", "embedding"}
# the routing prefixes that name no model but a place: a Bedrock inference profile or an ARN
PROFILE_PREFIXES = {"us.", "us-gov.", "eu.", "apac.", "jp.", "au.", "global."}


def test_every_entry_has_the_right_shape() -> None:
    assert len(CATALOGUE) >= 60
    for entry in CATALOGUE:
        assert entry.protocols and set(entry.protocols) <= set(CLIENT_TYPES), entry.id
        assert set(entry.platforms) <= set(PLATFORMS), entry.id
        assert set(entry.input) <= MODALITIES and set(entry.output) <= MODALITIES, entry.id
        if entry.bedrock_ids:
            assert "bedrock" in entry.platforms, entry.id
        if entry.vertex_ids:
            assert "vertex" in entry.platforms, entry.id
        if entry.context_window is not None and entry.max_output is not None:
            assert entry.max_output <= entry.context_window, entry.id


def test_every_price_is_non_negative_dated_and_sourced() -> None:
    priced = [entry for entry in CATALOGUE if entry.price is not None]
    assert len(priced) >= 45
    for entry in priced:
        price = entry.price
        assert price is not None
        assert price.currency == "USD", entry.id
        assert {"input", "output"} <= set(price.rates), entry.id
        assert all(value >= 0 for value in price.rates.values()), entry.id
        assert date(2025, 1, 1) <= price.as_of <= date.today(), entry.id
        assert price.source.startswith("https://"), entry.id
        if price.long_prompt is not None:
            assert price.long_prompt.threshold > 0, entry.id
            assert all(value >= 0 for value in price.long_prompt.rates.values()), entry.id


def test_the_vendors_the_issue_names_are_all_there() -> None:
    providers = {entry.provider for entry in CATALOGUE}
    assert {"openai", "anthropic", "google", "deepseek", "mistral", "xai"} <= providers
    assert {"alibaba", "zai", "moonshot", "minimax", "bedrock"} <= providers
    assert any(entry.bedrock_ids for entry in CATALOGUE)
    assert any(entry.vertex_ids for entry in CATALOGUE)


@pytest.mark.parametrize(
    "prefix", sorted({prefix for prefixes, _ in ROUTES for prefix in prefixes})
)
def test_every_routed_model_prefix_has_an_entry(prefix: str) -> None:
    names = [
        name.lower()
        for entry in CATALOGUE
        for name in (entry.id, *entry.aliases, *entry.bedrock_ids, *entry.vertex_ids)
    ]
    if prefix in PROFILE_PREFIXES:  # a cross-region profile of a model served on Bedrock
        bedrock_id = next(name for entry in CATALOGUE for name in entry.bedrock_ids)
        assert CATALOGUE.lookup(prefix + bedrock_id) is not None
    elif prefix.startswith("arn:"):
        bedrock_id = next(name for entry in CATALOGUE for name in entry.bedrock_ids)
        assert CATALOGUE.lookup(f"{prefix}us-east-1::foundation-model/{bedrock_id}") is not None
    else:
        assert any(name.startswith(prefix.lower()) for name in names), prefix


@pytest.mark.parametrize(
    ("sent", "entry"),
    [
        ("gpt-5-nano", "gpt-5-nano"),
        ("GPT-5-NANO", "gpt-5-nano"),
        ("gpt-5-nano-2025-08-07", "gpt-5-nano"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5"),
        ("us.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5"),
        ("global.anthropic.claude-opus-5-5", "claude-opus-5-5"),
        (
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
            "claude-haiku-4-5",
        ),
        ("deepseek-chat", "deepseek-flash"),
        ("minimax-m3", "MiniMax-M3"),
        ("gpt-5.6", "gpt-5.6-sol"),
    ],
)
def test_the_ids_people_send_find_their_entry(sent: str, entry: str) -> None:
    found = CATALOGUE.lookup(sent)

    assert found is not None and found.id == entry


def test_an_unknown_model_has_no_entry() -> None:
    assert CATALOGUE.lookup("my-fine-tune") is None
    assert CATALOGUE.lookup("gpt-5-nano-mini") is None  # a prefix is not a snapshot


def test_a_users_file_adds_models_and_overrides_fields(tmp_path: Path) -> None:
    mine = tmp_path / "models.toml"
    mine.write_text(
        """
[models."llama3.2"]
provider = "ollama"
protocols = ["openai-chat"]
input = ["text"]
output = ["text"]
thinks = false
[models."llama3.2".price]
currency = "USD"
input = 0
output = 0
as_of = 2026-11-30
source = "https://ollama.com/library/llama3.2"

[models."gpt-5-nano"]
context_window = 200_000
[models."gpt-5-nano".price]
currency = "USD"
input = 0.04
output = 0.32
as_of = 2026-11-30
source = "https://example.com/our-negotiated-prices"
"""
    )
    catalogue = load_catalogue([mine])

    local = catalogue.lookup("llama3.2")
    assert local is not None and local.provider == "ollama"
    nano = catalogue.lookup("gpt-5-nano")
    assert nano is not None and nano.context_window == 200_000
    assert nano.max_output == 128_000  # a field the file does not give stays ours
    assert nano.price is not None and nano.price.rate("input") == Decimal("0.04")
    assert nano.price.rate("cached_input") is None  # the price table is replaced whole
    assert len(catalogue) == len(CATALOGUE) + 1


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('[models."x"]\nprovider = "p"\n', '[models."x"].protocols must not be empty'),
        (
            '[models."x"]\nprovider="p"\nprotocols=["openai-chat"]\ninput=["text"]\n'
            'output=["text"]\nthinks=false\nprice={currency="USD", input=-1, output=1, '
            'as_of=2026-01-01, source="https://x"}\n',
            '[models."x"].price.input must not be negative, got -1',
        ),
        (
            '[models."x"]\nprovider="p"\nprotocols=["openai-chat"]\ninput=["text"]\n'
            'output=["text"]\nthinks=false\nprice={currency="USD", input=1, output=1, '
            'source="https://x"}\n',
            "as_of must be a date",
        ),
        ('[models."x"]\ncolour = "red"\n', "has unknown field(s) colour"),
        ("models = 3\n", "'models' must be a table"),
        (
            '[models."x"]\nprovider="p"\nprotocols=["openai-chats"]\n',
            "protocols names no protocol: openai-chats (known: openai-chat,",
        ),
        ("[models\n", "not valid TOML"),
    ],
)
def test_a_wrong_users_file_is_refused_with_the_file_and_the_entry(
    tmp_path: Path, body: str, expected: str
) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(body)

    with pytest.raises(CatalogueError) as caught:
        load_catalogue([mine], builtin=False)

    assert str(caught.value).startswith(str(mine))
    assert expected in str(caught.value)


def test_a_missing_users_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="cannot read the model file"):
        load_catalogue([tmp_path / "nowhere.toml"])


def test_the_models_command_lists_a_providers_models_with_their_prices() -> None:
    listed = run_models("--provider", "anthropic")

    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == [
        "model", "provider", "context", "output", "in/out", "think", "$/M", "in", "$/M", "out"
    ]  # fmt: skip
    opus = next(line for line in lines if line.startswith("claude-opus-5-5 "))
    assert opus.split() == ["claude-opus-5-5", "anthropic", "1M", "128K", "text+image→text",
                            "yes", "4", "20"]  # fmt: skip


def test_the_models_command_prints_json_with_a_users_file_and_refuses_an_unknown_provider(
    tmp_path: Path,
) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text('[models."claude-opus-5-5"]\ncontext_window = 500_000\n')

    listed = run_models("--json", "--provider", "anthropic", "--file", str(mine))
    unknown = run_models("--provider", "nobody")

    assert listed.returncode == 0, listed.stderr
    entries = {entry["id"]: entry for entry in json.loads(listed.stdout)}
    assert entries["claude-opus-5-5"]["context_window"] == 500_000
    assert entries["claude-opus-5-5"]["price"]["cached_input"] == "0.2"
    assert entries["claude-opus-5-5"]["price"]["source"].startswith("https://")
    assert unknown.returncode == 2
    assert "no models of provider 'nobody'; providers: alibaba, anthropic" in unknown.stderr


def test_the_models_command_reads_its_files_after_modelstream_models(tmp_path: Path) -> None:
    first, second = tmp_path / "env.toml", tmp_path / "given.toml"
    first.write_text('[models."claude-opus-5-5"]\ncontext_window = 400_000\nthinks = false\n')
    second.write_text('[models."claude-opus-5-5"]\ncontext_window = 500_000\n')

    listed = run_models("--json", "--file", str(second), MODELSTREAM_MODELS=str(first))

    assert listed.returncode == 0, listed.stderr
    entry = next(e for e in json.loads(listed.stdout) if e["id"] == "claude-opus-5-5")
    assert (entry["context_window"], entry["thinks"]) == (500_000, False)
