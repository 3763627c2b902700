"""Submit files as CMS analyses wrote them for CERN's lxplus batch service, brought to a laptop:
what the test pool's condor_submit 23.9.6 made of each (its ``-dry-run`` ads, its refusals) is
what ``crabtui job submit`` must make of it, and what cannot work without EOS or a grid proxy is
one line saying so, with nothing queued."""

from __future__ import annotations

LXPLUS = """\
executable            = run.sh
arguments             = $(ClusterId) $(ProcId)
output                = output/$(ClusterId).$(ProcId).out
error                 = error/$(ClusterId).$(ProcId).err
log                   = log/$(ClusterId).log
+JobFlavour           = "espresso"
MY.WantOS             = "el9"
MY.SendCredential     = True
+AccountingGroup      = "group_u_CMS.u_zh"
getenv                = True
{extra}
queue
"""
RUN = """\
#!/bin/sh
echo "proxy=$X509_USER_PROXY args=$*"
"""


def lxplus(schedd, extra: str) -> None:
    schedd.write("run.sh", RUN, executable=True)
    for directory in ("output", "error", "log"):
        (schedd.work / directory).mkdir(exist_ok=True)
    schedd.write("job.sub", LXPLUS.format(extra=extra))


def refused(schedd, *args: str, env: dict[str, str] | None = None) -> str:
    result = schedd.cli("job", "submit", *args, "job.sub", env=env)
    assert result.returncode == 1 and "submitted to cluster" not in result.stdout
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert schedd.client.query() == []
    return result.stderr


def test_queue_arguments_from_a_list_gives_each_job_its_line(schedd):
    """The pool's jobs: Args = "1 alpha" and "2 beta"; without its own 'arguments' command the
    queue variable was lost and every job ran with none."""
    schedd.write("run.sh", RUN, executable=True)
    schedd.write("job.sub", "executable = run.sh\noutput = out.$(ProcId)\nlog = job.log\n"
                            "queue arguments from (\n  1 alpha\n  2 beta\n)\n")
    result = schedd.cli("job", "submit", "job.sub")
    assert result.returncode == 0, result.stderr
    schedd.wait_history("1.0")
    schedd.wait_history("1.1")
    done = schedd.cli("history", "1", "-af", "ProcId", "Args").stdout  # in the order the jobs ended
    assert sorted(done.splitlines()) == ["0 1 alpha", "1 2 beta"]
    assert (schedd.work / "out.1").read_text() == "proxy= args=2 beta\n"


def test_transfer_output_files_empty_quotes_is_no_output_as_on_the_pool(schedd):
    """The pool's ad: TransferOutput = "" (bring nothing back), not the two quote characters."""
    lxplus(schedd, 'transfer_output_files = ""')
    result = schedd.cli("job", "submit", "-dry-run", "-", "job.sub")
    assert result.returncode == 0, result.stderr
    assert 'TransferOutput=""' in result.stdout.splitlines()
    schedd.write("job.sub", LXPLUS.format(extra='should_transfer_files = NO\ntransfer_output_files = a.root'))
    assert refused(schedd) == ("ERROR: job.sub:12: transfer_output_files: you disabled should_transfer_files; set "
                               "should_transfer_files = YES or drop the files\n")


def test_a_proxy_that_cannot_be_read_is_refused_as_condor_submit_refuses_it(schedd, monkeypatch):
    """condor_submit: "ERROR: unable to read proxy file", for $ENV(X509_USER_PROXY) unset, a path
    that does not exist, or use_x509userproxy with neither."""
    lxplus(schedd, "x509userproxy = $ENV(X509_USER_PROXY)")
    monkeypatch.delenv("X509_USER_PROXY", raising=False)
    said = refused(schedd)
    assert said.startswith(f"ERROR: job.sub:11: x509userproxy: unable to read proxy file {schedd.work}/UNDEFINED")
    assert "voms-proxy-init --voms cms" in said
    schedd.write("job.sub", LXPLUS.format(extra="use_x509userproxy = true"))
    assert "unable to read proxy file /nonexistent/x509up_u1000:" in refused(
        schedd, env={"X509_USER_PROXY": "/nonexistent/x509up_u1000"})


def test_the_job_finds_its_proxy_in_X509_USER_PROXY(schedd):
    """As on lxplus, where the starter sets it for the job's xrdcp; here the file is not copied."""
    proxy = schedd.write("x509up_u1000", "-----BEGIN CERTIFICATE-----\n")
    lxplus(schedd, "use_x509userproxy = true")
    result = schedd.cli("job", "submit", "job.sub", env={"X509_USER_PROXY": str(proxy)})
    assert result.returncode == 0, result.stderr
    schedd.wait_history("1.0")
    assert schedd.cli("history", "1.0", "-af", "x509userproxy").stdout == f"{proxy}\n"
    assert (schedd.work / "output/1.0.out").read_text() == f"proxy={proxy} args=1 0\n"


