#!/bin/sh
# CRAB passes the job number first, then scriptArgs; the sandbox holds PSet.py and the input files
job=$1; shift
echo "HToBB analysis, job $job, arguments: $*"
test -f PSet.py && test -f analyzer.py && test -f bdt_v7.xml || { echo "sandbox incomplete" >&2; exit 1; }
echo "BDT inputs of job $job" > bdt_inputs.root  # config.JobType.outputFiles
exit 0
