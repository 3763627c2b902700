"""The ``crabtui`` command groups, one module each."""
