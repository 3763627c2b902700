"""The worker node: what a CRAB job runs on the slot it matched.

On the grid this is CRAB's job wrapper (``CMSRunAnalysis``) around cmsRun; here it is the
wrapper (:mod:`.wrapper`, every CRAB job's executable: ``python3 -m engine.crab.wn.wrapper``),
the simulated cmsRun it starts (:mod:`.cmsrun`), the framework job report they leave
(:mod:`.fjr`) and the ClassAd files HTCondor gives the job (:mod:`.jobad`).  "WN" is what CMS
calls an execute node.

Where it runs: on any execute node (an embedded slot or a real pool's), under a bare
``python3`` with only this source on ``PYTHONPATH``: no crabtui installed, no HTCondor bindings.

What it may import: the standard library, its own modules, and the standard-library-only
helpers :mod:`engine.atomic`, :mod:`engine.hints` and :mod:`engine.crab.jsonfile`; nothing of
the other places.  The access point reads what the job leaves, so its shared formats are
:mod:`.fjr` and :mod:`.jobad`; those import no other module of this package.
"""