def test_output_destination_that_no_laptop_can_reach_is_one_line(schedd):
    """The pool's condor_submit queues it for a slot with the root plugin; the embedded schedd
    moves no files, so it says where the output would stay, rather than lose the intent."""
    lxplus(schedd, "output_destination = root://eosuser.cern.ch//eos/user/z/zh/out/$(ClusterId)/")
    said = refused(schedd)
    assert said.startswith("ERROR: job.sub:11: output_destination = root://eosuser.cern.ch//eos/user/z/zh/out/1/: "
                           "the embedded schedd moves no files")
    assert str(schedd.work) in said and "--backend htcondor" in said
    assert not any((schedd.work / "log").iterdir())


def test_a_dry_run_of_several_queue_statements_warns_as_condor_submit(schedd):
    """The pool's condor_submit -dry-run: the deprecation warning on stderr, then the 4 jobs."""
    schedd.write("run.sh", RUN, executable=True)
    schedd.write("job.sub", "executable = run.sh\narguments = $(a) $(b)\nlog = job.log\n"
                            "queue 1 a,b from (\n  x, 1\n  y, 2\n)\nqueue 1 in (p, q)\n")
    result = schedd.cli("job", "submit", "-dry-run", "-", "job.sub")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("Warning: Use of multiple queue statements in a single submit file is "
                                    "deprecated.\n")
    assert result.stdout.splitlines()[-1] == "4 job(s) dry-run to cluster 1."


LPC_JDL = """\
universe = vanilla
Executable = run.sh
Should_Transfer_Files = YES
WhenToTransferOutput = ON_EXIT_OR_EVICT
Transfer_Input_Files = run.sh
PeriodicRemove = ( JobStatus == 2 ) && ( ( CurrentTime - EnteredCurrentStatus ) > 2400 )
RequestMemory = 3000
JobBatchName = skim
Output = skim_$(Cluster)_$(Process).stdout
Error = skim_$(Cluster)_$(Process).stderr
Log = skim_$(Cluster)_$(Process).log
Notification = Never
Arguments = $(Process)
Queue 2
"""


def test_job_attribute_names_as_commands_are_taken_as_condor_submit_takes_them(schedd):
    """An LPC-style .jdl: the pool's condor_submit 23.9.6 reads WhenToTransferOutput, PeriodicRemove,
    RequestMemory and JobBatchName as the commands they name; they were refused as misspellings, or
    left out of the ads."""
    schedd.write("run.sh", RUN, executable=True)
    schedd.write("skim.jdl", LPC_JDL)
    result = schedd.cli("job", "submit", "-dry-run", "-", "skim.jdl")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for line in ('WhenToTransferOutput="ON_EXIT_OR_EVICT"', "RequestMemory=3000", 'JobBatchName="skim"',
                 "PeriodicRemove=(JobStatus == 2) && ((CurrentTime - EnteredCurrentStatus) > 2400)"):
        assert line in lines


def test_relative_names_are_from_the_directory_submitted_from(schedd):
    """condor_submit condor/job.sub from the analysis directory: the pool's ad has Cmd =
    <cwd>/condor/run.sh and Iwd = <cwd>, not names taken from the submit file's own directory."""
    schedd.write("condor/run.sh", RUN, executable=True)
    schedd.write("condor/job.sub", "executable = condor/run.sh\narguments = $(ProcId)\noutput = condor/out.$(ProcId)\n"
                                   "log = condor/job.log\nqueue\n")
    result = schedd.cli("job", "submit", "condor/job.sub")
    assert result.returncode == 0, result.stderr
    schedd.wait_history("1.0")
    assert (schedd.work / "condor/out.0").read_text() == "proxy= args=0\n"
    assert schedd.cli("history", "1.0", "-af", "Cmd", "Iwd").stdout == f"{schedd.work}/condor/run.sh {schedd.work}\n"


def test_output_and_error_names_stay_as_written_as_condor_q_shows_them(schedd):
    """The pool's ad: Out = "output/1.0.out", relative to Iwd, as the submit file wrote it."""
    lxplus(schedd, "")
    assert schedd.cli("job", "submit", "job.sub").returncode == 0
    schedd.wait_history("1.0")
    assert schedd.cli("history", "1.0", "-af", "Out", "Err").stdout == "output/1.0.out error/1.0.err\n"
    assert (schedd.work / "output/1.0.out").read_text() == "proxy= args=1 0\n"


def test_a_script_without_its_execute_bit_is_one_line_saying_chmod(schedd):
    """The pool's condor_submit queues it (file transfer sets the bit in the job's sandbox); the
    embedded schedd runs the file where it is, so it says what to do."""
    schedd.write("run.sh", RUN)
    schedd.write("job.sub", "executable = run.sh\nqueue\n")
    assert refused(schedd) == (f"ERROR: job.sub:1: executable: {schedd.work}/run.sh is not executable, and the "
                               "embedded schedd runs it where it is, unlike a pool's file transfer; make it so: "
                               f"chmod +x {schedd.work}/run.sh\n")
