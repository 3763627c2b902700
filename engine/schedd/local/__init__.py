"""The embedded schedd: job queue, slots, process starter, user logs and its daemon."""
