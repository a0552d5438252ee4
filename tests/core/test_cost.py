"""Cost per turn: each protocol's usage from a real capture priced part by part (input not
cached, cache reads, cache writes, reasoning, response), compared with a hand calculation from
the capture's payload; long-prompt and peak-hour rates; unknown stays unknown."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from modelstream import Client, FinalResponse, StreamDecoder
from modelstream.catalogue import Peak, Price, default_catalogue
from modelstream.catalogue.cost import cost_of_turn, turn_cost
from modelstream.results import StreamMetadata
from modelstream.testing import Emulator, Reply, Turn, render
from modelstream.types import Usage
from support import decode_chunks, load_capture

# a price written for these tests: every rate different, so a part priced at the wrong rate shows
PRICE = Price(
    currency="USD",
    rates={
        "input": Decimal("3"),
        "cached_input": Decimal("0.3"),
        "cache_write": Decimal("3.75"),
        "output": Decimal("15"),
    },
    as_of=date(2026, 12, 1),
    source="https://example.com/prices",
)
M = Decimal(1_000_000)


def usage_of(protocol: str, name: str) -> tuple[Usage, StreamMetadata]:
    decoded = decode_chunks(protocol, [load_capture(protocol, name).body])
    assert decoded.stop is not None and decoded.decoder is not None
    return decoded.stop["usage_metadata"], decoded.decoder.metadata


@pytest.mark.parametrize(
    ("protocol", "name", "expected"),
    [
        # input_tokens 43, no cache reads or writes, output_tokens 282 (thinking not split)
        ("anthropic-messages", "pydanticai-anthropic-thinking", (43 * 3 + 282 * 15) / M),
        # prompt 339 of which 320 cached; completion 83 (39 of them reasoning)
        (
            "openai-chat",
            "vercel-deepseek-tool-call",
            ((339 - 320) * 3 + 320 * Decimal("0.3") + 83 * 15) / M,
        ),
        # input 6047 of which 2944 cached; output 1623 (1408 reasoning)
        (
            "openai-responses",
            "vercel-openai-code-interpreter",
            ((6047 - 2944) * 3 + 2944 * Decimal("0.3") + 1623 * 15) / M,
        ),
        # promptTokenCount 26; totalTokenCount 181 = 26 + 23 candidates + 132 thoughts
        ("gemini-generate-content", "vercel-vertex-stream-tool-call-args", (26 * 3 + 155 * 15) / M),
        # total_input_tokens 53, none cached; output 15 + thought 65
        ("gemini-interactions", "vercel-interactions-tool-call", (53 * 3 + 80 * 15) / M),
        # inputTokens 13, outputTokens 82
        ("bedrock-converse-stream", "pydanticai-bedrock-nova-text", (13 * 3 + 82 * 15) / M),
    ],
)
def test_each_protocols_usage_is_priced_part_by_part(
    protocol: str, name: str, expected: Decimal | float
) -> None:
    usage, metadata = usage_of(protocol, name)

    cost = cost_of_turn(usage, PRICE, cache_write_tokens=metadata.cache_write_tokens)

    assert cost.total == expected


def test_the_catalogue_prices_a_capture_of_a_model_it_knows() -> None:
    usage, metadata = usage_of("openai-responses", "vercel-openai-code-interpreter")
    assert metadata.model == "gpt-5-nano-2025-08-07"  # a snapshot of the catalogue's gpt-5-nano

    cost = turn_cost(usage, metadata)

    # gpt-5-nano: input $0.05, cached input $0.005, output $0.40 per million
    expected = (3103 * Decimal("0.05") + 2944 * Decimal("0.005") + 1623 * Decimal("0.40")) / M
    assert cost is not None and cost.model == "gpt-5-nano"
    assert cost.total == expected == Decimal("0.00081907")
    assert cost.reasoning == 1408 * Decimal("0.40") / M


def test_cache_writes_are_priced_at_the_write_rate() -> None:
    # Anthropic: input_tokens 100, cache_creation_input_tokens 2000, cache_read 5000, output 50
    usage: Usage = {
        "cached_tokens": 5000,
        "prompt_tokens": 2100,
        "thoughts_tokens": None,
        "response_tokens": 50,
    }

    cost = cost_of_turn(usage, PRICE, cache_write_tokens=2000)

    assert cost.input == 100 * 3 / M
    assert cost.cache_write == 2000 * Decimal("3.75") / M
    assert cost.cached_input == 5000 * Decimal("0.3") / M
    assert cost.total == (100 * 3 + 2000 * Decimal("3.75") + 5000 * Decimal("0.3") + 50 * 15) / M


def test_a_long_prompt_is_priced_at_the_long_rates_for_every_token() -> None:
    entry = default_catalogue().lookup("claude-haiku-5-5")
    assert entry is not None and entry.price is not None
    short: Usage = {
        "cached_tokens": 0,
        "prompt_tokens": 100_000,
        "thoughts_tokens": 0,
        "response_tokens": 1000,
    }
    long: Usage = {**short, "prompt_tokens": 100_001}

    assert (
        cost_of_turn(short, entry.price).total
        == (100_000 * Decimal("0.10") + 1000 * Decimal("0.50")) / M
    )
    assert (
        cost_of_turn(long, entry.price).total
        == (100_001 * Decimal("0.50") + 1000 * Decimal("2.50")) / M
    )


def test_peak_hours_multiply_every_rate_and_an_unknown_time_is_an_unknown_cost() -> None:
    usage, metadata = usage_of("openai-chat", "vercel-deepseek-tool-call")
    entry = default_catalogue().lookup(metadata.model or "")
    assert entry is not None and entry.id == "deepseek-flash" and entry.price is not None
    off_peak = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)  # a Tuesday, noon UTC
    peak = datetime(2026, 12, 1, 2, 30, tzinfo=UTC)  # the same Tuesday, 02:30 UTC
    weekend = datetime(2026, 12, 5, 2, 30, tzinfo=UTC)  # Saturday, 02:30 UTC

    def at(moment: datetime) -> Decimal | None:
        millis = int(moment.timestamp() * 1000)
        return cost_of_turn(usage, entry.price, at_ms=millis).total  # type: ignore[arg-type]

    # deepseek-flash off-peak: miss $0.15, hit $0.003, output $0.60
    base = (19 * Decimal("0.15") + 320 * Decimal("0.003") + 83 * Decimal("0.60")) / M
    assert at(off_peak) == base
    assert at(peak) == 2 * base
    assert at(weekend) == base
    assert cost_of_turn(usage, entry.price).total is None  # when it ran is not known
    assert entry.price.peak == Peak(((1, 4), (6, 10)), (1, 2, 3, 4, 5), Decimal(2))


@pytest.mark.parametrize(
    ("usage", "unknown"),
    [
        (None, {"input", "cached_input", "cache_write", "reasoning", "output"}),
        (
            {
                "cached_tokens": None,
                "prompt_tokens": 10,
                "thoughts_tokens": 0,
                "response_tokens": 5,
            },
            {"cached_input"},
        ),
        (
            {
                "cached_tokens": 0,
                "prompt_tokens": 10,
                "thoughts_tokens": 3,
                "response_tokens": None,
            },
            {"output"},
        ),
    ],
)
def test_an_unknown_count_is_an_unknown_cost_never_zero(
    usage: Usage | None, unknown: set[str]
) -> None:
    cost = cost_of_turn(usage, PRICE)

    assert cost.total is None
    assert {name for name, value in cost.as_json().items() if value is None} == {
        "total",
        *unknown,
    }


def test_tokens_without_a_rate_are_an_unknown_cost() -> None:
    no_cache_rate = Price(
        "USD", {"input": Decimal(1), "output": Decimal(2)}, date(2026, 1, 1), "https://x"
    )
    usage: Usage = {
        "cached_tokens": 7,
        "prompt_tokens": 10,
        "thoughts_tokens": 0,
        "response_tokens": 5,
    }

    assert cost_of_turn(usage, no_cache_rate).total is None
    assert cost_of_turn({**usage, "cached_tokens": 0}, no_cache_rate).total == Decimal(20) / M


def test_a_model_the_catalogue_does_not_know_has_no_cost() -> None:
    usage, metadata = usage_of("gemini-generate-content", "vercel-vertex-stream-tool-call-args")

    assert metadata.model == "gemini-3.1-pro-preview"
    assert turn_cost(usage, metadata) is None


def test_a_streamed_result_carries_its_cost_from_a_users_catalogue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[models."house-model"]\nprovider = "local"\nprotocols = ["openai-chat"]\n'
        'input = ["text"]\noutput = ["text"]\nthinks = false\n'
        '[models."house-model".price]\ncurrency = "EUR"\ninput = 2\noutput = 8\n'
        'as_of = 2026-12-01\nsource = "https://example.com/house"\n'
    )
    monkeypatch.setenv("MODELSTREAM_MODELS", str(prices))
    default_catalogue.cache_clear()
    usage: Usage = {
        "cached_tokens": 0,
        "prompt_tokens": 1200,
        "thoughts_tokens": 0,
        "response_tokens": 300,
    }
    try:
        with Emulator() as emu:
            emu.queue(Reply.turn(Turn.text("Hello there", usage=usage)))
            with (
                Client(
                    "house-model",
                    client_type="openai-chat",
                    base_url=emu.base_url("openai-chat"),
                    api_key="k",
                    traces=False,
                ) as client,
                client.stream("Hi") as stream,
            ):
                for _ in stream:
                    pass
        result = stream.result
    finally:
        default_catalogue.cache_clear()

    assert result is not None and result.cost is not None
    assert result.cost.currency == "EUR"
    assert result.cost.total == (1200 * 2 + 300 * 8) / M == Decimal("0.0048")


def test_a_sans_io_result_is_priced_only_when_given_the_catalogue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The value type reads no catalogue: the decoder's `pricing` (the catalogue's
    `turn_cost`, which a client passes) computes the cost, on first use."""
    body = render(
        "openai-chat",
        Turn.text("Hi", usage={"cached_tokens": 0, "prompt_tokens": 10, "response_tokens": 2}),
    )
    results = []
    for pricing in (None, turn_cost):
        decoder = StreamDecoder("openai-chat", pricing=pricing)
        decoder.feed(body)
        decoder.end()
        decoder.metadata.model = "gpt-6.1-terra"
        results.append(decoder.result)
    unpriced, priced = results
    assert isinstance(unpriced, FinalResponse) and unpriced.cost is None
    assert isinstance(priced, FinalResponse) and priced.cost is not None
    assert priced.cost == turn_cost(priced.usage, priced.metadata)
    assert priced.cost.model == "gpt-6.1-terra" and priced.cost.total is not None
    assert unpriced == priced  # the pricing is not part of the value
