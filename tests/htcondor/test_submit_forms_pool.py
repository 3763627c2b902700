"""Submit files as the HTCondor manual writes them, queued with ``--backend htcondor``: the jobs
the pool gets are those its own condor_submit 23.9.6 would queue."""

from __future__ import annotations

import os

import pytest

from crosscheck import crabtui
from engine.schedd.htcondor import HTCondorSchedd

pytestmark = pytest.mark.htcondor

ROWS = ("executable = /bin/echo\narguments = $(a) $(b) $(c) $(Row)\nhold = true\n"
        "queue a b c from (\nx y z w\np,q\nr, s , t\n)\n")


def test_a_row_with_fewer_words_keeps_the_row_befores_values_on_the_pool(htcondor_pool, shared_dir):
    """condor_submit on the pool gave the row 'p,q' c = 'z w'; the bindings' items give it none."""
    (shared_dir / "job.sub").write_text(ROWS)
    os.chmod(shared_dir / "job.sub", 0o666)
    result = crabtui("--backend", "htcondor", "job", "submit", "-terse", "job.sub", cwd=shared_dir)
    assert result.returncode == 0, result.stderr
    cluster = int(result.stdout.split(".")[0])
    try:
        ads = HTCondorSchedd().query(f"ClusterId == {cluster}", ["ProcId", "Args"])
        assert sorted((ad["ProcId"], ad["Args"]) for ad in ads) == [
            (0, "x y z w 0"), (1, "p q z w 1"), (2, "r s , t 2")]
    finally:
        crabtui("--backend", "htcondor", "rm", str(cluster), cwd=shared_dir)
