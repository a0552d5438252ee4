"""Times as people write them for keys and reports, and as messages show them: Unix seconds,
ISO dates (midnight UTC) and datetimes (UTC unless they say otherwise), and durations from now
(`30d`, `12h`, `90m`, `2w`). Every error is a `ValueError` whose message says what is accepted."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_DURATION = re.compile(r"(\d+)\s*([smhdw])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}
ACCEPTED = "Unix seconds, an ISO date (2027-01-01) or datetime (2027-01-01T12:00:00Z)"


def parse_instant(value: object, *, end_of_day: bool = False) -> float:
    """Unix seconds from a number, a string of digits, or an ISO date or datetime; a date alone
    is its midnight UTC, or with `end_of_day` the next midnight (an inclusive `to`)."""
    if isinstance(value, bool):
        raise ValueError(f"expected {ACCEPTED}, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected {ACCEPTED}, got {value!r}")
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            day = datetime.fromisoformat(text).replace(tzinfo=UTC)
            return (day + timedelta(days=1 if end_of_day else 0)).timestamp()
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"expected {ACCEPTED}, got {value!r}") from None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()


def parse_expiry(value: object, now: float) -> float:
    """When a key expires: a duration from `now` (`30d`, `12h`, `1w`) or an instant."""
    if isinstance(value, str) and (found := _DURATION.fullmatch(value.strip().lower())):
        return now + int(found.group(1)) * _SECONDS[found.group(2)]
    try:
        return parse_instant(value)
    except ValueError:
        raise ValueError(
            f"expected a duration (30d, 12h, 1w) or {ACCEPTED}, got {value!r}"
        ) from None


def shown_time(seconds: float) -> str:
    """`2027-01-01 00:00 UTC`."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def shown_duration(seconds: float) -> str:
    """`3 d 4 h`, `12 min`, `45 s`: the two largest parts of a wait."""
    seconds = max(int(seconds + 0.999), 0)
    parts: list[str] = []
    for name, size in (("d", 86_400), ("h", 3600), ("min", 60), ("s", 1)):
        if seconds >= size or (name == "s" and not parts):
            parts.append(f"{seconds // size} {name}")
            seconds %= size
        if len(parts) == 2:
            break
    return " ".join(parts)
