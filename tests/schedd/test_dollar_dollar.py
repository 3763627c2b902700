"""``$$()`` in submit files as the HTCondor manual writes them (``executable =
povray.$$(OpSys).$$(Arch)``): each job runs with the values of the slot it landed on, its ad
keeps the ``$$()`` and gains MATCH_ attributes, and a reference the slot cannot fill holds the job
with HTCondor 23.9.6's reason (tests/htcondor/test_condor_tools.py compares with the pool's)."""

from __future__ import annotations

from engine.schedd.api import JobStatus

POOL = """
[[site]]
name = "T2_XX_Small"
cpus = 2
memory = 1000
[site.attributes]
OpSys = "LINUX"
Arch = "X86_64"
"""


def test_the_job_runs_with_its_slots_values_and_keeps_its_dollar_dollar(schedd):
    schedd.write_pool(POOL)
    schedd.write("render.LINUX.X86_64", """
        #!/bin/sh
        echo "$0 $*" > rendered.txt
        """, executable=True)
    result = schedd.submit("""
        executable = render.$$(OpSys).$$(Arch)
        arguments = -j $$(Cpus) --memory $$([Memory * 9 / 10]) --site $$(GLIDEIN_CMSSite:none) --disk $$(NoSuch:unknown)
        queue
        """)
    ad = schedd.wait_history(f"{result.cluster}.0")
    assert ad["ExitCode"] == 0
    assert (schedd.work / "rendered.txt").read_text() == \
        f"{schedd.work}/render.LINUX.X86_64 -j 2 --memory 900 --site T2_XX_Small --disk unknown\n"
    assert ad["Cmd"].endswith("/render.$$(OpSys).$$(Arch)") and ad["Args"].startswith("-j $$(Cpus)")
    assert (ad["MATCH_OpSys"], ad["MATCH_Arch"], ad["MATCH_Cpus"], ad["MATCH_GLIDEIN_CMSSite"], ad["MATCH_NoSuch"]) == \
        ("LINUX", "X86_64", 2, "T2_XX_Small", "unknown")
    assert ad["MATCH_EXP_Args"] == "-j 2 --memory 900 --site T2_XX_Small --disk unknown"


def test_a_reference_the_slot_cannot_fill_holds_the_job(schedd):
    result = schedd.submit("""
        executable = /bin/echo
        arguments = in $$(pwd)
        queue
        """)
    held = schedd.wait_status(f"{result.cluster}.0", JobStatus.HELD)
    assert (held["HoldReason"], held["HoldReasonCode"], held["HoldReasonSubCode"]) == \
        ("Cannot expand $$ expression (pwd).", 0, 0)
    assert "JobCurrentStartDate" not in held and held.get("NumJobStarts", 0) == 0, "it never ran"
