#!/bin/bash
# job number, then each scriptArgs entry
echo "dijet analysis of job $1 with $2 $3"
. ./setup_env.sh
test -f PSet.py || { echo "no PSet.py in $(pwd)"; exit 1; }
test -x ./OODijetAna || { echo "no OODijetAna in $(pwd)"; exit 1; }
./OODijetAna "$2" && echo "copied ${2#output=} with xrdcp (not here)"
