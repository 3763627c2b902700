"""``python -m engine.dagman [options] X.dag``: the process the schedd starts for a DAG, as
HTCondor starts condor_dagman; run by hand it is ``condor_dagman -f``."""

from __future__ import annotations

import sys

from engine.dagman.main import main

sys.exit(main())
