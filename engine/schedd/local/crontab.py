"""CronTab scheduling (``cron_minute`` ... ``cron_day_of_week``): the schedd turns a job's Cron*
attributes into its next ``DeferralTime``, as HTCondor 23.9.6's schedd does when the job enters the
queue, is requeued or is released, so that the job waits for its time like any deferred job.

As on the test pool: the next minute after now that every field allows, in the schedd's local time;
a field not given allows every value; day of month and day of week, when both are restricted,
allow a day either allows (the manual's "logical or"); a number outside a field's range is
ignored, and a field left with none allows every value (``cron_month = 13`` runs every minute); a
value that is no number or no range holds the job, code 25, "Invalid cron schedule parameters:
...", with the pool's words.
"""

from __future__ import annotations

import time

import classad2

HOLD_CODE = 25  # CONDOR_HOLD_CODE::InvalidCronSettings
# The job attributes condor_submit writes for the cron_* commands, with each field's range.
FIELDS = (("CronMinute", 0, 59), ("CronHour", 0, 23), ("CronDayOfMonth", 1, 31), ("CronMonth", 1, 12),
          ("CronDayOfWeek", 0, 7))
_SEARCH_DAYS = 8 * 366  # a day allowed by day and month fields (Feb 29) comes within this many days


class CronError(ValueError):
    """A Cron* attribute the schedd cannot read: the hold reason's text."""


def wants_crontab(ad: classad2.ClassAd) -> bool:
    return any(name in ad for name, _, _ in FIELDS)


def _field(ad: classad2.ClassAd, name: str, low: int, high: int) -> tuple[frozenset[int], bool]:
    """The values ``name`` allows, and whether it restricts them (not given, ``*`` or all-ignored does not)."""
    text = ad.get(name)
    if text is None:
        return frozenset(range(low, high + 1)), False
    text = str(text).strip()
    values: set[int] = set()
    for token in text.split(","):
        token = token.strip()
        part, _, step_text = token.partition("/")
        if part == "*":
            first, last = low, high
        else:
            start, dash, end = part.partition("-")
            if not start.isdigit() or (dash and not end.isdigit()):
                raise CronError(f"Invalid parameter value '{text}' for {name}")
            first, last = int(start), int(end) if dash else int(start)
            if first > last:
                raise CronError(f"Invalid cron attribute: {token}")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"Invalid cron attribute: {token}")
            step = int(step_text)
        values.update(v for v in range(first, last + 1, step) if low <= v <= high)
    if name == "CronDayOfWeek" and 7 in values:  # Sunday is 0 or 7
        values.add(0)
    if not values or text == "*":
        return frozenset(range(low, high + 1)), False
    return frozenset(values), True


def next_run(ad: classad2.ClassAd, now: float) -> int:
    """The job's next DeferralTime: the first minute after ``now`` its Cron* fields allow.
    Raises :class:`CronError` for a field the schedd cannot read."""
    (minutes, _), (hours, _), (mdays, mday_set), (months, _), (wdays, wday_set) = (
        _field(ad, name, low, high) for name, low, high in FIELDS)
    start = time.localtime((int(now) // 60 + 1) * 60)
    day = time.struct_time((start.tm_year, start.tm_mon, start.tm_mday, 0, 0, 0, 0, 0, -1))
    first_minute = start.tm_hour * 60 + start.tm_min
    for offset in range(_SEARCH_DAYS):
        date = time.localtime(time.mktime((day.tm_year, day.tm_mon, day.tm_mday + offset, 12, 0, 0, 0, 0, -1)))
        weekday = (date.tm_wday + 1) % 7  # cron counts from Sunday
        in_month_day, in_weekday = date.tm_mday in mdays, weekday in wdays
        allowed = (in_month_day or in_weekday) if mday_set and wday_set else (in_month_day and in_weekday)
        if date.tm_mon not in months or not allowed:
            continue
        for hour in sorted(hours):
            for minute in sorted(minutes):
                if offset == 0 and hour * 60 + minute < first_minute:
                    continue
                return int(time.mktime((date.tm_year, date.tm_mon, date.tm_mday, hour, minute, 0, 0, 0, -1)))
    raise CronError("no time matches the cron schedule")
