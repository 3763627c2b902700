"""crabtui's engine: an embedded HTCondor (schedd, DAGMan) with CRAB3 on top. Never imports the UI."""
