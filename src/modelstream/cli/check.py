"""`check`: validate a JSON-lines event file (replay's `--format jsonl`) against the grammar.

A stream ends with its `stop` event or an exception, never both (SPEC §2 rule 5); in a file the
exception is one trailing `{"error": {"type", "message", ...}}` line.
"""

from __future__ import annotations

import argparse
import binascii
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from .. import jsonwire
from ..console.counts import counted
from ..console.exit_status import EXIT_FAILED, EXIT_OK, UsageError
from ..console.helptext import command_parser, examples
from ..errors import GrammarViolation
from ..grammar import GrammarChecker


def add_command(commands: Any) -> None:
    """Add `check` to the subcommands of the `modelstream` parser."""
    check = command_parser(
        commands,
        "check",
        help="validate a JSON-lines event file against the grammar",
        description="Validate a JSON-lines event file (as written by `replay --format jsonl`). "
        "Exit status: 0 valid, 1 a rule is broken, 2 bad usage.",
        epilog=examples(
            "modelstream check turn.jsonl",
            "modelstream replay turn.sse --format jsonl > turn.jsonl && modelstream check "
            "turn.jsonl",
        ),
    )
    check.add_argument("path", metavar="PATH", help="the event file")
    check.set_defaults(run=run_check)


def run_check(args: argparse.Namespace) -> int:
    try:
        with open(args.path, "rb") as lines:
            report = check_lines(lines)
    except FileNotFoundError:
        raise UsageError(f"no such file: {args.path} (give a JSON-lines event file)") from None
    except OSError as exc:
        raise UsageError(f"cannot read {args.path}: {exc.strerror or exc}") from None
    except EventFileViolation as violation:
        print(f"{args.path}: {violation}")
        return EXIT_FAILED
    if report.error_type is not None:
        print(f"ok: {counted(report.events, 'event')}, ended by error {report.error_type}")
    else:
        print(f"ok: {counted(report.events, 'event')}, finish reason {report.finish_reason}")
    return EXIT_OK


@dataclass(frozen=True)
class CheckReport:
    """A file that follows the grammar: how many events and how the stream ended."""

    events: int
    finish_reason: str | None  # None when the stream ended in an error
    error_type: str | None


class EventFileViolation(Exception):
    """The first place where the file breaks a rule; `line` is 1-based, 0 for the whole file."""

    def __init__(self, line: int, rule: str, detail: str) -> None:
        self.line = line
        self.rule = rule
        self.detail = detail
        where = f"line {line}" if line else "end of file"
        super().__init__(f"{where}: rule {rule}: {detail}")


def check_lines(lines: Iterable[bytes]) -> CheckReport:
    """Check the events of a file, one JSON value per line; blank lines are ignored."""
    checker = GrammarChecker()
    events = 0
    finish_reason: str | None = None
    error: dict[str, Any] | None = None
    error_line = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if error is not None:
            raise EventFileViolation(
                number, "5", f"nothing may follow the error on line {error_line}"
            )
        value = _parse(number, line)
        if isinstance(value, dict) and set(value) == {"error"}:
            if checker.stopped:
                raise EventFileViolation(
                    number, "5", "a stream ends with its stop event or an error, never both"
                )
            error, error_line = _error_body(number, value["error"]), number
            continue
        try:
            checker.feed(value)
        except GrammarViolation as exc:
            raise EventFileViolation(number, exc.rule, exc.detail) from None
        events += 1
        if checker.stopped:
            finish_reason = value["finish_reason"]
    if error is not None:
        return CheckReport(events, None, error["type"])
    try:
        checker.end()
    except GrammarViolation as exc:
        raise EventFileViolation(0, exc.rule, exc.detail) from None
    return CheckReport(events, finish_reason, None)


def _parse(number: int, line: bytes) -> Any:
    try:
        return jsonwire.loads_event(line)
    except orjson.JSONDecodeError as exc:
        raise UsageError(
            f"line {number} is not JSON ({exc}); check expects one event per line, "
            "as written by `modelstream replay --format jsonl`"
        ) from None
    except (binascii.Error, ValueError) as exc:  # a `data` field that is not base64
        raise EventFileViolation(number, "shape", f"inline data is not base64: {exc}") from None


def _error_body(number: int, body: Any) -> dict[str, Any]:
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("type"), str)
        or not isinstance(body.get("message"), str)
    ):
        raise EventFileViolation(
            number, "shape", 'an error line is {"error": {"type": str, "message": str, ...}}'
        )
    return body
