"""``crabtui --backend htcondor q / hold / release / rm`` against the pool's own condor_q,
condor_hold, condor_release and condor_rm (HTCondor 23.9.6, run inside the pool's tree as its
job user): the same command line gives the same lines, in the same order, and the same exit
status.

The pool is shared: the tests act on jobs they submitted (held, so they take no slot), select
them by cluster id, and compare outputs that include every user's totals only when the queue
did not change around the comparison (condor_q before and after crabtui print the same).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import classad2
import htcondor2
import pytest

from crosscheck import crabtui
from engine.schedd.htcondor import HTCondorSchedd

pytestmark = pytest.mark.htcondor

HELD = {"executable": "/bin/sleep", "arguments": "300", "hold": "true", "initialdir": "/tmp"}
_CLOCK = re.compile(r"@ \d\d/\d\d/\d\d \d\d:\d\d:\d\d$")
_DURATION = re.compile(r"\d+\+\d\d:\d\d:\d\d")


def pool_tool(pool, tool: str, *args: str) -> subprocess.CompletedProcess:
    """One of the pool's own tools, as its job user inside its tree, with its own configuration."""
    env = pool.env
    return subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "TZ=UTC",
                           shutil.which("chroot") or "/usr/sbin/chroot", f"--userspec={env['CRABTUI_TESTPOOL_USER']}",
                           env["CRABTUI_TESTPOOL_ROOT"], tool, *args], capture_output=True, text=True, timeout=120)


def ours(tool: str, *args: str, cwd: Path = Path("/tmp")) -> subprocess.CompletedProcess:
    return crabtui("--backend", "htcondor", tool, *args, cwd=cwd, env={"TZ": "UTC"})


def steady(text: str) -> str:
    """Output without what moves by itself: the header's clock, and running jobs' RUN_TIME."""
    lines = []
    for line in text.splitlines():
        line = _CLOCK.sub("@", line)
        if re.search(r" [R>] ", line):
            line = _DURATION.sub("T", line)
        lines.append(line)
    return "\n".join(lines)


def same_as_condor_q(pool, args: list[str], attempts: int = 6) -> None:
    """crabtui q ARGS prints what condor_q ARGS prints, taken between two condor_q runs that
    agree (so that the queue, other users' jobs included, was the same for all three)."""
    for _ in range(attempts):
        before = pool_tool(pool, "condor_q", *args)
        mine = ours("q", *args)
        after = pool_tool(pool, "condor_q", *args)
        if steady(before.stdout) == steady(after.stdout) and before.returncode == after.returncode:
            assert mine.returncode == before.returncode, (args, mine.stderr)
            assert steady(mine.stdout) == steady(before.stdout), args
            return
        time.sleep(1)
    raise AssertionError(f"the queue kept changing under condor_q {' '.join(args)}")


@pytest.fixture(scope="module")
def jobs(htcondor_pool):
    """Held jobs of this module: P (3 procs, a batch name), Q (2 procs, priority 12, arguments with
    spaces) and a DAG D whose node jobs are held: A (2 procs), a sub-DAG S (X, and a node whose
    name is too long for the DAG view's column) and Z after them."""
    schedd = htcondor2.Schedd()
    tag = f"ct{os.getpid()}"
    p = schedd.submit(htcondor2.Submit({**HELD, "batch_name": tag}), count=3).cluster()
    q = schedd.submit(htcondor2.Submit({**HELD, "executable": "/bin/echo", "arguments": '"a b  c"', "priority": "12"}),
                      count=2).cluster()
    work = Path(f"/tmp/{tag}")
    work.mkdir()
    os.chmod(work, 0o777)
    held = "executable = /bin/sleep\narguments = 300\nhold = true\n"
    for name, text in (("held.sub", held + "queue\n"), ("held2.sub", held + "queue 2\n"),
                       ("inner.dag", "JOB X held.sub\nJOB VeryLongNodeNameForTheColumn held.sub\n"),
                       ("top.dag", "JOB A held2.sub\nSUBDAG EXTERNAL S inner.dag\nJOB Z held.sub\nPARENT A S CHILD Z\n")):
        (work / name).write_text(text)
        os.chmod(work / name, 0o666)
    submitted = ours("dag", "submit", "top.dag", cwd=work)
    assert submitted.returncode == 0, submitted.stderr
    d = int(re.search(r"submitted to cluster (\d+)\.", submitted.stdout).group(1))
    deadline = time.monotonic() + 120
    while len(schedd.query(f'int(split(JobBatchId, ".")[0]) == {d}', ["ClusterId"])) < 6:  # D, A x2, S, X, long
        assert time.monotonic() < deadline, "the DAG's jobs did not all appear"
        time.sleep(0.5)
    yield {"P": str(p), "Q": str(q), "D": str(d)}
    schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {p} || ClusterId == {q} || ClusterId == {d}")
    shutil.rmtree(work, ignore_errors=True)


