#!/bin/sh
# CRAB passes the job number first, then scriptArgs
job=$1; shift
echo "HToBB analysis, job $job, arguments: $*"
exit 0
