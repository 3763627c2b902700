#!/bin/bash
# CRAB job: $1 is the job number, then the scriptArgs; the JEC files and data/ are in the sandbox.
echo "job $1 args: ${@:2}"
for f in Summer23_V2_MC_L2Relative_AK4PFPuppi.txt Summer23_V2_MC_L3Absolute_AK4PFPuppi.txt data/pileup_2023.txt; do
    test -f "$f" || { echo "missing $f" >&2; exit 1; }
done
echo "jet histograms of job $1" > jets_hist.txt