Q_ARGS = [
    ["-nobatch", "{P}", "{Q}"], ["-nob", "{Q}", "-cons", "ProcId == 1"], ["--nobatch", "{P}"],
    ["-hold", "{P}", "{Q}"], ["-ho", "{Q}"], ["-totals", "{P}", "{Q}"], ["-idle", "{P}"], ["-run", "{D}"],
    ["-run", "-cumulative-time", "{D}"], ["-nobatch", "-cumulative-time", "{P}", "{D}"],
    ["-wide:60", "-nobatch", "{Q}"], ["-wide", "{P}"],
    ["-constraint", "ClusterId == {P} || ClusterId == {Q}"],
    ["-nobatch", "-constraint", "ClusterId == {P}"], ["-allusers", "-constraint", "ClusterId == {Q}"],
    ["{D}"], ["-dag", "{D}"], ["-nobatch", "{D}"], ["-nobatch", "-dag", "{D}"],
    ["-dag", "-nobatch", "-constraint", "ClusterId == {D} || DAGManJobId == {D}"],
    ["{P}", "-af", "RemoteUserCpu/60", 'strcat(Owner, "x")', "NoSuch", "ProcId * 2"],
    ["{P}", "{Q}", "-af:jh", "Owner", "JobPrio", "Args"], ["{Q}", "-af:l", "ProcId", "Owner"],
    ["{P}", "{D}", "-af:h", "ProcId", "DAGNodeName", "ProcId"], ["{Q}", "-af:t,", "ProcId", "Owner"], ["{Q}", "-af:r", "Args", "JobPrio == 12"], ["{Q}", "-af:V", "Owner", "NoSuch"],
    ["{Q}", "-af", "ClusterId", "-af:h", "User", "Owner"], ["{P}", "-af:h", "ProcId", "-af:j", "User"],
    ["{Q}", "-const", 'User == "crab@vm" || User == "alice@cern.ch"', "-af", "ProcId", "User"],
    ["{P}", "-totals", "-af", "Jobs", "Held", "Idle"], ["{Q}", "-totals", "-format", "%d|", "Jobs", "-format", "%d\\n", "Held"],
    ["{P}", "-af", "ClusterId", "-totals"], ["{Q}", "-af:lrng", "ProcId", "Cmd"], ["{P}", "{Q}", "-af:h", "ProcId", "Cmd", "-wide"], ["-wide", "{P}", "-af:hj", "ProcId"], ["-dag", "{D}", "-af", "ClusterId", "JobBatchId", "DAGNodeName", "DAGManJobId"],
    ["{Q}", "-format", "%d.", "ClusterId", "-format", "%-4d|", "ProcId", "-format", "%s\\n", "Owner",
     "-format", "[%d]", "Owner"],
    ["{Q}", "-af", "ProcId", "-format", "%s|", "JobStatus"], ["{Q}", "-format", "%s|", "JobStatus", "-af", "ProcId"],
    ["{Q}", "-af", "ProcId", "ClusterId", "-format", "<%d>", "JobPrio", "-af", "Owner"],
    ["{Q}", "-format", "%d.", "ClusterId", "-format", "%d\\n", "ProcId", "-af", "JobPrio"],
    ["{Q}", "-af:h", "ProcId", "-format", "%d\\n", "JobPrio"], ["{Q}", "-af:,", "ProcId", "-format", "[%s]\\n", "Owner"],
    ["{Q}", "-af:l", "ProcId", "-format", "%s|", "Owner"],
    ["{P}", "-long"], ["{P}", "-l", "-attributes", "Owner,ProcId,JobBatchName"],
    ["{P}", "{Q}", "-json", "-attributes", "ProcId,Owner,Requirements,JobBatchName,Args,ClusterId"],
    ["{Q}", "-xml", "-attributes", "ProcId,Owner,Requirements,JobPrio,Args,ClusterId,RemoteUserCpu,HoldReason"],
    ["{P}", "-long:json", "-attributes", "ClusterId,ProcId,JobBatchName"], ["-xml", "-constraint", "ClusterId == 999999"],
    ["{P}", "-l:xml", "-attributes", "ClusterId,ProcId,Owner"], ["{Q}", "-long", "-af", "JobPrio", "strcat(Owner, Cmd)"],
    ["{Q}", "-json", "-attributes", "Args", "-format", "%d\\n", "JobPrio"],
    ["-json", "-constraint", "ClusterId == 999999"],
    ["-limit", "2", "-nobatch", "{P}", "{Q}"], ["-lim", "1", "{Q}", "-af", "ClusterId", "ProcId"],
    ["-submitter", "crab", "-nobatch", "-constraint", "ClusterId == {P}"],
    ["-submitter", "crab", "-constraint", "ClusterId == {Q}", "-af", "ProcId", "Owner"],
]


@pytest.mark.parametrize("template", Q_ARGS, ids=lambda t: " ".join(t))
def test_q_prints_what_condor_q_prints(htcondor_pool, jobs, template):
    same_as_condor_q(htcondor_pool, [arg.format(**jobs) for arg in template])


def test_q_of_two_clusters_lists_both_where_condor_q_lists_the_first(htcondor_pool, jobs):
    """condor_q 23.9.6's batch view of `condor_q P Q` lists P alone: the DAG and batch ids it ORs in
    for P are an error for Q's jobs, which have no JobBatchId; crabtui lists both (README)."""
    p, q = jobs["P"], jobs["Q"]
    theirs, mine = pool_tool(htcondor_pool, "condor_q", p, q).stdout, ours("q", p, q).stdout
    assert f" {p}.0-2\n" in theirs and f" {q}.0-1\n" not in theirs, theirs
    assert f" {p}.0-2\n" in mine and f" {q}.0-1\n" in mine, mine
    assert [line for line in steady(mine).splitlines() if f" {q}.0-1" not in line and "Total for query" not in line] \
        == [line for line in steady(theirs).splitlines() if "Total for query" not in line]


def test_the_default_query_is_the_users_own_jobs(htcondor_pool, jobs):
    """Without jobs, owners or -allusers, condor_q shows the jobs of the user the schedd knows
    (the pool's job user, not the local login) and adds that user's totals."""
    same_as_condor_q(htcondor_pool, ["-totals"])
    text = ours("q", "-totals").stdout
    assert re.search(r"^Total for crab: \d+ jobs;", text, re.M), text
    same_as_condor_q(htcondor_pool, ["-af", "ClusterId", "-constraint", f"ClusterId == {jobs['Q']}"])


ACTIONS = [
    ("condor_hold", ["{C}.0"]), ("condor_release", ["{C}"]), ("condor_release", ["{C}.0", "{C}.7"]),
    ("condor_release", ["-constraint", "ClusterId == 999999"]), ("condor_release", ["{C}.1", "99999"]),
    ("condor_rm", ["{C}.0", "-constraint", "ClusterId == 999999"]), ("condor_hold", ["{C}", "-constraint", "ProcId == 0"]),
    ("condor_release", ["-constraint", "ClusterId == {C} && ProcId == 1"]), ("condor_rm", ["-totals", "{C}"]),
    ("condor_release", ["nobody"]), ("condor_rm", ["{C}.1", "{C}"]), ("condor_release", ["-reason", "checked", "{C}.1"]),
    ("condor_release", ["-totals", "{C}.1", "{C}.4"]), ("condor_rm", ["-totals", "{C}.4", "{C}"]),
    ("condor_hold", ["-pool", "127.0.0.1:9", "{C}.1"]),
]


