"""The access point: what runs beside the schedd that holds a task's DAG, under its condor_dagman.

A CRAB task's DAG runs on one of CRAB's schedds (an HTCondor access point, "AP"), and its PRE
and POST scripts are CRAB's own: PreJob (:mod:`.prejob`) opens a job's next attempt, with its
sites (:mod:`.sites`) and what a resubmission changed (:mod:`.resubmit_record`); PostJob (:mod:`.postjob`) classifies the attempt as RetryJob does
(:mod:`.retry_policy`) and stages the outputs out as ASO does (:mod:`.stageout`); for automatic
splitting, PreDAG (:mod:`.predag`) splits the later stages (:mod:`.stages`).  What ``crab
status`` counts in a job's user log is read here too (:mod:`.joblog`), as CRAB's status cache is
made on the schedd.

Where it runs: started by condor_dagman (the embedded one or a real pool's) as ``python3 -m
engine.crab.ap.prejob|postjob|predag``, in the task's directory, with this source on
``PYTHONPATH`` and no crabtui installed.

What it may import: the standard library; the HTCondor bindings an access point has
(``htcondor2``, ``classad2``); its own modules; the worker node's shared formats
(:mod:`engine.crab.wn.fjr`, :mod:`~engine.crab.wn.jobad`, :mod:`~engine.crab.wn.job_input`,
:mod:`~engine.crab.wn.failure_plan`); the user log's module (:mod:`engine.schedd.local.userlog`);
the standard-library-only helpers (:mod:`engine.atomic`, :mod:`engine.hints`, :mod:`engine.state`,
:mod:`engine.crab.jsonfile`); and the TaskWorker code PreDAG runs again here, as CRAB ships its
TaskWorker to the schedd for PreDAG: :mod:`engine.crab.taskworker.dagman_creator` (the task's
files, which PreJob and PostJob read too), ``splitting``, ``automatic``, ``datasets``, ``stand_ins``
and ``task_input``.  What
those import in turn keeps to the same rules (``tests/test_imports.py``).
"""
