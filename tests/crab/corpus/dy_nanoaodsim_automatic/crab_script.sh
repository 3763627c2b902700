#!/bin/sh
# what NanoAOD-tools' crab_script.sh does: CRAB passes the job number, the post-processor runs here
echo "crab_script.sh: job $1"
python3 crab_script.py $1
