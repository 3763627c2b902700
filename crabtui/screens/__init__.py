"""The UI's screens: tasks, one task, one job, and the dialogs."""
