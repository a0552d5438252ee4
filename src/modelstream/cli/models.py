"""`models`: list the model catalogue (docs/models.md), or one provider's part of it."""

from __future__ import annotations

import argparse
import sys
from decimal import Decimal
from typing import Any

import orjson

from ..catalogue import (
    CatalogueError,
    ModelInfo,
    default_catalogue,
    env_files,
    load_catalogue,
)
from ..console.exit_status import EXIT_OK, UsageError
from ..console.helptext import command_parser, examples


def add_command(commands: Any) -> None:
    """Add `models` to the subcommands of the `modelstream` parser."""
    models = command_parser(
        commands,
        "models",
        help="list the model catalogue: protocols, context window, list prices",
        description="List the models modelstream knows: the protocols and platforms that serve "
        "each, its context window and output limit, what it takes and gives, whether it thinks, "
        "and its list prices per million tokens with the date and source of each price. Your "
        "own file (MODELSTREAM_MODELS or --file) adds models and overrides ours.",
        epilog=examples(
            "modelstream models",
            "modelstream models --provider anthropic",
            "modelstream models --json --file my-prices.toml | jq '.[0]'",
        ),
    )
    models.add_argument("--provider", metavar="P", help="only this provider's models")
    models.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="a TOML file of models to add or override (repeatable; after MODELSTREAM_MODELS)",
    )
    models.add_argument("--json", action="store_true", help="print a JSON list")
    models.set_defaults(run=run_models)


def run_models(args: argparse.Namespace) -> int:
    try:
        # the files given come after MODELSTREAM_MODELS's, as the help says
        catalogue = load_catalogue([*env_files(), *args.file]) if args.file else default_catalogue()
    except CatalogueError as exc:
        raise UsageError(str(exc)) from None
    entries = sorted(catalogue, key=lambda entry: (entry.provider, entry.id.lower()))
    if args.provider is not None:
        providers = sorted({entry.provider for entry in entries})
        entries = [entry for entry in entries if entry.provider == args.provider]
        if not entries:
            raise UsageError(
                f"no models of provider {args.provider!r}; providers: {', '.join(providers)}"
            )
    if args.json:
        sys.stdout.buffer.write(orjson.dumps([entry.as_json() for entry in entries]) + b"\n")
        return EXIT_OK
    rows = [_row(entry) for entry in entries]
    header = ("model", "provider", "context", "output", "in/out", "think", "$/M in", "$/M out")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)))
    dated = sorted({entry.price.as_of.isoformat() for entry in entries if entry.price})
    if dated:
        checked = dated[0] if dated[0] == dated[-1] else f"{dated[0]}…{dated[-1]}"
        print(
            f"\nlist prices in USD per million tokens, checked {checked}; "
            "--json gives cache rates, long-prompt tiers and every price's source"
        )
    return EXIT_OK


def _row(entry: ModelInfo) -> tuple[str, ...]:
    price = entry.price
    return (
        entry.id,
        entry.provider,
        _tokens(entry.context_window),
        _tokens(entry.max_output),
        f"{'+'.join(entry.input)}→{'+'.join(entry.output)}",
        "yes" if entry.thinks else "no",
        _money(price.rate("input") if price else None),
        _money(price.rate("output") if price else None),
    )


def _tokens(count: int | None) -> str:
    """Token counts as vendors write them: 128K, 1M, 1.05M (and 64K for 65,536)."""
    if count is None:
        return "?"
    for unit, sizes in (("M", (1_000_000, 1 << 20)), ("K", (1000, 1 << 10))):
        for size in sizes:
            if count >= size and count % size == 0:
                return f"{count // size}{unit}"
    if count >= 1_000_000:
        return f"{count / 1_000_000:.3g}M"
    return f"{count / 1000:.4g}K" if count >= 1000 else str(count)


def _money(rate: Decimal | None) -> str:
    return "?" if rate is None else f"{rate.normalize():f}"
