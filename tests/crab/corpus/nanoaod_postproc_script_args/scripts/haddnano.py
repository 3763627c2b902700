#!/usr/bin/env python3
"""hadd for nanoAOD files (not run here)."""
