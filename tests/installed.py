"""The ``crabtui`` command and the Python of the environment running the tests.

The README's test command runs ``.venv/bin/pytest`` with no virtual environment activated, so
neither ``crabtui`` nor the venv's ``python3`` is on PATH: tests find both beside
``sys.executable`` and run them by path, in the environment pytest runs in.
"""

from __future__ import annotations

import os
import sys

BIN = os.path.dirname(sys.executable)
CRABTUI = os.path.join(BIN, "crabtui")
PYTHON = sys.executable
