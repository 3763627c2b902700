# the analyzer the script runs