@pytest.mark.parametrize("tool,template", ACTIONS, ids=lambda a: " ".join(a) if isinstance(a, list) else a)
def test_actions_print_and_exit_as_condors_tools(htcondor_pool, tool, template):
    """The same action on two identical clusters, one through the pool's tool and one through
    crabtui: the same lines on stdout and stderr, the same exit status, the same jobs changed."""
    schedd = htcondor2.Schedd()
    # Released jobs that can match nothing stay idle: what each tool changed is then all there is to compare.
    submit = htcondor2.Submit({**HELD, "batch_name": "ct-act", "requirements": "false"})
    theirs_c, ours_c = schedd.submit(submit, count=2).cluster(), schedd.submit(submit, count=2).cluster()
    try:
        theirs = pool_tool(htcondor_pool, tool, *[a.format(C=theirs_c) for a in template])
        mine = ours(tool.removeprefix("condor_"), *[a.format(C=ours_c) for a in template])

        def lines(text: str, cluster: int) -> list[str]:
            return [re.sub(rf"\b{cluster}\b", "C", line) for line in text.splitlines()]

        assert (mine.returncode, lines(mine.stdout, ours_c), lines(mine.stderr, ours_c)) == \
            (theirs.returncode, lines(theirs.stdout, theirs_c), lines(theirs.stderr, theirs_c))
        states = {c: [(ad["ProcId"], ad["JobStatus"]) for ad in sorted(
            schedd.query(f"ClusterId == {c}", ["ProcId", "JobStatus"]), key=lambda ad: ad["ProcId"])]
            for c in (theirs_c, ours_c)}
        assert states[ours_c] == states[theirs_c]
    finally:
        schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {theirs_c} || ClusterId == {ours_c}")


def test_release_of_a_job_that_is_not_held_says_so_as_condor_release(htcondor_pool):
    """condor_release by id of an idle job: "Job C.0 not held to be released", exit status 1, and
    the same line for a job held and one idle, whichever tool released the held one."""
    schedd = htcondor2.Schedd()
    submit = htcondor2.Submit({**HELD, "hold": "false", "batch_name": "ct-idle", "requirements": "false"})
    theirs_c, ours_c = schedd.submit(submit, count=2).cluster(), schedd.submit(submit, count=2).cluster()
    try:
        schedd.act(htcondor2.JobAction.Hold, f"(ClusterId == {theirs_c} || ClusterId == {ours_c}) && ProcId == 1")
        for args in (["{C}.0"], ["{C}.1", "{C}.0", "{C}.5"]):
            theirs = pool_tool(htcondor_pool, "condor_release", *[a.format(C=theirs_c) for a in args])
            mine = ours("release", *[a.format(C=ours_c) for a in args])
            assert mine.returncode == theirs.returncode, args
            assert mine.stdout.replace(str(ours_c), "C") == theirs.stdout.replace(str(theirs_c), "C"), args
            assert mine.stderr.replace(str(ours_c), "C").strip() == theirs.stderr.replace(str(theirs_c), "C").strip()
        assert "Job C.0 not held to be released" in mine.stderr.replace(str(ours_c), "C")
    finally:
        schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {theirs_c} || ClusterId == {ours_c}")


QEDITS = [
    ["{C}", "JobPrio=5"], ["{C}.0", "{C}.1", "Flavour", '"mint"', "Size", "-7"], ["-jobids", "{C}.1", "Pear = 1"],
    ["-constraint", "ProcId == 1", "-jobids", "{C}", "Lemon", "true"], ["-owner", "crab", "-jobids", "{C}.0", "Q=1"],
    ["crab", "-constraint", "ClusterId == {C}", "Note", '"a b"'], ["{C}.0", "{C}.7", "Pear", "1", "Q", "2"],
    ["{C}.1", "{C}", "Lemon", "true"], ["-owner", "nobody", "-constraint", "ProcId == 7", "Q=1"],
    ["999999", "999998.2", "Q", "1"],
]


@pytest.mark.parametrize("template", QEDITS, ids=" ".join)
def test_qedit_sets_what_condor_qedit_sets(htcondor_pool, template):
    """condor_qedit's command line forms (job ids, owner, -jobids, -owner, -constraint; ATTR VALUE
    and ATTR=VALUE) on two identical clusters: the same lines, exit status and attributes (a job
    id not in the queue fails the edit, and nothing is set)."""
    schedd = htcondor2.Schedd()
    submit = htcondor2.Submit({**HELD, "batch_name": "ct-qedit"})
    theirs_c, ours_c = schedd.submit(submit, count=2).cluster(), schedd.submit(submit, count=2).cluster()
    attrs = ["ProcId", "JobPrio", "Flavour", "Size", "Pear", "Lemon", "Q", "Note"]
    try:
        theirs = pool_tool(htcondor_pool, "condor_qedit", *[a.format(C=theirs_c) for a in template])
        mine = ours("qedit", *[a.format(C=ours_c) for a in template])
        assert (mine.returncode, mine.stdout, mine.stderr.replace(str(ours_c), "C")) == \
            (theirs.returncode, theirs.stdout, theirs.stderr.replace(str(theirs_c), "C"))
        edited = {c: sorted(tuple(ad.get(a) for a in attrs) for ad in schedd.query(f"ClusterId == {c}", attrs))
                  for c in (theirs_c, ours_c)}
        assert edited[ours_c] == edited[theirs_c]
    finally:
        schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {theirs_c} || ClusterId == {ours_c}")


def test_qedit_of_an_immutable_attribute_says_so_as_condor_qedit(htcondor_pool, jobs):
    """condor_qedit 23.9.6: 'Update of immutable attribute "ClusterId" is not allowed.', and
    nothing set (JobPrio given first stays); the bindings' own error names no attribute."""
    before = ours("q", jobs["P"], "-af", "JobPrio").stdout
    for tool in (lambda *a: pool_tool(htcondor_pool, "condor_qedit", *a), lambda *a: ours("qedit", *a)):
        result = tool(jobs["P"], "JobPrio", "7", "ClusterId", "7")
        assert result.returncode == 1 and 'Update of immutable attribute "ClusterId" is not allowed' in result.stderr
    assert ours("q", jobs["P"], "-af", "JobPrio").stdout == before


