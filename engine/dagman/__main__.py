"""``python -m engine.dagman [options] X.dag``: the embedded DAGMan run by hand, as
``condor_dagman -f`` is.  A DAGMan job runs the state directory's ``bin/condor_dagman``
(:mod:`engine.schedd.local.job_tools`), which masks the same signals first, so that condor_q
names it as on a pool."""

import signal

# condor_rm and condor_hold of a DAGMan job that is still starting (say right after its release)
# wait until the run's handlers take them (engine.dagman.runner.STOP_SIGNALS): Python's defaults
# would end DAGMan with no rescue DAG and no line in dagman.out.
signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGUSR1, signal.SIGTERM, signal.SIGINT))

import sys  # noqa: E402  (after the mask, on purpose)

from engine.dagman.main import main  # noqa: E402

sys.exit(main())
