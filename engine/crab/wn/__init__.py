"""The worker node: what a CRAB job runs on the slot it matched.

On the grid this is CRAB's job wrapper (``CMSRunAnalysis``) around cmsRun; here it is the
wrapper (:mod:`.wrapper`, every CRAB job's executable: ``python3 -m engine.crab.wn.wrapper``),
the simulated cmsRun it starts (:mod:`.cmsrun`) on its job input (:mod:`.job_input`), the
framework job report they leave (:mod:`.fjr`) and the ClassAd files HTCondor gives the job
(:mod:`.jobad`).  "WN" is what CMS calls an execute node.

Where it runs: on any execute node (an embedded slot or a real pool's), under a bare
``python3`` with only this source on ``PYTHONPATH``: no crabtui installed, no HTCondor bindings.

What it may import: the standard library, its own modules, and the standard-library-only
helpers :mod:`engine.atomic`, :mod:`engine.hints` and :mod:`engine.crab.jsonfile`; nothing of
the other places.  What it shares with the other places is read and written by its format
modules, :mod:`.fjr` (the job report), :mod:`.jobad` (the job and machine ads),
:mod:`.job_input` and :mod:`.failure_plan` (what the job ad's ``CRABTUI_FailurePlan`` holds),
which the access point and the TaskWorker import too; those import no other module of this
package (``tests/test_imports.py`` holds it to these rules).
"""
