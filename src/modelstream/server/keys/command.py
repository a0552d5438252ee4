"""`modelstream keys`: issue and manage virtual keys (docs/keys.md).

    modelstream keys create NAME [--models a,b] [--rpm N] [--tpm N] [--budget 10.00]
                                 [--budget-period monthly] [--expires 30d] [--metadata k=v]
    modelstream keys list | show KEY | revoke KEY | update KEY [flags] | spend [--key K] ...

The keys live in a SQLite file (`--db PATH`, default $MODELSTREAM_KEYS, else
~/.local/share/modelstream/keys.sqlite3) or in Redis (`--redis URL` or `--redis '$VAR'`), the
store the server reads. Only `create` makes a SQLite file that is not there: for the others a
missing file is an error, so a mistyped path does not look like "no keys". Errors are one line,
exit status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

from ...console.exit_status import EXIT_OK, UsageError
from ...console.helptext import command_parser, examples
from ..stores.base import StoreError
from .money import shown
from .records import KeyFieldError, KeyRecord
from .sqlite import SQLiteKeyStore, default_path
from .store import KeyNotFoundError, KeyStore, SpendTotal
from .times import parse_expiry, parse_instant, shown_time

CLEAR = ("none", "null")  # what a flag says to lift a limit on `update`


def add_command(subparsers: Any) -> None:
    """Add `keys` (create, list, show, revoke, update, spend) to a command line's commands."""
    keys = command_parser(
        subparsers,
        "keys",
        help="issue and manage virtual keys: models, rate limits, budgets",
        description="Issue virtual keys for the server's clients, each with the models it may "
        "use, rpm/tpm limits, a budget in money with an optional reset period, an expiry and "
        "metadata, and report what they spent (docs/keys.md). Keys are stored hashed; a secret "
        "is shown once, by create.",
        epilog=examples(
            "modelstream keys create alice --models claude,fast --budget 10.00 "
            "--budget-period monthly",
            "modelstream keys list --redis '$REDIS_URL'",
            "modelstream keys spend --from 2026-01-01 --to 2026-01-31",
        ),
    )
    commands = keys.add_subparsers(dest="keys_command", required=True, metavar="COMMAND")

    create = _subcommand(
        commands,
        "create",
        "issue a new key; prints its secret once",
        "modelstream keys create alice --models claude --rpm 60 --budget 10.00",
    )
    create.add_argument("name", help="who or what the key is for (unique)")
    _add_fields(create, creating=True)

    _subcommand(
        commands,
        "list",
        "list every key, revoked and expired ones too",
        "modelstream keys list --json",
    )

    for name, what in (("show", "show one key"), ("revoke", "refuse a key from now on")):
        parser = _subcommand(commands, name, what, f"modelstream keys {name} alice")
        parser.add_argument("key", help="the key's id (vk_...) or name")

    update = _subcommand(
        commands,
        "update",
        "change a key's models, limits, budget, expiry, metadata or name",
        "modelstream keys update alice --rpm none --budget 25.00",
    )
    update.add_argument("key", help="the key's id (vk_...) or name")
    update.add_argument("--name", help="a new name")
    _add_fields(update, creating=False)

    spend = _subcommand(
        commands,
        "spend",
        "what the keys spent, by key and served model",
        "modelstream keys spend --key alice --from 2026-01-01",
    )
    spend.add_argument("--key", help="only this key (id or name)")
    spend.add_argument("--model", help="only this served model")
    spend.add_argument(
        "--from", dest="start", metavar="WHEN", help="from (Unix seconds or ISO date)"
    )
    spend.add_argument(
        "--to", dest="end", metavar="WHEN", help="to (a date alone: up to the end of that day)"
    )


def _subcommand(commands: Any, name: str, what: str, example: str) -> argparse.ArgumentParser:
    parser = command_parser(
        commands,
        name,
        help=what,
        description=what[0].upper() + what[1:] + ".",
        epilog=examples(example),
    )
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="the keys file (default: $MODELSTREAM_KEYS, else "
        "~/.local/share/modelstream/keys.sqlite3)",
    )
    parser.add_argument(
        "--redis", metavar="URL", help="keys in Redis instead: a URL, or '$VAR' naming one"
    )
    parser.add_argument(
        "--redis-prefix", metavar="PREFIX", default=None, help="the keys' prefix in Redis"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=run)
    return parser


