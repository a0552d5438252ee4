"""A count and its noun in the right number, for every command's output: `1 turn`, `2 turns`,
`0 events`."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, made plural (by `plural`, else an added "s") unless it is exactly 1."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
