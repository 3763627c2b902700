"""CronTab scheduling as the manual writes it (``cron_minute``, ``cron_hour``, ... with
``on_exit_remove = false``): the schedd gives the job its next DeferralTime and the job waits for
it, as on the 23.9.6 test pool, where ``cron_minute = */2`` submitted at 10:08:13 ran at 10:10:00;
a value the schedd cannot read holds the job, code 25, in the pool's words."""

from __future__ import annotations

import calendar
import time

import pytest

from engine.schedd.api import JobStatus
from engine.schedd.local import crontab
from engine.schedd.local.submit import SubmitDescription, build_job_ads


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _at(text: str) -> int:
    return calendar.timegm(time.strptime(text, "%Y-%m-%d %H:%M:%S"))


def _build(text: str, tmp_path):
    return build_job_ads(SubmitDescription(text, str(tmp_path / "job.sub"), str(tmp_path)), 1, now=1_700_000_000)


def _next(submit_lines: str, now: str, tmp_path) -> str:
    (ad,) = _build(f"executable = /bin/date\n{submit_lines}\nqueue\n", tmp_path)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(crontab.next_run(ad, _at(now))))


@pytest.mark.parametrize("lines, now, expected", [
    ("cron_minute = */2", "2026-11-28 10:08:13", "2026-11-28 10:10:00"),  # as the pool ran it
    ("cron_minute = 23\ncron_hour = 0-23/2", "2026-11-28 10:30:00", "2026-11-28 12:23:00"),
    # the manual's May example: 10th to 20th, and every Monday of May (day fields ORed)
    ("cron_minute = 30\ncron_hour = 20\ncron_day_of_month = 10-20\ncron_month = 5\ncron_day_of_week = 1",
     "2027-05-01 00:00:00", "2027-05-03 20:30:00"),
    ("cron_minute = */10,*/6\ncron_hour = 0-11\ncron_day_of_month = 18\ncron_month = 1\ncron_prep_time = 120",
     "2027-01-18 11:55:00", "2028-01-18 00:00:00"),
    ("cron_minute = 0\ncron_day_of_week = 7", "2026-11-28 10:08:13", "2026-11-29 00:00:00"),  # Sunday as 7
    ("cron_month = 13", "2026-11-28 10:08:13", "2026-11-28 10:09:00"),  # out of range: ignored, as on the pool
])
def test_the_next_time_is_the_first_minute_after_now_the_fields_allow(lines, now, expected, tmp_path, utc):
    assert _next(lines, now, tmp_path) == expected


def test_the_cron_commands_are_recorded_as_condor_submit_records_them(tmp_path):
    (ad,) = _build("executable = /bin/date\ncron_minute = 0,30\ncron_hour = *\ncron_window = 60\nqueue\n", tmp_path)
    assert (ad["CronMinute"], ad["CronHour"], ad["DeferralWindow"], ad["DeferralPrepTime"]) == ("0,30", "*", 60, 300)


def test_a_cron_job_waits_for_its_minute(schedd):
    submitted = time.time()
    result = schedd.submit("executable = /bin/date\ncron_minute = */2\non_exit_remove = false\nqueue\n")
    ad = schedd.job(f"{result.cluster}.0")
    when = ad["DeferralTime"]
    assert when % 120 == 0 and submitted < when <= submitted + 120
    assert (ad["JobStatus"], ad["NumJobStarts"]) == (JobStatus.IDLE, 0)
    schedd.cli("rm", str(result.cluster))


def test_a_cron_value_the_schedd_cannot_read_holds_the_job(schedd):
    result = schedd.submit("executable = /bin/date\ncron_hour = abc\nqueue\n")
    ad = schedd.job(f"{result.cluster}.0")
    assert (ad["JobStatus"], ad["HoldReasonCode"], ad["HoldReason"]) == (
        JobStatus.HELD, 25, "Invalid cron schedule parameters: Invalid parameter value 'abc' for CronHour")
