"""The embedded DAGMan's program: ``python -m engine.dagman [options] X.dag`` runs it by hand, as
``condor_dagman -f`` is, and a DAGMan job's executable, the state directory's ``bin/condor_dagman``
(:mod:`engine.schedd.local.job_tools`), runs this module under its own name, so that condor_q and
the usage line name condor_dagman as on a pool."""

import signal

# condor_rm and condor_hold of a DAGMan job that is still starting (say right after its release)
# wait until the run's handlers take them (engine.dagman.runner.STOP_SIGNALS): Python's defaults
# would end DAGMan with no rescue DAG and no line in dagman.out.
signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGUSR1, signal.SIGTERM, signal.SIGINT))

import os  # noqa: E402  (after the mask, on purpose)
import sys  # noqa: E402

from engine.dagman.main import main  # noqa: E402

# argv[0] is this file when run with -m, and bin/condor_dagman when that program runs the module.
sys.exit(main() if sys.argv[0] == __file__ else main(prog=os.path.basename(sys.argv[0])))
