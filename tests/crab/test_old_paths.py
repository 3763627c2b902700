"""A task whose DAG and submit template were written before the CRAB code was laid out by place
(``python3 -m engine.crab.prejob``, ``-m engine.crab.wrapper``) still runs to its end."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.crab import OLD_ENTRY_POINTS
from engine.crab.ap.prejob import load_job_state
from engine.crab.taskworker.dagman_creator import TaskAd, write_task
from engine.crab.taskworker.datasets import Catalogue
from engine.crab.taskworker.splitting import split
from crab_tasks import MC, crabtui


def test_a_dag_written_with_the_old_module_paths_runs_every_job(tmp_path, state):
    dataset = Catalogue(None).load(MC)
    ad = TaskAd(name="221126_100000:alice_crab_old", user="alice", dataset=MC, max_memory_mb=2000,
                max_runtime_min=1250, num_cores=1, priority=10, site_whitelist=(),
                site_blacklist=("T2_US_Nebraska", "T2_DE_DESY"), storage_site="T2_XX_Local", time_scale=500.0,
                max_retries=3, failure_plan=({"job": "2", "attempt": 1, "exitCode": 8021},))
    jobs = split(dataset, algorithm="FileBased", units_per_job=5)
    write_task(str(tmp_path), ad, dataset, jobs)
    for name in ("RunJobs.dag", "Job.submit"):  # as an earlier crabtui wrote them
        path = tmp_path / name
        text = path.read_text().replace("engine.crab.ap.", "engine.crab.")
        path.write_text(text.replace('executable = gWMS-CMSRunAnalysis.sh\narguments = "--jobId=$(count)"',
                                     f'executable = {ad.python}\narguments = "-m engine.crab.wrapper"'))
    (tmp_path / "gWMS-CMSRunAnalysis.sh").unlink()  # the job's script came later
    assert "-m engine.crab.prejob $RETRY 1 ." in (tmp_path / "RunJobs.dag").read_text()
    assert '"-m engine.crab.wrapper"' in (tmp_path / "Job.submit").read_text()

    done = crabtui(state, "dag", "run", "RunJobs.dag", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    actions = {job.id: [a.action for a in load_job_state(str(tmp_path), job.id).attempts] for job in jobs}
    assert actions == {job.id: ["retry", "ok"] if job.id == "2" else ["ok"] for job in jobs}


@pytest.mark.parametrize("old", sorted(OLD_ENTRY_POINTS))
def test_each_old_entry_point_runs_its_new_module(old, tmp_path):
    new = OLD_ENTRY_POINTS[old]
    ran = [subprocess.run([sys.executable, "-m", name, "--help"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60) for name in (old, new)]
    assert [r.returncode for r in ran] == [0, 0], ran[0].stderr
    assert ran[0].stdout == ran[1].stdout and f"python3 -m {new}" in ran[0].stdout
