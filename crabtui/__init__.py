"""crabtui: watch and steer CRAB3-style grid tasks and HTCondor DAGs from the terminal."""

__version__ = "0.1.0"