def test_bad_command_lines_are_one_line_errors(htcondor_pool, jobs):
    for tool, args in (("q", ["-zzz"]), ("q", ["-autocluster"]), ("q", ["-run", "-hold"]), ("hold", []),
                       ("rm", ["-xyz", jobs["P"]]), ("q", ["-name", "nosuch"]), ("q", ["-af", "Owner =="]),
                       ("qedit", [jobs["P"], "JobPrio"]), ("qedit", ["-jobids", jobs["P"], "1x=2"]),
                       ("qedit", [jobs["P"], "Note", "a b"]), ("qedit", ["-name", "nosuch", jobs["P"], "X=1"])):
        result = ours(tool, *args)
        assert result.returncode == 1 and result.stdout == "", (tool, args)
        assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("ERROR: "), (tool, args, result.stderr)
        assert "Traceback" not in result.stderr


def test_a_constraint_that_does_not_parse_is_named_as_typed(htcondor_pool, jobs):
    """condor_q says "Parse error in constraint expression", condor_history "could not parse
    constraint", condor_hold "Can't insert constraint into ClassAd": crabtui says it in one line
    that names the constraint as typed, before asking the schedd, and the jobs stay as they were."""
    typed = f"ClusterId == {jobs['P']} &&"
    for tool, option in (("q", "-constraint"), ("history", "-const"), ("hold", "-constraint"), ("rm", "-c")):
        result = ours(tool, option, typed)
        assert (result.returncode, result.stdout) == (1, ""), (tool, result.stderr)
        assert result.stderr == f"ERROR: {option} {typed!r} is not a ClassAd expression; quote strings in it, " \
                                f"as in {option} 'Owner == \"alice\" && JobStatus == 5'\n", (tool, result.stderr)
    assert ours("q", jobs["P"], "-af", "JobStatus").stdout == "5\n5\n5\n"


def test_bad_limit_and_unknown_submitter_fail_as_condor_q(htcondor_pool):
    for args in (["-limit", "x"], ["-limit", "0"], ["-submitter", "nosuchuser"]):
        theirs, mine = pool_tool(htcondor_pool, "condor_q", *args), ours("q", *args)
        assert (mine.returncode, mine.stdout) == (theirs.returncode, "") == (1, ""), args
        assert mine.stderr.removeprefix("ERROR: ") == theirs.stderr.removeprefix("Error: "), args


def test_a_pool_host_no_dns_knows_fails_q_and_the_actions_as_condors_tools(htcondor_pool, jobs):
    """condor_q, condor_hold, condor_release and condor_rm 23.9.6 look up the -pool host first:
    a misspelled central manager fails them (no job listed, none acted on), even without -name;
    condor_history does not look it up, and lists the local schedd's jobs."""
    for tool, args in (("q", ["-pool", "nowhere.example:9618", jobs["Q"]]), ("hold", ["-pool", "nowhere.example", jobs["Q"]]),
                       ("rm", ["-pool", "nowhere.example", jobs["Q"]]), ("release", ["-pool", "nowhere.example", jobs["P"]])):
        theirs, mine = pool_tool(htcondor_pool, f"condor_{tool}", *args), ours(tool, *args)
        assert (mine.returncode, mine.stdout, theirs.returncode, theirs.stdout.strip()) == (1, "", 1, ""), (tool, theirs.stderr)
        assert "unknown host nowhere.example" in theirs.stderr and \
            mine.stderr.startswith("ERROR: unknown host nowhere.example: ") and mine.stderr.count("\n") == 1, mine.stderr
    assert ours("q", jobs["Q"], "-af", "JobStatus").stdout == "5\n5\n", "nothing was removed"
    history = ["-pool", "nowhere.example", "-limit", "1", "-af", "Owner"]
    assert ours("history", *history).returncode == pool_tool(htcondor_pool, "condor_history", *history).returncode == 0


def test_name_pool_and_global(htcondor_pool, jobs):
    collector = htcondor_pool.env["CRABTUI_TESTPOOL_COLLECTOR"]
    # -pool without -name: condor_q asks the local schedd, whatever collector is named
    for args in (["-pool", collector, "-nobatch", jobs["Q"]], ["-global", jobs["P"]], ["-pool", "127.0.0.1:9", jobs["Q"]]):
        same_as_condor_q(htcondor_pool, args)
    # condor_q -name wants a name it can resolve as a host ("vm" is not, in the pool's tree);
    # crabtui takes the name the collector knows the schedd by.
    name = HTCondorSchedd().title[0]
    assert ours("q", "-name", name, jobs["Q"], "-af", "ProcId").stdout == "0\n1\n"


def test_better_analyze_reads_the_pools_slot_ads(htcondor_pool):
    schedd = htcondor2.Schedd()
    cluster = schedd.submit(htcondor2.Submit({**HELD, "hold": "false", "request_memory": "100 TB"})).cluster()
    try:
        text = ours("q", "-better-analyze", str(cluster)).stdout
        ads = htcondor2.Collector().query(htcondor2.AdType.Startd, projection=["Name", "GLIDEIN_CMSSite"])
        assert f"{cluster}.0: Job {cluster}.0 matches none of the {len(ads)} slots of the pool." in text
        assert re.search(r"RequestMemory = 104857600 MB; 0 of \d+ slots have enough Memory", text), text
        sites = sorted({str(ad["GLIDEIN_CMSSite"]) for ad in ads})  # the test pool's, T2_XX_Local among them
        listed = re.search(r"^Sites: (.*)$", text, re.M).group(1)
        assert "T2_XX_Local" in sites and [s.split(" (")[0] for s in listed.split(", ")] == sites, text
    finally:
        schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {cluster}")