def _add_fields(parser: argparse.ArgumentParser, *, creating: bool) -> None:
    lift = "" if creating else "; 'none' lifts it"
    parser.add_argument(
        "--models", metavar="A,B", help="the served models it may use (default: all)"
    )
    parser.add_argument("--rpm", metavar="N", help="requests per minute" + lift)
    parser.add_argument("--tpm", metavar="N", help="tokens per minute" + lift)
    parser.add_argument("--budget", metavar="AMOUNT", help="a budget in money, e.g. 10.00" + lift)
    parser.add_argument(
        "--budget-period",
        metavar="PERIOD",
        help="when spend resets: daily, weekly, monthly or seconds (default: never)" + lift,
    )
    parser.add_argument(
        "--expires",
        metavar="WHEN",
        help="a duration (30d, 12h, 1w) or a date (2027-01-01)"
        + ("" if creating else "; 'never' lifts it"),
    )
    parser.add_argument(
        "--metadata",
        action="append",
        default=[],
        metavar="K=V",
        help="a metadata entry (repeatable)" + ("" if creating else "; K= removes one"),
    )
    if creating:
        parser.add_argument("--currency", help="the budget's currency (default USD)")


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_run(args))
    except (KeyFieldError, KeyNotFoundError) as exc:
        raise UsageError(str(exc)) from None
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{args.db or default_path()} is not a keys file: {exc}") from None


