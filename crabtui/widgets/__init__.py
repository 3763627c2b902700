"""The UI's widgets: tables updated in place, the DAG tree, the status line, state glyphs."""
