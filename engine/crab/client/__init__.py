"""The client: what ``crab submit``, ``crab status``, ``crab resubmit`` and ``crab kill`` do on
the user's machine, as CRABClient does.

It loads the user's ``crabConfig.py`` (:mod:`.config`, which runs it with :mod:`.crab_config_py`
and reads its lumi mask with :mod:`.lumi_mask`), checks and records a submission (:mod:`.submit`),
checks a resubmission's options (:mod:`.resubmit`), derives a task's job states and figures from
the task's files and the queue (:mod:`.status`, ``crab status`` and its status cache) and reads
what a monitor shows of a job (:mod:`.monitor`).  The CLI and the UI (``crabtui``) are its front ends; a command is carried out
by the TaskWorker (:mod:`engine.crab.taskworker`), through the task table.

Where it runs: in the user's process, the CLI's or the UI's (and in the embedded schedd's
daemon, whose TaskWorker keeps the status cache warm).

What it may import: anything in ``engine``, never the UI.
"""