def test_dag_submit_tags_the_dagman_job_as_condor_submit_dag_does(htcondor_pool, shared_dir):
    (shared_dir / "held.sub").write_text("executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n")
    (shared_dir / "d.dag").write_text("JOB A held.sub\n")
    outdir = shared_dir / "logs"
    outdir.mkdir()
    os.chmod(outdir, 0o777)
    batch = f"tagged{os.getpid()}"
    result = ours("dag", "submit", "-Append", 'My.CrabtuiTag = "run7"', "-batch-name", batch, "-Notification",
                  "Complete", "-outfile_dir", str(outdir), "d.dag", cwd=shared_dir)
    assert result.returncode == 0, result.stderr
    dagman = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
    schedd = htcondor2.Schedd()
    try:
        ad = schedd.query(f"ClusterId == {dagman}", ["CrabtuiTag", "JobBatchName", "JobNotification"])[0]
        assert (ad["CrabtuiTag"], ad["JobBatchName"], ad["JobNotification"]) == ("run7", batch, 2)
        deadline = time.monotonic() + 120
        while not schedd.query(f"DAGManJobId == {dagman}", ["JobBatchName"]):
            assert time.monotonic() < deadline, "node A was not submitted"
            time.sleep(0.5)
        assert schedd.query(f"DAGManJobId == {dagman}", ["JobBatchName"])[0]["JobBatchName"] == batch
        assert (outdir / "d.dag.dagman.out").exists() and not (shared_dir / "d.dag.dagman.out").exists()
        same_as_condor_q(htcondor_pool, ["-constraint", f'JobBatchName == "{batch}"', "-af", "ClusterId", "JobBatchName"])
    finally:
        schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {dagman}")


ITEMS = "executable = /bin/sleep\narguments = $(item)\nhold = true\ninitialdir = /tmp\n"


@pytest.fixture
def submit_dir():
    work = Path(f"/tmp/cs{os.getpid()}")
    work.mkdir()
    os.chmod(work, 0o777)
    (work / "items.sub").write_text(ITEMS)
    os.chmod(work / "items.sub", 0o666)
    yield work
    shutil.rmtree(work, ignore_errors=True)


def test_submit_dry_run_prints_the_procs_as_condor_submit_does(htcondor_pool, submit_dir):
    """The ads themselves differ (the pool's schedd adds its own), the layout does not: the cluster
    ad, then each proc's ProcId, JobStatus and differences, a '.' after each, and the last line."""
    args = ["-dry-run", "-", "items.sub", "-queue", "in", "a", "b"]
    theirs = pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit {' '.join(args)}")
    mine = crabtui("job", "submit", *args, cwd=submit_dir)
    assert mine.returncode == theirs.returncode == 0, (theirs.stderr, mine.stderr)
    procs = [text.splitlines()[text.splitlines().index("ProcId=0"):] for text in (theirs.stdout, mine.stdout)]
    assert procs[0] == procs[1]
    assert [text.splitlines()[:2] for text in (theirs.stdout, mine.stdout)] == [["Dry-Run job(s)", "ClusterId=1"]] * 2
    terse = [pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit -terse -dry-run /dev/null "
                                                  "items.sub -q 3"),
             crabtui("job", "submit", "-terse", "-dry-run", "/dev/null", "items.sub", "-q", "3", cwd=submit_dir)]
    assert [(t.returncode, t.stdout) for t in terse] == [(0, "1.0 - 1.2\n")] * 2


def test_submit_queue_and_terse_queue_what_condor_submit_queues(htcondor_pool, submit_dir):
    schedd = htcondor2.Schedd()
    theirs = pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit -terse items.sub -queue in x y")
    mine = ours("job", "submit", "-terse", "items.sub", "-queue", "in", "x", "y", cwd=submit_dir)
    clusters = [int(re.fullmatch(r"(\d+)\.0 - \1\.1\n", r.stdout).group(1)) for r in (theirs, mine)]
    try:
        args = [[ad["Args"] for ad in sorted(schedd.query(f"ClusterId == {c}", ["ProcId", "Args"]),
                                             key=lambda ad: ad["ProcId"])] for c in clusters]
        assert args == [["x", "y"]] * 2
        empty = [pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit items.sub -queue"),
                 ours("job", "submit", "items.sub", "-queue", cwd=submit_dir)]
        assert [r.returncode for r in empty] == [1, 1]
        assert all("-queue requires at least one argument" in r.stderr for r in empty)
    finally:
        schedd.act(htcondor2.JobAction.Remove, " || ".join(f"ClusterId == {c}" for c in clusters))


def test_submit_warns_of_unused_lines_as_condor_submit_does(htcondor_pool, submit_dir):
    """The same warnings, in the same order, after the ids: `n = 3` and the typo nothing reads."""
    (submit_dir / "typo.sub").write_text(ITEMS + "n = 3\nreqest_memory = 2000\nsuffix = $(item)\nqueue\n")
    os.chmod(submit_dir / "typo.sub", 0o666)
    theirs = pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit -terse typo.sub tag=x")
    mine = ours("job", "submit", "-terse", "typo.sub", "tag=x", cwd=submit_dir)
    clusters = [int(re.fullmatch(r"(\d+)\.0 - \1\.0\n", r.stdout).group(1)) for r in (theirs, mine)]
    try:
        assert mine.stderr == theirs.stderr
        assert mine.stderr.splitlines()[-1] == "WARNING: the line 'n = 3' was unused by condor_submit. Is it a typo?"
    finally:
        htcondor2.Schedd().act(htcondor2.JobAction.Remove, " || ".join(f"ClusterId == {c}" for c in clusters))


@pytest.fixture(scope="module")
def left_queue(htcondor_pool):
    """A cluster of three held jobs removed from the queue, once all three are in the history."""
    schedd = htcondor2.Schedd()
    cluster = schedd.submit(htcondor2.Submit(HELD), count=3).cluster()
    schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {cluster}")
    deadline = time.monotonic() + 120
    while len(schedd.history(f"ClusterId == {cluster}", ["ProcId"])) < 3:
        assert time.monotonic() < deadline, "the removed jobs did not reach the history"
        time.sleep(0.5)
    return str(cluster)


