"""The time windows a key is counted in: fixed one-minute windows for `rpm` and `tpm`, and the
budget's periods, each counted from the key's `created_at`.

A period is `daily` (86,400 s), `weekly` (7 days), a number of seconds, or `monthly`: calendar
months in UTC from the day and time of `created_at` (created on 31 January, it resets on the
last day of February, then on 31 March), clamped to the month's last day. A key without a
period has one window that never ends. Windows are numbered by their start in whole seconds so
that every process computes the same key for the same window.
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime

MINUTE = 60
NAMED_PERIODS = {"daily": 86_400, "weekly": 7 * 86_400}
PERIOD_NAMES = ("daily", "weekly", "monthly")

Period = str | int  # "daily" | "weekly" | "monthly" | seconds


def minute_window(now: float) -> tuple[int, int]:
    """The start and end (Unix seconds) of the rate window `now` falls in."""
    start = int(now // MINUTE) * MINUTE
    return start, start + MINUTE


def budget_window(period: Period | None, created_at: float, now: float) -> tuple[int, int | None]:
    """The start and end (Unix seconds) of the budget period `now` falls in; end None: the
    budget never resets."""
    origin = int(created_at)
    if period is None:
        return 0, None
    if period == "monthly":
        return _monthly_window(origin, max(now, origin))
    length = NAMED_PERIODS[period] if isinstance(period, str) else period
    count = int(max(now - origin, 0) // length)
    start = origin + count * length
    return start, start + length


def _monthly_window(origin: int, now: float) -> tuple[int, int]:
    base = datetime.fromtimestamp(origin, UTC)
    at = datetime.fromtimestamp(now, UTC)
    months = (at.year - base.year) * 12 + at.month - base.month
    start = _months_after(base, months)
    if start > now:
        months -= 1
        start = _months_after(base, months)
    return start, _months_after(base, months + 1)


def _months_after(base: datetime, months: int) -> int:
    year, month = divmod(base.month - 1 + months, 12)
    year += base.year
    day = min(base.day, calendar.monthrange(year, month + 1)[1])
    return int(base.replace(year=year, month=month + 1, day=day).timestamp())