async def _run(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        return await _COMMANDS[args.keys_command](store, args)
    finally:
        await store.aclose()


# --- choosing the store --------------------------------------------------------------------


def _store(args: argparse.Namespace) -> KeyStore:
    if args.redis:
        return _redis_store(args.redis, args.redis_prefix)
    path = Path(args.db) if args.db else default_path()
    if args.keys_command != "create" and not path.exists():
        chosen = (
            "given with --db"
            if args.db
            else ("from $MODELSTREAM_KEYS" if os.environ.get("MODELSTREAM_KEYS") else "the default")
        )
        raise UsageError(
            f"no keys file at {path} ({chosen}); check the path, or issue a first key with "
            "`modelstream keys create NAME`"
        )
    return SQLiteKeyStore(path)


def _redis_store(url: str, prefix: str | None) -> KeyStore:
    if url.startswith("$"):  # a password stays out of the command line (and `ps`)
        name = url.removeprefix("$").removeprefix("{").removesuffix("}")
        url = os.environ.get(name, "")
        if not url:
            raise UsageError(f"--redis: the environment variable {name} is not set")
    try:
        from ..stores.redis import check_reachable
        from .redis import DEFAULT_PREFIX, RedisKeyStore
    except ImportError as exc:
        raise UsageError(
            f"--redis needs the 'redis' package ({exc.name} is missing): "
            "pip install 'modelstream[server]'"
        ) from None
    try:
        check_reachable(url)
    except StoreError as exc:  # says the URL without its password
        raise UsageError(str(exc)) from None
    return RedisKeyStore.from_url(url, prefix=prefix or DEFAULT_PREFIX)


# --- the commands --------------------------------------------------------------------------


async def _create(store: KeyStore, args: argparse.Namespace) -> int:
    fields = _fields(args, creating=True)
    record, secret = await store.create(args.name, **fields)
    if args.json:
        _print_json({"key": _shown(record), "secret": secret.reveal()})
        return EXIT_OK
    print(f"Created the key {record.key_id} ({record.name}). Its secret:")
    print()
    print(f"    {secret.reveal()}")
    print()
    print(
        "This secret will not be shown again: only its hash is stored. Give it to its holder now."
    )
    return EXIT_OK


async def _list(store: KeyStore, args: argparse.Namespace) -> int:
    records = await store.list()
    if args.json:
        _print_json({"keys": [_shown(record) for record in records]})
        return EXIT_OK
    if not records:
        print("no keys yet; `modelstream keys create NAME` issues one")
        return EXIT_OK
    table = _table("ID", "NAME", "STATUS", "MODELS", "RPM", "TPM", "BUDGET", "EXPIRES")
    now = time.time()
    for record in records:
        table.add_row(
            record.key_id,
            record.name,
            record.status(now),
            ",".join(record.models) or "all",
            _limit(record.rpm),
            _limit(record.tpm),
            _budget(record),
            shown_time(record.expires_at) if record.expires_at is not None else "never",
        )
    _console().print(table)
    return EXIT_OK


async def _show(store: KeyStore, args: argparse.Namespace) -> int:
    record = await store.get(args.key)
    if record is None:
        raise KeyNotFoundError(args.key)
    _print_record(record, args.json)
    return EXIT_OK


async def _revoke(store: KeyStore, args: argparse.Namespace) -> int:
    record = await store.revoke(args.key)
    if args.json:
        _print_json(_shown(record))
    else:
        assert record.revoked_at is not None
        print(
            f"Revoked the key {record.key_id} ({record.name}) at {shown_time(record.revoked_at)}."
        )
    return EXIT_OK


async def _update(store: KeyStore, args: argparse.Namespace) -> int:
    changes = _fields(args, creating=False)
    removed = [entry for entry in args.metadata if entry.endswith("=")]
    if args.metadata:
        current = await store.get(args.key)
        if current is None:
            raise KeyNotFoundError(args.key)
        metadata = {**current.metadata, **changes["metadata"]}
        for entry in removed:
            metadata.pop(entry[:-1], None)
        changes["metadata"] = metadata
    if not changes:
        raise UsageError("nothing to change: give at least one flag (see --help)")
    _print_record(await store.update(args.key, **changes), args.json)
    return EXIT_OK


async def _spend(store: KeyStore, args: argparse.Namespace) -> int:
    start = _when(args.start, "--from", end_of_day=False)
    end = _when(args.end, "--to", end_of_day=True)
    totals = await store.spend(args.key, args.model, start, end)
    if args.json:
        _print_json({"from": start, "to": end, "data": [total.to_json() for total in totals]})
        return EXIT_OK
    if not totals:
        print("no spend" + (" matches" if args.key or args.model or start or end else " yet"))
        return EXIT_OK
    table = _table("KEY", "NAME", "MODEL", "TURNS", "INPUT TOKENS", "OUTPUT TOKENS", "COST")
    for total in totals:
        table.add_row(
            total.key_id,
            total.key_name,
            total.served_model,
            f"{total.turns:,}",
            f"{total.input_tokens:,}",
            f"{total.output_tokens:,}",
            shown(total.cost, total.currency),
        )
    for currency, cost in _sums(totals).items():
        table.add_row("total", "", "", "", "", "", shown(cost, currency))
    _console().print(table)
    return EXIT_OK


_COMMANDS: dict[str, Callable[[KeyStore, argparse.Namespace], Awaitable[int]]] = {
    "create": _create,
    "list": _list,
    "show": _show,
    "revoke": _revoke,
    "update": _update,
    "spend": _spend,
}


# --- flags to fields -----------------------------------------------------------------------


def _fields(args: argparse.Namespace, *, creating: bool) -> dict[str, Any]:
    """The record's fields the flags give (records.checked_fields checks them)."""
    fields: dict[str, Any] = {}
    if getattr(args, "name", None) is not None and not creating:
        fields["name"] = args.name
    if args.models is not None:
        fields["models"] = [] if args.models in ("", "all") else args.models.split(",")
    for flag in ("rpm", "tpm"):
        value = getattr(args, flag)
        if value is not None:
            fields[flag] = None if value.lower() in CLEAR else _whole(value, f"--{flag}")
    if args.budget is not None:
        fields["budget"] = None if args.budget.lower() in CLEAR else args.budget
    if args.budget_period is not None:
        period = args.budget_period
        fields["budget_period"] = None if period.lower() in CLEAR else period
    if args.expires is not None:
        fields["expires_at"] = _expiry(args.expires)
    if args.metadata:
        fields["metadata"] = dict(
            _entry(entry) for entry in args.metadata if not entry.endswith("=")
        )
    if creating and args.currency is not None:
        fields["currency"] = args.currency
    return fields


def _whole(value: str, flag: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"{flag} must be a whole number or 'none', got {value!r}") from None


def _expiry(value: str) -> float | None:
    if value.lower() in ("never", *CLEAR):
        return None
    try:
        return parse_expiry(value, time.time())
    except ValueError as exc:
        raise UsageError(f"--expires: {exc}") from None


def _entry(entry: str) -> tuple[str, str]:
    key, equals, value = entry.partition("=")
    if not equals or not key:
        raise UsageError(f"--metadata takes KEY=VALUE, got {entry!r}")
    return key, value


def _when(value: str | None, flag: str, *, end_of_day: bool) -> float | None:
    if value is None:
        return None
    try:
        return parse_instant(value, end_of_day=end_of_day)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None


# --- output --------------------------------------------------------------------------------


def _shown(record: KeyRecord) -> dict[str, Any]:
    return {**record.to_json(), "status": record.status(time.time())}


def _print_record(record: KeyRecord, as_json: bool) -> None:
    if as_json:
        _print_json(_shown(record))
        return
    table = _table("FIELD", "VALUE")
    rows = {
        "id": record.key_id,
        "name": record.name,
        "status": record.status(time.time()),
        "models": ",".join(record.models) or "all",
        "rpm": _limit(record.rpm),
        "tpm": _limit(record.tpm),
        "budget": _budget(record),
        "expires": shown_time(record.expires_at) if record.expires_at is not None else "never",
        "created": shown_time(record.created_at),
    }
    if record.revoked_at is not None:
        rows["revoked"] = shown_time(record.revoked_at)
    rows |= {f"metadata.{key}": value for key, value in sorted(record.metadata.items())}
    for name, value in rows.items():
        table.add_row(name, value)
    _console().print(table)


def _limit(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _budget(record: KeyRecord) -> str:
    if record.budget is None:
        return "-"
    period = record.budget_period
    every = (
        "" if period is None else f" {period}" if isinstance(period, str) else f" per {period} s"
    )
    return shown(record.budget, record.currency) + every


def _sums(totals: list[SpendTotal]) -> dict[str, Decimal]:
    sums: dict[str, Decimal] = {}
    for total in totals:
        sums[total.currency] = sums.get(total.currency, Decimal(0)) + total.cost
    return sums


def _table(*columns: str) -> Any:
    from rich.box import SIMPLE
    from rich.table import Table

    table = Table(box=SIMPLE, show_edge=False, pad_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _console() -> Any:
    from rich.console import Console

    # a pipe or a file gets the whole table, not one cut to 80 columns
    return Console(width=None if sys.stdout.isatty() else 200, highlight=False)


def _print_json(document: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.flush()