HISTORY_ARGS = [
    ["-since", "{C}.1", "-constraint", "ClusterId == {C}", "-af:j", "Owner", "JobStatus"],
    ["-since", "ClusterId == {C} && ProcId == 0", "-constraint", "ClusterId == {C}", "-af:j", "Owner"],
    ["-since", "{C}.2", "{C}", "-af:j", "ProcId"], ["{C}", "-json", "-attributes", "ProcId,ClusterId,Owner,Requirements,Cmd"],
    ["{C}", "-xml", "-attributes", "ProcId,ClusterId,Owner,Requirements,Cmd,ExitBySignal"], ["-xml", "999999"],
    ["{C}", "-long", "-af", "ProcId"], ["{C}", "-json", "-attributes", "Owner", "-af", "strcat(Cmd, Args)"],
    ["-json", "-constraint", "ClusterId == 999999"],
    ["-file", "{H}", "{C}", "-af:j", "Owner", "JobStatus", "Cmd"],
    ["-file", "{H}", "-forwards", "-limit", "2", "-af:j", "Owner"],
    ["-file", "{H}", "-since", "{C}.1", "{C}", "-af:j", "ProcId"],
    ["-file", "{H}", "{C}.2", "-long", "-attributes", "ClusterId,ProcId,Owner,Cmd"],
    ["-since", "foo =="], ["-file", "/nonexistent/history"], ["{C}.1", "-long"],
    ["-forwards", "-scanlimit", "1", "-af:j", "Owner"],  # the oldest jobs: the newest change as the pool is shared
    ["-file", "{H}", "-forwards", "-scan", "3", "-limit", "2", "-af:j", "Owner"], ["{C}", "-wide:40"], ["-wide:60", "-wide", "{C}"], ["{C}.1", "-json"], ["{C}", "-jsonl"], ["{C}.2", "-xml"], ["-jsonl", "-attributes", "Requirements,Cmd,Args", "{C}"],
]


@pytest.mark.parametrize("template", HISTORY_ARGS, ids=lambda t: " ".join(t))
def test_history_since_and_file_print_what_condor_history_prints(htcondor_pool, left_queue, template):
    """-file reads the pool's own history file: the pool's tool by its path inside the tree,
    crabtui by its path on this machine."""
    inside = "/var/spool/condor/history"
    theirs = pool_tool(htcondor_pool, "condor_history", *[a.format(C=left_queue, H=inside) for a in template])
    outside = htcondor_pool.env["CRABTUI_TESTPOOL_ROOT"] + inside
    mine = ours("history", *[a.format(C=left_queue, H=outside) for a in template])
    assert mine.returncode == theirs.returncode, (mine.stderr, theirs.stderr)
    if theirs.returncode == 0:
        assert mine.stdout == theirs.stdout
    else:
        assert len(mine.stderr.splitlines()) == 1 and "Traceback" not in mine.stderr
        assert theirs.stderr.splitlines()[0].removeprefix("Error: ") in mine.stderr.replace(outside, inside)


def test_history_userlog_makes_the_ads_condor_history_makes(htcondor_pool, submit_dir):
    """A log with a job that ran and exited 3 and one removed while held: condor_history -userlog
    and crabtui history -userlog print the same ads, but for each reader's login as Owner and the
    moment of reading as ServerTime."""
    log = submit_dir / "jobs.log"
    (submit_dir / "ran.sub").write_text(f"executable = /bin/sh\narguments = \"-c 'exit 3'\"\nlog = {log}\nqueue\n")
    (submit_dir / "held.sub").write_text(f"executable = /bin/true\nhold = true\nlog = {log}\nqueue\n")
    ran = pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit -terse ran.sub && "
                                               "condor_submit -terse held.sub")
    clusters = re.findall(r"^(\d+)\.0 - ", ran.stdout, re.MULTILINE)
    assert len(clusters) == 2, ran.stderr
    htcondor2.Schedd().act(htcondor2.JobAction.Remove, f"ClusterId == {clusters[1]}")
    reader, ended, deadline = htcondor2.JobEventLog(str(log)), set(), time.monotonic() + 120
    while ended != {int(c) for c in clusters}:
        assert time.monotonic() < deadline, f"jobs {clusters} did not end"
        ended |= {e.cluster for e in reader.events(stop_after=1)
                  if e.type in (htcondor2.JobEventType.JOB_TERMINATED, htcondor2.JobEventType.JOB_ABORTED)}

    def steady_ads(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith(("Owner = ", "ServerTime = "))]

    for args in (["-long"], ["-af:j", "JobStatus", "ExitCode", "RemoveReason"], [clusters[0], "-limit", "1", "-af",
                                                                                 "ClusterId"]):
        theirs = pool_tool(htcondor_pool, "condor_history", "-userlog", str(log), *args)
        mine = ours("history", "-userlog", str(log), *args)
        assert mine.returncode == theirs.returncode == 0, (mine.stderr, theirs.stderr)
        assert steady_ads(mine.stdout) == steady_ads(theirs.stdout), args
    assert 'Owner = "crab"' in pool_tool(htcondor_pool, "condor_history", "-userlog", str(log), "-long").stdout


