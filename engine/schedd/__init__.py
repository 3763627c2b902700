"""The Schedd API and its two implementations: the embedded local schedd and a real HTCondor schedd."""
