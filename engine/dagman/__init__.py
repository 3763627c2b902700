"""The embedded condor_dagman: the DAG runner and the files it writes in DAGMan's formats."""