# Submit files as users write them, with the attributes their jobs' ads must carry as the pool's
# condor_submit -dry-run builds them (crabtui's own ads have fewer attributes, never other values).
USER_SUBMIT_FILES = {
    "continued.sub": """# a comment
executable = /bin/echo
   # an indented comment
arguments = one \\
  two
requirements = (OpSys == "LINUX") && \\
               (Arch == "X86_64")
queue
""",
    "quoting.sub": """executable = /bin/echo
arguments = "'a  b' '' 'x''y' q""r"
environment = "Z=1 A=2 M='x y' E="
queue 2
""",
    "retries.sub": """executable = /bin/true
max_retries = 3
retry_until = ExitCode == 7
success_exit_code = 2
on_exit_remove = ExitCode == 5
queue
""",
    "transfer.sub": """executable = /bin/true
should_transfer_files = YES
when_to_transfer_output = ON_EXIT_OR_EVICT
transfer_input_files = items.sub, items.sub
transfer_output_files = out.txt, b.txt
concurrency_limits = sw_license:2, DB
notify_user = me@example.org
notification = Complete
deferral_time = 1900000000
queue
""",
    "conditional.sub": """executable = /bin/echo
if defined mode
  arguments = $(mode) $(Process)
else
  arguments = none
endif
include command : echo +FromCommand = 42
My.Weight = $INT(Step) * 2
queue 2
""",
    "hold.sub": """executable = /bin/true
hold = $(Process) == 1
queue 3
""",
    "accounting.sub": """executable = /bin/true
accounting_group = group_physics.higgs
accounting_group_user = alice
request_gpus = 0
use_x509userproxy = false
queue
""",
    "lxplus.sub": """executable            = /bin/echo
output                = output.$(ClusterId).$(ProcId).out
error                 = error.$(ClusterId).$(ProcId).err
log                   = job.$(ClusterId).log
+JobFlavour           = "espresso"
MY.WantOS             = "el9"
transfer_output_files = ""
queue arguments from (
  1 alpha
  2 beta
)
""",
    "blank_row.sub": """executable = /bin/echo
arguments = $(a) $(b) $(c)
queue a b c from (
  x y z

  p q
# not a job
  u,v w
)
""",
    "lpc.jdl": """universe = vanilla
Executable = /bin/true
Should_Transfer_Files = YES
WhenToTransferOutput = ON_EXIT_OR_EVICT
JobBatchName = skim
Output = skim_$(Cluster)_$(Process).stdout
Queue 1
""",
}
COMPARED = ("Args", "Arguments", "Environment", "OnExitRemove", "JobMaxRetries", "JobSuccessExitCode",
            "ShouldTransferFiles", "WhenToTransferOutput", "TransferInput", "TransferOutput", "ConcurrencyLimits",
            "NotifyUser", "JobNotification", "DeferralTime", "DeferralWindow", "DeferralPrepTime", "FromCommand",
            "Weight", "ProcId", "JobStatus", "HoldReasonCode", "AcctGroup", "AcctGroupUser", "AccountingGroup",
            "Out", "Err", "JobFlavour", "WantOS", "JobBatchName")


def dry_run_ads(text: str) -> list[dict[str, str]]:
    """The jobs of condor_submit -dry-run output: the cluster ad merged with each proc's lines."""
    ads, cluster, current = [], None, {}
    for line in text.splitlines()[1:]:
        if line == ".":
            cluster = cluster or dict(current)
            ads.append(current)
            current = dict(cluster)
        elif "=" in line:
            name, _, value = line.partition("=")
            current[name] = str(classad2.ExprTree(value))  # one spelling of =?= and the like
    return ads


@pytest.mark.parametrize("name", sorted(USER_SUBMIT_FILES))
def test_submit_files_make_the_ads_condor_submit_makes(htcondor_pool, submit_dir, name):
    (submit_dir / name).write_text(USER_SUBMIT_FILES[name])
    theirs = pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit -dry-run - {name} mode=fast")
    mine = crabtui("job", "submit", "-dry-run", "-", name, "mode=fast", cwd=submit_dir)
    assert theirs.returncode == mine.returncode == 0, (theirs.stderr, mine.stderr)
    pairs = list(zip(dry_run_ads(theirs.stdout), dry_run_ads(mine.stdout), strict=True))
    for pool_ad, our_ad in pairs:
        assert {k: our_ad.get(k) for k in COMPARED if k in pool_ad} == {k: pool_ad[k] for k in COMPARED if k in pool_ad}
        # OnExitRemove = true is the default the pool's schedd assumes when the ad has none
        assert not {k for k in COMPARED
                    if k in our_ad and k not in pool_ad and (k, our_ad[k]) != ("OnExitRemove", "true")}


def test_submit_to_the_pool_reads_macros_and_ifs_as_condor_submit(htcondor_pool, submit_dir):
    """NAME=VALUE is set before the file is read, so `if defined` sees it; a bad `if` is one line."""
    (submit_dir / "mode.sub").write_text("executable = /bin/sleep\nif defined mode\n  arguments = 30 $(mode)\n"
                                         "endif\nhold = true\ninitialdir = /tmp\nqueue\n")
    (submit_dir / "bad.sub").write_text("executable = /bin/sleep\nif $(mode) == fast\nendif\nqueue\n")
    mine = ours("job", "submit", "-terse", "mode.sub", "mode=fast", cwd=submit_dir)
    cluster = int(re.fullmatch(r"(\d+)\.0 - \1\.0\n", mine.stdout).group(1))
    try:
        (ad,) = htcondor2.Schedd().query(f"ClusterId == {cluster}", ["Args"])
        assert ad["Args"] == "30 fast"
    finally:
        htcondor2.Schedd().act(htcondor2.JobAction.Remove, f"ClusterId == {cluster}")
    bad = ours("job", "submit", "bad.sub", cwd=submit_dir)
    assert bad.returncode == 1 and bad.stderr.splitlines() == [
        "ERROR: bad.sub:2: $(mode) == fast is not a valid if condition because complex conditionals are not "
        "supported; an if takes 'defined NAME', 'version >= X.Y', a boolean or a number, as in: if defined mode"]


def spooled_ad(cluster: int, timeout: float = 60) -> classad2.ClassAd:
    """The job's ad once the schedd has its input files (StageInFinish)."""
    deadline = time.monotonic() + timeout
    while True:
        (ad,) = htcondor2.Schedd().query(f"ClusterId == {cluster}", ["Iwd", "SUBMIT_Iwd", "StageInFinish", "JobStatus"])
        if "StageInFinish" in ad or time.monotonic() > deadline:
            return ad
        time.sleep(0.5)


def test_submit_spool_sends_the_input_to_the_pools_spool_as_condor_submit(htcondor_pool, submit_dir):
    (submit_dir / "in.txt").write_text("input\n")
    (submit_dir / "spool.sub").write_text("executable = /bin/cat\narguments = in.txt\ntransfer_input_files = in.txt\n"
                                          "should_transfer_files = YES\nrequirements = false\nqueue\n")
    os.chmod(submit_dir / "in.txt", 0o644)
    theirs = pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit -spool -terse spool.sub")
    mine = ours("job", "submit", "-spool", "-terse", "spool.sub", cwd=submit_dir)
    clusters = [int(re.fullmatch(r"(\d+)\.0 - \1\.0\n", r.stdout).group(1)) for r in (theirs, mine)]
    try:
        ads = [spooled_ad(c) for c in clusters]
        for ad, cluster in zip(ads, clusters):  # spooled: the job's directory is the schedd's now
            assert (ad["Iwd"].endswith(f"/{cluster}/0/cluster{cluster}.proc0.subproc0"), ad["SUBMIT_Iwd"],
                    ad["StageInFinish"] > 0, ad["JobStatus"]) == (True, str(submit_dir), True, 1)
    finally:
        htcondor2.Schedd().act(htcondor2.JobAction.Remove, " || ".join(f"ClusterId == {c}" for c in clusters))
    embedded = crabtui("job", "submit", "-spool", "spool.sub", cwd=submit_dir)
    assert embedded.returncode == 1 and "nothing to spool" in embedded.stderr


