#!/bin/sh
# what NanoAOD-tools' crab_script.sh does, without CMSSW: the job id, then run the post-processor
echo "crab_script.sh: job $1"
echo "python3 crab_script.py $1" > /dev/null
exit 0
