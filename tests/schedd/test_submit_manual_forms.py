"""Submit files written as the HTCondor manual's "Submitting a Job" chapter and the condor_submit
manual page write them, whose job ads the test pool's condor_submit 23.9.6 -dry-run decided."""

from __future__ import annotations

from pathlib import Path

import classad2

from engine.schedd.local.submit import SubmitDescription, build_job_ads


def build(text: str, cwd: Path) -> list[classad2.ClassAd]:
    return build_job_ads(SubmitDescription(text, str(cwd / "job.sub"), str(cwd)), 7, now=1_700_000_000)


def test_a_quoted_batch_name_loses_its_quotes_as_on_the_pool(tmp_path):
    """condor_submit -dry-run on the pool: JobBatchName="quoted name" and "fromattr"; a lone quote
    stays (JobBatchName="\\"abc")."""
    ads = build('executable = /bin/true\nbatch_name = "quoted name"\nqueue\n', tmp_path)
    assert ads[0]["JobBatchName"] == "quoted name"
    ads = build('executable = /bin/true\nJobBatchName = "fromattr"\nqueue\n', tmp_path)
    assert ads[0]["JobBatchName"] == "fromattr"
    ads = build('executable = /bin/true\nbatch_name = "abc\nqueue\n', tmp_path)
    assert ads[0]["JobBatchName"] == '"abc'


def test_a_row_with_fewer_words_keeps_the_row_befores_value_as_on_the_pool(tmp_path):
    """queue a b c from ( ... ): the pool's condor_submit gave the row 'p,q' c = 'z w', the row
    before's, as it does for rows of a file."""
    ads = build("executable = /bin/echo\narguments = $(a) $(b) $(c)\n"
                "queue a b c from (\nx y z w\np,q\nr, s , t\n)\n", tmp_path)
    assert [ad["Args"] for ad in ads] == ["x y z w", "p q z w", "r s , t"]