def test_late_materialization_dry_run_and_factory_lines_as_the_pools(htcondor_pool, submit_dir):
    """max_materialize: condor_submit -dry-run prints the cluster ad alone (no ProcId, no limit)
    and a blank line; condor_q -factory lists the factory of held jobs (2 of 4 made) as crabtui
    --backend htcondor q -factory does."""
    (submit_dir / "mat.sub").write_text("executable = /bin/sleep\narguments = 300\nhold = true\n"
                                        "max_materialize = 2\nqueue 4\n")
    os.chmod(submit_dir / "mat.sub", 0o666)
    theirs = pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit -dry-run - mat.sub")
    mine = crabtui("job", "submit", "-dry-run", "-", "mat.sub", cwd=submit_dir)
    for text in (theirs.stdout, mine.stdout):
        lines = text.splitlines()
        assert lines[:2] == ["Dry-Run job(s)", "ClusterId=1"] and lines[-2:] == ["", "4 job(s) dry-run to cluster 1."]
        assert not [line for line in lines if line.startswith(("ProcId=", "JobMaterialize")) or line == "."]
    submitted = pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit -terse mat.sub")
    cluster = submitted.stdout.split(".")[0]
    plain = htcondor2.Schedd().submit(htcondor2.Submit(HELD)).cluster()  # no factory: not listed
    try:
        same_as_condor_q(htcondor_pool, ["-factory", cluster])
        same_as_condor_q(htcondor_pool, ["-factory", "999999", cluster])  # an id before the factory's
        same_as_condor_q(htcondor_pool, ["-factory", "-constraint", f"ClusterId == {plain} || ClusterId == {cluster}"])
        assert re.search(rf"^ *{cluster}\. ", ours("q", "-factory", cluster).stdout, re.M)  # not only the header
    finally:
        pool_tool(htcondor_pool, "condor_rm", cluster, str(plain))


def test_accounting_group_without_a_user_charges_the_submitter_as_condor_submit(htcondor_pool, submit_dir):
    """accounting_group = group_a alone: condor_submit charges group_a.<the submitting user>."""
    (submit_dir / "acct.sub").write_text("executable = /bin/true\naccounting_group = group_a\nhold = true\nqueue\n")
    theirs = pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit -terse acct.sub")
    mine = ours("job", "submit", "-terse", "acct.sub", cwd=submit_dir)
    clusters = [int(re.fullmatch(r"(\d+)\.0 - \1\.0\n", r.stdout).group(1)) for r in (theirs, mine)]
    try:
        ads = [htcondor2.Schedd().query(f"ClusterId == {c}", ["AcctGroup", "AcctGroupUser", "AccountingGroup"])[0]
               for c in clusters]
        user = htcondor_pool.env["CRABTUI_TESTPOOL_USER"]
        charged = [{k: ad[k] for k in ("AcctGroup", "AcctGroupUser", "AccountingGroup")} for ad in ads]
        assert charged == [{"AcctGroup": "group_a", "AcctGroupUser": user, "AccountingGroup": f"group_a.{user}"}] * 2
    finally:
        htcondor2.Schedd().act(htcondor2.JobAction.Remove, " || ".join(f"ClusterId == {c}" for c in clusters))


def test_a_blank_row_of_an_inline_list_queues_a_job_on_the_pool_as_condor_submit(htcondor_pool, submit_dir):
    """The bindings refuse the list ("invalid qargs"); condor_submit queues the blank row."""
    (submit_dir / "blank.sub").write_text(USER_SUBMIT_FILES["blank_row.sub"].replace("queue", "hold = true\nqueue"))
    mine = ours("job", "submit", "-terse", "blank.sub", cwd=submit_dir)
    cluster = int(re.fullmatch(r"(\d+)\.0 - \1\.3\n", mine.stdout).group(1))
    try:
        ads = htcondor2.Schedd().query(f"ClusterId == {cluster}", ["ProcId", "Args"])
        assert [ad["Args"] for ad in sorted(ads, key=lambda ad: ad["ProcId"])] == ["x y z", "y z", "p q z", "u v w"]
    finally:
        htcondor2.Schedd().act(htcondor2.JobAction.Remove, f"ClusterId == {cluster}")


def test_a_macro_function_condor_submit_refuses_is_refused_on_the_pool_too(htcondor_pool, submit_dir):
    """$INT(Process*10+1): 23.9.6's condor_submit stops at the queue statement; the bindings would
    queue the job with empty arguments.  Refused in one line, nothing queued."""
    (submit_dir / "int.sub").write_text("executable = /bin/true\nfoo = $INT(Process*10+1)\narguments = $(foo)\n"
                                        "hold = true\nbatch_name = int_refused\nqueue 2\n")
    theirs = pool_tool(htcondor_pool, "sh", "-c", f"cd {submit_dir} && condor_submit int.sub")
    assert theirs.returncode != 0 and "does not evaluate to an integer" in theirs.stderr + theirs.stdout
    mine = ours("job", "submit", "int.sub", cwd=submit_dir)
    queued = htcondor2.Schedd().query('JobBatchName == "int_refused"', ["ClusterId"])
    if queued:  # the bindings' submit went through: take its jobs away again
        htcondor2.Schedd().act(htcondor2.JobAction.Remove, 'JobBatchName == "int_refused"')
    assert not queued
    assert mine.returncode == 1 and mine.stderr.splitlines() == [
        "ERROR: int.sub:2: foo: $INT(Process*10+1): 'Process*10+1' does not evaluate to an integer (23.9.6 takes "
        "a macro's name or a constant expression, and Process and the like are macros, not attributes); set a "
        "macro to it and name that macro, as in n = $(Process)*10+1 with $INT(n)"]
