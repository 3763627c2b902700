"""The TaskWorker: what turns a task request into a DAG and puts it in the schedd's queue.

As CRAB's TaskWorker does for the CRAB server, it carries out the task table's commands
(:mod:`.taskdb`, :mod:`.worker`): for a submission it looks the dataset up in the catalogue
(:mod:`.datasets`, what DBS and Rucio answer), splits it into jobs (:mod:`.splitting`; automatic
splitting's probes, processing jobs and tails in :mod:`.automatic`), writes the task's DAG, job
submit template and job inputs (:mod:`.dagman_creator`, CRAB's DagmanCreator) and submits the
DAG through the Schedd API, with the knobs of its configuration (:mod:`.config`,
``taskworker.toml``); it kills and resubmits tasks too (:mod:`.resubmitter`, CRAB's
DagmanResubmitter and AdjustSites, which makes a running DAGMan retry the resubmitted nodes).

Where it runs: in the embedded schedd's daemon (a thread of it), on the user's machine, also
when the task's DAG goes to a real HTCondor pool.

What it may import: anything in ``engine`` (the Schedd API, DAGMan's submit description, the
access point's and the worker node's modules), never the UI.  PreDAG runs ``dagman_creator``,
``splitting``, ``automatic``, ``datasets``, ``stand_ins`` and ``task_input`` again on the access
point (and PreJob and PostJob read the task's files with ``dagman_creator``), so these keep to the
access point's rules (:mod:`engine.crab.ap`): the standard library and what the access point may
import.
"""
