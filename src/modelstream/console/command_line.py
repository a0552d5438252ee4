"""Reading a `modelstream` command line: a flag a command does not know is named by that
command, with its nearest flag (`modelstream chat: error: unknown flag --max-token; did you
mean --max-tokens?`), instead of argparse's "unrecognized arguments" for the whole line."""

from __future__ import annotations

import argparse
import difflib
import itertools
import re
import sys
from collections.abc import Iterable
from typing import Any, NoReturn

# a word that argparse reads as a flag: not "-" (stdin) and not a negative number
_FLAG = re.compile(r"--?[A-Za-z][\w-]*")


class CommandParser(argparse.ArgumentParser):
    """argparse's parser, for `modelstream` and (through `add_subparsers`) each of its commands:
    the words a command does not take are its error, said by it (exit status 2). A mistyped
    flag is the error even when it also left a required flag out (`serve --confg x`)."""

    _words: tuple[str, ...] = ()

    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        self._words = tuple(sys.argv[1:] if args is None else args)
        parsed, unknown = super().parse_known_args(self._words, namespace)
        if unknown:  # a command's own, or (from the top) before the command's name
            flags = unknown_flags(self, unknown)
            if not flags:
                self.error(f"unrecognized arguments: {' '.join(unknown)}")
            self.error(unknown_flag_message(self, flags[0]))
        return parsed, unknown

    def error(self, message: str) -> NoReturn:
        flags = unknown_flags(self, self._own_words())
        if flags:  # a mistyped flag is the cause to fix first
            message = unknown_flag_message(self, flags[0])
        super().error(message)

    def _own_words(self) -> Iterable[str]:
        """The words this parser reads itself: all of a command's; only those before the
        command's name for one that has commands (`modelstream`, `modelstream traces`)."""
        if any(isinstance(action, argparse._SubParsersAction) for action in self._actions):
            return itertools.takewhile(lambda word: word.startswith("-"), self._words)
        return self._words


def unknown_flags(parser: argparse.ArgumentParser, words: Iterable[str]) -> list[str]:
    """The words before `--` that look like flags `parser` does not have (`-mNAME` is `-m`)."""
    flags = set(parser._option_string_actions)
    found = []
    for word in words:
        if word == "--":
            break
        name = word.partition("=")[0]
        if _FLAG.fullmatch(name) and name not in flags and name[:2] not in flags:
            found.append(name)
    return found


def unknown_flag_message(parser: argparse.ArgumentParser, flag: str) -> str:
    """`unknown flag --max-token; did you mean --max-tokens?`, or where to read the flags."""
    nearest = difflib.get_close_matches(flag, list(parser._option_string_actions), n=1)
    if nearest:
        return f"unknown flag {flag}; did you mean {nearest[0]}?"
    return f"unknown flag {flag}; {parser.prog} --help lists its flags"
