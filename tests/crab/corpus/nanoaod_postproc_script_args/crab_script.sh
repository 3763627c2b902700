#!/bin/sh
# job number, then era=2018 isMC=1 selection=semilep
echo "postprocessing job $1: $2 $3 $4"
for f in PSet.py crab_script.py haddnano.py keep_and_drop.txt; do
    test -f "$f" || { echo "missing $f in $(pwd)"; exit 1; }
done
python3 crab_script.py "$1" "$2" "$3" "$4"
